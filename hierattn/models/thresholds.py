"""The thresholds of a multi-label classifier: per label, chosen on validation texts.

A multi-label classifier gives each label an independent probability; a
label is predicted when its probability is over its threshold. Each
label's threshold is the value of `hierattn.defaults.MULTILABEL["grid"]`
with the best F1 of that label on the validation texts (ties to the value
nearest 0.5); a label with fewer than `MULTILABEL["min_positives"]`
validation documents takes the shared threshold instead, the grid value
with the best micro-F1 over every label. This is how the Reuters baselines
of `../shared/datasets/multilabel` tune theirs (there, every label with a
validation document is tuned and the others keep 0.5).
"""

import numpy as np

from hierattn.defaults import MULTILABEL


def _best(scores, grid):
    """The grid value with the best score, ties to the value nearest 0.5."""
    scores = np.round(np.asarray(scores, np.float64), 12)
    candidates = np.flatnonzero(scores == scores.max())
    return float(grid[candidates[np.argmin(np.abs(grid[candidates] - 0.5))]])


def choose_thresholds(probabilities, labels, grid=MULTILABEL["grid"], min_positives=MULTILABEL["min_positives"]):
    """Per-label thresholds chosen on validation probabilities and their true labels.

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


def over_thresholds(probabilities, thresholds):
    """Multi-hot rows (int8) of the labels whose probability is over their threshold."""
    return (np.asarray(probabilities) > np.asarray(thresholds, np.float32)).astype(np.int8)
