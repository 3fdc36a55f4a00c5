"""`Decision`: how a classifier's probabilities become its answer, said once.

A single-label classifier's outputs are a softmax over its classes and its
answer the most probable class; a multi-label classifier's outputs are an
independent sigmoid per label and its answer the labels over their
thresholds (possibly none). A `Decision` holds what that takes (the label
names, which kind, the thresholds) and is what every path asks: the Keras
classifier and the runtime's bundle (`decision`), training and evaluation,
`predict`, batch prediction and the server. How a later step (a cascade, a
calibration, a decision rule) changes a decision, it changes here.
"""

import numpy as np

from hierattn.defaults import MULTILABEL
from hierattn.errors import ArgumentError


def activation_of(multi_label):
    """The output activation of a classifier: `"sigmoid"` (one per label) if `multi_label`, else `"softmax"`.

    >>> activation_of(False), activation_of(True)
    ('softmax', 'sigmoid')
    """
    return "sigmoid" if multi_label else "softmax"


def check_k(k, argument="k"):
    """Refuses a `k` of top-k that is not a whole number of at least 1 (`ArgumentError` naming `argument`).

    `ArgumentError` is a `ValueError`, as Keras's own argument checks raise.
    """
    if isinstance(k, bool) or not isinstance(k, (int, np.integer)) or k < 1:
        raise ArgumentError(f"{{argument}} must be a whole number of at least 1, not {k!r}", argument=argument)


def over_thresholds(probabilities, thresholds):
    """Multi-hot rows (int8) of the labels whose probability is over their threshold.

    >>> over_thresholds(np.array([[0.9, 0.2, 0.5]]), [0.5, 0.1, 0.5])
    array([[1, 1, 0]], dtype=int8)
    """
    return (np.asarray(probabilities) > np.asarray(thresholds, np.float32)).astype(np.int8)


def top_k(probabilities, names, k):
    """Each row's `k` most probable `(name, probability)` pairs, most probable first (ties in `names` order).

    >>> top_k(np.array([[0.2, 0.5, 0.3]]), ["a", "b", "c"], 2)
    [[('b', 0.5), ('c', 0.3)]]
    """
    probabilities = np.asarray(probabilities)
    order = np.argsort(-probabilities, axis=1, kind="stable")[:, :k]
    return [[(names[j], float(row[j])) for j in index] for row, index in zip(probabilities, order)]


class Decision:
    """What a classifier answers, from its probabilities: the most probable class, or the labels over thresholds.

    Args:
        label_names: The classes (labels), in the order of the probabilities' columns.
        multi_label: Whether the columns are independent label probabilities.
        thresholds: A multi-label classifier's thresholds, one per label
            (None before `fit` chose them: each label takes
            `hierattn.defaults.MULTILABEL["threshold"]`, as an exported bundle does).

    Example:

    >>> decision = Decision(["neg", "pos"])
    >>> decision.activation, decision.labels(np.array([[0.2, 0.8], [0.9, 0.1]]))
    ('softmax', ['pos', 'neg'])
    >>> topics = Decision(["sport", "money", "food"], multi_label=True, thresholds=[0.5, 0.3, 0.5])
    >>> topics.labels(np.array([[0.9, 0.4, 0.1], [0.1, 0.1, 0.1]]))
    [['sport', 'money'], []]
    >>> topics.top_k(np.array([[0.9, 0.4, 0.1]]), 2)
    [[('sport', 0.9), ('money', 0.4)]]
    """

    def __init__(self, label_names, multi_label=False, thresholds=None):
        self.label_names = list(label_names)
        self.multi_label = bool(multi_label)
        self.thresholds = None if thresholds is None else [float(t) for t in thresholds]
        if self.thresholds is not None and len(self.thresholds) != len(self.label_names):
            raise ValueError(f"{len(self.thresholds)} thresholds for {len(self.label_names)} labels")

    @property
    def activation(self):
        """The output activation: `"softmax"` (single-label) or `"sigmoid"` (multi-label)."""
        return activation_of(self.multi_label)

    def ids(self, probabilities, thresholds=None):
        """The decisions as numbers: class ids `(n,)`, or a multi-label classifier's multi-hot rows `(n, labels)`.

        Args:
            probabilities: Rows of probabilities (no NaN).
            thresholds: Other thresholds than the classifier's (multi-label).
        """
        if self.multi_label:
            return self.over_thresholds(probabilities, thresholds)
        return np.asarray(probabilities).argmax(axis=1)

    def over_thresholds(self, probabilities, thresholds=None):
        """Multi-hot rows (int8) of the labels over their thresholds (`thresholds`, else the classifier's)."""
        if not self.multi_label:
            raise ValueError("thresholds apply to a multi-label classifier (made with multi_label=True)")
        if thresholds is None:
            thresholds = self.thresholds or [MULTILABEL["threshold"]] * len(self.label_names)
        return over_thresholds(probabilities, thresholds)

    def labels(self, probabilities):
        """Each row's answer: a class name, or a multi-label classifier's list of label names (possibly empty).

        A row of NaN (a text without words) gives None.
        """
        probabilities = np.asarray(probabilities)
        if len(probabilities) == 0:
            return []
        missing = np.isnan(probabilities).any(axis=1)
        decided = self.ids(np.nan_to_num(probabilities))
        if self.multi_label:
            answers = [[self.label_names[j] for j in np.flatnonzero(row)] for row in decided]
        else:
            answers = [self.label_names[i] for i in decided]
        return [None if gone else answer for answer, gone in zip(answers, missing)]

    def top_k(self, probabilities, k):
        """Each row's `k` most probable classes (a multi-label classifier's labels by their own probabilities).

        Returns:
            One list per row of `(name, probability)` pairs, `min(k,
            classes)` long, most probable first (ties in `label_names` order).

        Raises:
            ArgumentError: `k` is not a whole number of at least 1.
        """
        check_k(k)
        return top_k(probabilities, self.label_names, k)

    def __repr__(self):
        kind = f"multi-label, thresholds {self.thresholds}" if self.multi_label else "single-label"
        return f"<Decision {self.label_names} {kind}>"


__all__ = ["Decision", "activation_of", "check_k", "over_thresholds", "top_k"]
