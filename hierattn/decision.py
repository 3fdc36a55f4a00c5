"""`Decision` and `Cascade`: the arithmetic of a classifier's answers, held by its `hierattn.policy.DecisionPolicy`.

Every path asks the policy (`hierattn.policy`), which makes one of each;
nothing else makes them.

A single-label classifier's outputs are a softmax over its classes and its
answer the most probable class; a multi-label classifier's outputs are an
independent sigmoid per label and its answer the labels over their
thresholds (possibly none). A `Decision` holds what that takes (the label
names, which kind, the thresholds) for every path that decides: the Keras
classifier and the runtime's bundle (`decision`), training and evaluation,
`predict`, batch prediction and the server. How a later step (a
calibration, a decision rule) changes a decision, it changes here: a
single-label classifier's `offsets` (a decision rule for macro-F1,
`hierattn.tuning`), and "not sure" as an answer (`min_confidence`:
a decision less probable than that is left for a person).

`Cascade` is where the classifier decides how much reading a document
needs: the n-gram part scores every document, and the network reads only
those the n-gram part is not sure of (their margin under a cut chosen on the
validation texts, `hierattn.tuning`); both the Keras classifier and
the runtime predict through it (as their policy's `cascade`).

`rule_problem` and `cascade_problem` say what is wrong with a policy's
numbers as its data holds them (`DecisionPolicy.to_dict`: a bundle's
metadata), so that the runtime's checks need not know them.
"""

import math
import numbers
import reprlib

import numpy as np

from hierattn.calibration import calibrated, confidence, sigmoid_at
from hierattn.defaults import CASCADE, MULTILABEL
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


def check_min_confidence(value, argument="min_confidence"):
    """Refuses a minimum confidence that is not a number in [0, 1] (`ArgumentError` naming `argument`); None passes."""
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, numbers.Real) or not 0.0 <= value <= 1.0:
        raise ArgumentError(f"{{argument}} must be a probability between 0 and 1, not {value!r}", argument=argument)
    return float(value)


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
        offsets: A single-label classifier's offsets, one per class, added
            to the log-probabilities before the most probable class is taken
            (None: none; `hierattn.tuning`).

    A decision's confidence (`confidence`) is the probability, as the
    probabilities say, that it is right; with a minimum confidence, a
    decision under it is no answer (`answered`): the probabilities stand,
    and the text is left for a person.

    Example:

    >>> decision = Decision(["neg", "pos"])
    >>> decision.activation, decision.labels(np.array([[0.2, 0.8], [0.9, 0.1]]))
    ('softmax', ['pos', 'neg'])
    >>> topics = Decision(["sport", "money", "food"], multi_label=True, thresholds=[0.5, 0.3, 0.5])
    >>> topics.labels(np.array([[0.9, 0.4, 0.1], [0.1, 0.1, 0.1]]))
    [['sport', 'money'], []]
    >>> topics.top_k(np.array([[0.9, 0.4, 0.1]]), 2)
    [[('sport', 0.9), ('money', 0.4)]]
    >>> p = np.array([[0.55, 0.45], [0.05, 0.95]])
    >>> decision.confidence(p), decision.answered(p, min_confidence=0.9)
    (array([0.55, 0.95]), array([False,  True]))
    >>> Decision(["neg", "pos"], offsets=[0.0, 0.5]).labels(p)   # pos gets e^0.5 times its probability
    ['pos', 'pos']
    """

    def __init__(self, label_names, multi_label=False, thresholds=None, offsets=None):
        self.label_names = list(label_names)
        self.multi_label = bool(multi_label)
        self.thresholds = None if thresholds is None else [float(t) for t in thresholds]
        if self.thresholds is not None and len(self.thresholds) != len(self.label_names):
            raise ValueError(f"{len(self.thresholds)} thresholds for {len(self.label_names)} labels")
        self.offsets = None if offsets is None or multi_label else [float(o) for o in offsets]
        if self.offsets is not None and (
            len(self.offsets) != len(self.label_names) or not np.isfinite(self.offsets).all()
        ):
            raise ValueError(f"offsets must be {len(self.label_names)} finite numbers, one per class, not {offsets!r}")

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
        scores = np.asarray(probabilities)
        if self.offsets is not None:  # the decision rule's offsets, on the log-probabilities
            with np.errstate(divide="ignore"):
                scores = np.log(scores.astype(np.float64)) + self.offsets
        return scores.argmax(axis=1)

    def confidence(self, probabilities):
        """How sure each decision is: the probability that it is right, `(n,)` (NaN for a row of NaN).

        The probability of the class decided, or for a multi-label
        classifier that of its least sure label (`p` for a label it has,
        `1 - p` for one it has not): `hierattn.calibration.confidence`.
        """
        probabilities = np.asarray(probabilities, np.float64)
        found = confidence(np.nan_to_num(probabilities), self.ids(np.nan_to_num(probabilities)), self.multi_label)
        return np.where(np.isnan(probabilities).any(axis=1), np.nan, found) if len(probabilities) else found

    def answered(self, probabilities, min_confidence=None):
        """Whether each decision is an answer: its confidence is at least `min_confidence` (None: every row of numbers).

        A row of NaN (a text without words) is no answer either.

        Raises:
            ArgumentError: `min_confidence` is not a number in [0, 1].
        """
        if check_min_confidence(min_confidence) is None:  # no minimum: no confidence to compute
            return ~np.isnan(np.asarray(probabilities, np.float64)).any(axis=1)
        return np.nan_to_num(self.confidence(probabilities), nan=-1.0) >= min_confidence

    def over_thresholds(self, probabilities, thresholds=None):
        """Multi-hot rows (int8) of the labels over their thresholds (`thresholds`, else the classifier's)."""
        if not self.multi_label:
            raise ValueError("thresholds apply to a multi-label classifier (made with multi_label=True)")
        if thresholds is None:
            thresholds = self.thresholds or [MULTILABEL["threshold"]] * len(self.label_names)
        return over_thresholds(probabilities, thresholds)

    def labels(self, probabilities, min_confidence=None):
        """Each row's answer: a class name, or a multi-label classifier's list of label names (possibly empty).

        A row of NaN (a text without words) gives None, and so does, with
        `min_confidence`, a decision less sure than that (`answered`).
        """
        probabilities = np.asarray(probabilities)
        if len(probabilities) == 0:
            return []
        missing = ~self.answered(probabilities, min_confidence)
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
        kind += "" if self.offsets is None else f", offsets {self.offsets}"
        return f"<Decision {self.label_names} {kind}>"


def thresholds_at(thresholds, temperature):
    """Where probabilities at `temperature` (one per label) cross as those before did at `thresholds`.

    `sigmoid(logit t / T)` per label, a list of floats: a multi-label
    classifier's thresholds move with its calibrated probabilities
    (`hierattn.calibration.calibrated`), so that no decision changes.

    >>> thresholds_at([0.5, 0.2], [2.0, 0.5])
    [0.5, 0.058823529411764705]
    """
    t = np.array(thresholds, dtype=np.float64)
    return [float(v) for v in sigmoid_at(np.log(t) - np.log1p(-t), temperature)]


def _temperature(value, multi_label, thresholds):
    """A cascade's temperature, checked: a positive finite number, or (multi-label) a list of them, one per label."""
    several = multi_label and isinstance(value, (list, tuple, np.ndarray))
    values = list(value) if several else [value]
    good = all(not isinstance(t, bool) and isinstance(t, numbers.Real) and np.isfinite(t) and t > 0 for t in values)
    if not good or not values or (several and thresholds is not None and len(values) != len(thresholds)):
        raise ValueError(
            f"temperature must be a positive number (multi-label: one per label), not {reprlib.repr(value)}"
        )
    return [float(t) for t in values] if several else float(value)


def check_network(network):
    """Refuses a `network` setting other than those of `hierattn.defaults.CASCADE["networks"]` (`ArgumentError`)."""
    if network not in CASCADE["networks"]:
        raise ArgumentError(
            f"{{argument}} must be one of {', '.join(CASCADE['networks'])}, not {network!r}", argument="network"
        )
    return network


def _finite(value):
    return isinstance(value, numbers.Real) and not isinstance(value, bool) and math.isfinite(value)


def _finite_numbers(values, count):
    return isinstance(values, list) and len(values) == count and all(_finite(v) for v in values)


def rule_problem(data):
    """What is wrong with a policy's decision rule as its data (`DecisionPolicy.to_dict`, a bundle's metadata) holds it.

    A multi-label policy's `thresholds` must be numbers between 0 and 1,
    one per label; a single-label one's `offsets`, where it has some,
    finite numbers, one per class. Its `label_names` (a list) and
    `multi_label` (a bool) are taken as checked before.

    Returns:
        One line saying the first thing wrong, or None.

    Example:

    >>> rule_problem({"label_names": ["sport", "money"], "multi_label": True, "thresholds": [0.5, 1.5]})
    'thresholds must be 2 numbers between 0 and 1, one per label, not [0.5, 1.5]'
    >>> rule_problem({"label_names": ["neg", "pos"], "offsets": [0.0, 0.3]}) is None
    True
    """
    count = len(data["label_names"])
    if data.get("multi_label", False):
        thresholds = data.get("thresholds")
        if not (_finite_numbers(thresholds, count) and all(0 < t < 1 for t in thresholds)):
            return f"thresholds must be {count} numbers between 0 and 1, one per label, not {reprlib.repr(thresholds)}"
    elif data.get("offsets") is not None and not _finite_numbers(data["offsets"], count):
        return f"offsets must be {count} finite numbers, not {reprlib.repr(data['offsets'])}"
    return None


def cascade_problem(cascade):
    """What is wrong with the cascade's numbers as a policy's data holds them (`to_dict`'s `"cascade"`).

    The cut, the parts' weights and the n-gram part's scale must be finite
    numbers; all but `ngram_weight` may be null (`network_weight` is, in
    bundles exported before the policy). The temperatures are checked where
    the policy is made (`Cascade`).

    Returns:
        One line saying the first thing wrong, or None.

    Example:

    >>> cascade_problem({"cut": float("nan"), "ngram_weight": 4.0})
    "the cascade's cut must be a finite number, not nan"
    """
    for name in ("cut", "ngram_weight", "network_weight", "ngram_scale"):
        value = cascade.get(name)
        if not (_finite(value) or (value is None and name != "ngram_weight")):
            return f"the cascade's {name} must be a finite number, not {reprlib.repr(value)}"
    return None


class Cascade:
    """Which documents the network reads: those the n-gram part is not sure of. The rest the n-gram part decides.

    The n-gram part's logits `z` are cheap; the network is most of the cost.
    With the network's term held neutral (the same probability for every
    class), the combination `softmax(a log p + b z)` (for a multi-label
    classifier `sigmoid(a logit p + b z)` per label) is `softmax(b z)`
    (`sigmoid(b z)`): the n-gram part's decision, on the combination's
    scale. A document's margin is how sure that decision is: the gap
    between its two highest scores `b z`, or for a multi-label classifier
    the smallest distance of a label's `b z_l` from its threshold's log-odds
    `logit(t_l)`. A document whose margin is under `cut` is read by the
    network and gets the whole combination's probabilities; any other gets
    the n-gram part's: `softmax(s z)`, `s` the n-gram part's own scale
    chosen on validation texts (`b` without one), or for a multi-label
    classifier `sigmoid(b z)`; its decision is the n-gram part's. The
    whole combination's probabilities are given at `temperature`
    (`hierattn.calibration.calibrated`: the combination's scores divided
    by it), fitted on validation texts too; no decision changes with it.
    A multi-label classifier's temperatures are one per label, for both
    kinds of documents (`sigmoid(b z / T_l)`), and its thresholds are
    where its calibrated probabilities cross: `sigmoid(logit t_l / T_l)`
    of the thresholds `t_l` of the probabilities before (`raw_thresholds`),
    so again no decision changes.

    Args:
        cut: The margin under which the network reads a document; `None`:
            the network reads every document (the whole combination).
        ngram_weight: The combination's `b`.
        multi_label: Whether the classifier is multi-label.
        thresholds: A multi-label classifier's thresholds (None: each
            `MULTILABEL["threshold"]`).
        ngram_scale: `s` (single-label; None: `b`).
        temperature: The whole combination's temperature (None or 1.0: its
            probabilities as the graph gives them); multi-label, one per
            label (or one for all), and `thresholds` those of the
            calibrated probabilities.

    Example:

    >>> cascade = Cascade(cut=1.0, ngram_weight=0.5)
    >>> z = np.array([[0.0, 4.0], [0.2, -0.2]])      # sure, then unsure
    >>> cascade.margins(z), cascade.needs_network(z)
    (array([2. , 0.2]), array([False,  True]))
    >>> cascade.predict(z, lambda index: np.array([[0.9, 0.1]])).round(3)
    array([[0.119, 0.881],
           [0.9  , 0.1  ]], dtype=float32)
    """

    def __init__(self, cut, ngram_weight, multi_label=False, thresholds=None, ngram_scale=None, temperature=None):
        self.cut = None if cut is None else float(cut)
        self.ngram_weight = float(ngram_weight)
        self.ngram_scale = float(ngram_weight if ngram_scale is None or multi_label else ngram_scale)
        self.multi_label = bool(multi_label)
        self.thresholds = thresholds
        self.temperature = _temperature(1.0 if temperature is None else temperature, multi_label, thresholds)
        self._scales = np.asarray(self.temperature, np.float64)  # what the scores are divided by (per label)

    def raw_thresholds(self):
        """A multi-label classifier's thresholds of the probabilities before the temperatures (None: the default).

        `sigmoid(logit t_l * T_l)`: where the uncalibrated probabilities decide as the calibrated ones do at `t_l`.
        """
        if not self.multi_label or self.thresholds is None or np.all(self._scales == 1.0):
            return self.thresholds
        return thresholds_at(self.thresholds, 1.0 / self._scales)

    @property
    def activation(self):
        return activation_of(self.multi_label)

    def margins(self, logits):
        """How sure the n-gram part is of each document's decision, `(n,)` (see the class docstring)."""
        scores = self.ngram_weight * np.asarray(logits, np.float64)
        if self.multi_label:  # on the scale of the scores before the temperatures, as the cut was chosen
            thresholds = np.asarray(self.thresholds or [MULTILABEL["threshold"]] * scores.shape[1], np.float64)
            return np.abs(scores - (np.log(thresholds) - np.log1p(-thresholds)) * self._scales).min(axis=1)
        if scores.shape[1] < 2:
            return np.full(len(scores), np.inf)
        top = np.sort(scores, axis=1)[:, -2:]
        return top[:, 1] - top[:, 0]

    def needs_network(self, logits):
        """Whether the network reads each document: its margin is under `cut` (every document when `cut` is None)."""
        if self.cut is None:
            return np.ones(len(logits), bool)
        return self.margins(logits) < self.cut

    def ngram_probabilities(self, logits):
        """The n-gram part's probabilities `softmax(s z)` (`sigmoid(b z / T)`), `(n, classes)` float32."""
        scores = self.ngram_scale * np.asarray(logits, np.float64)
        if self.multi_label:
            return sigmoid_at(scores, self._scales).astype(np.float32)
        e = np.exp(scores - scores.max(axis=1, keepdims=True))
        return (e / e.sum(axis=1, keepdims=True)).astype(np.float32)

    def split(self, logits):
        """The n-gram part's probabilities of every document, and which documents the network must read.

        Args:
            logits: The n-gram part's logits `(n, classes)`.

        Returns:
            `(probabilities, index)`: `(n, classes)` float32, and the sorted
            indices of the documents whose rows are to be the whole
            combination's probabilities instead (`predict` puts them there).
        """
        return self.ngram_probabilities(logits), np.flatnonzero(self.needs_network(logits))

    def predict(self, logits, whole):
        """The probabilities of documents given their n-gram logits: the n-gram part's, or `whole(index)`'s.

        Args:
            logits: The n-gram part's logits `(n, classes)`.
            whole: Called once with the (sorted) indices of the documents the
                network reads, if any; gives their whole combination's
                probabilities.
        """
        result, index = self.split(logits)
        if len(index):
            result[index] = self.whole_probabilities(whole(index))
        return result

    def whole_probabilities(self, probabilities):
        """What a document the network reads gets: the whole combination's probabilities at `temperature`."""
        return calibrated(probabilities, self.temperature, self.multi_label)

    def __repr__(self):
        return f"<Cascade cut={self.cut} ngram_weight={self.ngram_weight} temperature={self.temperature}>"


__all__ = [
    "Cascade",
    "Decision",
    "activation_of",
    "cascade_problem",
    "check_k",
    "check_min_confidence",
    "check_network",
    "over_thresholds",
    "rule_problem",
    "thresholds_at",
    "top_k",
]
