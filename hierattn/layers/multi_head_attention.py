"""Multi-head scaled dot-product attention with zero weights on padding."""

import keras


@keras.saving.register_keras_serializable(package="hierattn")
class MultiHeadAttention(keras.layers.MultiHeadAttention):
    """Keras's multi-head attention, with padded queries attending to nothing.

    Exactly `keras.layers.MultiHeadAttention` (Vaswani et al. 2017): the same
    arguments (`num_heads`, `key_dim`, `value_dim`, `dropout`, ...), the same
    `call(query, value, key=None, ...)` and the same weights:

        head_i = softmax(Q_i K_i^T / sqrt(key_dim)) V_i
        output = concat(head_1, ..., head_h) W_O + b_O

    One difference: a query row whose every key is masked out (a padded
    query, or a query in an all-padding document) always gets zero attention
    weights and a zero context, where Keras's layer, when it runs its fused
    kernel (no scores asked for, no dropout), gives it a context averaged over
    the padding. Attention weights shown to a user therefore never put weight
    on padding, and an all-padding document never turns into NaN. To keep
    that guarantee, attention always runs through Keras's explicit softmax
    path, never the fused kernel: the layer overrides only
    `_compute_attention`, the method Keras documents for customising the
    attention computation.

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
        # Keras's documented place to customise attention ("Users can override
        # this function for customized attention implementation"). Asking Keras
        # for the scores selects its explicit softmax, which gives a query row
        # with no key allowed zero weights and so a zero context (Keras's
        # `Softmax` zeros masked positions since keras-team/keras#21123); its
        # fused kernel would give that row a context averaged over the padding.
        # `use_causal_mask` is passed on only when set, as Keras's `call` does,
        # for Keras versions whose method does not take it.
        output, scores = super()._compute_attention(
            query,
            key,
            value,
            attention_mask=attention_mask,
            training=training,
            return_attention_scores=True,
            **({"use_causal_mask": True} if use_causal_mask else {}),
        )
        return output, (scores if return_attention_scores else None)
