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

    For a multi-label classifier (`activation="sigmoid"`) each label is
    combined alone, on its log-odds: `sigmoid(a logit p + b z)`, with
    `logit p = log p - log(1 - p)`; each term of `b z_l` is then an exact
    additive contribution to label `l`'s log-odds.

    Args:
        epsilon: Probabilities are clipped to at least this (and, with a
            sigmoid, at most `1 - epsilon`) before the log.
        activation: `"softmax"` (one class per document) or `"sigmoid"`
            (independent labels).
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

    def __init__(self, epsilon=1e-7, activation="softmax", **kwargs):
        kwargs.setdefault("dtype", "float32")
        super().__init__(**kwargs)
        if activation not in ("softmax", "sigmoid"):
            raise ValueError(f"activation must be 'softmax' or 'sigmoid'. Received: activation={activation!r}")
        self.epsilon = epsilon
        self.activation = activation

    def build(self, *shapes, **named_shapes):  # the weights do not depend on the shapes
        self.mixing = self.add_weight(
            shape=(2,), initializer=keras.initializers.Constant([1.0, 0.0]), trainable=False, name="mixing"
        )

    def scores(self, probabilities, logits):
        """The combined scores before the softmax (`a log p + b z`) or the sigmoid (`a logit p + b z`)."""
        probabilities = ops.cast(probabilities, self.compute_dtype)
        logits = ops.cast(logits, self.compute_dtype)
        network = ops.log(ops.maximum(probabilities, self.epsilon))
        if self.activation == "sigmoid":
            network = network - ops.log(ops.maximum(1.0 - probabilities, self.epsilon))
        return self.mixing[0] * network + self.mixing[1] * logits

    def call(self, probabilities, logits):
        scores = self.scores(probabilities, logits)
        return ops.sigmoid(scores) if self.activation == "sigmoid" else ops.softmax(scores, axis=-1)

    def compute_output_shape(self, probabilities_shape, logits_shape=None):
        return probabilities_shape

    def get_config(self):
        config = super().get_config()
        config.update(epsilon=self.epsilon, activation=self.activation)
        return config
