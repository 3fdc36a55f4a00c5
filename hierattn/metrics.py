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
