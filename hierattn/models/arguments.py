"""The checks of a classifier's arguments, in one place and importable without Keras.

`TextClassifier`, `TextPreprocessor` and each `Backbone` check their
arguments when they are constructed by calling the function here for their
class, so a bad value is refused at once, before any data is read or any
network is built: `TextClassifier("han", embedding_dim=0)` raises
`ValueError: embedding_dim must be a whole number of at least 1, not 0`.
Nothing here imports Keras, so a program can refuse bad settings with the
same checks before TensorFlow loads (the `hierattn` command line does, through
`hierattn.runs.config.TrainConfig.from_dict`).

Each check raises a `ValueError` that names the argument, says what it must
be and what it was given.
"""

import math
import os

from hierattn.data.encoding import check_document_ids
from hierattn.defaults import BACKBONES, CHOICES, DECISION, MODELS, PREPROCESSING, UNITS
from hierattn.errors import ArgumentError
from hierattn.kinds import kind_of
from hierattn.models.embeddings import check_vectors_file

# The length limits of each architecture's preprocessing: sentences x words
# for the hierarchical han, words for the flat models.
LENGTH_LIMITS = {"max_sentences": ("han",), "max_words": ("han",), "sequence_length": ("transformer", "rnn")}

# The arguments of `TextClassifier` that are neither its backbone's nor Keras's:
# its own, then those it passes to its `TextPreprocessor`.
CLASSIFIER_ARGUMENTS = (
    "embeddings",
    "pretrain_epochs",
    "ngrams",
    "seed",
    "multi_label",
    "decision_metric",
    "text_units",
    *PREPROCESSING,
)


def check_decision_metric(metric, multi_label=False):
    """Refuses a decision metric other than `DECISION["metrics"]`, or `"macro_f1"` for a multi-label classifier."""
    if metric not in DECISION["metrics"]:
        raise ArgumentError(
            f"{{argument}} must be one of {', '.join(DECISION['metrics'])}, not {metric!r}", argument="decision_metric"
        )
    if multi_label and metric != "accuracy":
        raise ArgumentError(
            "{argument} applies to a single-label classifier: a multi-label classifier's thresholds "
            "are chosen per label by F1 already",
            argument="decision_metric",
        )
    return metric


def _refuse(name, value, expected):
    raise ValueError(f"{name} must be {expected}, not {value!r}")


def check_whole(name, value, minimum=1, allow_none=False):
    """Refuses anything but a whole number of at least `minimum` (or `None`, with `allow_none`)."""
    if value is None and allow_none:
        return
    if isinstance(value, bool) or not isinstance(value, int) or value < minimum:
        _refuse(name, value, f"a whole number of at least {minimum}" + (", or None" if allow_none else ""))


def check_fraction(name, value, minimum=0.0, min_open=False):
    """Refuses anything but a number from `minimum` (excluded with `min_open`) up to, not including, 1."""
    number = isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)
    if not (number and (value > minimum if min_open else value >= minimum) and value < 1):
        _refuse(
            name, value, f"a fraction from {minimum:g} ({'excluded' if min_open else 'included'}) up to 1 (excluded)"
        )


def check_choice(name, value, choices):
    """Refuses a value that is not one of `choices`."""
    if not isinstance(value, str) or value not in choices:
        _refuse(name, value, "one of " + ", ".join(choices))


def check_bool(name, value):
    """Refuses anything but `True` or `False`."""
    if not isinstance(value, bool):
        _refuse(name, value, "True or False")


def check_backbone_arguments(architecture, arguments):
    """Refuses bad arguments of the backbone `architecture` (`"han"`, `"transformer"` or `"rnn"`).

    What `HANBackbone`, `TransformerBackbone` and `RNNBackbone` check when
    constructed (`Backbone.check_arguments`), and `TextClassifier` for a
    backbone it will build. An argument is judged by its name, which means
    the same in every backbone; those not given take their defaults
    (`hierattn.defaults.BACKBONES`) where two are checked together.

    Args:
        architecture: One of `hierattn.defaults.MODELS`.
        arguments: The backbone's keyword arguments, `{name: value}`,
            without `vocabulary_size`, `num_classes` and Keras's own.

    Raises:
        ValueError: An argument the backbone does not take, or a bad value.
    """
    unknown = sorted(set(arguments) - set(BACKBONES[architecture]))
    if unknown:
        raise ValueError(
            f"unknown {architecture} argument(s) {', '.join(unknown)}: choose from "
            f"{', '.join(sorted(BACKBONES[architecture]))}"
        )
    values = {**BACKBONES[architecture], **arguments}
    for name, value in values.items():
        if name in CHOICES:
            check_choice(name, value, CHOICES[name])
        elif name == "dropout":
            check_fraction(name, value)
        elif name == "window":
            check_whole(name, value, minimum=0, allow_none=True)
        elif isinstance(BACKBONES[architecture][name], bool):
            check_bool(name, value)
        else:
            check_whole(name, value)
    if "num_heads" in values and values["embedding_dim"] % values["num_heads"]:
        raise ValueError(
            f"embedding_dim ({values['embedding_dim']}) must be divisible by num_heads ({values['num_heads']})"
        )


def check_preprocessor_arguments(
    max_sentences=None,
    max_words=None,
    sequence_length=None,
    min_count=PREPROCESSING["min_count"],
    max_vocab=PREPROCESSING["max_vocab"],
    ngram_length=None,
):
    """Refuses bad length limits and vocabulary settings of a `TextPreprocessor` (what it checks when constructed).

    Raises:
        ValueError: A limit (`ngram_length` included) that is neither `None`
            nor a whole number of at least 1, a limit above
            `hierattn.defaults.MAX_DOCUMENT_IDS` (also `max_sentences` x
            `max_words`: `hierattn.data.encoding.check_document_ids`),
            a `min_count` that is not one, or a `max_vocab` (`None`: no cap)
            below 3.
    """
    limits = {
        "max_sentences": max_sentences,
        "max_words": max_words,
        "sequence_length": sequence_length,
        "ngram_length": ngram_length,
    }
    for name, value in limits.items():
        check_whole(name, value, allow_none=True)
    check_document_ids(**limits)
    check_whole("min_count", min_count)
    check_whole("max_vocab", max_vocab, minimum=3, allow_none=True)  # padding, out-of-vocabulary and a word


def check_classifier_arguments(backbone="han", **arguments):
    """Refuses bad `TextClassifier` arguments, building nothing (what `TextClassifier` checks first when constructed).

    Args:
        backbone: The architecture's name, one of `hierattn.defaults.MODELS`
            (a `Backbone` object checked its own arguments when made).
        **arguments: The other `TextClassifier` keyword arguments given:
            `embeddings`, `pretrain_epochs`, `ngrams`, `seed`, `multi_label`, the
            `TextPreprocessor`'s length limits and vocabulary settings, and,
            for a backbone given by name, the backbone's own (`embedding_dim`,
            `num_layers`, ...; see `check_backbone_arguments`). Keras's
            (`name`, `dtype`, ...) and the parts of a saved classifier
            (`preprocessor`, `label_names`, `ngram_logits`) are left to the
            classes that take them.

    Raises:
        ValueError: A bad value, an argument the backbone does not take, or
            a length limit the architecture does not have, in one line.
    """
    arguments = {k: v for k, v in arguments.items() if k not in ("name", "trainable", "dtype", "label_names")}
    arguments.pop("preprocessor", None)
    arguments.pop("ngram_logits", None)
    arguments.pop("thresholds", None)
    preprocessing = {name: arguments[name] for name in PREPROCESSING if name in arguments}
    if not isinstance(backbone, str):
        _check_own(backbone, arguments)
        check_preprocessor_arguments(**preprocessing)
        return
    if backbone not in MODELS:
        _refuse("backbone", backbone, f"one of {', '.join(MODELS)} or a Backbone")
    _check_own(backbone, arguments)
    for name in LENGTH_LIMITS:
        if arguments.get(name) is not None and backbone not in LENGTH_LIMITS[name]:
            raise ValueError(f"{name} applies to the {' and '.join(LENGTH_LIMITS[name])} model(s), not to {backbone}")
    check_preprocessor_arguments(**preprocessing)
    options = dict(arguments.pop("backbone_options", None) or {})
    options.update({k: v for k, v in arguments.items() if k not in CLASSIFIER_ARGUMENTS})
    check_backbone_arguments(backbone, options)


def _check_own(backbone, arguments):
    """The arguments `TextClassifier` itself uses: word vectors, word2vec epochs, the n-gram part, the seed."""
    if "pretrain_epochs" in arguments:
        check_whole("pretrain_epochs", arguments["pretrain_epochs"])
    for name in ("ngrams", "multi_label"):
        if name in arguments:
            check_bool(name, arguments[name])
    if "seed" in arguments:
        check_whole("seed", arguments["seed"], minimum=0)
    if "decision_metric" in arguments:
        check_decision_metric(arguments["decision_metric"], arguments.get("multi_label", False))
    if "text_units" in arguments:
        check_choice("text_units", arguments["text_units"], UNITS["choices"])
    embeddings = arguments.get("embeddings", "none")
    if isinstance(backbone, str) and embeddings not in ("word2vec", "none"):  # the vectors a new backbone starts from
        if not isinstance(embeddings, (str, os.PathLike)) or not os.path.isfile(embeddings):
            _refuse("embeddings", embeddings, "'word2vec', 'none' or the path of a word-vector file")

        check_vectors_file(embeddings)


def check_multi_label(backbone, multi_label):
    """Refuses a `multi_label` that is not a bool, or that a given backbone's output activation contradicts."""
    check_bool("multi_label", multi_label)
    made, wanted = getattr(backbone, "kind", None), kind_of(multi_label)  # a Backbone's kind (a name says nothing yet)
    if made is not None and made is not wanted:
        raise ValueError(
            f"the backbone's output is a {made.activation}: give multi_label={made.multi_label} with it "
            f"(or a backbone made with activation={wanted.activation!r})"
        )
