"""A Keras metric of training runs: the number of examples seen."""

import keras
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
