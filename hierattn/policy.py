"""`DecisionPolicy`: how a classifier's part outputs become its probabilities and its answers, held in one value.

NumPy only (no TensorFlow, no Keras): the Keras classifier, the runtime's
bundle, explanations, export and the server all hold a policy and ask it.
A policy is frozen: what changes a decision (a tuning, `network="always"`)
makes a new one (`hierattn.tuning` tunes one on validation scores).

What it holds:

* the class (label) names and the kind: `SINGLE` (a softmax over classes,
  the answer one class) or `MULTI` (a sigmoid per label, the answer the
  labels over their thresholds);
* with an n-gram part, the combination's weights `(a, b)` of
  `softmax(a log p_network + b z_ngrams)` (`hierattn.ngrams.mixing`), and
  the cascade: the `cut` under whose margin the network reads a document,
  the n-gram part's own scale for the others (`ngram_scale`), and the
  temperatures of the whole combination with the cascade (`temperature`)
  and with the network on every document (`temperature_always`);
* a multi-label classifier's `thresholds`, a single-label one's `offsets`
  (the decision rule for macro-F1);
* `network`: `"auto"` (the cascade) or `"always"` (the network reads every
  document); `for_network` gives the other.

`to_dict` / `from_dict` is its one schema: the bundle's metadata, the
`.keras` file's config and the server's `/v1/model` all hold it.
`probabilities` is the one function from part outputs to the probabilities
a classifier gives; `ids`, `labels`, `confidence`, `answered` and `top_k`
turn those into answers (`hierattn.decision.Decision`; the cascade's
arithmetic is `hierattn.decision.Cascade`). An explanation of a decision
asks it for the rest (`decided_order`, `offset_term`,
`weights_at_temperature`, `label_scales`, ...), rather than reading the
cut, the temperatures or the offsets itself.

Example:

>>> policy = DecisionPolicy(["neg", "pos"], weights=(1.0, 0.5), cut=1.0)
>>> z = np.array([[0.0, 4.0], [0.2, -0.2]])      # the n-gram logits: sure, then unsure
>>> network = np.array([[0.5, 0.5], [0.9, 0.1]])  # the network's probabilities
>>> p = policy.probabilities(z, policy.combine(network, z))
>>> p.round(3), policy.labels(p)
(array([[0.119, 0.881],
       [0.917, 0.083]], dtype=float32), ['pos', 'neg'])
>>> policy.for_network("always").probabilities(z, policy.combine(network, z)).round(3)[0]
array([0.119, 0.881], dtype=float32)
>>> DecisionPolicy.from_dict(policy.to_dict()) == policy
True
"""

import dataclasses
import numbers

import numpy as np

from hierattn.decision import Cascade, Decision, check_k, check_min_confidence, check_network
from hierattn.defaults import CASCADE, MULTILABEL
from hierattn.kinds import MULTI, SINGLE, Kind, kind_of
from hierattn.ngrams.mixing import combine

# The cascade's numbers in the schema (`to_dict`): those a document's probabilities depend on.
CASCADE_KEYS = ("cut", "network_weight", "ngram_weight", "ngram_scale", "temperature", "temperature_always")
# The combination's floor on the network's probabilities (`LogLinearCombination`'s epsilon).
EPSILON = 1e-7


def _floats(values):
    return None if values is None else tuple(float(v) for v in values)


def _temperature(value):
    """A temperature as the policy holds it: None, a float, or (one per label) a tuple of floats.

    A value that is no number is kept as it is, for `hierattn.decision.Cascade` to refuse by name.
    """
    if value is None or isinstance(value, bool):
        return value
    if isinstance(value, numbers.Real):
        return float(value)
    if isinstance(value, (list, tuple, np.ndarray)):
        return tuple(float(t) if isinstance(t, numbers.Real) and not isinstance(t, bool) else t for t in value)
    return value


@dataclasses.dataclass(frozen=True)
class DecisionPolicy:
    """How part outputs become probabilities and answers (see the module docstring).

    Args:
        label_names: The classes (labels), in the order of the probabilities' columns.
        kind: `SINGLE` or `MULTI` (`hierattn.kinds`; or its name).
        weights: The combination's `(a, b)`; None: no n-gram part (the network's probabilities are the answer's).
        cut: The cascade's cut (None: the network reads every document).
        ngram_scale: The n-gram part's own scale for the documents it decides (single-label; None: `b`).
        temperature: The whole combination's temperature with the cascade (None: 1); multi-label, one per label.
        temperature_always: The same with the network on every document (None: 1).
        thresholds: A multi-label classifier's thresholds (None: `MULTILABEL["threshold"]` each).
        offsets: A single-label classifier's offsets (None: the most probable class).
        network: `"auto"` or `"always"`.

    Example:

    >>> policy = DecisionPolicy(["sport", "money"], MULTI, thresholds=(0.5, 0.3))
    >>> policy.labels(np.array([[0.9, 0.4], [0.2, 0.1]]))
    [['sport', 'money'], []]
    >>> policy.replace(thresholds=(0.5, 0.5)).labels(np.array([[0.9, 0.4]]))   # a new policy; this one unchanged
    [['sport']]
    """

    label_names: tuple
    kind: Kind = SINGLE
    weights: tuple = None
    cut: float = None
    ngram_scale: float = None
    temperature: object = None
    temperature_always: object = None
    thresholds: tuple = None
    offsets: tuple = None
    network: str = CASCADE["network"]

    def __post_init__(self):
        set_ = object.__setattr__
        set_(self, "label_names", tuple(self.label_names))
        if not isinstance(self.kind, (Kind, str)):
            raise ValueError(f"kind must be {SINGLE.name!r} or {MULTI.name!r}, not {self.kind!r}")
        set_(self, "kind", kind_of(self.kind))
        set_(self, "weights", _floats(self.weights))
        set_(self, "cut", None if self.cut is None else float(self.cut))
        set_(self, "ngram_scale", None if self.ngram_scale is None else float(self.ngram_scale))
        set_(self, "temperature", _temperature(self.temperature))
        set_(self, "temperature_always", _temperature(self.temperature_always))
        set_(self, "thresholds", _floats(self.thresholds))
        set_(self, "offsets", None if self.kind == MULTI else _floats(self.offsets))
        check_network(self.network)
        # Their arithmetic, made once (both refuse numbers they cannot use).
        thresholds = None if self.thresholds is None else list(self.thresholds)
        offsets = None if self.offsets is None else list(self.offsets)
        set_(self, "_decision", Decision(self.label_names, self.multi_label, thresholds, offsets))
        cascade = None
        if self.weights is not None:
            auto = self.network == "auto"
            temperature = self.temperature if auto else self.temperature_always
            temperature = list(temperature) if isinstance(temperature, tuple) else temperature
            cut = self.cut if auto else None
            cascade = Cascade(cut, self.weights[1], self.multi_label, thresholds, self.ngram_scale, temperature)
        set_(self, "_cascade", cascade)

    # What it is

    @property
    def multi_label(self):
        """Whether the columns are independent label probabilities (`kind == MULTI`)."""
        return self.kind.multi_label

    @property
    def activation(self):
        """The output activation: `"softmax"` or `"sigmoid"`."""
        return self.kind.activation

    @property
    def decision(self):
        """How probabilities become answers (`hierattn.decision.Decision`)."""
        return self._decision

    @property
    def cascade(self):
        """Which documents the network reads (`hierattn.decision.Cascade`); None without an n-gram part."""
        return self._cascade

    @property
    def reads_all(self):
        """Whether the network reads every document (no n-gram part, `network="always"`, or no cut)."""
        return self._cascade is None or self._cascade.cut is None

    @property
    def default_thresholds(self):
        """The thresholds a multi-label classifier decides with: its own, else `MULTILABEL["threshold"]` each."""
        return list(self.thresholds or [MULTILABEL["threshold"]] * len(self.label_names))

    # New policies

    def for_network(self, network):
        """The same policy with the network reading only the documents the n-gram part is not sure of, or all.

        Args:
            network: `"auto"` or `"always"` (None: this policy).
        """
        if network is None or network == self.network:
            return self
        return dataclasses.replace(self, network=check_network(network))

    def replace(self, **changes):
        """A new policy with `changes` (`dataclasses.replace`)."""
        return dataclasses.replace(self, **changes)

    # Probabilities

    def combine(self, network, logits):
        """The whole combination's probabilities before any temperature, from the network's and the n-gram logits.

        As the Keras graph computes it (`hierattn.ngrams.mixing.combine`), in float32; without an n-gram part,
        the network's probabilities.
        """
        if self.weights is None or logits is None:
            return np.asarray(network, np.float32)
        a, b = self.weights
        return combine(network, logits, a, b, EPSILON, self.activation).astype(np.float32)

    def probabilities(self, logits, whole):
        """The classifier's probabilities of documents: the one function every path turns part outputs into them with.

        Args:
            logits: The n-gram part's logits `(n, classes)` (None without an n-gram part).
            whole: The whole combination's probabilities before any temperature (`combine`; the network's
                without an n-gram part): an array `(n, classes)`, or a function called once with the sorted
                indices of the documents the network reads, giving theirs (so that it reads no other).

        Returns:
            `(n, classes)` float32: for a document the network reads, the whole combination's at the
            temperature; for any other, the n-gram part's (`hierattn.decision.Cascade`).
        """
        if self._cascade is None or logits is None:  # no n-gram part: the network's, as they are
            return np.asarray(whole(np.arange(len(logits))) if callable(whole) else whole, np.float32)
        return self._cascade.predict(logits, whole if callable(whole) else (lambda index: np.asarray(whole)[index]))

    def split(self, logits):
        """The n-gram part's probabilities of every document, and the sorted indices of those the network reads."""
        if self.reads_all:
            return None, np.arange(len(logits))
        return self._cascade.split(logits)

    def needs_network(self, logits):
        """Whether the network reads each document, `(n,)` bool: those the n-gram part is not sure of, or every one."""
        if self.reads_all:
            return np.ones(len(logits), bool)
        return self._cascade.needs_network(logits)

    def calibrate(self, whole):
        """What a document the network reads gets, from the whole combination's: at the temperature."""
        return whole if self._cascade is None else self._cascade.whole_probabilities(whole)

    # Answers

    def ids(self, probabilities, thresholds=None):
        """Class ids `(n,)`, or a multi-label classifier's multi-hot rows (`Decision.ids`)."""
        return self._decision.ids(probabilities, thresholds)

    def argmax_ids(self, probabilities):
        """The most probable class of each row, whatever the offsets (single-label)."""
        return (
            self._decision.ids(probabilities) if self.offsets is None else self.replace(offsets=None).ids(probabilities)
        )

    def labels(self, probabilities, min_confidence=None):
        """Each row's answer: a class name, a list of label names, or None (`Decision.labels`)."""
        return self._decision.labels(probabilities, min_confidence)

    def confidence(self, probabilities):
        """How sure each decision is (`Decision.confidence`)."""
        return self._decision.confidence(probabilities)

    def answered(self, probabilities, min_confidence=None):
        """Whether each decision is an answer (`Decision.answered`)."""
        return self._decision.answered(probabilities, min_confidence)

    def top_k(self, probabilities, k):
        """Each row's `k` most probable classes (`Decision.top_k`)."""
        return self._decision.top_k(probabilities, k)

    def over_thresholds(self, probabilities, thresholds=None):
        """Multi-hot rows of the labels over their thresholds (`Decision.over_thresholds`)."""
        return self._decision.over_thresholds(probabilities, thresholds)

    # What an explanation of its decisions asks of it (`hierattn.explain`)

    @property
    def weights_at_temperature(self):
        """The combination's weights `(a, b)` as a document the network reads is decided with, temperature included.

        A single-label classifier's temperature divides every class's score alike: `(a / T, b / T)`. A
        multi-label classifier's are one per label: its `(a, b)` as they are, each label's terms then
        multiplied by its own `label_scales`. None without an n-gram part.

        >>> DecisionPolicy("ab", weights=(1.0, 0.5), temperature=2.0).weights_at_temperature
        (0.5, 0.25)
        """
        if self.weights is None:
            return None
        temperature = 1.0 if self.multi_label else self._cascade.temperature
        return tuple(float(v) / temperature for v in self.weights)

    @property
    def label_scales(self):
        """What each class's (label's) terms are multiplied by after `weights_at_temperature`, `(classes,)` float64.

        A multi-label classifier's `1 / T_l`, each label's temperature (1 without an n-gram part); a
        single-label classifier's 1 (its temperature is in the weights already).

        >>> DecisionPolicy("ab", MULTI, weights=(1.0, 0.5), temperature=(2.0, 0.5)).label_scales
        array([0.5, 2. ])
        """
        temperature = 1.0 if self._cascade is None or not self.multi_label else self._cascade.temperature
        return 1.0 / np.broadcast_to(np.asarray(temperature), (len(self.label_names),))

    def temperature_entries(self):
        """What a decision's record says of a document the network reads beside its weights: the temperature
        they were divided by (`weights_at_temperature`, `{"temperature": T}`) where there is one other than 1;
        else nothing (`{}`).
        """
        temperature = 1.0 if self._cascade is None or self.multi_label else self._cascade.temperature
        return {} if temperature == 1.0 else {"temperature": temperature}

    def cut_text(self):
        """The cut in words, for a note on why the network did not read a document (the n-gram part was surer).

        >>> DecisionPolicy("ab", weights=(1.0, 0.5), cut=0.51234).cut_text()
        'the cut chosen on the texts held out in training (0.512)'
        """
        return f"the cut chosen on the texts held out in training ({self.cut:.3g})"

    def decided_order(self, probabilities):
        """Each row's classes, the one decided first (`ids`: by the offsets, if any), then by probability.

        Ties keep the classes' order. A decision rule for macro-F1 (`offsets`) may decide a class that
        is not the most probable; the next is then the runner-up it was decided against.

        >>> DecisionPolicy("abc", offsets=(0.0, 0.0, 1.0)).decided_order(np.array([[0.5, 0.3, 0.2]])).tolist()
        [[2, 0, 1]]
        """
        scores = np.asarray(probabilities)
        if self.offsets is not None:  # the decision rule's offsets, on the log-probabilities (as `ids`)
            with np.errstate(divide="ignore"):
                scores = np.log(scores.astype(np.float64)) + self.offsets
        return np.argsort(-scores, axis=1, kind="stable")

    def offset_term(self, decided, versus):
        """What the offsets add to the margin of class `decided` over `versus`: their difference (None without any)."""
        if self.offsets is None:
            return None
        return float(self.offsets[decided] - self.offsets[versus])

    # The schema

    def to_dict(self):
        """The policy as JSON-ready data: what the bundle's metadata, the `.keras` config and `/v1/model` hold.

        `label_names`; `multi_label` and `thresholds` only for a multi-label
        policy, `offsets` only where there are some, and `cascade` (its
        `CASCADE_KEYS`) only with an n-gram part: the keys bundles have held
        since before the policy, so that they read the same everywhere.
        `network` is how it is used, not what was chosen: not saved.
        """
        found = {"label_names": list(self.label_names)}
        if self.multi_label:
            found.update(multi_label=True, thresholds=self.default_thresholds)
        elif self.offsets is not None:
            found["offsets"] = list(self.offsets)
        if self.weights is not None:
            found["cascade"] = {
                "cut": self.cut,
                "network_weight": self.weights[0],
                "ngram_weight": self.weights[1],
                "ngram_scale": self.ngram_scale,
                "temperature": _plain(self.temperature),
                "temperature_always": _plain(self.temperature_always),
            }
        return found

    @classmethod
    def from_dict(cls, data, network=CASCADE["network"], network_weight=None):
        """The policy of `to_dict`'s data (and of bundles exported before it: `network_weight` given apart).

        Args:
            data: `to_dict`'s keys; extra keys are ignored (a `.keras` file's cascade report holds more).
            network: `"auto"` or `"always"`.
            network_weight: `a` where `data["cascade"]` has none (a bundle before it: its graph combines).
        """
        multi = bool(data.get("multi_label", False))
        cascade = data.get("cascade")
        weights = None
        if cascade is not None:
            a = cascade.get("network_weight", network_weight)
            weights = (1.0 if a is None else a, cascade["ngram_weight"])
        cascade = cascade or {}
        return cls(
            data["label_names"],
            kind_of(multi),
            weights=weights,
            cut=cascade.get("cut"),
            ngram_scale=cascade.get("ngram_scale"),
            temperature=cascade.get("temperature"),
            temperature_always=cascade.get("temperature_always"),
            thresholds=data.get("thresholds") if multi else None,
            offsets=None if multi else data.get("offsets"),
            network=network,
        )

    def __repr__(self):
        parts = [f"{len(self.label_names)} {self.kind.nouns}", self.kind.name]
        if self.weights is not None:
            parts.append(f"weights {self.weights[0]:.3g}/{self.weights[1]:.3g}, cut {self.cut}, network {self.network}")
        if self.thresholds is not None:
            parts.append(f"thresholds {list(self.thresholds)}")
        if self.offsets is not None:
            parts.append(f"offsets {list(self.offsets)}")
        return f"<DecisionPolicy {', '.join(parts)}>"


@dataclasses.dataclass(frozen=True)
class PredictOptions:
    """How answers are asked for, checked once where they enter (the CLI, the server, batch, the Python API).

    Every layer below takes the checked value and checks nothing again.

    Args:
        top_k: Also rank each text's `top_k` most probable classes (labels); None: no ranking.
        min_confidence: A probability: a decision less sure than it is no answer (None: every decision is one).
        network: `"auto"` or `"always"` (`DecisionPolicy.for_network`); None: the model's own setting.

    Raises:
        ArgumentError: `top_k` is not a whole number of at least 1, `min_confidence` not a number in [0, 1],
            or `network` not one of its values.

    Example:

    >>> PredictOptions(top_k=2, min_confidence=0.9)
    PredictOptions(top_k=2, min_confidence=0.9, network=None)
    >>> PredictOptions(network="always").policy_of(DecisionPolicy(["neg", "pos"], weights=(1.0, 0.5))).network
    'always'
    """

    top_k: int = None
    min_confidence: float = None
    network: str = None

    def __post_init__(self):
        if self.top_k is not None:
            check_k(self.top_k, "top_k")
        object.__setattr__(self, "min_confidence", check_min_confidence(self.min_confidence))
        if self.network is not None:
            check_network(self.network)

    def policy_of(self, model):
        """The policy a model (anything with a `policy`, or a policy) answers these options with."""
        return getattr(model, "policy", model).for_network(self.network)


def _plain(temperature):
    return list(temperature) if isinstance(temperature, tuple) else temperature


__all__ = ["CASCADE_KEYS", "MULTI", "SINGLE", "DecisionPolicy", "Kind", "PredictOptions"]
