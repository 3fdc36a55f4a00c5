"""What determines a training run: `TrainConfig`, its checks, and the classifier it describes (config.json)."""

import dataclasses
import math
import os
import pathlib

from hierattn.defaults import BACKBONES, CHOICES, MODELS, PREPROCESSING, TRAINING
from hierattn.errors import ArgumentError, HierattnError
from hierattn.jsonfile import load_json
from hierattn.runs import CONFIG_FORMAT, RunError, check_same_data

LENGTH_LIMITS = {"max_sentences": ("han",), "max_words": ("han",), "sequence_length": ("transformer", "rnn")}


def length_settings(model, max_length):
    """The length limits a `max_length` value sets: `"SxW"` for han, `"N"` for the flat models.

    Args:
        model: One of `MODELS`.
        max_length: Sentences x words per sentence for han (`"30x40"`),
            words for transformer and rnn (`"400"`).

    Returns:
        `{"max_sentences": S, "max_words": W}` for han, `{"sequence_length": N}` otherwise.

    Raises:
        ArgumentError: A value of the wrong form for `model`, in one line.
    """
    parts = str(max_length).lower().replace(" ", "").split("x")
    try:
        numbers = [int(part) for part in parts]
    except ValueError:
        numbers = []
    hierarchical = model == "han"
    if len(numbers) != (2 if hierarchical else 1) or min(numbers) < 1:
        form = "SENTENCESxWORDS, e.g. 30x40" if hierarchical else "a number of words, e.g. 400"
        raise ArgumentError("max_length", f"{{argument}} for the {model} model is {form}; got {max_length!r}")
    if hierarchical:
        return {"max_sentences": numbers[0], "max_words": numbers[1]}
    return {"sequence_length": numbers[0]}


@dataclasses.dataclass
class TrainConfig:
    """Everything that determines a training run (saved as config.json).

    Defaults come from `hierattn.defaults`; a length limit left `None` is
    set from the training texts. `backbone` holds builder arguments
    (`embedding_dim`, `num_layers`, `attention`, ...; see
    `hierattn.defaults.BACKBONES`), `data` where the texts came from.
    """

    model: str = "han"
    epochs: int = TRAINING["epochs"]
    batch_size: int = TRAINING["batch_size"]
    learning_rate: float = TRAINING["learning_rate"]
    patience: int = TRAINING["patience"]
    validation_split: float = TRAINING["validation_split"]
    seed: int = TRAINING["seed"]
    embeddings: str = TRAINING["embeddings"]
    pretrain_epochs: int = TRAINING["pretrain_epochs"]
    max_sentences: int = PREPROCESSING["max_sentences"]
    max_words: int = PREPROCESSING["max_words"]
    sequence_length: int = PREPROCESSING["sequence_length"]
    min_count: int = PREPROCESSING["min_count"]
    max_vocab: int = PREPROCESSING["max_vocab"]
    limit: int = None
    mixed_precision: bool = False
    baseline: bool = True
    ngrams: bool = TRAINING["ngrams"]
    backbone: dict = dataclasses.field(default_factory=dict)
    data: dict = dataclasses.field(default_factory=dict)

    @classmethod
    def from_dict(cls, values):
        """A config from flat settings: `TrainConfig` fields, and builder arguments of the model.

        Raises:
            HierattnError: A key that is neither, in one line with the choices.
        """
        values = dict(values)
        model = values.get("model", "han")
        if model not in MODELS:
            raise HierattnError(f"unknown model {model!r}: choose one of {', '.join(MODELS)}")
        fields = {f.name for f in dataclasses.fields(cls)} - {"backbone", "data"}
        backbone = dict(values.pop("backbone", None) or {})
        for key in list(values):
            if key not in fields:
                if key not in BACKBONES[model]:
                    raise HierattnError(
                        f"unknown setting {key!r} for the {model} model: choose from training settings "
                        f"{', '.join(sorted(fields))} or {model} settings {', '.join(sorted(BACKBONES[model]))}"
                    )
                backbone[key] = values.pop(key)
        return cls(**values, backbone=backbone)

    def validate(self):
        """Checks the settings without building anything (see `check_backbone` for the builder's own checks)."""
        if self.model not in MODELS:
            raise HierattnError(f"unknown model {self.model!r}: choose one of {', '.join(MODELS)}")
        for name in (
            "epochs",
            "batch_size",
            "patience",
            "pretrain_epochs",
            "min_count",
            "max_vocab",
            "max_sentences",
            "max_words",
            "sequence_length",
            "limit",
        ):
            value = getattr(self, name)
            if value is not None and (isinstance(value, bool) or not isinstance(value, int) or value < 1):
                raise HierattnError(f"{name} must be a whole number of at least 1, not {value!r}")
        for name, models in LENGTH_LIMITS.items():
            if getattr(self, name) is not None and self.model not in models:
                raise HierattnError(f"{name} applies to the {' and '.join(models)} model(s), not to {self.model}")
        unknown = sorted(set(self.backbone) - set(BACKBONES[self.model]))
        if unknown:
            raise HierattnError(
                f"unknown {self.model} setting(s) {', '.join(unknown)}: choose from "
                f"{', '.join(sorted(BACKBONES[self.model]))}"
            )
        for name, value in self.backbone.items():
            _check_backbone_value(self.model, name, value)
        options = {**BACKBONES[self.model], **self.backbone}
        if "num_heads" in options and options["embedding_dim"] % options["num_heads"]:
            raise HierattnError(
                f"embedding_dim ({options['embedding_dim']}) must be divisible by num_heads ({options['num_heads']})"
            )
        if not (
            isinstance(self.learning_rate, (int, float))
            and math.isfinite(self.learning_rate)
            and self.learning_rate > 0
        ):
            raise HierattnError(f"the learning rate must be a finite number above 0; got {self.learning_rate}")
        if not (isinstance(self.validation_split, float) and 0 < self.validation_split < 1):
            raise HierattnError(f"validation_split must be a fraction between 0 and 1, not {self.validation_split!r}")
        if self.embeddings not in ("word2vec", "none"):
            if not os.path.isfile(str(self.embeddings)):
                raise HierattnError(
                    f"embeddings must be word2vec, none or a word-vector file; {self.embeddings} is none of these"
                )
            from hierattn.embeddings import check_vectors_file

            check_vectors_file(self.embeddings)
        for name in ("mixed_precision", "baseline", "ngrams"):
            if not isinstance(getattr(self, name), bool):
                raise HierattnError(f"{name} must be true or false, not {getattr(self, name)!r}")
        if self.limit is not None and self.limit < 4:
            raise HierattnError("limit must be at least 4 documents")
        return self

    @property
    def uses_unlabeled(self):
        """Whether unlabelled texts would be used (by word2vec)."""
        return self.embeddings == "word2vec"


def _check_backbone_value(model, name, value):
    """Refuses a builder setting of the wrong kind, judged by its default (`hierattn.defaults`), in one line."""
    default = BACKBONES[model][name]
    whole = isinstance(value, int) and not isinstance(value, bool)
    if name in CHOICES:
        ok, expected = value in CHOICES[name], "one of " + ", ".join(CHOICES[name])
    elif isinstance(default, bool):
        ok, expected = isinstance(value, bool), "true or false"
    elif name == "dropout":
        ok, expected = (
            isinstance(value, (int, float)) and not isinstance(value, bool) and 0 <= value < 1,
            "a fraction from 0 up to (not including) 1",
        )
    elif name == "window":
        ok, expected = value is None or (whole and value >= 0), "null (global attention) or a whole number >= 0"
    else:
        ok, expected = whole and value >= 1, "a whole number of at least 1"
    if not ok:
        raise HierattnError(f"the {model} setting {name} must be {expected}, not {value!r}")


def check_backbone(config):
    """Refuses builder values the builder rejects, by building the model once at a tiny size."""
    from hierattn.models.text_classifier import BACKBONE_CLASSES

    options = dict(config.backbone)
    if config.model == "transformer":
        options["sequence_length"] = config.sequence_length or 8
    try:
        BACKBONE_CLASSES[config.model](8, 2, **options)
    except (ValueError, TypeError) as error:
        raise HierattnError(f"bad {config.model} model settings: {error}") from None


def make_classifier(config, label_names=None):
    """The untrained `TextClassifier` a config describes."""
    from hierattn.models import TextClassifier

    return TextClassifier(
        config.model,
        label_names=label_names,
        embeddings=config.embeddings,
        pretrain_epochs=config.pretrain_epochs,
        ngrams=config.ngrams,
        seed=config.seed,
        max_sentences=config.max_sentences,
        max_words=config.max_words,
        sequence_length=config.sequence_length,
        min_count=config.min_count,
        max_vocab=config.max_vocab,
        dtype="mixed_float16" if config.mixed_precision else None,
        **config.backbone,
    )


def size_settings(config):
    """The settings that set a run's memory, in words: "embedding_dim 200, max_vocab 60000, batch_size 64, ..."."""
    options = {**BACKBONES[config.model], **config.backbone}
    sizes = {"embedding_dim": options["embedding_dim"], "max_vocab": config.max_vocab, "batch_size": config.batch_size}
    for name, models in LENGTH_LIMITS.items():
        if config.model in models:
            sizes[name] = getattr(config, name) or "from the data"
    return ", ".join(f"{name} {value}" for name, value in sizes.items())


def load_config(output):
    """The `TrainConfig` saved in a run directory (for resuming), or a one-line `RunError`."""
    values = load_json(pathlib.Path(output) / "config.json", CONFIG_FORMAT)
    try:
        return TrainConfig(**values)
    except TypeError as error:
        raise RunError(f"{output}/config.json does not describe a training run ({error})") from None


def config_for_run(config, data, resume=None):
    """The config to train with, recording where the data comes from.

    Args:
        config: The `TrainConfig` of a new run; None when resuming.
        data: Descriptions of the data files (`hierattn.runs.describe_source`
            by name: `train`, `test`, `unlabeled` or `imdb`), stored as
            `config.data`.
        resume: The run directory of an unfinished run to continue: its own
            saved config is used, checked before any data is read.

    Returns:
        A `TrainConfig` whose `data` is `data`.

    Raises:
        RunError: Resuming on other data than the run recorded, or from a
            config.json that does not describe a run.
    """
    if resume is not None:
        config = load_config(resume).validate()
        check_same_data(resume, config.data, data)
    config.data = data
    return config
