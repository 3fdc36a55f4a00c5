"""The thresholds of a multi-label classifier: per label, chosen on validation texts.

A multi-label classifier gives each label an independent probability; a
label is predicted when its probability is over its threshold. Each
label's threshold is the value of `hierattn.defaults.MULTILABEL["grid"]`
with the best F1 of that label on the validation texts (ties to the value
nearest 0.5); a label with fewer than `MULTILABEL["min_positives"]`
validation documents takes the shared threshold instead, the grid value
with the best micro-F1 over every label. This is how the Reuters baselines
of `../shared/datasets/multilabel` tune theirs (there, every label with a
validation document is tuned and the others keep 0.5). Once the cascade's
temperatures calibrate the labels (`hierattn.models.cascade`), the
thresholds move with the probabilities (`hierattn.decision.thresholds_at`):
they are always those of the probabilities the classifier gives.
"""

import numpy as np

from hierattn.data.dataset import validation_pair
from hierattn.data.ids import token_ids
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


class Thresholds:
    """The thresholds' step of a multi-label `TextClassifier`, mixed in as `NgramPart` is.

    The classifier sets `multi_label`, `label_names`, `thresholds` and
    `threshold_report`; `fit` calls `choose_thresholds` last.

    Example:

    Choose a trained multi-label classifier's thresholds again, on other
    held-out texts:

    >>> import hierattn
    >>> texts = ["Wheat prices rose. So it goes.", "The bank cut rates. So it goes.", "Wheat and bank news. Fine.", "Sun. Rain."] * 5
    >>> labels = [["grain"], ["money"], ["grain", "money"], []] * 5
    >>> clf = hierattn.TextClassifier("han", multi_label=True, embeddings="none", min_count=1, embedding_dim=8)
    >>> _ = clf.fit(texts, labels, epochs=1, verbose=0)
    >>> clf.thresholds                      # no validation texts: the default
    [0.5, 0.5]
    >>> thresholds = clf.choose_thresholds((["Wheat fell.", "Rates rose at the bank."], [["grain"], ["money"]]))
    >>> len(thresholds), clf.threshold_report["tuned"]   # one validation document each: the shared threshold
    (2, 0)
    """

    def choose_thresholds(self, validation_data=None, verbose=0):
        """Chooses each label's threshold on validation texts (a multi-label classifier's last step of `fit`).

        Per label, the threshold with the best validation F1; a label too
        rare there takes the shared one (`hierattn.models.thresholds`).
        Without validation texts, thresholds chosen before are kept, or
        every label takes `hierattn.defaults.MULTILABEL["threshold"]`.
        `threshold_report` then says how they were chosen.

        Args:
            validation_data: `(texts, labels)`, `(ids, labels)` or a dataset
                of `(texts, labels)`; `None` as said above.
            verbose: Print one line: how the thresholds were chosen.

        Returns:
            The thresholds, one per label in `label_names` order.
        """
        if not self.multi_label:
            raise ValueError("thresholds apply to a multi-label classifier (made with multi_label=True)")
        x = None
        if validation_data is not None:
            x, labels = self._ids_and_label_ids(*validation_pair(validation_data), "validation_data")
        if x is not None and len(token_ids(x)):
            self.thresholds, self.threshold_report = choose_thresholds(self.predict_ids(x), labels)
            how = (
                f"chosen on {len(labels):,} validation documents: {self.threshold_report['tuned']} labels alone, "
                f"the others {self.threshold_report['shared']:g}"
            )
        elif self.thresholds is None:
            self.thresholds = [MULTILABEL["threshold"]] * len(self.label_names)
            self.threshold_report, how = (
                {"shared": MULTILABEL["threshold"], "tuned": 0},
                "the default (no validation texts)",
            )
        else:
            how = "kept (no validation texts)"
        self.threshold_report = dict(self.threshold_report or {}, how=how)
        if verbose:
            print(f"thresholds: {how}")
        return list(self.thresholds)
