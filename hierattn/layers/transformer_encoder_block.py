"""Transformer encoder block built on hierattn's MultiHeadAttention."""

import keras
from keras import ops

from hierattn.layers._attention_utils import check_dropout, check_positive_int
from hierattn.layers.multi_head_attention import MultiHeadAttention


@keras.saving.register_keras_serializable(package="hierattn")
class TransformerEncoderBlock(keras.layers.Layer):
    """One Transformer encoder layer: self-attention and a feed-forward net.

    Post-norm (the original paper, `normalize_first=False`):

        x = LayerNorm(x + Dropout(MultiHeadAttention(x)))
        x = LayerNorm(x + Dropout(FFN(x)))

    Pre-norm (`normalize_first=True`, often easier to train deep):

        x = x + Dropout(MultiHeadAttention(LayerNorm(x)))
        x = x + Dropout(FFN(LayerNorm(x)))

    with `FFN(x) = W_2 activation(W_1 x + b_1) + b_2`. The model width `d` is
    the input's last dimension and must be divisible by `num_heads`.

    Args:
        num_heads: Number of attention heads.
        intermediate_dim: Hidden size of the feed-forward network.
        dropout: Residual dropout rate (on the attention and FFN outputs).
        attention_dropout: Dropout rate on the attention weights.
        activation: Activation of the feed-forward hidden layer.
        normalize_first: Pre-norm if `True`, post-norm if `False`.
        layer_norm_epsilon: Epsilon of the layer normalisations.
        seed: Seed for the dropouts.
        kernel_initializer: Initializer for all kernels.
        **kwargs: Base layer keyword arguments, such as `name` and `dtype`.

    Call arguments:
        inputs: Tensor of shape `(batch, T, d)`.
        mask: Optional `(batch, T)` padding mask (passed automatically after
            an embedding with `mask_zero=True`); padded steps get zero
            attention weight and the mask is propagated.
        training: Whether to apply dropout.
        return_attention_scores: If `True`, also return the self-attention
            weights.

    Returns:
        Tensor of shape `(batch, T, d)` and, if `return_attention_scores=True`,
        the weights of shape `(batch, num_heads, T, T)`.

    Example:

    >>> import numpy as np
    >>> block = TransformerEncoderBlock(num_heads=2, intermediate_dim=32)
    >>> x = np.random.rand(2, 5, 16).astype("float32")   # (batch, T, d)
    >>> mask = np.array([[True] * 5, [True] * 3 + [False] * 2])
    >>> y, weights = block(x, mask=mask, return_attention_scores=True)
    >>> print(y.shape, weights.shape)                    # weights: (batch, num_heads, T, T)
    (2, 5, 16) (2, 2, 5, 5)
    >>> np.asarray(weights)[1, 0, 0, 3:]                 # no attention to padding
    array([0., 0.], dtype=float32)

    Reference:
        Vaswani et al. "Attention Is All You Need." NeurIPS 2017, section 3.1;
        Xiong et al. "On Layer Normalization in the Transformer
        Architecture." ICML 2020 (pre-norm).
    """

    def __init__(
        self,
        num_heads,
        intermediate_dim,
        dropout=0.1,
        attention_dropout=0.0,
        activation="relu",
        normalize_first=False,
        layer_norm_epsilon=1e-6,
        seed=None,
        kernel_initializer="glorot_uniform",
        **kwargs,
    ):
        super().__init__(**kwargs)
        check_positive_int(num_heads, "num_heads")
        check_positive_int(intermediate_dim, "intermediate_dim")
        check_dropout(dropout)
        check_dropout(attention_dropout)
        self.num_heads = num_heads
        self.intermediate_dim = intermediate_dim
        self.dropout = dropout
        self.attention_dropout = attention_dropout
        self.activation = keras.activations.get(activation)
        self.normalize_first = normalize_first
        self.layer_norm_epsilon = layer_norm_epsilon
        self.seed = seed
        self.kernel_initializer = keras.initializers.get(kernel_initializer)
        self.supports_masking = True

    def build(self, input_shape):
        d_model = input_shape[-1]
        if d_model is None or d_model % self.num_heads:
            raise ValueError(
                "TransformerEncoderBlock needs an input width divisible by num_heads. "
                f"Received width {d_model} with num_heads={self.num_heads}."
            )
        common = {"dtype": self.dtype_policy}
        self.attention = MultiHeadAttention(
            self.num_heads,
            d_model // self.num_heads,
            dropout=self.attention_dropout,
            seed=self.seed,
            kernel_initializer=self.kernel_initializer,
            name="attention",
            **common,
        )
        self.attention.build(input_shape, input_shape)
        self.ffn_hidden = keras.layers.Dense(
            self.intermediate_dim,
            activation=self.activation,
            kernel_initializer=self.kernel_initializer,
            name="ffn_hidden",
            **common,
        )
        self.ffn_hidden.build(input_shape)
        self.ffn_output = keras.layers.Dense(
            d_model, kernel_initializer=self.kernel_initializer, name="ffn_output", **common
        )
        self.ffn_output.build(tuple(input_shape[:-1]) + (self.intermediate_dim,))
        self.attention_norm = keras.layers.LayerNormalization(
            epsilon=self.layer_norm_epsilon, name="attention_norm", **common
        )
        self.attention_norm.build(input_shape)
        self.ffn_norm = keras.layers.LayerNormalization(epsilon=self.layer_norm_epsilon, name="ffn_norm", **common)
        self.ffn_norm.build(input_shape)
        self.residual_dropout = keras.layers.Dropout(self.dropout, seed=self.seed, **common)

    def call(self, inputs, mask=None, training=None, return_attention_scores=False):
        x = self.attention_norm(inputs) if self.normalize_first else inputs
        pairs = None if mask is None else ops.logical_and(ops.expand_dims(mask, 2), ops.expand_dims(mask, 1))
        attended, weights = self.attention(x, x, attention_mask=pairs, training=training, return_attention_scores=True)
        x = inputs + self.residual_dropout(attended, training=training)
        if not self.normalize_first:
            x = self.attention_norm(x)
        h = self.ffn_norm(x) if self.normalize_first else x
        h = self.ffn_output(self.ffn_hidden(h))
        x = x + self.residual_dropout(h, training=training)
        if not self.normalize_first:
            x = self.ffn_norm(x)
        if return_attention_scores:
            return x, weights
        return x

    def compute_output_shape(self, input_shape):
        return tuple(input_shape)

    def compute_output_spec(self, inputs, mask=None, training=None, return_attention_scores=False):
        output = keras.KerasTensor(inputs.shape, dtype=self.compute_dtype)
        if return_attention_scores:
            shape = (inputs.shape[0], self.num_heads, inputs.shape[1], inputs.shape[1])
            return output, keras.KerasTensor(shape, dtype=self.compute_dtype)
        return output

    def get_config(self):
        config = super().get_config()
        config.update(
            {
                "num_heads": self.num_heads,
                "intermediate_dim": self.intermediate_dim,
                "dropout": self.dropout,
                "attention_dropout": self.attention_dropout,
                "activation": keras.activations.serialize(self.activation),
                "normalize_first": self.normalize_first,
                "layer_norm_epsilon": self.layer_norm_epsilon,
                "seed": self.seed,
                "kernel_initializer": keras.initializers.serialize(self.kernel_initializer),
            }
        )
        return config
