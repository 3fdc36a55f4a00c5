"""Private base class for attention over a `[query, value(, key)]` list."""

import keras
from keras import ops

from hierattn.layers._attention_utils import (
    attention_mask,
    check_dropout,
    masked_softmax,
    unpack_inputs,
    unpack_masks,
)


class QueryValueAttention(keras.layers.Layer):
    """Shared call logic of `BahdanauAttention` and `LuongAttention`.

    Subclasses build their weights and implement `_scores(query, key,
    value_mask)`, returning `(scores, extra_mask)` with `scores` of shape
    `(batch, Tq, Tv)` and an optional boolean mask broadcastable to it; and may
    override `_output(context, query)`. This class handles input parsing, a
    rank-2 query (one query per example), masking, dropout on the weights and
    returning them.

    Example:

    A subclass supplies the scores; the base class does the rest (masks, a
    rank-2 query, dropout, returning the weights):

    >>> import keras
    >>> import numpy as np
    >>> from hierattn.layers._query_value_attention import QueryValueAttention
    >>> class ScaledDotAttention(QueryValueAttention):
    ...     def _scores(self, query, key, value_mask):
    ...         scores = keras.ops.matmul(query, keras.ops.swapaxes(key, -1, -2))
    ...         return scores / query.shape[-1] ** 0.5, None
    >>> layer = ScaledDotAttention()
    >>> query = np.random.rand(2, 3, 4).astype("float32")
    >>> value = np.random.rand(2, 5, 4).astype("float32")
    >>> value_mask = np.array([[True] * 5, [True] * 2 + [False] * 3])
    >>> context, weights = layer([query, value], mask=[None, value_mask], return_attention_scores=True)
    >>> print(context.shape, weights.shape)
    (2, 3, 4) (2, 3, 5)
    >>> np.asarray(weights)[1, 0, 2:]                    # no weight on padded values
    array([0., 0., 0.], dtype=float32)
    """

    def __init__(self, dropout=0.0, seed=None, **kwargs):
        super().__init__(**kwargs)
        check_dropout(dropout)
        self.dropout = dropout
        self.seed = seed
        self.seed_generator = keras.random.SeedGenerator(seed) if dropout > 0 else None
        self.supports_masking = True

    def _shapes(self, input_shape):
        """Returns `(query_shape, value_shape, key_shape)` from a build shape."""
        query_shape, value_shape, key_shape = unpack_inputs(input_shape, type(self).__name__)
        if len(query_shape) not in (2, 3) or len(value_shape) != 3 or len(key_shape) != 3:
            raise ValueError(
                f"{type(self).__name__} expects query (batch, Tq, dq) or (batch, dq) "
                "and value/key (batch, Tv, d). Received shapes: "
                f"query={tuple(query_shape)}, value={tuple(value_shape)}, key={tuple(key_shape)}."
            )
        return tuple(query_shape), tuple(value_shape), tuple(key_shape)

    def _output(self, context, query):
        return context

    def call(self, inputs, mask=None, training=None, return_attention_scores=False):
        query, value, key = unpack_inputs(inputs, type(self).__name__)
        query_mask, value_mask = unpack_masks(mask)
        single_query = len(query.shape) == 2
        if single_query:
            query = ops.expand_dims(query, 1)
            query_mask = None
        scores, extra_mask = self._scores(query, key, value_mask)
        weights = masked_softmax(scores, attention_mask(query_mask, value_mask, extra_mask))
        applied = weights
        if training and self.seed_generator is not None:
            applied = keras.random.dropout(weights, self.dropout, seed=self.seed_generator)
        output = self._output(ops.matmul(applied, value), query)
        if query_mask is not None:
            output = ops.where(ops.expand_dims(query_mask, -1), output, 0)
        if single_query:
            output = ops.squeeze(output, 1)
            weights = ops.squeeze(weights, 1)
        if return_attention_scores:
            return output, weights
        return output

    def compute_mask(self, inputs, mask=None):
        query, _, _ = unpack_inputs(inputs, type(self).__name__)
        if mask is None or len(query.shape) == 2:
            return None
        query_mask, _ = unpack_masks(mask)
        return query_mask

    def _output_dim(self, query_shape, value_shape):
        return value_shape[-1]

    def compute_output_shape(self, input_shape):
        query_shape, value_shape, _ = self._shapes(input_shape)
        return query_shape[:-1] + (self._output_dim(query_shape, value_shape),)

    def compute_output_spec(self, inputs, mask=None, training=None, return_attention_scores=False):
        query, value, _ = unpack_inputs(inputs, type(self).__name__)
        shapes = [query.shape, value.shape]
        output = keras.KerasTensor(self.compute_output_shape(shapes), dtype=self.compute_dtype)
        if return_attention_scores:
            scores_shape = tuple(query.shape[:-1]) + (value.shape[1],)
            return output, keras.KerasTensor(scores_shape, dtype=self.compute_dtype)
        return output

    def get_config(self):
        config = super().get_config()
        config.update({"dropout": self.dropout, "seed": self.seed})
        return config
