"""Tuning a `DecisionPolicy` in one pass: the validation split's part outputs computed once, then pure functions.

NumPy only. `ValidationScores` holds what the network and the n-gram part
said of the validation texts (the network's probabilities, the n-gram
logits) and their true labels: the backbone reads validation once after
`fit`. `tune` then chooses, in this fixed order, each step on the
probabilities the steps before it give:

1. the combination's weights `(a, b)` (`hierattn.ngrams.mixing.choose_mixing`);
2. a multi-label classifier's thresholds, on the whole combination's
   probabilities (`choose_thresholds`);
3. the cascade's cut (`hierattn.cut.choose_cut`), the n-gram part's own scale
   (`ngram_scale`) and the temperatures (`hierattn.calibration.choose_temperature`):
   a multi-label classifier's, one per label, with its thresholds moved with them;
4. a single-label classifier's offsets for macro-F1 (`choose_offsets`), on
   the probabilities the policy now gives.

and returns the policy with what each step measured (`Tuning`). Every
function takes arrays and returns numbers: each is tested on synthetic
scores in milliseconds.
"""

import dataclasses

import numpy as np

from hierattn.calibration import calibration_report, choose_temperature, temperature_text
from hierattn.cut import choose_cut
from hierattn.decision import thresholds_at
from hierattn.defaults import CASCADE, DECISION, MULTILABEL, NGRAMS
from hierattn.ngrams.mixing import combine, mixing_on_validation
from hierattn.policy import MULTI, DecisionPolicy


@dataclasses.dataclass(frozen=True)
class ValidationScores:
    """What the parts said of the validation texts, computed once, and their true labels.

    Attributes:
        labels: Class ids `(n,)`, or multi-hot rows `(n, labels)`.
        network: The network's (backbone's) probabilities `(n, classes)`.
        ngram_logits: The n-gram part's logits `(n, classes)`; None without one.

    Example:

    >>> scores = ValidationScores(np.array([0, 1]), np.array([[0.8, 0.2], [0.3, 0.7]]))   # no n-gram part
    >>> len(scores), tune(scores, DecisionPolicy(["neg", "pos"])).policy.weights is None
    (2, True)
    """

    labels: np.ndarray
    network: np.ndarray
    ngram_logits: np.ndarray = None

    def __len__(self):
        return len(self.labels)


@dataclasses.dataclass(frozen=True)
class Tuning:
    """A tuned policy and what each step measured (JSON-ready reports; None for a step not taken).

    Attributes:
        policy: The `DecisionPolicy`.
        weights: The weights' report (`mixing_on_validation`'s: `shares`, `validation_accuracy`).
        chosen_weights: The weights as chosen, before the policy holds them at float32 (what reports say).
        thresholds: The thresholds' report (`choose_thresholds`'s, with `how`).
        cascade: The cascade's report (`choose_cut`'s, with `ngram_scale`, `calibration`, the temperatures).
        offsets: The offsets' report (`choose_offsets`'s).

    Example:

    >>> rng = np.random.default_rng(0)
    >>> labels = rng.integers(0, 2, 200)
    >>> network = np.where(np.eye(2)[labels] > 0, 0.7, 0.3)   # a network right on every text, not sure of any
    >>> logits = rng.normal(size=(200, 2))                      # an n-gram part that knows nothing
    >>> tuning = tune(ValidationScores(labels, network, logits), DecisionPolicy(["neg", "pos"], weights=(1.0, 0.0)))
    >>> tuning.policy.weights[1] < tuning.policy.weights[0], tuning.cascade["cut"] is None
    (True, True)
    """

    policy: DecisionPolicy
    weights: dict = None
    chosen_weights: tuple = None
    thresholds: dict = None
    cascade: dict = None
    offsets: dict = None


def tune(scores, policy, decision_metric=DECISION["metric"], tolerance=CASCADE["tolerance"]):
    """The policy tuned on validation scores, each step in the order of the module docstring.

    Args:
        scores: `ValidationScores` (at least one document).
        policy: The policy before (its labels and kind; `weights` not None
            where the classifier has an n-gram part).
        decision_metric: `"accuracy"`, or `"macro_f1"` for a single-label classifier's offsets.
        tolerance: How far under the whole combination's the cascade's validation scores may be.

    Returns:
        A `Tuning`.
    """
    logits, labels, multi = scores.ngram_logits, np.asarray(scores.labels), policy.multi_label
    found = {}
    if policy.weights is not None and logits is not None:
        found["chosen_weights"], found["weights"] = mixing_on_validation(scores.network, logits, labels)
        weights = as_float32(found["chosen_weights"])  # as the graph's combination holds them
        policy = policy.replace(weights=weights, cut=None, ngram_scale=None, temperature=None, temperature_always=None)
    policy = policy.replace(offsets=None, network="auto")
    whole = policy.combine(scores.network, logits)  # the whole combination's, before any temperature
    if multi:
        thresholds, report = choose_thresholds(whole, labels)
        how = f"chosen on {len(labels):,} validation documents: {report['tuned']} labels alone, the others {report['shared']:g}"
        policy, found["thresholds"] = policy.replace(thresholds=thresholds), dict(report, how=how)
    if policy.weights is not None and logits is not None:
        policy, found["cascade"] = tune_cascade(policy, logits, whole, labels, tolerance)
    if decision_metric == "macro_f1" and not multi:
        offsets, found["offsets"] = choose_offsets(policy.probabilities(logits, whole), labels)
        policy = policy.replace(offsets=offsets)
    return Tuning(policy, **found)


def as_float32(weights):
    """The combination's weights as its Keras variable holds them (float32), as Python floats."""
    return tuple(float(w) for w in np.asarray(weights, np.float32))


def untuned(policy, has_ngrams, before=None):
    """What a classifier decides with when there are no validation texts: what was chosen before, else the defaults.

    Args:
        policy: The policy before (None: none yet).
        has_ngrams: Whether the classifier has an n-gram part.
        before: The policy's labels and kind, for a first one: `(label_names, kind)`.

    Returns:
        A `Tuning` whose reports say so: the thresholds kept or the default, no cut when none was chosen.
    """
    if policy is None:
        names, kind = before
        policy = DecisionPolicy(names, kind, weights=as_float32(NGRAMS["weights"]) if has_ngrams else None)
        cascade = {"cut": None, "validation_documents": 0} if has_ngrams else None
        thresholds = None
        if policy.multi_label:
            policy = policy.replace(thresholds=policy.default_thresholds)
            thresholds = {"shared": MULTILABEL["threshold"], "tuned": 0, "how": "the default (no validation texts)"}
        chosen = NGRAMS["weights"] if has_ngrams else None
        return Tuning(policy, chosen_weights=chosen, thresholds=thresholds, cascade=cascade)
    return Tuning(policy)


def tune_cascade(policy, logits, whole, labels, tolerance=CASCADE["tolerance"]):
    """The cut, the n-gram part's scale and the temperatures, chosen on validation (step 3 of `tune`).

    The cut is the cheapest share of documents the network reads whose
    validation scores stay within `tolerance` of the whole combination's
    (`hierattn.cut.choose_cut`). A single-label classifier's whole
    combination gets two temperatures (`choose_temperature`): `temperature`
    on the validation documents the network reads (every document's where
    they are too few to fit one on) and `temperature_always` on all of them.
    A multi-label classifier's are one per label, on the cascade's
    probabilities of every validation document (the same for both), and its
    thresholds move with them (`hierattn.decision.thresholds_at`): no decision changes.

    Returns:
        `(policy, report)`: the report `choose_cut`'s, with `ngram_scale`,
        `calibration` (what each temperature's note says) and the temperatures.
    """
    multi = policy.multi_label
    scale = None if multi else ngram_scale(logits, labels)
    before = policy.replace(cut=None, ngram_scale=scale, temperature=None, temperature_always=None)
    cascade = before.cascade
    margins = cascade.margins(logits)
    raw = before.replace(offsets=None)  # decisions before any offsets
    cut, report = choose_cut(margins, raw.ids(whole), raw.ids(cascade.ngram_probabilities(logits)), labels, tolerance)
    if multi:  # per label, on the cascade's probabilities; the thresholds move with them
        found = before.replace(cut=cut).probabilities(logits, whole)
        temperature, note = choose_temperature(found, labels, True)
        temperatures = dict.fromkeys(("temperature", "temperature_always"), temperature)
        notes = {"temperature": note}
        thresholds = thresholds_at(before.default_thresholds, temperature)
    else:  # the whole combination's temperatures: for the documents the network reads; for all
        read = np.ones(len(margins), bool) if cut is None else margins < cut
        read = read if read.any() else np.ones(len(margins), bool)
        temperatures, notes = _whole_temperatures(whole, labels, read)
        thresholds = policy.thresholds
    report = dict(report, ngram_scale=scale, calibration=notes, **temperatures)
    return before.replace(cut=cut, thresholds=thresholds, **temperatures), report


def _whole_temperatures(probabilities, labels, read):
    """The whole combination's temperatures (`choose_temperature`): for the documents the network reads; for all.

    Where the documents read are too few to fit one on, they take every
    document's (if it was kept); where they are enough but show none that
    helps on held-out folds, they keep 1: every document's was not checked
    on them.

    Returns:
        `({"temperature", "temperature_always"}, notes)`: the notes of each, as `choose_temperature` gives them.
    """
    every, every_note = choose_temperature(probabilities, labels)
    if read.all():
        return {"temperature": every, "temperature_always": every}, {"temperature": every_note}
    found, note = choose_temperature(probabilities[read], labels[read])
    if note["fitted"] is None and every_note["kept"]:  # too few to fit one on: every document's
        found, note = every, dict(note, used="every validation document's")
    return {"temperature": found, "temperature_always": every}, {"temperature": note, "temperature_always": every_note}


# The n-gram part's own scales tried (`ngram_scale`).
NGRAM_SCALES = tuple(np.round(np.geomspace(0.05, 20.0, 53), 4))


def ngram_scale(logits, labels):
    """The scale `s` of the n-gram part's logits with the smallest validation log-loss of `softmax(s z)`.

    What a document the n-gram part decides alone gets (`hierattn.decision.Cascade`):
    its own probabilities, at the temperature that fits the validation texts, not
    those of the combination without the network's term (`softmax(b z)`:
    too soft where the network carries much of the combination's scale).
    """
    logits, labels = np.asarray(logits, np.float64), np.asarray(labels)

    def loss(scale):
        scores = scale * logits
        scores = scores - scores.max(axis=1, keepdims=True)
        log_p = scores - np.log(np.exp(scores).sum(axis=1, keepdims=True))
        return -log_p[np.arange(len(labels)), labels].mean()

    return float(min(NGRAM_SCALES, key=loss))


def _best(scores, grid):
    """The grid value with the best score, ties to the value nearest 0.5."""
    scores = np.round(np.asarray(scores, np.float64), 12)
    candidates = np.flatnonzero(scores == scores.max())
    return float(grid[candidates[np.argmin(np.abs(grid[candidates] - 0.5))]])


def choose_thresholds(probabilities, labels, grid=MULTILABEL["grid"], min_positives=MULTILABEL["min_positives"]):
    """Per-label thresholds chosen on validation probabilities and their true labels.

    Each label's threshold is the value of `grid` with the best F1 of that
    label (ties to the value nearest 0.5); a label with fewer than
    `min_positives` validation documents takes the shared threshold instead,
    the grid value with the best micro-F1 over every label. This is how the
    Reuters baselines of `../shared/datasets/multilabel` tune theirs.

    Args:
        probabilities: Validation label probabilities `(n, labels)`.
        labels: Their true multi-hot rows `(n, labels)`.
        grid: The thresholds tried.
        min_positives: Validation documents a label needs to be tuned alone.

    Returns:
        `(thresholds, report)`: a list of floats, one per label, and a
        JSON-ready dict: `shared` (the shared threshold), `tuned` (how many
        labels were tuned alone) and `min_positives`.

    Example:

    >>> p = np.array([[0.9, 0.2], [0.6, 0.4], [0.3, 0.1], [0.2, 0.35]])
    >>> y = np.array([[1, 0], [1, 1], [0, 0], [0, 1]])
    >>> choose_thresholds(p, y, min_positives=2)[0]
    [0.5, 0.34]
    """
    probabilities, truth = np.asarray(probabilities, np.float32), np.asarray(labels) > 0
    grid = np.asarray(grid, np.float64)
    true_positives = np.zeros((len(grid), truth.shape[1]))
    predicted = np.zeros_like(true_positives)
    for i, threshold in enumerate(grid):
        over = probabilities > threshold
        true_positives[i], predicted[i] = (over & truth).sum(axis=0), over.sum(axis=0)
    positives = truth.sum(axis=0)
    micro = 2 * true_positives.sum(1) / np.maximum(predicted.sum(1) + positives.sum(), 1)
    shared = _best(micro, grid)
    per_label = 2 * true_positives / np.maximum(predicted + positives, 1)
    tuned = positives >= min_positives
    thresholds = [_best(per_label[:, j], grid) if tuned[j] else shared for j in range(truth.shape[1])]
    return thresholds, {"shared": shared, "tuned": int(tuned.sum()), "min_positives": int(min_positives)}


def macro_f1(decided, labels, classes):
    """The mean over `classes` class ids of each class's F1 (0 for a class neither predicted nor present)."""
    decided, labels = np.asarray(decided), np.asarray(labels)
    true_positives = np.bincount(labels[decided == labels], minlength=classes)
    denominator = np.bincount(decided, minlength=classes) + np.bincount(labels, minlength=classes)
    return float(np.mean(np.where(denominator > 0, 2.0 * true_positives / np.maximum(denominator, 1), 0.0)))


def choose_offsets(probabilities, labels, weights=DECISION["prior_weights"]):
    """A decision rule for macro-F1: offsets `-w log prior` with the best macro-F1 of `probabilities` on `labels`.

    The most probable class is the decision with the best expected
    accuracy. A user who cares as much about a rare class as a common one
    (macro-F1) is better served by answering a rare class a little more
    often: each class's log-probability gets an offset before the highest
    is taken. A class's prior is its share of the validation texts
    (add-one smoothed), and `w` the value of `weights` with the best
    validation macro-F1, ties to the smallest (`w = 0` is the most probable
    class, `w = 1` divides each probability by its class's share). One
    weight for every class: offsets searched class by class fitted the
    validation texts and lost macro-F1 on the test splits of the imbalanced
    devsuite sets (BENCHMARKS.md, "A decision rule for macro-F1").

    Args:
        probabilities: Validation probabilities `(n, classes)`, as the classifier gives them.
        labels: Their true class ids `(n,)`.
        weights: The values of `w` tried.

    Returns:
        `(offsets, report)`: one float per class, and a JSON-ready dict:
        `metric`, `prior_weight` (`w`), `validation_documents`, and
        `validation`: the accuracy and macro-F1 of the most probable class
        (`argmax`) and of the offsets (`offsets`).

    Example:

    >>> p = np.array([[0.6, 0.4], [0.7, 0.3], [0.9, 0.1], [0.8, 0.2], [0.55, 0.45]])
    >>> offsets, report = choose_offsets(p, np.array([1, 0, 0, 0, 1]))   # the rare class under-answered
    >>> report["prior_weight"], report["validation"]["argmax"], report["validation"]["offsets"]
    (0.7, {'accuracy': 0.6, 'macro_f1': 0.375}, {'accuracy': 0.8, 'macro_f1': 0.7619})
    """
    probabilities, labels = np.asarray(probabilities, np.float64), np.asarray(labels)
    classes = probabilities.shape[1]
    prior = (np.bincount(labels, minlength=classes) + 1.0) / (len(labels) + classes)
    names = [str(j) for j in range(classes)]

    def decided(weight):
        return DecisionPolicy(names, offsets=-weight * np.log(prior)).ids(probabilities)

    scores = [macro_f1(decided(w), labels, classes) for w in weights]
    weight = float(weights[int(np.argmax(np.round(scores, 12)))])  # the first best: the smallest weight
    offsets = [round(float(o), 6) for o in -weight * np.log(prior)]

    def measured(rule):
        return {
            "accuracy": round(float(np.mean(rule == labels)), 5),
            "macro_f1": round(macro_f1(rule, labels, classes), 5),
        }

    report = {
        "metric": "macro_f1",
        "prior_weight": weight,
        "validation_documents": int(len(labels)),
        "validation": {"argmax": measured(decided(0.0)), "offsets": measured(decided(weight))},
    }
    return offsets, report


def calibration_of(policy, logits, whole, labels):
    """How calibrated a policy's probabilities are, before and after its temperature (`calibration_report`).

    Args:
        policy: The policy (with an n-gram part).
        logits: The n-gram logits of the documents.
        whole: Their whole combination's probabilities before any temperature (`DecisionPolicy.combine`).
        labels: Their class ids, or multi-hot rows.

    Returns:
        `{"temperature", "before", "after"}`: ECE, log-loss, Brier score and accuracy
        (micro-F1 multi-label) of the surest 100, 90, 80 and 50% of documents.
    """
    cascade = policy.cascade
    found = {"temperature": cascade.temperature}
    thresholds = cascade.raw_thresholds()
    uncalibrated = policy.replace(temperature=None, temperature_always=None, thresholds=thresholds)
    for name, at in (("before", uncalibrated), ("after", policy)):
        probabilities = at.probabilities(logits, whole)
        found[name] = calibration_report(probabilities, labels, at.ids, policy.multi_label)
    return found


def outcomes(policy, network, logits, labels=None):
    """Everything asked of one pass of the parts over documents: the policy's probabilities, and the whole's.

    Args:
        policy: The `DecisionPolicy`.
        network: The network's probabilities of the documents `(n, classes)`.
        logits: Their n-gram logits (None without an n-gram part).
        labels: Their labels: also say how calibrated the probabilities are (`calibration_of`).

    Returns:
        `{"probabilities", "whole", "share", "calibration"}`: the policy's
        probabilities; the whole combination's as the policy gives them with
        the network on every document (`for_network("always")`); the share
        of documents the network reads (None where it reads every one); and
        `calibration_of`'s report (None without labels or an n-gram part).
    """
    raw = policy.combine(network, logits)
    if policy.cascade is None or logits is None:
        return {"probabilities": raw, "whole": raw, "share": None, "calibration": None}
    share = None if policy.reads_all else (float(policy.cascade.needs_network(logits).mean()) if len(logits) else 0.0)
    return {
        "probabilities": policy.probabilities(logits, raw),
        "whole": policy.for_network("always").calibrate(raw),
        "share": share,
        "calibration": None if labels is None else calibration_of(policy, logits, raw, labels),
    }


def ngram_alone(logits, policy):
    """The n-gram part's own probabilities `softmax(z)` (`sigmoid(z)` per label), as `part="ngrams"` gives them."""
    return combine(np.full_like(logits, 0.5), logits, 0.0, 1.0, activation=policy.activation)


# What tuning chose, in words (the lines `fit` prints).


def cut_line(report):
    """A line on the cut: the share of validation documents the network read, and the scores."""
    report = report or {}
    documents = report.get("validation_documents")
    if not documents:
        return "cascade: the network reads every document (no validation texts to choose a cut on)"
    if report.get("cut") is None:
        line = f"cascade: the network reads every document (chosen on {documents:,} validation documents"
        if report.get("measured_share", 1.0) < 1.0:  # the bound, not the measured scores, kept the network on all
            line += (
                f", too few to show that skipping it costs under {100 * report['tolerance']:.2g} points; "
                f"as measured alone, it would read {report['measured_share']:.1%}"
            )
        return line + ")"
    scores = report["validation"]
    name = next(iter(scores["whole"]))
    bounded = report.get("measured_share", report["validation_share"]) < report["validation_share"]
    return (
        f"cascade: the network reads {report['validation_share']:.1%} of {documents:,} validation documents "
        f"(those of margin under {report['cut']:.3g}"
        + (f"; as measured alone, it would read {report['measured_share']:.1%}" if bounded else "")
        + f"); validation {name.replace('_', '-')} {scores['cascade'][name]:.4f} against "
        f"{scores['whole'][name]:.4f} with the network on all"
    )


def temperature_line(report):
    """A line on the whole combination's temperature (per label: a multi-label classifier's); "" without one."""
    report = report or {}
    if "temperature" not in report:
        return ""
    note = (report.get("calibration") or {}).get("temperature")
    line = f"calibration: the whole combination's temperature {temperature_text(report['temperature'])}"
    if note is None:  # a classifier fitted before the temperatures were checked
        return line
    if "labels_kept" in note:
        line += f" ({note['labels_kept']} labels kept one, on {note['documents']:,} validation documents"
        if note["labels_too_few"] or note["labels_no_gain"]:
            line += (
                f"; 1 for {note['labels_too_few']} with too few positive or negative documents, and for "
                f"{note['labels_no_gain']} where one did not help held-out folds"
            )
        return line + ")"
    read = note["documents"] < report.get("validation_documents", note["documents"])
    whose = "validation documents the network reads" if read else "validation documents"
    if note["kept"]:
        before, after = note["held_out_ece"]
        return line + (
            f" (fitted on {note['documents']:,} {whose}; cross-fitted, it lowered their log-loss by "
            f"{note['held_out_gain']:.4f} and their calibration error from {before:.2%} to {after:.2%})"
        )
    if note.get("used"):
        return (
            line + f" (every validation document's: the {note['documents']:,} the network reads are {note['reason']})"
        )
    if note.get("fitted"):
        return line + (
            f" (on {note['documents']:,} {whose}, one fitted at {note['fitted']:.3g} did not lower both "
            "the held-out folds' log-loss, by more than its standard error, and their calibration error)"
        )
    return line + f" (on {note['documents']:,} {whose}: {note['reason']})"


def cascade_line(report):
    """What the cascade's step chose: `cut_line`, and `temperature_line` where there is one."""
    return "\n".join(line for line in (cut_line(report), temperature_line(report)) if line)


def offset_line(report):
    """One line on the decision rule: the weight chosen, and validation macro-F1 and accuracy with and without."""
    report = report or {}
    if "validation" not in report:
        return "decision rule: the most probable class"
    before, after = report["validation"]["argmax"], report["validation"]["offsets"]
    return (
        f"decision rule for macro-F1: prior weight {report['prior_weight']:g}; validation macro-F1 "
        f"{after['macro_f1']:.4f} (most probable class {before['macro_f1']:.4f}), "
        f"accuracy {after['accuracy']:.4f} ({before['accuracy']:.4f})"
    )


def decision_record(policy, report):
    """What a run's metrics record of the decision rule (`metrics.json`'s `decision`): how tuning chose it
    (`report`: `choose_offsets`'s), and the policy's offsets; None where the policy has none (the most probable class).

    >>> decision_record(DecisionPolicy(["neg", "pos"], offsets=(0.0, 0.4)), {"prior_weight": 0.5})
    {'prior_weight': 0.5, 'offsets': [0.0, 0.4]}
    """
    if policy.offsets is None:
        return None
    return dict(report or {}, offsets=list(policy.offsets))


__all__ = [
    "MULTI",
    "Tuning",
    "ValidationScores",
    "calibration_of",
    "cascade_line",
    "choose_offsets",
    "choose_thresholds",
    "decision_record",
    "ngram_alone",
    "ngram_scale",
    "offset_line",
    "outcomes",
    "tune",
    "tune_cascade",
    "untuned",
]
