"""`TextPredictor`: what every trained classifier answers to, whether a bundle on the runtime or the Keras classifier.

A run predicts with its bundle (`hierattn.runtime.Predictor`, no
TensorFlow) or, without one, with its Keras classifier
(`hierattn.TextClassifier`). Both give the same names for the same things,
said here once, so that `predict`, batch prediction and the server take
either without asking which it is.
"""

from typing import Protocol, runtime_checkable


@runtime_checkable
class TextPredictor(Protocol):
    """A trained classifier as the application uses it: texts to ids, ids to probabilities, probabilities to labels.

    Attributes:
        label_names: The classes, in the order of the probabilities' columns.
        multi_label: Whether the columns are independent label probabilities.
        policy: How part outputs become probabilities and answers (`hierattn.policy.DecisionPolicy`): the
            thresholds, offsets, cut, temperatures and `network` setting (`"auto"`: the network reads only the
            documents the n-gram part is not sure of; `"always"`: every one).
        architecture: The backbone's name (`"han"`, `"transformer"`, `"rnn"`).

    Example:

    >>> import numpy as np
    >>> from hierattn.policy import DecisionPolicy
    >>> class Constant:  # any object with these names is one
    ...     label_names, multi_label, architecture = ["neg", "pos"], False, "none"
    ...     policy = DecisionPolicy(["neg", "pos"])
    ...     def preprocess(self, texts, progress=False, workers=None): return {"token_ids": np.ones((len(texts), 1))}
    ...     def predict_ids(self, x, batch_size=32, progress=False): return np.full((len(x["token_ids"]), 2), 0.5)
    ...     def predict_texts(self, texts, batch_size=32, progress=False, workers=None): return np.full((len(texts), 2), 0.5)
    ...     def has_words(self, text): return bool(text.strip())
    ...     def predict_labels(self, texts, batch_size=None, min_confidence=None): return ["pos"] * len(texts)
    ...     def predict_top_k(self, texts, k, batch_size=None): return [[("pos", 0.5)]] * len(texts)
    >>> isinstance(Constant(), TextPredictor)
    True
    """

    label_names: list
    multi_label: bool
    architecture: str
    policy: object

    def preprocess(self, texts, progress=False, workers=None):
        """The ids of a list of texts, as `predict_ids` reads them.

        `workers`: processes that tokenize many texts (default: one per
        core; 1 keeps the work in this process, as inside an engine's worker).
        """

    def predict_ids(self, x, batch_size=32, progress=False):
        """Class probabilities `(n, classes)` (float32) of ids from `preprocess`, in input order."""

    def predict_texts(self, texts, batch_size=32, progress=False, workers=None):
        """Class probabilities of a list of texts `(n, classes)` (float32), NaN rows for texts without words.

        What the application predicts with: a bundle tokenizes for the
        network only the texts it reads (`hierattn.runtime.Predictor.predict_texts`).
        """

    def has_words(self, text):
        """Whether the tokenizer keeps any word of `text` (markup, symbols and spaces have none)."""

    def predict_labels(self, texts, batch_size=None, min_confidence=None):
        """Each text's answer (`policy.labels`): a class name, or a multi-label classifier's list of labels.

        With `min_confidence`, None for a text whose decision is less sure than that (left for a person).
        """

    def predict_top_k(self, texts, k, batch_size=None):
        """Each text's `k` most probable `(class, probability)` pairs (`policy.top_k`), most probable first."""


__all__ = ["TextPredictor"]
