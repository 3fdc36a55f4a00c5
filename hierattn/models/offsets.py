"""A decision rule for macro-F1: a single-label classifier's offsets, chosen on validation texts.

The most probable class is the decision with the best expected accuracy.
A user who cares as much about a rare class as a common one (macro-F1)
is better served by answering a rare class a little more often: each
class's log-probability gets an offset before the highest is taken
(`hierattn.decision.Decision`'s `offsets`), the single-label twin of a
multi-label classifier's thresholds (`hierattn.models.thresholds`).

The offsets are `-w log prior`: a class's prior is its share of the
validation texts (add-one smoothed), and `w` the value of
`hierattn.defaults.DECISION["prior_weights"]` with the best validation
macro-F1, ties to the smallest (`w = 0` is the most probable class, `w = 1`
divides each probability by its class's share). One weight for every
class: offsets searched class by class fitted the validation texts and
lost macro-F1 on the test splits of the imbalanced devsuite sets
(BENCHMARKS.md, "A decision rule for macro-F1").
"""

import numpy as np

from hierattn.data.dataset import validation_pair
from hierattn.data.ids import token_ids
from hierattn.decision import Decision
from hierattn.defaults import DECISION


def macro_f1(decided, labels, classes):
    """The mean over `classes` class ids of each class's F1 (0 for a class neither predicted nor present)."""
    decided, labels = np.asarray(decided), np.asarray(labels)
    true_positives = np.bincount(labels[decided == labels], minlength=classes)
    denominator = np.bincount(decided, minlength=classes) + np.bincount(labels, minlength=classes)
    return float(np.mean(np.where(denominator > 0, 2.0 * true_positives / np.maximum(denominator, 1), 0.0)))


def choose_offsets(probabilities, labels, weights=DECISION["prior_weights"]):
    """Offsets `-w log prior` with the best macro-F1 of `probabilities` on `labels` (see the module docstring).

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

    def decided(weight):
        return Decision(range(classes), offsets=-weight * np.log(prior)).ids(probabilities)

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


class Offsets:
    """The decision rule's step of a single-label `TextClassifier`, mixed in as `Thresholds` is.

    The classifier sets `decision_metric`, `offsets` and `offset_report`;
    with `decision_metric="macro_f1"`, `fit` calls `choose_offsets` last.

    Example:

    >>> import hierattn
    >>> texts = ["A great film. I loved it.", "Dull and far too long.", "Good.", "Bad, slow, dull."] * 5
    >>> clf = hierattn.TextClassifier("han", embeddings="none", min_count=1, embedding_dim=8, decision_metric="macro_f1")
    >>> _ = clf.fit(texts, ["pos", "neg", "pos", "neg"] * 5, epochs=1, verbose=0, validation_split=0.2)
    >>> len(clf.offsets), clf.offset_report["metric"]
    (2, 'macro_f1')
    """

    offset_report = None

    def choose_offsets(self, validation_data=None, verbose=0):
        """Chooses the offsets of the decision rule for macro-F1 on validation texts (`fit`'s last step with it).

        The classifier's probabilities of the validation texts, as it gives
        them (the cascade's, calibrated), decide it (`choose_offsets` of
        this module). Without validation texts, offsets chosen before are
        kept, or there are none (the most probable class).

        Args:
            validation_data: `(texts, labels)`, `(ids, labels)` or a dataset of `(texts, labels)`, or None.
            verbose: Print one line: the weight chosen and the validation scores.

        Returns:
            The offsets, one per class in `label_names` order, or None.
        """
        if self.multi_label:
            raise ValueError("offsets apply to a single-label classifier: a multi-label one has thresholds")
        x = None
        if validation_data is not None:
            x, labels = self._ids_and_label_ids(*validation_pair(validation_data), "validation_data")
        if x is None or not len(token_ids(x)):
            if verbose:
                kept = "offsets kept" if self.offsets else "the most probable class"
                print(f"decision rule: {kept} (no validation texts)")
            return self.offsets
        self.offsets, self.offset_report = choose_offsets(self.predict_ids(x), labels)
        if verbose:
            print(self.offset_line())
        return list(self.offsets)

    def offset_line(self):
        """One line on the decision rule: the weight chosen, and validation macro-F1 and accuracy with and without."""
        report = self.offset_report or {}
        if "validation" not in report:
            return "decision rule: the most probable class"
        before, after = report["validation"]["argmax"], report["validation"]["offsets"]
        return (
            f"decision rule for macro-F1: prior weight {report['prior_weight']:g}; validation macro-F1 "
            f"{after['macro_f1']:.4f} (most probable class {before['macro_f1']:.4f}), "
            f"accuracy {after['accuracy']:.4f} ({before['accuracy']:.4f})"
        )
