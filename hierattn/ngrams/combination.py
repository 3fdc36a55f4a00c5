"""A log-linear combination of a network's class probabilities with a linear model's logits."""

import keras
from keras import ops


@keras.saving.register_keras_serializable(package="hierattn")
class LogLinearCombination(keras.layers.Layer):
    """Combines class probabilities and logits log-linearly: `softmax(a log p + b z)`.

    `p` are a network's class probabilities, `z` a linear model's logits
    (e.g. `NgramLogits`). The weights `a` and `b` are not trained by gradient
    descent; they are chosen on validation data (`hierattn.ngrams.mixing`) and set.
    Since the softmax ignores a shift common to all classes, `a log p_c` and
    each term `b x_f kernel[f, c]` of `b z_c` are exact additive contributions
    to the score of class `c`. Freshly built, `a = 1`, `b = 0`: the output is
    `p`.

    Args:
        epsilon: Probabilities are clipped to at least this before the log.
        **kwargs: Base layer keyword arguments, such as `name`.

    Call arguments:
        probabilities: `(batch, classes)`, rows summing to 1.
        logits: `(batch, classes)`.

    Returns:
        Combined class probabilities `(batch, classes)` (float32).

    Example:

    >>> import numpy as np
    >>> layer = LogLinearCombination()
    >>> p, z = np.array([[0.2, 0.8]], "float32"), np.array([[1.0, -1.0]], "float32")
    >>> np.asarray(layer(p, z)).round(2)              # a = 1, b = 0: p itself
    array([[0.2, 0.8]], dtype=float32)
    >>> _ = layer.mixing.assign([0.5, 0.5])
    >>> np.asarray(layer(p, z)).round(2)
    array([[0.58, 0.42]], dtype=float32)

    Reference:
        Mesnil, Mikolov, Ranzato, Bengio. "Ensemble of Generative and
        Discriminative Techniques for Sentiment Analysis of Movie Reviews."
        ICLR 2015 workshop (a weighted combination of the models' scores,
        the weights chosen on validation data).
    """

    def __init__(self, epsilon=1e-7, **kwargs):
        kwargs.setdefault("dtype", "float32")
        super().__init__(**kwargs)
        self.epsilon = epsilon

    def build(self, *shapes, **named_shapes):  # the weights do not depend on the shapes
        self.mixing = self.add_weight(
            shape=(2,), initializer=keras.initializers.Constant([1.0, 0.0]), trainable=False, name="mixing"
        )

    def scores(self, probabilities, logits):
        """The combined scores `a log p + b z` before the softmax."""
        probabilities = ops.cast(probabilities, self.compute_dtype)
        logits = ops.cast(logits, self.compute_dtype)
        return self.mixing[0] * ops.log(ops.maximum(probabilities, self.epsilon)) + self.mixing[1] * logits

    def call(self, probabilities, logits):
        return ops.softmax(self.scores(probabilities, logits), axis=-1)

    def compute_output_shape(self, probabilities_shape, logits_shape=None):
        return probabilities_shape

    def get_config(self):
        config = super().get_config()
        config["epsilon"] = self.epsilon
        return config
