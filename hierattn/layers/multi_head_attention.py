"""Multi-head scaled dot-product attention with zero weights on padding."""

import keras
from keras import ops


@keras.saving.register_keras_serializable(package="hierattn")
class MultiHeadAttention(keras.layers.MultiHeadAttention):
    """Keras's multi-head attention, with padded queries attending to nothing.

    Exactly `keras.layers.MultiHeadAttention` (Vaswani et al. 2017): the same
    arguments (`num_heads`, `key_dim`, `value_dim`, `dropout`, ...), the same
    `call(query, value, key=None, ...)` and the same weights:

        head_i = softmax(Q_i K_i^T / sqrt(key_dim)) V_i
        output = concat(head_1, ..., head_h) W_O + b_O

    One difference: a query row whose every key is masked out (a padded
    query, or a query in an all-padding document) gets zero attention weights
    and a zero context, where Keras gives it a uniform distribution over the
    padding. Attention weights shown to a user therefore never put weight on
    padding, and an all-padding document never turns into NaN. To keep that
    guarantee, attention always runs through the explicit softmax path
    (`_compute_attention`), never the fused kernel.

    Args:
        num_heads: Number of attention heads.
        key_dim: Size of each head for query and key.
        **kwargs: Every other argument of `keras.layers.MultiHeadAttention`
            (`value_dim`, `dropout`, `use_bias`, `output_shape`,
            `kernel_initializer`, ..., `name`, `dtype`).

    Call arguments:
        query: `(batch, Tq, dq)`.
        value: `(batch, Tv, dv)`.
        key: `(batch, Tv, dk)`, defaults to `value`.
        query_mask, value_mask, key_mask, attention_mask, training,
        return_attention_scores, use_causal_mask: as in Keras. Keras masks
            on the inputs (e.g. after an `Embedding(mask_zero=True)`) are used
            automatically.

    Returns:
        The output `(batch, Tq, dq)` (or `output_shape`) and, with
        `return_attention_scores=True`, the weights `(batch, num_heads, Tq,
        Tv)`: zero on masked keys, and all zero on fully masked query rows.

    Example:

    >>> import numpy as np
    >>> layer = MultiHeadAttention(num_heads=2, key_dim=4)
    >>> x = keras.random.normal((2, 3, 8))
    >>> mask = np.array([[True] * 3, [True, True, False]])     # the second text has 2 steps
    >>> pairs = mask[:, :, None] & mask[:, None, :]           # (batch, Tq, Tv)
    >>> output, weights = layer(x, x, attention_mask=pairs, return_attention_scores=True)
    >>> print(output.shape, weights.shape)                   # weights: (batch, num_heads, Tq, Tv)
    (2, 3, 8) (2, 2, 3, 3)
    >>> np.asarray(weights)[1, :, 2]                          # the padded query attends to nothing
    array([[0., 0., 0.],
           [0., 0., 0.]], dtype=float32)

    Reference:
        Vaswani, Shazeer, Parmar, Uszkoreit, Jones, Gomez, Kaiser, Polosukhin.
        "Attention Is All You Need." NeurIPS 2017, section 3.2.
    """

    def _masked_softmax(self, attention_scores, attention_mask=None):
        weights = super()._masked_softmax(attention_scores, attention_mask)
        if attention_mask is None:
            return weights
        mask = ops.cast(attention_mask, "bool")
        while len(mask.shape) < len(weights.shape):
            mask = ops.expand_dims(mask, axis=-3)  # the heads axis, as Keras expands it
        any_key = ops.any(mask, axis=-1, keepdims=True)
        return weights * ops.cast(any_key, weights.dtype)

    def _compute_attention(
        self,
        query,
        key,
        value,
        attention_mask=None,
        training=None,
        return_attention_scores=False,
        use_causal_mask=False,
    ):
        # The fused kernel would give fully masked rows a uniform (or NaN)
        # distribution; asking for the scores selects Keras's explicit path,
        # which goes through `_masked_softmax` above.
        output, scores = super()._compute_attention(
            query,
            key,
            value,
            attention_mask=attention_mask,
            training=training,
            return_attention_scores=True,
            use_causal_mask=use_causal_mask,
        )
        return output, (scores if return_attention_scores else None)
