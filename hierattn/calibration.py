"""Calibration: how far probabilities are from the frequencies they claim, and a temperature that brings them closer.

A classifier is calibrated when, of the documents it gives a probability of
0.8, about 80% are right. Temperature scaling (Guo et al. 2017) divides
the log-probabilities by one number `T`, fitted on validation texts by
log-loss: `T > 1` softens over-confident probabilities, `T < 1` sharpens
under-confident ones, and no document's decision changes (the order of its
classes stays; a multi-label classifier's labels would need their
thresholds moved with them, and are not calibrated yet).

The measures here take probabilities as a classifier gives them, `(n,
classes)`, and labels as class ids `(n,)` (single-label) or a multi-hot
`(n, labels)` array (multi-label, where every document-label pair counts as
one binary prediction). NumPy only; the fit uses SciPy's bounded scalar
search (scikit-learn depends on SciPy).
"""

import numpy as np

# Expected calibration error's bins (equal width, over the confidence), as the literature reports it.
ECE_BINS = 15
# Shares of documents kept, the surest first, at which accuracy is reported (`coverage_scores`).
COVERAGES = (1.0, 0.9, 0.8, 0.5)
# The temperatures searched, in log space: a class's (single-label), and a label's (multi-label). A label's is at
# least 0.5: a label its validation texts separate would drive it to the bound, and there its threshold
# (`hierattn.decision.thresholds_at`) and its probabilities would round to 1.0 in float32, changing decisions.
_LOG_T = (np.log(0.05), np.log(20.0))
_LOG_T_LABEL = (np.log(0.5), np.log(20.0))
# Probabilities are kept this far from 0 and 1 in the log-loss (as scikit-learn's), and much less far where a
# temperature is applied, which must move them, not the floor.
_FLOOR = 1e-7
_TINY = 1e-30


def calibrated(probabilities, temperature, multi_label=False):
    """Probabilities at `temperature`: `softmax(log p / T)` per document, or `sigmoid(logit p / T)` per label.

    Args:
        probabilities: `(n, classes)`.
        temperature: `T` (1.0 leaves them as they are); multi-label, also one per label (column).
        multi_label: Each column its own binary probability.

    Returns:
        `(n, classes)` float32; NaN rows stay NaN.

    >>> calibrated(np.array([[0.9, 0.1]]), 2.0).round(3)
    array([[0.75, 0.25]], dtype=float32)
    >>> calibrated(np.array([[0.9, 0.9]]), [1.0, 2.0], multi_label=True).round(3)
    array([[0.9 , 0.75]], dtype=float32)
    """
    temperature = np.asarray(temperature, np.float64)
    if np.all(temperature == 1.0):
        return np.asarray(probabilities, np.float32)
    p = np.clip(np.asarray(probabilities, np.float64), _TINY, 1.0 - 1e-16)
    if multi_label:
        return sigmoid_at((np.log(p) - np.log1p(-p)), temperature).astype(np.float32)
    scores = np.log(p) / temperature
    scores = scores - np.max(scores, axis=1, keepdims=True)
    e = np.exp(scores)
    return (e / e.sum(axis=1, keepdims=True)).astype(np.float32)


def sigmoid_at(log_odds, temperature):
    """`sigmoid(log_odds / T)` in float64 (`T` a number, or one per column)."""
    with np.errstate(over="ignore"):  # exp past float range: inf, and the probability 0, as it is
        return 1.0 / (1.0 + np.exp(-np.asarray(log_odds, np.float64) / np.asarray(temperature, np.float64)))


def temperature_text(temperature):
    """A temperature as a line shows it: one number, or a multi-label classifier's range over its labels.

    >>> temperature_text(0.7981), temperature_text([0.91, 1.2, 0.84]), temperature_text([1.0, 1.0])
    ('0.798', 'per label, 0.84 to 1.2', '1 for every label')
    """
    if np.ndim(temperature) == 0:
        return f"{float(temperature):.3g}"
    if min(temperature) == max(temperature):
        return f"{min(temperature):.3g} for every label"
    return f"per label, {min(temperature):.3g} to {max(temperature):.3g}"


def calibration_temperature(calibration):
    """The temperature of a calibration report (`hierattn.tuning.calibration_of`), as a line shows it.

    The evaluation page (`hierattn.runs.evaluation_page`) and the text (`hierattn.cli.render.calibration_text`)
    show it alike (`temperature_text`).

    >>> calibration_temperature({"temperature": 0.7981}), calibration_temperature({"temperature": [0.9, 1.2]})
    ('0.798', 'per label, 0.9 to 1.2')
    """
    return temperature_text(calibration["temperature"])


def fit_temperature(probabilities, labels, multi_label=False):
    """The temperature with the smallest log-loss of `calibrated(probabilities, T)` on `labels`.

    Single-label: one `T`, searched in [0.05, 20]. Multi-label: one `T` per
    label (a list), searched in [0.5, 20]. 1.0 without documents (or, for a
    label, without both a positive and a negative document).
    """
    probabilities, labels = np.asarray(probabilities, np.float64), np.asarray(labels)
    if multi_label:
        return [
            _fit(
                lambda t, j=j: _binary_log_loss(calibrated(probabilities[:, [j]], t, True)[:, 0], labels[:, j]),
                _LOG_T_LABEL,
            )
            if 0 < labels[:, j].sum() < len(labels)
            else 1.0
            for j in range(labels.shape[1])
        ]
    if not len(labels):
        return 1.0
    return _fit(lambda t: log_loss(calibrated(probabilities, t), labels))


def _fit(loss, bounds=_LOG_T):
    """The temperature within `bounds` (of its log) with the smallest `loss(T)`, to 4 decimals."""
    from scipy.optimize import minimize_scalar  # SciPy takes a while to load: only when a temperature is fitted

    found = minimize_scalar(lambda log_t: loss(float(np.exp(log_t))), bounds=bounds, method="bounded")
    return round(float(np.exp(found.x)), 4)


def choose_temperature(probabilities, labels, multi_label=False, settings=None):
    """The temperature calibration keeps, and why: one that validation shows helps on documents it was not fitted on.

    A temperature fitted by log-loss on a few documents runs to the bound of
    its search and makes unseen documents worse. So the temperature here is
    fitted with a normal prior on `log T` (mean 0, standard deviation
    `prior`): it minimises the summed log-loss plus `(log T)^2 / (2
    prior^2)`. With few documents it stays near 1, and it moves far from 1
    only where that many documents' evidence outweighs the prior: the range
    the evidence supports. It is then kept only where cross-fitting shows
    it helps: over `folds` stratified folds, each document calibrated by a
    temperature fitted (the same way) on the folds it is not in, the
    documents' log-loss must be lower than at 1 by more than its standard
    error (the one-standard-error rule: the simpler answer, 1, unless the
    other is better by more than that), and their expected calibration error
    lower (the log-loss a temperature minimises and the error reported do
    not always move together). One that runs to the bound of its search
    (a label its documents separate: sharper without end) is no fitted
    value either. Otherwise, and with fewer than
    `min_documents` documents, or fewer than two classes of at least
    `min_positives` (a label: fewer than `min_positives` positive or
    negative ones), it is 1.

    Args:
        probabilities: `(n, classes)`.
        labels: Class ids `(n,)`, or multi-hot rows (multi-label: one temperature per label, each on its column).
        multi_label: One temperature per label.
        settings: `hierattn.defaults.CALIBRATION` (the default) or a dict like it.

    Returns:
        `(temperature, note)`: a float (multi-label, a list of them) and a
        JSON-ready dict: `documents`, `kept` (whether a temperature other
        than 1 was kept), `fitted` (the temperature before the check),
        `held_out_gain` (the mean log-loss the cross-fitted temperatures
        saved, per document; negative: they cost), `held_out_spread` (its
        standard error), `held_out_ece` (the
        expected calibration error at 1 and cross-fitted) and `reason` (why
        1 was kept, or None). Multi-label: `labels_kept`, `labels_too_few`
        and `labels_no_gain` (counts) instead.

    >>> rng = np.random.default_rng(0)
    >>> labels = rng.integers(0, 2, 400)
    >>> sure = np.where(rng.random(400) < 0.8, labels, 1 - labels)   # 80% right, said with 99% confidence
    >>> p = np.where(np.eye(2)[sure] > 0, 0.99, 0.01)
    >>> t, note = choose_temperature(p, labels)
    >>> 2.0 < t < 4.0, note["kept"], note["reason"]
    (True, True, None)
    >>> choose_temperature(p[:10], labels[:10])
    (1.0, {'fitted': None, 'held_out_gain': None, 'held_out_spread': None, 'held_out_ece': None, 'reason': 'too few to fit one on (fewer than 30)', 'documents': 10, 'kept': False})
    """
    from hierattn.defaults import CALIBRATION

    settings = dict(CALIBRATION, **(settings or {}))
    probabilities, labels = np.asarray(probabilities, np.float64), np.asarray(labels)
    if not multi_label:
        return _choose(probabilities, labels, settings)
    found, notes = [], []
    for j in range(labels.shape[1]):
        temperature, note = _choose(probabilities[:, [j]], labels[:, j], settings, label=True)
        found.append(temperature)
        notes.append(note)
    kept = [note for note in notes if note["kept"]]
    note = {
        "documents": len(labels),
        "kept": bool(kept),
        "labels_kept": len(kept),
        "labels_too_few": sum(note["fitted"] is None for note in notes),
        "labels_no_gain": sum(note["fitted"] is not None and not note["kept"] for note in notes),
        "reason": None if kept else "no label's temperature helped held-out folds",
    }
    return found, note


def _choose(probabilities, labels, settings, label=False):
    """`choose_temperature` for one temperature: of `(n, classes)` probabilities, or a label's `(n, 1)`."""
    n = len(labels)
    note = dict.fromkeys(("fitted", "held_out_gain", "held_out_spread", "held_out_ece", "reason"))
    note.update(documents=n, kept=False)
    if label:
        positives = int(np.sum(labels > 0))
        if min(positives, n - positives) < settings["min_positives"]:
            return 1.0, dict(note, reason=f"too few positive or negative documents ({positives} of {n})")
        groups = (labels > 0).astype(np.int64)
    else:
        if n < settings["min_documents"]:
            return 1.0, dict(note, reason=f"too few to fit one on (fewer than {settings['min_documents']})")
        if np.sum(np.bincount(labels) >= settings["min_positives"]) < 2:  # one class: every fold agrees, wrongly
            return 1.0, dict(note, reason=f"fewer than two classes with {settings['min_positives']} documents")
        groups = labels

    def loss(found, rows):  # the mean log-loss of calibrated probabilities of `rows`
        return float(np.mean(_losses(found, labels[rows], label)))

    def error(found):  # the expected calibration error of every document's calibrated probabilities
        if label:
            return expected_calibration_error(found, labels[:, None], multi_label=True)
        return expected_calibration_error(found, labels, found.argmax(1))

    bounds = _LOG_T_LABEL if label else _LOG_T

    def fitted(rows):  # the posterior's mode: the summed log-loss plus the prior's (log T)^2 / (2 prior^2)
        count = int(np.sum(rows))
        return _fit(
            lambda t: (
                count * loss(calibrated(probabilities[rows], t, label), rows)
                + np.log(t) ** 2 / (2.0 * settings["prior"] ** 2)
            ),
            bounds,
        )

    # Cross-fitted: each document calibrated by the temperature fitted on the folds it is not in.
    fold, held_out = _folds(groups, settings["folds"]), np.empty_like(probabilities)
    for k in range(settings["folds"]):
        held = fold == k
        if held.any():
            held_out[held] = calibrated(probabilities[held], fitted(~held) if (~held).any() else 1.0, label)
    temperature = fitted(np.ones(n, bool))
    if min(abs(np.log(temperature) - bound) for bound in bounds) < 1e-3:  # no value: it runs on past the bound
        return 1.0, dict(note, fitted=temperature, reason="it runs to the bound of its search (documents it separates)")
    saved = _losses(probabilities, labels, label) - _losses(held_out, labels, label)  # per document
    gain, spread = float(np.mean(saved)), float(np.std(saved, ddof=1) / np.sqrt(n))
    ece = (error(probabilities), error(held_out))
    note.update(
        fitted=temperature,
        held_out_gain=round(gain, 6),
        held_out_spread=round(spread, 6),
        held_out_ece=[round(e, 5) for e in ece],
    )
    # Shown to help: the log-loss saved by more than its standard error (the one-standard-error rule: the simpler
    # model, 1, unless the other is better by more than that), and the calibration error lower. (NaN: not shown.)
    if not (gain > spread and ece[1] < ece[0]):
        return 1.0, dict(note, reason="one fitted on the other folds did not lower both the held-out folds' "
                         "log-loss (by more than its standard error) and their calibration error")  # fmt: skip
    return temperature, dict(note, kept=True)


def _losses(probabilities, labels, label=False):
    """Each document's log-loss: of its class (`label`: of its label's truth, a `(n, 1)` column's)."""
    p = np.clip(np.asarray(probabilities, np.float64), _FLOOR, 1.0 - _FLOOR)
    if label:
        return -np.where(labels > 0, np.log(p[:, 0]), np.log1p(-p[:, 0]))
    return -np.log(p[np.arange(len(labels)), labels])


def _folds(groups, folds):
    """Each document's fold, `0 .. folds - 1`: stratified by `groups` (class ids), the same on every machine."""
    order = np.random.default_rng(0).permutation(len(groups))
    order = order[np.argsort(np.asarray(groups)[order], kind="stable")]
    fold = np.empty(len(groups), np.int64)
    fold[order] = np.arange(len(groups)) % folds
    return fold


def log_loss(probabilities, labels, multi_label=False):
    """Mean negative log-probability of the true class (multi-label: mean binary log-loss of every pair)."""
    if multi_label:
        return _binary_log_loss(np.ravel(probabilities), np.ravel(labels))
    labels = np.asarray(labels)
    return float(np.mean(_losses(probabilities, labels))) if len(labels) else float("nan")


def _binary_log_loss(p, positive):
    return float(np.mean(_losses(np.reshape(p, (-1, 1)), np.asarray(positive), label=True)))


def brier_score(probabilities, labels, multi_label=False):
    """Mean squared distance of the probabilities from the one-hot truth, summed over classes (multi-label: per pair)."""
    p = np.asarray(probabilities, np.float64)
    truth = np.asarray(labels, np.float64) if multi_label else np.eye(p.shape[1])[np.asarray(labels)]
    squares = np.square(p - truth)
    return float(squares.mean() if multi_label else squares.sum(axis=1).mean())


def expected_calibration_error(probabilities, labels, predicted=None, multi_label=False, bins=ECE_BINS):
    """The documents' mean |accuracy − confidence| over `bins` equal-width bins of confidence, weighted by size.

    Single-label: a document's confidence is the probability of the class
    `predicted` (the classifier's decision, `hierattn.decision.Decision.ids`),
    and it is right when that class is its label. Multi-label: every
    document-label pair is one prediction, its confidence the probability of
    the label, and "right" that the label is on (the reliability of the
    probabilities themselves; `predicted` is not needed).
    """
    confidence, right = _pairs(probabilities, labels, predicted, multi_label)
    if not len(confidence):
        return float("nan")
    edges = np.linspace(0.0, 1.0, bins + 1)
    which = np.clip(np.searchsorted(edges, confidence, side="right") - 1, 0, bins - 1)
    counts = np.bincount(which, minlength=bins)
    gaps = np.abs(np.bincount(which, right, bins) - np.bincount(which, confidence, bins))
    return float(gaps.sum() / counts.sum())


def reliability(probabilities, labels, predicted=None, multi_label=False, bins=ECE_BINS):
    """The reliability diagram's bins: for each non-empty bin of confidence, its documents, mean confidence and accuracy.

    The same bins and pairs as `expected_calibration_error` (which is the
    documents-weighted mean of `|accuracy - confidence|` over them).

    Returns:
        A list of `{"low", "high", "documents", "confidence", "accuracy"}`, lowest first.

    >>> p = np.array([[0.9, 0.1], [0.8, 0.2], [0.35, 0.65]])
    >>> reliability(p, np.array([0, 1, 1]), np.array([0, 0, 1]), bins=5)  # doctest: +NORMALIZE_WHITESPACE
    [{'low': 0.6, 'high': 0.8, 'documents': 1, 'confidence': 0.65, 'accuracy': 1.0},
     {'low': 0.8, 'high': 1.0, 'documents': 2, 'confidence': 0.85, 'accuracy': 0.5}]
    """
    confidence, right = _pairs(probabilities, labels, predicted, multi_label)
    edges = np.linspace(0.0, 1.0, bins + 1)
    which = np.clip(np.searchsorted(edges, confidence, side="right") - 1, 0, bins - 1)
    counts = np.bincount(which, minlength=bins)
    sure, hits = np.bincount(which, confidence, bins), np.bincount(which, right, bins)
    return [
        {
            "low": round(float(edges[b]), 4),
            "high": round(float(edges[b + 1]), 4),
            "documents": int(counts[b]),
            "confidence": round(float(sure[b] / counts[b]), 5),
            "accuracy": round(float(hits[b] / counts[b]), 5),
        }
        for b in np.flatnonzero(counts)
    ]


def _pairs(probabilities, labels, predicted, multi_label):
    """The confidence and rightness (0/1) of each prediction: a document's decided class, or each document-label pair."""
    p = np.asarray(probabilities, np.float64)
    if multi_label:
        return p.ravel(), np.asarray(labels, np.float64).ravel()
    predicted = np.asarray(predicted)
    confidence = p[np.arange(len(p)), predicted] if len(p) else np.zeros(0)
    return confidence, (predicted == np.asarray(labels)).astype(np.float64)


def coverage_curve(probabilities, labels, decide, multi_label=False, points=20):
    """Accuracy (micro-F1 multi-label) of the surest share of documents at `points` shares from 1/points to 1.

    Returns:
        A list of `[share, score]` pairs, the smallest share first (`coverage_scores` at those shares).
    """
    shares = [round((k + 1) / points, 4) for k in range(points)]
    found = coverage_scores(probabilities, labels, decide, multi_label, shares)
    return [[share, round(found[f"{share:g}"], 5)] for share in shares]


def confidence(probabilities, predicted, multi_label=False):
    """How sure each decision is: the probability that it is right, as the probabilities say.

    Single-label: the probability of the class `predicted` (the decision's
    class ids, `hierattn.decision.Decision.ids`). Multi-label: `predicted`
    is multi-hot rows, and a document's confidence that of its least sure
    label: `p` for a label it has, `1 - p` for one it has not.

    >>> confidence(np.array([[0.2, 0.8], [0.6, 0.4]]), np.array([1, 1]))
    array([0.8, 0.4])
    """
    p = np.asarray(probabilities, np.float64)
    if multi_label:
        return np.where(np.asarray(predicted) > 0, p, 1.0 - p).min(axis=1)
    return p[np.arange(len(p)), np.asarray(predicted, np.int64)] if len(p) else np.zeros(0)


def coverage_scores(probabilities, labels, decide, multi_label=False, coverages=COVERAGES):
    """Accuracy (micro-F1 for multi-label) of the surest share of documents, for each share in `coverages`.

    Args:
        probabilities: `(n, classes)`.
        labels: Class ids `(n,)`, or multi-hot rows.
        decide: The classifier's decisions of probabilities (`Decision.ids`):
            class ids, or multi-hot rows.
        multi_label: Whether `labels` are multi-hot rows.
        coverages: The shares kept, the surest documents first (`confidence`).

    Returns:
        `{"1": ..., "0.9": ..., ...}`: keys the shares as text (JSON), values floats.
    """
    probabilities, labels = np.asarray(probabilities), np.asarray(labels)
    decided = np.asarray(decide(probabilities))
    order = np.argsort(-confidence(probabilities, decided, multi_label), kind="stable")
    found = {}
    for share in coverages:
        kept = order[: max(1, int(round(share * len(order))))] if len(order) else order
        found[f"{share:g}"] = score(decided[kept], labels[kept], multi_label)
    return found


def score(decided, labels, multi_label=False):
    """Accuracy of class ids on `labels`, or micro-F1 of multi-hot rows (0 with nothing to count; NaN without documents)."""
    decided, labels = np.asarray(decided), np.asarray(labels)
    if multi_label:
        true_positives, total = np.sum(decided * labels), np.sum(decided) + np.sum(labels)
        return float(2.0 * true_positives / total) if total else 0.0
    return float(np.mean(decided == labels)) if len(labels) else float("nan")


def calibration_report(probabilities, labels, decide, multi_label=False):
    """ECE, log-loss and Brier score of probabilities on labels, and the score at each coverage (`coverage_scores`).

    Also what the pictures need: `reliability` (the reliability diagram's
    bins) and `coverage_curve` (the accuracy-coverage curve's points).

    `decide` gives the classifier's decisions of probabilities (`Decision.ids`).
    """
    predicted = None if multi_label else decide(probabilities)
    return {
        "ece": round(expected_calibration_error(probabilities, labels, predicted, multi_label), 5),
        "log_loss": round(log_loss(probabilities, labels, multi_label), 5),
        "brier": round(brier_score(probabilities, labels, multi_label), 5),
        "coverage": {k: round(v, 5) for k, v in coverage_scores(probabilities, labels, decide, multi_label).items()},
        "reliability": reliability(probabilities, labels, predicted, multi_label),
        "coverage_curve": coverage_curve(probabilities, labels, decide, multi_label),
    }
