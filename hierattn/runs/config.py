"""What determines a training run: `TrainConfig`, saved as the run's config.json, and the flat settings it is made from.

A run's settings are the config of the classifier it trains (what
`TextClassifier.from_config` takes) plus what only a run has: `epochs`,
`batch_size`, `learning_rate`, `patience`, `validation_split`, `limit`,
`baseline` and where the data came from. Each is checked in one place: the
classifier's arguments by the classes that take them (`hierattn.models.arguments`),
the run's own by `TrainConfig.validate`, which runs when a `TrainConfig` is
made (from flat settings, by hand or from a run's config.json), so a
`TrainConfig` that exists is valid: it is handed down a run as it is.

Flat settings are one dict of both kinds, as the command line's options and
a `--config` JSON file give them (`TrainConfig.from_dict`): `model` names the
architecture (the classifier's `backbone` argument), `max_length` sets its
length limits (`length_settings`) and `mixed_precision` its dtype
(`"mixed_float16"`). Nothing here imports Keras, so bad settings are refused
before TensorFlow loads.
"""

import dataclasses
import math
import pathlib

from hierattn.data.encoding import check_document_ids
from hierattn.defaults import BACKBONES, MAX_DOCUMENT_IDS, MODELS, PREPROCESSING, TRAINING, UNITS
from hierattn.errors import ArgumentError, DataError, HierattnError, RunError
from hierattn.models.arguments import (
    CLASSIFIER_ARGUMENTS,
    LENGTH_LIMITS,
    check_bool,
    check_classifier_arguments,
    check_whole,
)
from hierattn.policy import DecisionPolicy
from hierattn.utils.jsonfile import load_json, read_json_object

CONFIG_FORMAT = "hierattn.train-config/3"
FLAT_FORMAT = "hierattn.train-config/2"  # flat settings, the classifier's among them (read, converted: `read_config`)

# The settings only a run has (beside `data`), in config.json's order.
RUN_SETTINGS = ("epochs", "batch_size", "learning_rate", "patience", "validation_split", "limit", "baseline")

# The parts of a classifier's config that are not settings: Keras's, and what training makes: the n-gram part, the
# cascade's report and the decision policy, with the policy's own fields (label names, network, thresholds, ...) that
# a config holds apart (one saved before the policy, or a classifier's not built yet).
_NOT_SETTINGS = (
    "name",
    "trainable",
    "ngram_logits",
    "cascade",
    "policy",
    *(field.name for field in dataclasses.fields(DecisionPolicy)),
)


def length_settings(model, max_length):
    """The length limits a `max_length` value sets: `"SxW"` for han, `"N"` for the flat models.

    Args:
        model: One of `MODELS`.
        max_length: Sentences x words per sentence for han (`"30x40"`),
            words for transformer and rnn (`"400"`).

    Returns:
        `{"max_sentences": S, "max_words": W}` for han, `{"sequence_length": N}` otherwise.

    Raises:
        ArgumentError: A value of the wrong form for `model`, or one of
            more than `MAX_DOCUMENT_IDS` ids a document, in one line.
    """
    parts = str(max_length).lower().replace(" ", "").split("x")
    try:
        numbers = [int(part) for part in parts]
    except ValueError:
        numbers = []
    hierarchical = model == "han"
    if len(numbers) != (2 if hierarchical else 1) or min(numbers) < 1:
        form = "SENTENCESxWORDS, e.g. 30x40" if hierarchical else "a number of words, e.g. 400"
        raise ArgumentError(f"{{argument}} for the {model} model is {form}; got {max_length!r}", argument="max_length")
    settings = dict(zip(("max_sentences", "max_words") if hierarchical else ("sequence_length",), numbers))
    try:
        check_document_ids(**settings)  # a saved classifier's bound, checked at load (#67)
    except ValueError:
        raise ArgumentError(
            f"{{argument}} reads at most {MAX_DOCUMENT_IDS:,} ids a document; got {max_length!r} "
            f"({math.prod(numbers):,})",
            argument="max_length",
        ) from None
    return settings


@dataclasses.dataclass(frozen=True)
class TrainConfig:
    """Everything that determines a training run (saved as its config.json): checked when made, then not changed.

    The run's own settings are checked when the config is made (`validate`);
    the classifier's by `from_dict` before anything is built, and by the
    classifier when the run makes it.

    Args:
        classifier: The config of the untrained `TextClassifier` the run
            trains: a dict `TextClassifier.from_config` takes, its
            `get_config()` or its arguments (`{"backbone": "rnn",
            "embedding_dim": 64}`); its `seed` is the run's (validation
            split, `limit` sample, initial weights). A length limit left
            `None` is chosen from the training texts (and kept in
            model.keras, not here).
        epochs: Most epochs (early stopping on the validation loss);
            `None`: scaled to the corpus and bounded in time
            (`hierattn.models.budget`, `hierattn.defaults.EPOCH_BUDGET`). A
            config.json that gives a number keeps it.
        batch_size: Documents per batch (the global batch when distributed).
        learning_rate: Adam's learning rate.
        patience: Epochs without a lower validation loss before stopping.
        validation_split: The fraction of the training texts held out.
        limit: Train and test on a sample of this many documents each
            (`None`: all).
        baseline: Whether to fit and report the TF-IDF + logistic
            regression baseline beside the classifier.
        data: Where the texts came from (`hierattn.runs.data_record.describe_source`
            by name), filled in by the run.

    Example:

    >>> config = TrainConfig.from_dict({"model": "rnn", "epochs": 3, "embedding_dim": 64})
    >>> config.classifier, config.epochs, config.model
    ({'backbone': 'rnn', 'embedding_dim': 64}, 3, 'rnn')
    """

    classifier: dict = dataclasses.field(default_factory=lambda: {"backbone": "han"})
    epochs: int = TRAINING["epochs"]
    batch_size: int = TRAINING["batch_size"]
    learning_rate: float = TRAINING["learning_rate"]
    patience: int = TRAINING["patience"]
    validation_split: float = TRAINING["validation_split"]
    limit: int = None
    baseline: bool = True
    data: dict = dataclasses.field(default_factory=dict)

    def __post_init__(self):
        self.validate()

    @classmethod
    def from_dict(cls, settings):
        """A checked config from flat settings: the run's own, and the classifier's (`classifier_arguments`).

        Each value is checked here, before anything is built or read: the
        classifier's by `hierattn.models.arguments.check_classifier_arguments` (the
        checks `TextClassifier` makes when constructed), the run's by
        `validate` (as the config is made).

        Raises:
            HierattnError: An unknown setting or a bad value, in one line.
        """
        values = dict(settings)
        run = {name: values.pop(name) for name in RUN_SETTINGS if name in values}
        data = values.pop("data", None) or {}
        arguments = classifier_arguments(values)
        try:
            check_classifier_arguments(**arguments)
        except HierattnError:  # a DataError: a file that is not word vectors
            raise
        except ValueError as error:
            raise HierattnError(str(error)) from None
        return cls(classifier=arguments, data=data, **run)

    def with_data(self, data):
        """A copy of this config that records where the run's texts came from (config.json's `data`).

        The copy is checked again when made, as every config is (cheaply:
        `validate` does not look at `data`).
        """
        return dataclasses.replace(self, data=dict(data))

    def validate(self):
        """Checks the run's own settings (the classifier checks its arguments itself); returns the config.

        Called when the config is made: a `TrainConfig` with a bad setting
        is never made.

        Raises:
            HierattnError: A bad value, in one line.
        """
        if not isinstance(self.classifier, dict) or not isinstance(self.model, str):
            raise HierattnError("a run trains a new classifier: its config names its backbone (han, transformer, rnn)")
        try:
            check_whole("epochs", self.epochs, allow_none=True)
            for name in ("batch_size", "patience"):
                check_whole(name, getattr(self, name))
            check_whole("limit", self.limit, minimum=4, allow_none=True)
            check_bool("baseline", self.baseline)
        except ValueError as error:
            raise HierattnError(str(error)) from None
        rate = self.learning_rate
        if isinstance(rate, bool) or not (isinstance(rate, (int, float)) and math.isfinite(rate) and rate > 0):
            raise HierattnError(f"learning_rate must be a finite number above 0, not {rate!r}")
        split = self.validation_split
        if isinstance(split, bool) or not (isinstance(split, float) and 0 < split < 1):
            raise HierattnError(f"validation_split must be a fraction between 0 and 1 (both excluded), not {split!r}")
        return self

    @property
    def model(self):
        """The architecture the run trains: `"han"`, `"transformer"` or `"rnn"`."""
        return self.classifier.get("backbone", "han")

    @property
    def seed(self):
        """The classifier's seed, which the run uses too."""
        return self.classifier.get("seed", TRAINING["seed"])

    @property
    def uses_unlabeled(self):
        """Whether unlabelled texts would be used (by word2vec)."""
        return self.classifier.get("embeddings", TRAINING["embeddings"]) == "word2vec"


def classifier_arguments(settings):
    """The `TextClassifier` arguments that flat settings of a classifier give (their values not checked).

    `model` becomes `backbone`, `max_length` the length limits
    (`length_settings`), `mixed_precision=True` `dtype="mixed_float16"`, and
    a `backbone` dict (config.json of format /2) its arguments; every other
    setting is an argument of the same name.

    Raises:
        HierattnError: An unknown model or setting, in one line with the
            choices.
    """
    values = dict(settings)
    model = values.pop("model", "han")
    if model not in MODELS:
        raise HierattnError(f"unknown model {model!r}: choose one of {', '.join(MODELS)}")
    builder = values.pop("backbone", None) or {}
    if not isinstance(builder, dict):
        raise HierattnError(f"backbone holds the {model} model's arguments, as a JSON object; got {builder!r}")
    values = {**builder, **values}
    if "max_length" in values:
        values.update(length_settings(model, values.pop("max_length")))
    mixed = values.pop("mixed_precision", False)
    if not isinstance(mixed, bool):
        raise HierattnError(f"mixed_precision must be True or False, not {mixed!r}")
    known = set(CLASSIFIER_ARGUMENTS) | set(BACKBONES[model])
    unknown = sorted(set(values) - known)
    if unknown:
        choices = sorted(known | {*RUN_SETTINGS, "model", "max_length", "mixed_precision"})
        raise HierattnError(f"unknown setting {unknown[0]!r} for the {model} model: choose from {', '.join(choices)}")
    return {"backbone": model, **values, **({"dtype": "mixed_float16"} if mixed else {})}


def flat_settings(classifier):
    """The flat settings of a classifier's config (its arguments or its `get_config()`): the reverse of `classifier_arguments`."""
    config = dict(classifier)
    flat = {"model": config.pop("backbone", "han")}
    preprocessor = config.pop("preprocessor", None)
    if isinstance(preprocessor, dict):  # serialized by Keras: {"class_name": ..., "config": {...}}
        flat.update({k: v for k, v in preprocessor.get("config", {}).items() if k in PREPROCESSING})
        units = (preprocessor.get("config", {}).get("tokenizer") or {}).get("units", "words")
        if units != UNITS["units"]:  # forced (config.json holds the settings as given, before adapt chose)
            flat["text_units"] = units
    flat.update(config.pop("backbone_options", None) or {})
    dtype = config.pop("dtype", None)
    if (dtype.get("config", {}).get("name") if isinstance(dtype, dict) else dtype) == "mixed_float16":
        flat["mixed_precision"] = True
    flat.update({k: v for k, v in config.items() if k not in _NOT_SETTINGS})
    return flat


def read_config(path):
    """A run's config.json as format /3 holds it: `{"classifier": {...}, <run settings>, "data": {...}}`.

    The one place that reads config.json. A run of format /2 (flat
    settings, the limits `adapt` chose written back) is converted here: its
    classifier settings become the classifier's arguments
    (`classifier_arguments`).

    Args:
        path: A run directory, or its config.json.

    Raises:
        DataError: Missing, not JSON, or of neither format; in one line.
    """
    path = pathlib.Path(path)
    file = path / "config.json" if path.is_dir() else path
    try:
        return load_json(file, CONFIG_FORMAT)
    except DataError as error:
        try:
            flat = load_json(file, FLAT_FORMAT)
        except DataError:
            raise error from None
    return {
        "classifier": classifier_arguments({k: v for k, v in flat.items() if k not in (*RUN_SETTINGS, "data")}),
        **{name: flat[name] for name in RUN_SETTINGS if name in flat},
        "data": flat.get("data") or {},
    }


def read_settings(path):
    """Flat settings from a JSON file: an object of settings (`{"epochs": 3, "num_layers": 2}`) or a run's config.json.

    A run's config.json gives the settings it was started with (its
    `data` is left out: a new run records its own).

    Raises:
        DataError: Not JSON, not an object, or of another format; in one line.
    """
    payload = read_json_object(path)
    kind = payload.pop("format", None)
    if kind is None:
        return payload
    if kind not in (CONFIG_FORMAT, FLAT_FORMAT):
        raise DataError(f"{path} is a {kind} file, not settings (a JSON object, or a run's config.json)")
    config = _with_classifier(read_config(path), path)
    return {**flat_settings(config["classifier"]), **{name: config[name] for name in RUN_SETTINGS if name in config}}


def _with_classifier(config, path):
    """`config` (from `read_config`), refused in one line unless it holds the classifier's settings."""
    if not isinstance(config.get("classifier"), dict):
        raise DataError(f'{path} has no classifier settings (a JSON object under "classifier")')
    return config


def load_config(output):
    """The `TrainConfig` saved in a run directory (for resuming), checked as it is made.

    Raises:
        RunError: config.json is missing, unreadable or of another kind, or
            has no classifier settings or an unknown setting; in one line.
        HierattnError: A run setting of config.json has a bad value
            (`TrainConfig.validate`), in one line.
    """
    try:
        record = _with_classifier(read_config(output), pathlib.Path(output) / "config.json")
    except HierattnError as error:
        raise RunError(f"{output}/config.json does not describe a training run ({error})") from None
    try:
        return TrainConfig(**record)
    except TypeError as error:
        raise RunError(f"{output}/config.json does not describe a training run ({error})") from None


def make_classifier(config, label_names=None):
    """The untrained `TextClassifier` of a config: `TextClassifier.from_config(config.classifier)`, with `label_names`."""
    # Keras (TensorFlow) loads only here, after the settings were checked without it.
    from hierattn.models import TextClassifier

    names = None if label_names is None else list(label_names)
    return TextClassifier.from_config({**config.classifier, "label_names": names})


def size_settings(config):
    """The settings that set a run's memory, in words: "embedding_dim 200, max_vocab 60000, batch_size 64, ..."."""
    flat = flat_settings(config.classifier)
    model = flat["model"]
    sizes = {
        "embedding_dim": flat.get("embedding_dim", BACKBONES[model]["embedding_dim"]),
        "max_vocab": flat.get("max_vocab", PREPROCESSING["max_vocab"]),
        "batch_size": config.batch_size,
    }
    for name, models in LENGTH_LIMITS.items():
        if model in models:
            sizes[name] = flat.get(name) or "from the data"
    return ", ".join(f"{name} {value}" for name, value in sizes.items())
