"""Multi-head scaled dot-product attention."""

import math

import keras
from keras import ops

from hierattn.layers._attention_utils import (
    alibi_bias,
    attention_mask,
    causal_mask,
    check_choice,
    check_dropout,
    check_positive_int,
    is_structure,
    masked_softmax,
    unpack_inputs,
    unpack_masks,
)

POSITION_BIASES = (None, "alibi")


@keras.saving.register_keras_serializable(package="hierattn")
class MultiHeadAttention(keras.layers.Layer):
    """Multi-head scaled dot-product attention of Vaswani et al. (2017).

    Query, key and value are projected to `d_model` features, split into
    `num_heads` heads of size `d_head = d_model / num_heads`, attended per head
    and projected back:

        head_i = softmax(Q_i K_i^T / sqrt(d_head)) V_i
        output = concat(head_1, ..., head_h) W_O + b_O

    Numerically identical to `keras.layers.MultiHeadAttention(num_heads,
    key_dim=d_model // num_heads)` with the same weights, except that fully
    padded query rows get zero weights (Keras gives them a uniform
    distribution).

    With `position_bias="alibi"` each head's logits get the linear distance
    penalty of ALiBi, `-m_h |i - j|` (slopes `m_h = 2^(-8h/H)`), so the
    heads prefer nearby words at different ranges and position embeddings
    are not needed.

    Args:
        num_heads: Number of attention heads.
        d_model: Total size of the query/key/value projections; must be
            divisible by `num_heads`.
        output_dim: Size of the output projection. Defaults to the query's
            last dimension, so the layer can sit in a residual connection.
        dropout: Dropout rate applied to the attention weights in training.
        use_bias: Whether the projections have biases.
        seed: Seed for the dropout.
        kernel_initializer: Initializer for the projection kernels.
        bias_initializer: Initializer for the projection biases.
        kernel_regularizer: Optional regularizer for the projection kernels.
        position_bias: `None`, or `"alibi"` for the attention-with-linear-
            biases distance penalty (Press et al. 2022, symmetric as in an
            encoder). Query and key positions are their indices in the
            inputs.
        **kwargs: Base layer keyword arguments, such as `name` and `dtype`.

    Call arguments:
        inputs: A tensor `(batch, T, d)` for self-attention, or a list
            `[query, value]` / `[query, value, key]` with query
            `(batch, Tq, dq)`, value `(batch, Tv, dv)` and key `(batch, Tv, dk)`
            (defaulting to value).
        mask: Boolean padding mask(s): one `(batch, T)` tensor for
            self-attention, or a list `[query_mask, value_mask]`. Passed
            automatically for inputs carrying Keras masks.
        training: Whether to apply dropout to the weights.
        return_attention_scores: If `True`, also return the attention weights.
        use_causal_mask: If `True`, query step `i` only attends to key steps
            `j <= i` (decoder self-attention).

    Returns:
        The output `(batch, Tq, output_dim)` and, if
        `return_attention_scores=True`, the weights
        `(batch, num_heads, Tq, Tv)`. Padded keys get zero weight; padded
        queries get zero weights. The query mask is propagated.

    Reference:
        Vaswani, Shazeer, Parmar, Uszkoreit, Jones, Gomez, Kaiser, Polosukhin.
        "Attention Is All You Need." NeurIPS 2017.
        Press, Smith, Lewis. "Train Short, Test Long: Attention with Linear
        Biases Enables Input Length Extrapolation." ICLR 2022 (ALiBi).
    """

    def __init__(
        self,
        num_heads,
        d_model,
        output_dim=None,
        dropout=0.0,
        use_bias=True,
        seed=None,
        kernel_initializer="glorot_uniform",
        bias_initializer="zeros",
        kernel_regularizer=None,
        position_bias=None,
        **kwargs,
    ):
        super().__init__(**kwargs)
        check_positive_int(num_heads, "num_heads")
        check_positive_int(d_model, "d_model")
        check_positive_int(output_dim, "output_dim", allow_none=True)
        if d_model % num_heads:
            raise ValueError(
                f"d_model must be divisible by num_heads. Received: d_model={d_model}, num_heads={num_heads}."
            )
        check_dropout(dropout)
        check_choice(position_bias, POSITION_BIASES, "position_bias")
        self.num_heads = num_heads
        self.d_model = d_model
        self.output_dim = output_dim
        self.dropout = dropout
        self.use_bias = use_bias
        self.seed = seed
        self.kernel_initializer = keras.initializers.get(kernel_initializer)
        self.bias_initializer = keras.initializers.get(bias_initializer)
        self.kernel_regularizer = keras.regularizers.get(kernel_regularizer)
        self.position_bias = position_bias
        self.seed_generator = keras.random.SeedGenerator(seed) if dropout > 0 else None
        self.supports_masking = True

    @property
    def head_dim(self):
        return self.d_model // self.num_heads

    def _projection(self, name, input_dim, output_dim):
        kernel = self.add_weight(
            name=f"{name}_kernel",
            shape=(input_dim, output_dim),
            initializer=self.kernel_initializer,
            regularizer=self.kernel_regularizer,
        )
        bias = (
            self.add_weight(name=f"{name}_bias", shape=(output_dim,), initializer=self.bias_initializer)
            if self.use_bias
            else None
        )
        return kernel, bias

    def build(self, input_shape):
        query_shape, value_shape, key_shape = unpack_inputs(input_shape, "MultiHeadAttention", allow_single=True)
        self.query_kernel, self.query_bias = self._projection("query", query_shape[-1], self.d_model)
        self.key_kernel, self.key_bias = self._projection("key", key_shape[-1], self.d_model)
        self.value_kernel, self.value_bias = self._projection("value", value_shape[-1], self.d_model)
        self.output_kernel, self.output_bias = self._projection(
            "output", self.d_model, self.output_dim or query_shape[-1]
        )

    def _split_heads(self, x, kernel, bias):
        """Projects `(B, T, d)` to `(B, heads, T, head_dim)`."""
        x = ops.matmul(x, kernel)
        if bias is not None:
            x = x + bias
        x = ops.reshape(x, (ops.shape(x)[0], ops.shape(x)[1], self.num_heads, self.head_dim))
        return ops.transpose(x, (0, 2, 1, 3))

    def call(
        self,
        inputs,
        mask=None,
        training=None,
        return_attention_scores=False,
        use_causal_mask=False,
    ):
        single = not is_structure(inputs)
        query, value, key = unpack_inputs(inputs, "MultiHeadAttention", allow_single=True)
        query_mask, value_mask = unpack_masks(mask, single_input=single)
        q = self._split_heads(query, self.query_kernel, self.query_bias)
        k = self._split_heads(key, self.key_kernel, self.key_bias)
        v = self._split_heads(value, self.value_kernel, self.value_bias)
        q = q * ops.cast(1.0 / math.sqrt(self.head_dim), q.dtype)
        scores = ops.matmul(q, ops.swapaxes(k, -1, -2))  # (B, heads, Tq, Tv)
        if self.position_bias == "alibi":
            scores = scores + alibi_bias(ops.shape(query)[1], ops.shape(key)[1], self.num_heads, scores.dtype)
        extra = causal_mask(ops.shape(query)[1], ops.shape(key)[1]) if use_causal_mask else None
        mask3 = attention_mask(query_mask, value_mask, extra)
        weights = masked_softmax(scores, None if mask3 is None else ops.expand_dims(mask3, 1))
        applied = weights
        if training and self.seed_generator is not None:
            applied = keras.random.dropout(weights, self.dropout, seed=self.seed_generator)
        context = ops.transpose(ops.matmul(applied, v), (0, 2, 1, 3))
        context = ops.reshape(context, (ops.shape(context)[0], ops.shape(context)[1], self.d_model))
        output = ops.matmul(context, self.output_kernel)
        if self.output_bias is not None:
            output = output + self.output_bias
        if return_attention_scores:
            return output, weights
        return output

    def compute_mask(self, inputs, mask=None):
        if mask is None:
            return None
        query_mask, _ = unpack_masks(mask, single_input=not is_structure(inputs))
        return query_mask

    def compute_output_shape(self, input_shape):
        query_shape, _, _ = unpack_inputs(input_shape, "MultiHeadAttention", allow_single=True)
        return tuple(query_shape[:-1]) + (self.output_dim or query_shape[-1],)

    def compute_output_spec(self, inputs, mask=None, training=None, return_attention_scores=False, use_causal_mask=False):
        query, _, key = unpack_inputs(inputs, "MultiHeadAttention", allow_single=True)
        output = keras.KerasTensor(self.compute_output_shape(query.shape), dtype=self.compute_dtype)
        if return_attention_scores:
            shape = (query.shape[0], self.num_heads, query.shape[1], key.shape[1])
            return output, keras.KerasTensor(shape, dtype=self.compute_dtype)
        return output

    def get_config(self):
        config = super().get_config()
        config.update(
            {
                "num_heads": self.num_heads,
                "d_model": self.d_model,
                "output_dim": self.output_dim,
                "dropout": self.dropout,
                "use_bias": self.use_bias,
                "seed": self.seed,
                "kernel_initializer": keras.initializers.serialize(self.kernel_initializer),
                "bias_initializer": keras.initializers.serialize(self.bias_initializer),
                "kernel_regularizer": keras.regularizers.serialize(self.kernel_regularizer),
                "position_bias": self.position_bias,
            }
        )
        return config
