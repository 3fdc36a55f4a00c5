"""The cascade's cut, chosen on validation scores: the cheapest share of documents the network reads that keeps them.

NumPy only: the decisions of the validation documents (the whole
combination's, the n-gram part's alone) along the n-gram part's margins in,
the cut and a report out (`choose_cut`). `hierattn.tuning` calls it
from `TextClassifier.choose_cut`.
"""

import numpy as np

from hierattn.defaults import CASCADE


def _f1(true_positives, predicted, actual):
    """F1 from counts (0 where there is nothing to count), element-wise."""
    denominator = predicted + actual
    return np.where(denominator > 0, 2.0 * true_positives / np.maximum(denominator, 1), 0.0)


def cascade_scores(order, whole, ngrams, labels):
    """The accuracy and macro-F1 (micro-F1 for multi-hot rows) of every cascade along `order`.

    The cascade `k` lets the network decide the first `k` documents of
    `order` (the least sure first) and the n-gram part the rest.

    Args:
        order: The documents, least sure first `(n,)`.
        whole: The whole combination's decisions: class ids `(n,)` or multi-hot rows `(n, labels)`.
        ngrams: The n-gram part's decisions, in the same form.
        labels: The true class ids, or multi-hot rows.

    Returns:
        `{name: (n + 1,) array}` for k = 0 .. n: `"accuracy"` and `"macro_f1"`,
        or for multi-hot rows `"micro_f1"`.
    """
    whole, ngrams, labels = (np.asarray(a)[order] for a in (whole, ngrams, labels))

    width = (
        labels.shape[1]
        if labels.ndim == 2
        else 1 + int(max(labels.max(initial=0), whole.max(initial=0), ngrams.max(initial=0)))
    )

    def counts(decided):  # per document: (predicted, true positives), one column per class or label
        if labels.ndim == 2:
            predicted = decided.astype(np.int64)
            return predicted, predicted * labels
        predicted = np.eye(width, dtype=np.int64)[decided]
        return predicted, predicted * (decided == labels)[:, None]

    def along(values_whole, values_ngrams):  # sum over the first k of `whole` and the rest of `ngrams`
        zero = np.zeros((1,) + values_whole.shape[1:], np.int64)
        first = np.concatenate([zero, np.cumsum(values_whole, axis=0)])
        rest = np.concatenate([zero, np.cumsum(values_ngrams, axis=0)])
        return first + rest[-1] - rest

    (p_whole, t_whole), (p_ngrams, t_ngrams) = counts(whole), counts(ngrams)
    predicted, true_positives = along(p_whole, p_ngrams), along(t_whole, t_ngrams)
    if labels.ndim == 2:
        return {"micro_f1": _f1(true_positives.sum(1), predicted.sum(1), labels.sum())}
    support = np.bincount(labels, minlength=width)
    return {
        "accuracy": true_positives.sum(1) / max(len(labels), 1),
        "macro_f1": _f1(true_positives, predicted, support).mean(1),
    }


def harm_bound(order, whole, ngrams, labels, z=CASCADE["z"]):
    """An upper confidence bound on what each cascade along `order` loses against the whole combination, per document.

    The cascade `k` lets the n-gram part decide the documents of `order`
    from `k` on. Of those, `h` are right with the whole combination and
    wrong with the n-gram part alone, `g` the reverse (multi-label: the
    document's whole set of labels right). The loss measured is `(h - g) /
    n`; its spread is that of a difference of two counts, `sqrt(h + g)`,
    and one change more is assumed than was seen (validation cannot show a
    rate of changes under about one in `n`). The bound is `(h - g + z
    sqrt(h + g + 1)) / n`, 0 for the cascade where the network reads
    everything: with few documents no cascade that skips the network is
    shown to cost under `z / n`.

    Returns:
        `(n + 1,)` for k = 0 .. n.
    """
    whole, ngrams, labels = (np.asarray(a)[order] for a in (whole, ngrams, labels))
    if labels.ndim == 2:
        right_whole, right_ngrams = (np.all(d == labels, axis=1) for d in (whole, ngrams))
    else:
        right_whole, right_ngrams = whole == labels, ngrams == labels
    n = len(labels)

    def from_k(flags):  # how many of the documents from k on, k = 0 .. n
        return np.concatenate([np.cumsum(flags[::-1].astype(np.int64))[::-1], [0]])

    h, g = from_k(right_whole & ~right_ngrams), from_k(right_ngrams & ~right_whole)
    bound = (h - g + z * np.sqrt(h + g + 1.0)) / max(n, 1)
    bound[n] = 0.0
    return bound


def choose_cut(margins, whole, ngrams, labels, tolerance=CASCADE["tolerance"], z=CASCADE["z"]):
    """The cut of the cheapest cascade whose validation scores, and every costlier one's, stay near the whole's.

    Near as measured, and as bounded: the loss `harm_bound` allows for what
    so few documents cannot show must be within `tolerance` too. Where it
    is not for any cascade that skips the network, the network reads every
    document.

    Args:
        margins: The n-gram part's margins of the validation documents (`Cascade.margins`).
        whole: The whole combination's decisions of them (class ids, or multi-hot rows).
        ngrams: The n-gram part's decisions of them, in the same form.
        labels: Their true labels, in the same form.
        tolerance: How far under the whole combination's a score may be,
            as measured and as bounded (`harm_bound`).
        z: The bound's width in standard deviations (`harm_bound`).

    Returns:
        `(cut, report)`: the margin under which the network reads a
        document (`None`: every document), and a JSON-ready report:
        `cut`, `tolerance`, `z`, `validation_documents`, `validation_share`
        (the share of them the network read), `measured_share` (the share
        the measured scores alone would have it read, without the bound)
        and `validation` (the scores of the whole combination, the cascade
        and the n-gram part alone).
    """
    margins = np.asarray(margins, np.float64)
    n = len(margins)
    order = np.argsort(margins, kind="stable")
    scores = cascade_scores(order, whole, ngrams, labels)
    ranked = margins[order]
    # A cut falls between two different margins (documents of equal margin go the same way), or before or after all.
    allowed = np.concatenate([[True], ranked[1:] > ranked[:-1], [True]]) if n else np.array([True])
    good = np.all([values >= values[-1] - tolerance - 1e-12 for values in scores.values()], axis=0)
    shown = harm_bound(order, whole, ngrams, labels, z) <= tolerance + 1e-12  # what validation can show

    def cheapest(good):  # the cheapest allowed cascade from which every costlier allowed one is good as well
        bad_after = np.flatnonzero(allowed & ~good)
        return int(np.flatnonzero(allowed & (np.arange(n + 1) > (bad_after.max() if len(bad_after) else -1)))[0])

    measured, k = cheapest(good), cheapest(good & shown)
    cut = None if k == n else (0.0 if k == 0 else float((ranked[k - 1] + ranked[k]) / 2.0))
    report = {
        "cut": cut,
        "tolerance": tolerance,
        "z": z,
        "validation_documents": n,
        "validation_share": round(k / n, 4) if n else 1.0,
        "measured_share": round(measured / n, 4) if n else 1.0,
        "validation": {
            part: {name: float(values[at]) for name, values in scores.items()}
            for part, at in (("whole", n), ("cascade", k), ("ngrams", 0))
        },
    }
    return cut, report
