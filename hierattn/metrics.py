"""Metrics: a Keras metric of training runs (`ExamplesSeen`), and classification metrics as JSON-ready data."""

import keras
import numpy as np
from keras import ops


@keras.saving.register_keras_serializable(package="hierattn")
class ExamplesSeen(keras.metrics.Metric):
    """The number of examples the model was given since the last reset (each epoch in `fit`).

    Its count is a Keras metric variable, summed over every replica when read
    outside a replica, so under `tf.distribute` the epoch's value (and the
    `examples` / `val_examples` columns of a run's history.csv) counts what
    all replicas on all workers consumed together. With each example seen
    once per epoch it equals the size of the training (or validation) set.

    Args:
        name: Metric name.
        dtype: Dtype of the count.

    Example:

    >>> import keras
    >>> import numpy as np
    >>> model = keras.Sequential([keras.Input((4,)), keras.layers.Dense(2, activation="softmax")])
    >>> model.compile("sgd", "categorical_crossentropy", metrics=[ExamplesSeen()])
    >>> history = model.fit(np.zeros((10, 4)), np.eye(2)[[0, 1] * 5], batch_size=4, epochs=2, verbose=0)
    >>> history.history["examples"]                 # 10 examples in each epoch
    [10.0, 10.0]
    """

    def __init__(self, name="examples", dtype="float32"):
        super().__init__(name=name, dtype=dtype)
        self.count = self.add_variable(shape=(), initializer="zeros", name="count")

    def update_state(self, y_true, y_pred=None, sample_weight=None):
        self.count.assign_add(ops.cast(ops.shape(y_true)[0], self.dtype))

    def result(self):
        # A computed tensor, not a handle on the variable: under tf.distribute
        # the handle would be read later, after `evaluate` reset the count.
        return ops.add(self.count, 0)

    def get_config(self):
        return {"name": self.name, "dtype": self.dtype}


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
