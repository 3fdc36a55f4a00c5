"""What `hierattn.runtime.load` checks before a bundle answers, and what a `Predictor` takes as texts.

A bundle's metadata can be edited and its file swapped, so `load` believes
neither. `check_metadata` checks each value's type and range: whole-number
length limits of at least 1 and at most `MAX_DOCUMENT_IDS` (every number that
sizes an allocation has an upper bound), unique class names, the decision policy's
numbers (thresholds in (0, 1), finite offsets and cascade numbers: the core
checks them, `hierattn.decision.rule_problem` and `cascade_problem`), a
vocabulary of unique words. `check_graph` then asks the graph
itself, on a few one-word probe documents: how many columns its output
has (one per class named), how many ids its embedding holds (the
vocabulary's, with padding and unknown) and whether its columns are a
softmax's (a single-label classifier's: each row sums to 1) or independent
label probabilities (a multi-label one's). `check_ngram_part` compares the
n-gram part's logits computed in NumPy from the metadata's settings with its
graph's, and `check_digest` the file with the digest recorded at export.
Each failure is one `DataError` line that starts with the bundle's path.

`as_texts` is the one check of texts, for the runtime and for
`TextClassifier` alike: strings, or UTF-8 `bytes`, in a list (tuple,
array, Series, iterator); never a single string, a dict or a set.
"""

import collections.abc
import numbers
import reprlib
import types

import numpy as np

from hierattn.data.vocabulary import OOV_TOKEN, PAD_TOKEN
from hierattn.decision import cascade_problem, rule_problem
from hierattn.defaults import MAX_DOCUMENT_IDS
from hierattn.errors import DataError, first_line
from hierattn.kinds import MULTI, SINGLE, kind_of
from hierattn.runtime.bundle import DIGEST_KEY

MODES = ("hierarchical", "flat")
# The length limits a mode's ids are cut to (the others may be null).
MODE_LIMITS = {"hierarchical": ("max_sentences", "max_words"), "flat": ("sequence_length",)}
# The axes of the token ids a mode's graph reads: (batch, sentences, words) or (batch, words).
MODE_RANKS = {"hierarchical": 3, "flat": 2}
TRAINED_UNITS = ("words", "characters", "subwords")  # what a trained tokenizer reads ("auto" is chosen before)
NGRAM_SETTINGS = ("vocabulary_size", "num_classes", "ngram_max", "num_buckets")
# The most rows an embedding may have: ids are int32 in the graph (and in `check_graph`'s probes).
MAX_EMBEDDING_ROWS = 2**31 - 1
# The n-gram part's own limits (`hierattn.ngrams.logits.NgramLogits`): feature ids are 31-bit, an n-gram's key
# (vocabulary_size ** ngram_max) 63-bit; and the term frequencies it offers. A bundle's settings must also be its
# graph's (`check_ngram_part`).
MAX_BUCKETS = 2**31 - 1
TERM_FREQUENCIES = ("binary", "sublinear")
# How far the n-gram part's logits computed in NumPy may be from its graph's (`check_ngram_part`), in float32.
NGRAM_TOLERANCE = 1e-4
# How far from 1 a softmax's row sums may be, in float32.
SOFTMAX_TOLERANCE = 1e-4
# What is wrong with a bundle of each kind whose graph is the other kind's.
_WRONG_GRAPH = {
    MULTI: "it says multi_label, but its graph is a single-label classifier's (a softmax)",
    SINGLE: "its graph is a multi-label classifier's (its rows do not sum to 1), "
    "but it is a bundle without its thresholds (export it again)",
}


def _whole(value):
    return isinstance(value, numbers.Integral) and not isinstance(value, bool) and value >= 1


def _strings(values):
    return isinstance(values, list) and all(isinstance(v, str) for v in values)


def _short(value):
    return reprlib.repr(value)


def _twice(values):
    """The first value that appears twice in `values` (None: all differ)."""
    counts = collections.Counter(values)
    return next((value for value in values if counts[value] > 1), None)


def check_metadata(metadata, path):
    """Refuses (`DataError`) a bundle's metadata (`hierattn.runtime.bundle`) whose values are not of its types and ranges.

    Example:

    >>> metadata = {"label_names": ["pos", "pos"], "multi_label": False}
    >>> try:
    ...     check_metadata(metadata, "model.onnx")
    ... except DataError as error:
    ...     print(error)
    model.onnx: its hierattn metadata is damaged (label_names: 'pos' appears twice)
    """

    def check(good, what):
        if not good:
            raise DataError(f"{path}: its hierattn metadata is damaged ({what})")

    multi_label = metadata.get("multi_label", False)
    check(isinstance(multi_label, bool), f"multi_label must be true or false, not {_short(multi_label)}")
    names, fewest = metadata["label_names"], kind_of(multi_label).fewest_classes
    check(_strings(names) and all(names), f"label_names must be a list of non-empty strings, not {_short(names)}")
    twice = _twice(names)
    check(twice is None, f"label_names: {_short(twice)} appears twice")
    check(len(names) >= fewest, f"label_names: {len(names)} for a classifier of at least {fewest}")
    problem = rule_problem(metadata)  # the thresholds, or the offsets (`hierattn.decision`)
    check(problem is None, problem)
    inputs, outputs = metadata["inputs"], [metadata["output"], metadata.get("ngram_output", "")]
    good = isinstance(inputs, dict) and "token_ids" in inputs and set(inputs) <= {"token_ids", "ngram_ids"}
    check(good and _strings([*inputs.values(), *outputs]), "inputs and outputs must name the graph's")
    _check_preprocessor(metadata, check)
    tokens = metadata["vocabulary"].get("tokens") if isinstance(metadata["vocabulary"], dict) else None
    check(_strings(tokens), f"vocabulary tokens must be a list of strings, not {_short(tokens)}")
    twice = _twice(tokens)
    check(twice is None, f"vocabulary tokens: {_short(twice)} appears twice")
    check(not {PAD_TOKEN, OOV_TOKEN} & set(tokens), f"vocabulary tokens hold {PAD_TOKEN} or {OOV_TOKEN}")
    embedding = metadata.get("embedding")
    if embedding is not None:  # since #54: the ids the exporter's vocabulary had, and the embedding's rows
        ids, rows = (embedding.get(key) if isinstance(embedding, dict) else None for key in ("ids", "rows"))
        words = f"{len(tokens)} words ({len(tokens) + 2} ids)"
        check(_whole(ids) and ids == len(tokens) + 2, f"vocabulary: {words} where it had {_short(ids)} ids")
        check(
            _whole(rows) and ids <= rows <= MAX_EMBEDDING_ROWS,
            f"the embedding's rows must be a whole number from {ids} to {MAX_EMBEDDING_ROWS:,}, not {_short(rows)}",
        )
    parts = ["ngram_part" in metadata, "ngram_output" in metadata]  # both, or neither (before the cascade)
    check(parts[0] == parts[1], "ngram_part and ngram_output go together")
    if "ngram_part" in metadata:
        _check_ngram_part(metadata, len(names), len(tokens) + 2, check)


def _check_preprocessor(metadata, check):
    """The preprocessor's mode, length limits (whole numbers of at least 1; null where unused) and tokenizer."""
    settings = metadata["preprocessor"]
    check(isinstance(settings, dict) and settings.get("mode") in MODES, f"mode must be one of {', '.join(MODES)}")
    needed = {*MODE_LIMITS[settings["mode"]], *(["ngram_length"] if "ngram_ids" in metadata["inputs"] else [])}
    for name in ("max_sentences", "max_words", "sequence_length", "ngram_length"):
        value = settings.get(name)
        good = _whole(value) or (value is None and name not in needed)
        check(good, f"{name} must be a whole number of at least 1, not {_short(value)}")
        if value is not None and value > MAX_DOCUMENT_IDS:
            check(False, f"{name} must be at most {MAX_DOCUMENT_IDS:,}, not {value:,}")
    ids = (settings.get("max_sentences") or 1) * (settings.get("max_words") or 1)
    check(
        ids <= MAX_DOCUMENT_IDS,
        f"max_sentences x max_words must be at most {MAX_DOCUMENT_IDS:,} ids a document, not {ids:,}",
    )
    tokenizer = settings.get("tokenizer")
    check(isinstance(tokenizer, dict), f"the tokenizer's settings must be an object, not {_short(tokenizer)}")
    unknown = sorted(set(tokenizer) - {"lower", "unescape_html", "units", "subwords"})
    check(not unknown, f"the tokenizer has no setting {_short(unknown[0] if unknown else None)}")
    flags = [tokenizer.get(name, True) for name in ("lower", "unescape_html")]
    check(
        all(isinstance(v, bool) for v in flags),
        f"the tokenizer's lower and unescape_html must be true or false, not {_short(flags)}",
    )
    units = tokenizer.get("units", "words")
    check(
        units in TRAINED_UNITS, f"the tokenizer's units must be one of {', '.join(TRAINED_UNITS)}, not {_short(units)}"
    )
    if units == "subwords":
        check(_subwords_load(tokenizer.get("subwords")), "its subword model is missing or damaged")


def _subwords_load(model):
    """Whether a tokenizer's subword model (base64 text) loads."""
    from hierattn.data.units import load_subwords

    if not isinstance(model, str):
        return False
    try:
        return len(load_subwords(model)) > 0
    except (ValueError, RuntimeError, OSError):  # a bad base64 text, or a model SentencePiece cannot read
        return False


def _check_ngram_part(metadata, labels, ids, check):
    """The cascade's numbers (finite) and the n-gram part's settings (whole numbers, its sizes the bundle's)."""
    cascade, part = metadata.get("cascade"), metadata["ngram_part"]
    check(isinstance(cascade, dict) and isinstance(part, dict), "cascade and ngram_part must be objects")
    problem = cascade_problem(cascade)  # its numbers (`hierattn.decision`)
    check(problem is None, problem)
    for name in NGRAM_SETTINGS:
        check(_whole(part.get(name)), f"the n-gram part's {name} must be a whole number, not {_short(part.get(name))}")
    check(part["num_classes"] == labels, f"the n-gram part has {part['num_classes']} classes for {labels} labels")
    check(part["vocabulary_size"] == ids, f"the n-gram part reads {part['vocabulary_size']} ids, the vocabulary {ids}")
    buckets, longest = part["num_buckets"], part["ngram_max"]
    check(ids < buckets <= MAX_BUCKETS, f"the n-gram part's num_buckets must be from {ids + 1} to {MAX_BUCKETS:,}")
    # ngram_max under 63 first: ids ** 10**9 alone would take minutes to compute.
    too_long = f"the n-gram part's ngram_max {longest} makes keys over 63 bits for {ids} ids"
    check(longest < 63 and ids**longest < 2**63, too_long)
    check(part.get("tf") in TERM_FREQUENCIES, f"the n-gram part's tf must be one of {', '.join(TERM_FREQUENCIES)}")
    check(isinstance(part.get("normalize"), bool), "the n-gram part's normalize must be true or false")
    check(_strings(part.get("tables")) and len(part["tables"]) == 4, "the n-gram part must name its 4 tables")


def check_digest(metadata, digest, path):
    """Refuses (`DataError`) a bundle whose file (`digest`: `hierattn.runtime.bundle.file_digest`) is not the one its
    metadata's `graph_sha256` records; a bundle without one (exported before #67) passes."""
    if DIGEST_KEY not in metadata:
        return
    recorded = metadata[DIGEST_KEY]
    if not (isinstance(recorded, str) and len(recorded) == 64):
        raise DataError(
            f"{path}: its hierattn metadata is damaged ({DIGEST_KEY} must be a SHA-256, not {_short(recorded)})"
        )
    if recorded != digest:
        raise DataError(
            f"{path}: its graph was changed after export (its SHA-256 is not the {DIGEST_KEY} its metadata records); "
            "export it again"
        )


def check_graph(session, metadata, path):
    """Refuses (`DataError`) a bundle whose graph does not agree with its metadata (`check_metadata`'s first).

    The graph answers for itself on probe documents of one word each: the
    last word of the vocabulary, the unknown word and the first word.
    Its output (and n-gram output) must have one column per label; the
    last word must be read and the id past the embedding refused (its rows:
    the vocabulary's ids, or as many as its metadata records, a backbone of
    its own may have more); a single-label bundle's rows must sum to 1 (a
    softmax) and a multi-label one's must not.
    """
    import onnxruntime

    quiet = onnxruntime.RunOptions()
    quiet.log_severity_level = 4  # the refusal of the id past the vocabulary is expected: no error logged
    ids, labels = len(metadata["vocabulary"]["tokens"]) + 2, len(metadata["label_names"])
    rows = (metadata.get("embedding") or {}).get("rows", ids)
    outputs = list(dict.fromkeys([metadata["output"], metadata.get("ngram_output", metadata["output"])]))

    ranks = {node.name: len(node.shape) for node in session.get_inputs()}
    mode, rank = metadata["preprocessor"]["mode"], ranks.get(metadata["inputs"]["token_ids"])
    if rank != MODE_RANKS[mode]:
        raise DataError(
            f"{path}: its mode is {mode}, but its graph reads token ids of {rank} axes, not {MODE_RANKS[mode]}"
        )

    def run(token_ids, ngram_ids):
        feed = {metadata["inputs"]["token_ids"]: token_ids, metadata["inputs"].get("ngram_ids"): ngram_ids}
        feed = {name: ids_.reshape(ids_.shape + (1,) * (ranks[name] - 1)) for name, ids_ in feed.items() if name}
        return session.run(outputs, feed, quiet)

    probe = np.array([ids - 1, 1, min(2, ids - 1), rows - 1], np.int32)
    try:
        found = run(probe, probe)
    except Exception as error:  # onnxruntime raises its own classes, not exported by name
        raise DataError(
            f"{path}: its graph cannot read its vocabulary's ids ({ids - 2} words: ids 0 to {ids - 1}): {first_line(error)}"
        ) from None
    for name, columns in zip(outputs, found):
        if columns.shape != (len(probe), labels):
            width = columns.shape[1] if columns.ndim == 2 else columns.shape
            raise DataError(f"{path}: its graph's output {name} has {width} columns for its {labels} label names")
    _check_activation(found[0], metadata, path)
    try:
        run(np.array([rows], np.int32), np.ones(1, np.int32))
    except Exception:  # the id past the embedding's rows is refused: as it should be
        return
    raise DataError(f"{path}: its graph's embedding holds more than its {rows} ids (words missing from its vocabulary)")


def check_ngram_part(tables, metadata, session, path):
    """Refuses (`DataError`) a bundle whose n-gram settings are not its graph's: the runtime computes the n-gram part's
    logits in NumPy from the metadata's settings and the graph's tables (`hierattn.ngrams.twin`), so an edited
    `num_buckets`, `ngram_max`, `tf` or `normalize` would answer differently without a word.

    The kept ids' sentinel (past the last) is the graph's num_buckets; then both compute the logits of probe
    documents: the first 64 words in order and backwards, words repeated (tf), and n-grams the part keeps of
    orders 2, ngram_max and ngram_max + 1 (`_kept_ngrams`): an ngram_max lowered drops n-grams the graph
    counts, one raised counts n-grams the graph does not.
    """
    from hierattn.ngrams import twin

    part, inputs = metadata["ngram_part"], metadata["inputs"]
    if "ngram_ids" not in inputs or "ngram_output" not in metadata:
        raise DataError(f"{path}: its hierattn metadata has an n-gram part but no ngram_ids input or ngram_output")
    if int(tables._ids[-1]) != part["num_buckets"]:
        raise DataError(
            f"{path}: its n-gram part's num_buckets is {part['num_buckets']}, its graph's {tables._ids[-1]}"
        )
    ids = part["vocabulary_size"]
    words = np.arange(2, min(ids, 66), dtype=np.int64)
    documents = [words, words[::-1], np.repeat(words[:8], 3), [1]]
    for order in sorted({2, part["ngram_max"], part["ngram_max"] + 1} - {1}):
        documents += _kept_ngrams(tables, part, words, order)
    probe = np.zeros((len(documents), max(len(document) for document in documents)), np.int32)
    for row, document in enumerate(documents):
        probe[row, : len(document)] = document
    probe = probe[probe.any(axis=1)]
    ranks = {node.name: len(node.shape) for node in session.get_inputs()}
    token_ids = inputs["token_ids"]
    feed = {
        inputs["ngram_ids"]: probe,
        token_ids: np.ones((len(probe),) + (1,) * (ranks[token_ids] - 1), np.int32),
    }
    expected = session.run([metadata["ngram_output"]], feed)[0]
    found = twin.logits(tables, probe)
    if expected.shape != found.shape or not np.allclose(found, expected, rtol=NGRAM_TOLERANCE, atol=NGRAM_TOLERANCE):
        raise DataError(
            f"{path}: its n-gram part's settings (ngram_max, tf, normalize) are not its graph's: "
            "their logits differ on probe documents"
        )


def _kept_ngrams(tables, part, words, order, tries=4096, most=16):
    """Probe documents of n-grams of `order` whose hashed feature the n-gram part keeps, as `twin.ngram_features`
    hashes them whatever the part's ngram_max: of `tries` n-grams of `words` drawn at random (seeded), up to
    `most`, one after another and each with the unknown word (1) after it. None found: no documents (a tiny part
    keeps few of its millions of buckets, and then its graph and NumPy differ on almost no text)."""
    from hierattn.ngrams import twin

    if not len(words):
        return []
    grams = np.random.default_rng(order).choice(words, (tries, order))
    settings = types.SimpleNamespace(
        vocabulary_size=part["vocabulary_size"], ngram_max=order, num_buckets=part["num_buckets"]
    )
    kept = grams[np.isin(twin.ngram_features(settings, grams)[order - 1][:, 0], tables._ids[:-1])][:most]
    if not len(kept):
        return []
    return [kept.reshape(-1), np.concatenate([kept, np.ones((len(kept), 1), np.int64)], axis=1).reshape(-1)]


def _check_activation(probabilities, metadata, path):
    """Refuses a single-label bundle whose rows are not a softmax's, and a multi-label one whose rows are."""
    if not np.isfinite(probabilities).all():
        raise DataError(f"{path}: its graph gives probabilities that are not finite numbers")
    sums_to_one = np.allclose(probabilities.sum(axis=1), 1.0, rtol=0, atol=SOFTMAX_TOLERANCE)
    softmax = sums_to_one and probabilities.shape[1] > 1  # one label's sigmoid may give 1: it says nothing
    said = kind_of(metadata.get("multi_label", False))
    if said is not (SINGLE if softmax else MULTI):
        raise DataError(f"{path}: {_WRONG_GRAPH[said]}")


def as_texts(texts):
    """A list of strings from a list, tuple, array, Series or iterator of them (UTF-8 `bytes` decoded).

    Raises:
        DataError: A single string, a mapping or set, something not
            iterable or not one-dimensional, or a text that is neither a
            string nor UTF-8 bytes (its position, 1 first, named).

    Example:

    >>> as_texts((b"caf\\xc3\\xa9", "film"))
    ['café', 'film']
    >>> try:
    ...     as_texts(["a film", None])
    ... except DataError as error:
    ...     print(error)
    texts must be strings: text 2 is None (NoneType)
    """
    if isinstance(texts, (str, bytes)):
        raise DataError("give a list of texts, not a single string (e.g. [text])")
    kind = type(texts).__name__
    if isinstance(texts, (collections.abc.Mapping, collections.abc.Set)):
        raise _not_a_list(texts)
    if getattr(texts, "ndim", 1) != 1:
        raise DataError(f"texts must be one-dimensional (one text per row); got shape {np.shape(texts)}")
    try:
        items = iter(texts.tolist() if isinstance(texts, np.ndarray) or kind == "Series" else texts)
    except TypeError:
        raise _not_a_list(texts) from None
    texts = []
    for i, text in enumerate(items):  # an iterator is refused at its first text that is not one
        if isinstance(text, bytes):
            try:
                text = text.decode("utf-8")
            except UnicodeDecodeError as error:
                raise DataError(
                    f"text {i + 1} is not UTF-8: it has the byte 0x{text[error.start]:02x} at position "
                    f"{error.start} (decode it first, e.g. with .decode('latin-1'))"
                ) from None
        elif not isinstance(text, str):
            raise DataError(f"texts must be strings: text {i + 1} is {reprlib.repr(text)} ({type(text).__name__})")
        texts.append(text)
    return texts


def _not_a_list(texts):
    return DataError(
        f"texts must be a list (or tuple, array, Series) of strings; got {reprlib.repr(texts)} ({type(texts).__name__})"
    )
