"""Bahdanau (additive) attention."""

import keras
from keras import ops

from hierattn.layers._attention_utils import check_positive_int
from hierattn.layers._query_value_attention import QueryValueAttention


@keras.saving.register_keras_serializable(package="hierattn")
class BahdanauAttention(QueryValueAttention):
    """Additive attention of Bahdanau et al. (2015).

    Scores every query step against every key step with a one-layer
    feed-forward network and returns the softmax-weighted sum of the values:

        score(q_i, k_j) = v . tanh(W_q q_i + W_k k_j + b)
        a_ij = softmax_j(score(q_i, k_j))
        context_i = sum_j a_ij value_j

    Args:
        units: Size of the hidden layer of the scoring network.
        use_bias: Whether the scoring network has a bias `b`.
        dropout: Dropout rate applied to the attention weights in training.
        seed: Seed for the dropout.
        kernel_initializer: Initializer for `W_q`, `W_k` and `v`.
        bias_initializer: Initializer for `b`.
        kernel_regularizer: Optional regularizer for `W_q`, `W_k` and `v`.
        **kwargs: Base layer keyword arguments, such as `name` and `dtype`.

    Call arguments:
        inputs: List `[query, value]` or `[query, value, key]`:
            `query` of shape `(batch, Tq, dq)`, or `(batch, dq)` for a single
            query per example (e.g. an RNN's final state); `value` of shape
            `(batch, Tv, dv)`; `key` of shape `(batch, Tv, dk)`, defaulting to
            `value`.
        mask: Optional list `[query_mask, value_mask]` of boolean tensors of
            shapes `(batch, Tq)` and `(batch, Tv)` (entries may be `None`);
            passed automatically for inputs carrying Keras masks.
        training: Whether to apply dropout to the weights.
        return_attention_scores: If `True`, also return the attention weights.

    Returns:
        The context of shape `(batch, Tq, dv)` (or `(batch, dv)` for a rank-2
        query) and, if `return_attention_scores=True`, the weights of shape
        `(batch, Tq, Tv)` (or `(batch, Tv)`). Padded values get zero weight;
        padded queries get zero weights and a zero output. The query mask is
        propagated.

    Example:

    >>> import numpy as np
    >>> layer = BahdanauAttention(units=16)
    >>> query = np.random.rand(2, 3, 8).astype("float32")   # (batch, Tq, dq)
    >>> value = np.random.rand(2, 5, 6).astype("float32")   # (batch, Tv, dv)
    >>> value_mask = np.array([[True] * 5, [True] * 3 + [False] * 2])
    >>> context, weights = layer([query, value], mask=[None, value_mask], return_attention_scores=True)
    >>> print(context.shape, weights.shape)
    (2, 3, 6) (2, 3, 5)
    >>> np.asarray(weights)[1, 0, 3:]                       # no weight on padded values
    array([0., 0.], dtype=float32)
    >>> state = np.random.rand(2, 8).astype("float32")      # one query per example, e.g. an RNN's state
    >>> print(layer([state, value]).shape)
    (2, 6)

    Reference:
        Bahdanau, Cho, Bengio. "Neural Machine Translation by Jointly Learning
        to Align and Translate." ICLR 2015.
    """

    def __init__(
        self,
        units,
        use_bias=True,
        dropout=0.0,
        seed=None,
        kernel_initializer="glorot_uniform",
        bias_initializer="zeros",
        kernel_regularizer=None,
        **kwargs,
    ):
        super().__init__(dropout=dropout, seed=seed, **kwargs)
        check_positive_int(units, "units")
        self.units = units
        self.use_bias = use_bias
        self.kernel_initializer = keras.initializers.get(kernel_initializer)
        self.bias_initializer = keras.initializers.get(bias_initializer)
        self.kernel_regularizer = keras.regularizers.get(kernel_regularizer)

    def build(self, input_shape):
        query_shape, _, key_shape = self._shapes(input_shape)

        def kernel(name, shape):
            return self.add_weight(
                name=name,
                shape=shape,
                initializer=self.kernel_initializer,
                regularizer=self.kernel_regularizer,
            )

        self.query_kernel = kernel("query_kernel", (query_shape[-1], self.units))
        self.key_kernel = kernel("key_kernel", (key_shape[-1], self.units))
        self.bias = (
            self.add_weight(name="bias", shape=(self.units,), initializer=self.bias_initializer)
            if self.use_bias
            else None
        )
        self.score_vector = kernel("score_vector", (self.units,))

    def _scores(self, query, key, value_mask):
        hidden = ops.expand_dims(ops.matmul(query, self.query_kernel), 2) + ops.expand_dims(
            ops.matmul(key, self.key_kernel), 1
        )  # (batch, Tq, Tv, units)
        if self.bias is not None:
            hidden = hidden + self.bias
        return ops.matmul(ops.tanh(hidden), self.score_vector), None

    def get_config(self):
        config = super().get_config()
        config.update(
            {
                "units": self.units,
                "use_bias": self.use_bias,
                "kernel_initializer": keras.initializers.serialize(self.kernel_initializer),
                "bias_initializer": keras.initializers.serialize(self.bias_initializer),
                "kernel_regularizer": keras.regularizers.serialize(self.kernel_regularizer),
            }
        )
        return config
