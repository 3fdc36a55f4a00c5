"""Loading a `TextClassifier` from a `.keras` file, checked.

A `.keras` file is a zip of `config.json` (how to build the classifier),
`model.weights.h5` (its weights) and assets (the vocabulary). Any of it can
be damaged or edited, so `load_classifier` checks what it can cheaply before
Keras builds anything (`check_model_file`): the zip's structure and CRCs
(a changed byte anywhere in an entry is seen), one entry of each name,
config.json an object of JSON, the preprocessor's length limits within the
runtime's bounds and its tokenizer's settings, and the memory the model's
sizes ask for within what its weights file can hold. An edited
`vocabulary_size` or `max_sentences` of 1e9 is refused then, not met as an
allocation of terabytes. What Keras then finds (a weight of another shape, a
setting a constructor refuses) is reported in one line too.
"""

import collections
import json
import math
import numbers
import pathlib
import warnings
import zipfile
import zlib

import keras

from hierattn.defaults import MAX_DOCUMENT_IDS
from hierattn.errors import RunError
from hierattn.models.legacy import backbone_config
from hierattn.models.text_classifier import TextClassifier
from hierattn.runtime.checks import MODE_LIMITS, TRAINED_UNITS

CONFIG_FILE, WEIGHTS_FILE = "config.json", "model.weights.h5"
# The preprocessor's length limits: the ids of one document, bounded as a bundle's are (`hierattn.runtime.checks`).
LENGTH_LIMITS = ("max_sentences", "max_words", "sequence_length", "ngram_length")
TOKENIZER_SETTINGS = ("lower", "unescape_html", "units", "subwords")
# Every variable a backbone builds is stored in its weights file, so the float32 numbers its sizes ask for
# (`numbers_asked`: at least the true count, at most about twice it) may be at most this many times the file's
# bytes / 4, plus a margin of numbers for tiny files: an edited size asks for far more, and is refused before Keras
# allocates it (at most 4 x the file and 64 MiB are allocated for an edited file).
MEMORY_FACTOR, MEMORY_MARGIN = 4, 16 << 20
# config.json holds settings and names, a few kilobytes (the vocabulary is an asset): more is an edited file.
MAX_CONFIG_BYTES = 64 << 20


def load_classifier(model_file):
    """A `TextClassifier` from a `.keras` file (safe mode on), checked.

    The file is checked before Keras builds anything (`check_model_file`:
    its zip and CRCs, its config's limits and sizes), and its parts against
    each other once loaded: a vocabulary larger than the embedding, or a
    label list of another length than the outputs, is refused, not used.
    Keras's warnings while it loads are recorded, to refuse a file whose
    weights it skipped, and the others warned again. `warnings.catch_warnings`
    does that for the whole process: another thread's warnings in that time
    are warned again after it, and a filter another thread sets meanwhile is
    undone (the server loads in a process of its own).

    Args:
        model_file: Path of a `.keras` file written by `TextClassifier.save`
            (or a training run's `model.keras`).

    Returns:
        The `TextClassifier`.

    Raises:
        RunError: The file is missing, damaged, holds code or another kind of
            model, asks for sizes or limits beyond its weights or the
            runtime's bounds, or its parts disagree; in one line.

    Example:

    ```python
    classifier = hierattn.load_classifier("runs/han-imdb/model.keras")
    classifier.predict(["A gripping film."])
    ```
    """
    model_file = pathlib.Path(model_file)
    if not model_file.is_file():
        raise RunError(f"{model_file.parent} has no {model_file.name}")
    if not zipfile.is_zipfile(model_file):
        raise RunError(
            f"{model_file} is not a Keras model file: it is not a zip archive (damaged, truncated, "
            "or another kind of file)"
        )
    check_model_file(model_file)
    try:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            classifier = keras.saving.load_model(model_file, safe_mode=True)
        _check_all_weights_read(caught, model_file)
    except RunError:
        raise
    except Exception as error:  # any failure to read the file is reported in one line
        message = " ".join(str(error).split()) or type(error).__name__
        message = message.rsplit("Exception encountered:", 1)[-1].strip()  # Keras's cause, without the whole config
        if "safe_mode" in message:
            raise RunError(
                f"{model_file} holds Python code (e.g. a Lambda layer) and Keras safe mode refuses to "
                "load it; hierattn does not run code from model files. Load it yourself with "
                "keras.saving.load_model(..., safe_mode=False) only if you trust its source."
            ) from None
        if len(message) > 400:
            message = message[:400].rsplit(" ", 1)[0] + " ..."
        raise RunError(f"{model_file} could not be loaded ({message})") from None
    if not isinstance(classifier, TextClassifier) or not classifier.adapted:
        raise RunError(
            f"{model_file} holds a {type(classifier).__name__}, not a trained hierattn TextClassifier "
            "(runs written before hierattn 0.5 must be trained again)"
        )
    outputs = classifier.backbone.num_classes
    if outputs != len(classifier.label_names):
        raise RunError(
            f"{model_file} names {len(classifier.label_names)} classes but its model has {outputs} "
            "outputs: the file was edited or mixed with another"
        )
    size = classifier.backbone.token_embedding.input_dim
    vocabulary = len(classifier.preprocessor.vocabulary)
    if vocabulary > size:
        raise RunError(
            f"{model_file}: its vocabulary has {vocabulary:,} ids but the embedding has {size:,} rows: "
            "the file was edited or mixed with another"
        )
    return classifier


def _check_all_weights_read(caught, model_file):
    """Refuses a file whose weights Keras skipped (warning that the layers keep fresh random ones); others re-warned.

    A weights file with a group renamed or missing (edited, or damaged
    inside with its CRC made good) loads with Keras's warning only, and the
    classifier would answer with random weights.
    """
    for warning in caught:
        message = " ".join(str(warning.message).split())
        if "freshly-initialized weights" in message:  # layers' weights; not the optimizer's ("Skipping variable
            # loading"), which a model saved compiled but untrained, or with layers frozen since, has of another count
            raise RunError(
                f"{model_file} could not be loaded (its {WEIGHTS_FILE} lacks weights of the model: "
                f"{message.split(':', 1)[0]}): the file was edited or damaged"
            )
        warnings.warn_explicit(warning.message, warning.category, warning.filename, warning.lineno)


def check_model_file(model_file):
    """Refuses (`RunError`, one line) a `.keras` file that is damaged, or whose config asks for too much, unbuilt.

    What is checked (the module's docstring says why): the zip's headers and
    every entry's CRC; one entry of each name, config.json and
    model.weights.h5 among them; config.json an object of JSON; then
    `config_problem`.
    """
    try:
        with zipfile.ZipFile(model_file) as archive:
            infos = archive.infolist()
            sizes = {info.filename: info.file_size for info in infos}
            if sizes.get(CONFIG_FILE, 0) > MAX_CONFIG_BYTES:  # before it is inflated: a zip bomb's is gigabytes
                raise RunError(
                    f"{model_file} could not be loaded (its {CONFIG_FILE} is {sizes[CONFIG_FILE]:,} bytes: at most "
                    f"{MAX_CONFIG_BYTES:,})"
                )
            damaged = archive.testzip()  # reads every entry: its header and its CRC
            config = archive.read(CONFIG_FILE) if CONFIG_FILE in sizes else None
    except (zipfile.BadZipFile, zlib.error, EOFError, OSError, NotImplementedError, RuntimeError, ValueError) as error:
        # zipfile's own (BadZipFile), a damaged deflate stream (zlib.error), an unknown compression method
        # (NotImplementedError) or an entry marked encrypted (RuntimeError), found in a header or an entry
        raise RunError(f"{model_file} is not a Keras model file: its zip archive is damaged ({_line(error)})") from None
    if damaged is not None:
        raise RunError(f"{model_file} is not a Keras model file: its entry {damaged} is damaged (its CRC differs)")
    names = [info.filename for info in infos]
    counts = collections.Counter(names)
    twice = next((name for name in names if counts[name] > 1), None)
    if twice is not None:
        raise RunError(f"{model_file} is not a Keras model file: it holds {twice} twice")
    missing = [name for name in (CONFIG_FILE, WEIGHTS_FILE) if name not in names]
    if missing:
        raise RunError(f"{model_file} is not a Keras model file: it has no {' and no '.join(missing)}")
    try:
        config = json.loads(config)
    except (ValueError, RecursionError) as error:  # not UTF-8 or not JSON (JSONDecodeError); nested too deep
        raise RunError(
            f"{model_file} could not be loaded (its {CONFIG_FILE} is not valid JSON: {_line(error)})"
        ) from None
    weights = next(info.file_size for info in infos if info.filename == WEIGHTS_FILE)
    problem = config_problem(config, weights)
    if problem is not None:
        raise RunError(f"{model_file} could not be loaded (its {CONFIG_FILE}: {problem})")


def config_problem(config, weights_size):
    """What is wrong with a `.keras` file's config (its config.json, read) before Keras builds it, or None.

    Only what Keras and the classes would not refuse in time: a length limit
    above the runtime's `MAX_DOCUMENT_IDS` (found at prediction, as an
    allocation), a tokenizer that is not a trained one (found at the first
    text), and sizes whose variables cannot be in a weights file of
    `weights_size` bytes (found as an allocation while building). The rest
    (types, ranges, choices) the classes check as they are made.
    """
    if not isinstance(config, dict) or not isinstance(config.get("config"), dict):
        return f"it must be an object with a config object, not {_short(config)}"
    if config.get("class_name") != TextClassifier.__name__:  # another kind of model (code, say): Keras's to refuse
        return None
    preprocessor = _inner(config["config"].get("preprocessor"))
    if preprocessor is None:  # a new preprocessor would be made, and the saved vocabulary read into it
        return f"its preprocessor must be a saved TextPreprocessor, not {_short(config['config'].get('preprocessor'))}"
    problem = _preprocessor_problem(preprocessor, config["config"].get("ngram_logits") is not None)
    if problem is not None:
        return problem
    problem = _ngram_problem(_inner(config["config"].get("ngram_logits")), _backbone(config["config"].get("backbone")))
    if problem is not None:
        return problem
    asked = numbers_asked(config["config"].get("backbone"))
    allowed = MEMORY_FACTOR * weights_size / 4 + MEMORY_MARGIN
    if not asked <= allowed:  # NaN included
        return (
            f"its backbone's sizes ask for about {asked:,.0f} numbers, where its {WEIGHTS_FILE} of "
            f"{weights_size:,} bytes holds them all: a size was edited"
        )
    return None


def _preprocessor_problem(settings, ngrams):
    """A trained preprocessor's length limit missing or over the bound, or tokenizer settings it cannot have."""
    mode = settings.get("mode")
    needed = [*(MODE_LIMITS.get(mode, ()) if isinstance(mode, str) else ()), *(["ngram_length"] if ngrams else [])]
    missing = next((name for name in needed if settings.get(name) is None), None)
    if missing is not None:  # chosen by `adapt` and saved: a saved classifier has it
        return f"the preprocessor's {missing} is missing"
    for name in LENGTH_LIMITS:
        value = settings.get(name)
        if _number(value) and not value <= MAX_DOCUMENT_IDS:
            return f"the preprocessor's {name} must be at most {MAX_DOCUMENT_IDS:,}, not {_short(value)}"
    ids = [settings.get(name) for name in ("max_sentences", "max_words")]
    if all(_number(value) for value in ids) and not ids[0] * ids[1] <= MAX_DOCUMENT_IDS:
        return f"the preprocessor's max_sentences x max_words must be at most {MAX_DOCUMENT_IDS:,} ids a document"
    tokenizer = settings.get("tokenizer")
    if tokenizer is None:
        return "the preprocessor has no tokenizer settings"
    if not isinstance(tokenizer, dict):
        return f"the tokenizer's settings must be an object, not {_short(tokenizer)}"
    unknown = sorted(set(tokenizer) - set(TOKENIZER_SETTINGS))
    if unknown:
        return f"the tokenizer has no setting {_short(unknown[0])}"
    flags = {name: tokenizer.get(name, True) for name in ("lower", "unescape_html")}
    wrong = next((name for name, value in flags.items() if not isinstance(value, bool)), None)
    if wrong is not None:
        return f"the tokenizer's {wrong} must be true or false, not {_short(flags[wrong])}"
    units = tokenizer.get("units", "words")
    if units not in TRAINED_UNITS:
        return f"the tokenizer's units must be one of {', '.join(TRAINED_UNITS)}, not {_short(units)}"
    if units == "subwords" and not isinstance(tokenizer.get("subwords"), str):
        return "the tokenizer reads subwords but has no subword model"
    return None


def _ngram_problem(settings, backbone):
    """The n-gram part's sizes that its class would meet too late: a key of `ngram_max` words (computed as
    `vocabulary_size ** ngram_max`: an edited 1e9 takes minutes and gigabytes), and classes not the backbone's
    (`num_classes` of 1e9: an array of gigabytes)."""
    if settings is None:
        return None
    words, longest, classes = (settings.get(name) for name in ("vocabulary_size", "ngram_max", "num_classes"))
    words = words if _number(words) and words >= 2 else 2
    if _number(longest) and longest >= 1 and not longest * math.log2(words) < 63:
        return f"the n-gram part's ngram_max {_short(longest)} makes keys over 63 bits for {_short(words)} ids"
    expected = (backbone or {}).get("num_classes")
    if _number(classes) and expected is not None and classes != expected:  # None: the backbone refused as it is read
        return f"the n-gram part has {_short(classes)} classes where the backbone has {_short(expected)}"
    return None


def _backbone(config):
    """A serialized backbone's settings (a 0.5 functional backbone read as its `Backbone`); None where not read here."""
    try:
        return _inner(backbone_config(config))
    except (KeyError, TypeError, AttributeError, IndexError):  # refused as Keras reads it: nothing is built
        return None


def numbers_asked(backbone):
    """About (at least) how many float32 numbers a serialized backbone's variables hold; 0 for one not read here.

    From its sizes, by architecture (a 0.5 functional backbone read as its
    `Backbone`, `hierattn.models.legacy`): the embedding, each recurrent
    layer counted as an LSTM's (four gates, both directions), attention
    and the head. A size that is not a number (refused when the backbone
    is made) counts as 1.
    """
    try:
        backbone = backbone_config(backbone)
    except (KeyError, TypeError, AttributeError, IndexError):  # refused as Keras reads it: nothing is built
        return 0
    config = _inner(backbone) or {}

    def size(name, default=1):
        value = config.get(name, default)
        if not _number(value):
            return 1
        return math.inf if math.isnan(value) or value > 1e300 else max(float(value), 1.0)

    def both_ways(inputs, units):  # a bidirectional LSTM's kernels, recurrent kernels and biases
        return 2 * 4 * units * (inputs + units + 2)

    words, width, classes = size("vocabulary_size"), size("embedding_dim"), size("num_classes")
    kind = backbone.get("class_name") if isinstance(backbone, dict) else None
    if kind == "HANBackbone":
        units, sentences, attention = size("word_units"), size("sentence_units"), size("attention_units")
        inner = both_ways(width, units) + both_ways(2 * units, sentences) + 2 * attention * (units + sentences + 2)
        head = 2 * sentences * classes
    elif kind == "RNNBackbone":
        units = size("units")
        inner, head = both_ways(width, units) + 3 * (2 * units + 1) ** 2, 2 * units * classes
    elif kind == "TransformerBackbone":
        hidden, layers = size("intermediate_dim"), size("num_layers")
        inner = size("sequence_length") * width + layers * (4 * width * (width + 3) + 2 * width * hidden + hidden)
        inner, head = inner + width * (width + 2), width * classes
    else:
        return 0
    return words * width + inner + head + classes


def _inner(serialized):
    """The `config` of a serialized Keras object (a dict), or None."""
    return (
        serialized.get("config")
        if isinstance(serialized, dict) and isinstance(serialized.get("config"), dict)
        else None
    )


def _number(value):
    """Whether `value` is a number (an int or a float, NaN and infinities included; not a bool)."""
    return isinstance(value, numbers.Real) and not isinstance(value, bool)


def _short(value):
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


def _line(error):
    return " ".join(str(error).split())[:300] or type(error).__name__
