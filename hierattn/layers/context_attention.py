"""HAN attention pooling with a learned context vector."""

import keras
from keras import ops

from hierattn.layers._attention_utils import check_positive_int, masked_softmax


@keras.saving.register_keras_serializable(package="hierattn")
class ContextAttention(keras.layers.Layer):
    """Attention pooling with a learned context vector (HAN attention).

    Scores every step `h_t` of a sequence against a trainable context vector
    `u` and returns the weighted sum of the steps:

        u_t = tanh(W h_t + b)
        a_t = softmax_t(u_t . u)
        output = sum_t a_t h_t

    This is the word-level and sentence-level attention of the Hierarchical
    Attention Network. The pooled axis is always the second-to-last one, so an
    input of shape `(batch, sentences, words, dim)` pools the words of every
    sentence at once (no `TimeDistributed` needed) and returns
    `(batch, sentences, dim)`; the layer also works inside `TimeDistributed`.

    Padded steps get exactly zero weight (masked before the softmax), the real
    steps' weights sum to 1, and a sequence that is entirely padding (an empty
    sentence) yields a zero vector and zero weights, never NaN.

    Args:
        units: Size of the hidden projection `W h_t + b` and of the context
            vector `u`. Defaults to the input's last dimension.
        use_bias: Whether the projection has a bias `b`.
        kernel_initializer: Initializer for `W`.
        bias_initializer: Initializer for `b`.
        context_initializer: Initializer for the context vector `u`.
        kernel_regularizer: Optional regularizer for `W`.
        context_regularizer: Optional regularizer for `u`.
        **kwargs: Base layer keyword arguments, such as `name` and `dtype`.

    Call arguments:
        inputs: Tensor of shape `(batch, ..., T, dim)`; attention pools `T`.
        mask: Optional boolean tensor of shape `(batch, ..., T)`, `False` at
            padded steps. Passed automatically by Keras when the input carries
            an implicit mask (for example from `Embedding(mask_zero=True)`).
        training: Unused; accepted for API consistency.
        return_attention_scores: If `True`, also return the attention weights.

    Returns:
        The pooled tensor of shape `(batch, ..., dim)` and, if
        `return_attention_scores=True`, the weights of shape `(batch, ..., T)`.
        For a rank-3 input the layer returns no mask; for higher ranks it
        returns `any(mask, axis=-1)`, which marks which sequences (e.g.
        sentences) hold at least one real step.

    Example:

    >>> import numpy as np
    >>> layer = ContextAttention(units=16)
    >>> x = np.random.rand(2, 5, 8).astype("float32")             # (batch, T, dim)
    >>> mask = np.array([[True] * 5, [True] * 3 + [False] * 2])   # the second text has 3 words
    >>> output, weights = layer(x, mask=mask, return_attention_scores=True)
    >>> print(output.shape, weights.shape)
    (2, 8) (2, 5)
    >>> np.asarray(weights)[1, 3:]                                # no weight on padding
    array([0., 0.], dtype=float32)
    >>> sentences = np.random.rand(2, 4, 5, 8).astype("float32")  # (batch, sentences, words, dim)
    >>> print(layer(sentences).shape)                             # pools every sentence's words
    (2, 4, 8)

    Reference:
        Yang, Yang, Dyer, He, Smola, Hovy. "Hierarchical Attention Networks
        for Document Classification." NAACL 2016.
    """

    def __init__(
        self,
        units=None,
        use_bias=True,
        kernel_initializer="glorot_uniform",
        bias_initializer="zeros",
        context_initializer="glorot_uniform",
        kernel_regularizer=None,
        context_regularizer=None,
        **kwargs,
    ):
        super().__init__(**kwargs)
        check_positive_int(units, "units", allow_none=True)
        self.units = units
        self.use_bias = use_bias
        self.kernel_initializer = keras.initializers.get(kernel_initializer)
        self.bias_initializer = keras.initializers.get(bias_initializer)
        self.context_initializer = keras.initializers.get(context_initializer)
        self.kernel_regularizer = keras.regularizers.get(kernel_regularizer)
        self.context_regularizer = keras.regularizers.get(context_regularizer)
        self.supports_masking = True

    def build(self, input_shape):
        if len(input_shape) < 3:
            raise ValueError(
                "ContextAttention expects an input of shape (batch, ..., T, dim) "
                f"with rank >= 3. Received shape: {tuple(input_shape)}."
            )
        dim = input_shape[-1]
        if dim is None:
            raise ValueError("ContextAttention needs a known last dimension.")
        units = self.units or dim
        self.kernel = self.add_weight(
            name="kernel",
            shape=(dim, units),
            initializer=self.kernel_initializer,
            regularizer=self.kernel_regularizer,
        )
        self.bias = (
            self.add_weight(name="bias", shape=(units,), initializer=self.bias_initializer) if self.use_bias else None
        )
        self.context = self.add_weight(
            name="context",
            shape=(units,),
            initializer=self.context_initializer,
            regularizer=self.context_regularizer,
        )

    def call(self, inputs, mask=None, training=None, return_attention_scores=False):
        hidden = ops.matmul(inputs, self.kernel)
        if self.bias is not None:
            hidden = hidden + self.bias
        scores = ops.matmul(ops.tanh(hidden), self.context)  # (batch, ..., T)
        weights = masked_softmax(scores, mask)
        output = ops.sum(ops.expand_dims(weights, -1) * inputs, axis=-2)
        if return_attention_scores:
            return output, weights
        return output

    def compute_mask(self, inputs, mask=None):
        if mask is None or len(mask.shape) < 3:
            return None
        return ops.any(ops.cast(mask, "bool"), axis=-1)

    def compute_output_shape(self, input_shape):
        return tuple(input_shape[:-2]) + (input_shape[-1],)

    def compute_output_spec(self, inputs, mask=None, training=None, return_attention_scores=False):
        output = keras.KerasTensor(self.compute_output_shape(inputs.shape), dtype=self.compute_dtype)
        if return_attention_scores:
            return output, keras.KerasTensor(inputs.shape[:-1], dtype=self.compute_dtype)
        return output

    def get_config(self):
        config = super().get_config()
        config.update(
            {
                "units": self.units,
                "use_bias": self.use_bias,
                "kernel_initializer": keras.initializers.serialize(self.kernel_initializer),
                "bias_initializer": keras.initializers.serialize(self.bias_initializer),
                "context_initializer": keras.initializers.serialize(self.context_initializer),
                "kernel_regularizer": keras.regularizers.serialize(self.kernel_regularizer),
                "context_regularizer": keras.regularizers.serialize(self.context_regularizer),
            }
        )
        return config
