"""Classification metrics (scikit-learn), as plain JSON-ready data.

Importing it loads neither Keras nor scikit-learn: the program refuses bad input before either loads.
(The Keras metric of training runs, `ExamplesSeen`, is in `hierattn.models.examples_seen`.)
"""

import numpy as np


def classification_metrics(y_true, y_pred, names):
    """Accuracy, macro-F1, confusion matrix and per-class report.

    Args:
        y_true: True class ids.
        y_pred: Predicted class ids.
        names: Class names in id order.

    Returns:
        Dict with `accuracy`, `macro_f1`, `confusion_matrix` (rows: true
        class, columns: predicted, in `labels` order), `labels`, `report`
        (scikit-learn's per-class dict) and `documents`.
    """
    # scikit-learn takes about a second to load; `hierattn evaluate` refuses bad input before it.
    from sklearn.metrics import accuracy_score, classification_report, confusion_matrix, f1_score

    y_true, y_pred = np.asarray(y_true), np.asarray(y_pred)
    ids = list(range(len(names)))
    text_names = [str(n) for n in names]
    return {
        "documents": int(len(y_true)),
        "accuracy": float(accuracy_score(y_true, y_pred)),
        "macro_f1": float(f1_score(y_true, y_pred, labels=ids, average="macro", zero_division=0)),
        "labels": list(names),
        "confusion_matrix": confusion_matrix(y_true, y_pred, labels=ids).tolist(),
        "report": classification_report(
            y_true, y_pred, labels=ids, target_names=text_names, output_dict=True, zero_division=0
        ),
    }


def multilabel_metrics(y_true, y_pred, names):
    """Micro-, macro- and samples-F1, subset accuracy, Hamming loss and a per-label report of label sets.

    Args:
        y_true: True multi-hot rows `(n, labels)`.
        y_pred: Predicted multi-hot rows `(n, labels)`.
        names: Label names in column order.

    Returns:
        Dict with `micro_f1`, `macro_f1` (over every label, a label never
        true nor predicted counting 0, as the Reuters baselines count it),
        `samples_f1` (scikit-learn's, `zero_division=0`: a document with no
        true and no predicted label counts 0), `subset_accuracy` (the exact set), `hamming_loss`, `labels`,
        `report` (scikit-learn's per-label dict) and `documents`.
    """
    from sklearn.metrics import accuracy_score, classification_report, f1_score, hamming_loss

    y_true, y_pred = np.asarray(y_true, np.int8), np.asarray(y_pred, np.int8)
    text_names = [str(n) for n in names]
    scores = {
        average: f1_score(y_true, y_pred, average=average, zero_division=0) for average in ("micro", "macro", "samples")
    }
    return {
        "documents": int(len(y_true)),
        "micro_f1": float(scores["micro"]),
        "macro_f1": float(scores["macro"]),
        "samples_f1": float(scores["samples"]),
        "subset_accuracy": float(accuracy_score(y_true, y_pred)),
        "hamming_loss": float(hamming_loss(y_true, y_pred)),
        "labels": list(names),
        "report": classification_report(y_true, y_pred, target_names=text_names, output_dict=True, zero_division=0),
    }


def label_metrics(y_true, y_pred, names):
    """`multilabel_metrics` for multi-hot rows (2-dimensional `y_true`), otherwise `classification_metrics`."""
    if np.ndim(y_true) == 2:
        return multilabel_metrics(y_true, y_pred, names)
    return classification_metrics(y_true, y_pred, names)
