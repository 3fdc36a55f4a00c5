"""Luong (multiplicative / global and local) attention."""

import keras
from keras import ops

from hierattn.defaults import CHOICES
from hierattn.layers._attention_utils import check_choice, check_positive_int
from hierattn.layers._query_value_attention import QueryValueAttention

SCORE_MODES = ("dot", "general", "concat")
LOCAL_MODES = CHOICES["local_mode"]


@keras.saving.register_keras_serializable(package="hierattn")
class LuongAttention(QueryValueAttention):
    """Global and local attention of Luong et al. (2015).

    Scores (`q` a query step, `k` a key step):

    * `"dot"`: `q . k` (query and key must have the same size);
    * `"general"`: `q W_a k`;
    * `"concat"`: `v_a . tanh(W_a [q; k])`.

    With `window=None` the attention is *global*: a softmax over all key steps.
    With `window=D` it is *local*: only key steps `s` with `|s - p_t| <= D`
    are attended, where the centre `p_t` of query step `t` is

    * `"local-m"` (monotonic): `p_t = t`;
    * `"local-p"` (predictive): `p_t = S * sigmoid(v_p . tanh(W_p q_t))`, and
      the weights are multiplied by `exp(-(s - p_t)^2 / (2 (D/2)^2))`.

    Two documented departures from the paper, both so that the weights form a
    distribution over the real (non-padded) source steps: `S` is the index of
    the last real key step of each example (`length - 1`, so `p_t` always lies
    on the source; the paper uses the source length), `local-m` clips `p_t` to
    that index, and after the Gaussian the `local-p` weights are renormalised
    to sum to 1 (they differ from the paper's by one factor per query step).

    With `attentional_units` set, the output is the paper's attentional hidden
    state `tanh(W_c [c_t; q_t])` instead of the context `c_t`.

    Args:
        score_mode: One of `"dot"`, `"general"`, `"concat"`.
        window: `None` for global attention, or the half-width `D >= 0` of the
            local window (`D >= 1` for `"local-p"`).
        local_mode: `"local-m"` or `"local-p"`; used when `window` is set.
        units: Hidden size of the `"concat"` score and of the `"local-p"`
            position network. Defaults to the query's last dimension.
        attentional_units: If set, output `tanh(W_c [c_t; q_t])` of this size.
        dropout: Dropout rate applied to the attention weights in training.
        seed: Seed for the dropout.
        kernel_initializer: Initializer for all kernels.
        kernel_regularizer: Optional regularizer for all kernels.
        **kwargs: Base layer keyword arguments, such as `name` and `dtype`.

    Call arguments:
        inputs: List `[query, value]` or `[query, value, key]`:
            `query` of shape `(batch, Tq, dq)`, or `(batch, dq)` for a single
            query per example; `value` of shape `(batch, Tv, dv)`; `key` of
            shape `(batch, Tv, dk)`, defaulting to `value`.
        mask: Optional list `[query_mask, value_mask]` of boolean tensors of
            shapes `(batch, Tq)` and `(batch, Tv)` (entries may be `None`).
        training: Whether to apply dropout to the weights.
        return_attention_scores: If `True`, also return the attention weights.

    Returns:
        The context `(batch, Tq, dv)` (or the attentional state
        `(batch, Tq, attentional_units)`; without the `Tq` axis for a rank-2
        query) and, if `return_attention_scores=True`, the weights
        `(batch, Tq, Tv)` (or `(batch, Tv)`). Padded and out-of-window steps
        get zero weight; padded queries get zero weights and a zero output.
        The query mask is propagated.

    Example:

    >>> import numpy as np
    >>> layer = LuongAttention(score_mode="general")        # global attention
    >>> query = np.random.rand(2, 3, 8).astype("float32")   # (batch, Tq, dq)
    >>> value = np.random.rand(2, 6, 4).astype("float32")   # (batch, Tv, dv)
    >>> value_mask = np.array([[True] * 6, [True] * 4 + [False] * 2])
    >>> context, weights = layer([query, value], mask=[None, value_mask], return_attention_scores=True)
    >>> print(context.shape, weights.shape)
    (2, 3, 4) (2, 3, 6)
    >>> local = LuongAttention(window=1, local_mode="local-m", attentional_units=5)
    >>> x = np.random.rand(2, 6, 8).astype("float32")
    >>> output, weights = local([x, x], return_attention_scores=True)
    >>> print(output.shape)                                 # the attentional state tanh(W_c [c_t; q_t])
    (2, 6, 5)
    >>> (np.asarray(weights)[0, 2] > 0).astype(int)         # step 2 attends to steps 1 to 3
    array([0, 1, 1, 1, 0, 0])

    Reference:
        Luong, Pham, Manning. "Effective Approaches to Attention-based Neural
        Machine Translation." EMNLP 2015.
    """

    def __init__(
        self,
        score_mode="dot",
        window=None,
        local_mode="local-p",
        units=None,
        attentional_units=None,
        dropout=0.0,
        seed=None,
        kernel_initializer="glorot_uniform",
        kernel_regularizer=None,
        **kwargs,
    ):
        super().__init__(dropout=dropout, seed=seed, **kwargs)
        check_choice(score_mode, SCORE_MODES, "score_mode")
        check_choice(local_mode, LOCAL_MODES, "local_mode")
        if window is not None:
            if isinstance(window, bool) or not isinstance(window, int) or window < 0:
                raise ValueError(f"window must be None or an integer >= 0. Received: window={window!r}.")
            if local_mode == "local-p" and window == 0:
                raise ValueError("local-p attention needs window >= 1 (the Gaussian has sigma = window / 2).")
        check_positive_int(units, "units", allow_none=True)
        check_positive_int(attentional_units, "attentional_units", allow_none=True)
        self.score_mode = score_mode
        self.window = window
        self.local_mode = local_mode
        self.units = units
        self.attentional_units = attentional_units
        self.kernel_initializer = keras.initializers.get(kernel_initializer)
        self.kernel_regularizer = keras.regularizers.get(kernel_regularizer)

    def _kernel(self, name, shape):
        return self.add_weight(
            name=name,
            shape=shape,
            initializer=self.kernel_initializer,
            regularizer=self.kernel_regularizer,
        )

    def build(self, input_shape):
        query_shape, value_shape, key_shape = self._shapes(input_shape)
        dq, dv, dk = query_shape[-1], value_shape[-1], key_shape[-1]
        units = self.units or dq
        if self.score_mode == "dot" and dq != dk:
            raise ValueError(
                f"LuongAttention(score_mode='dot') needs query and key of the same size; "
                f"got {dq} and {dk}. Use score_mode='general' or 'concat'."
            )
        if self.score_mode == "general":
            self.score_kernel = self._kernel("score_kernel", (dq, dk))
        elif self.score_mode == "concat":
            self.score_kernel = self._kernel("score_kernel", (dq + dk, units))
            self.score_vector = self._kernel("score_vector", (units,))
        if self.window is not None and self.local_mode == "local-p":
            self.position_kernel = self._kernel("position_kernel", (dq, units))
            self.position_vector = self._kernel("position_vector", (units,))
        if self.attentional_units:
            self.attentional_kernel = self._kernel("attentional_kernel", (dv + dq, self.attentional_units))

    def _scores(self, query, key, value_mask):
        if self.score_mode == "dot":
            scores = ops.matmul(query, ops.swapaxes(key, -1, -2))
        elif self.score_mode == "general":
            scores = ops.matmul(ops.matmul(query, self.score_kernel), ops.swapaxes(key, -1, -2))
        else:
            dq = query.shape[-1]
            hidden = ops.expand_dims(ops.matmul(query, self.score_kernel[:dq]), 2) + ops.expand_dims(
                ops.matmul(key, self.score_kernel[dq:]), 1
            )
            scores = ops.matmul(ops.tanh(hidden), self.score_vector)
        if self.window is None:
            return scores, None
        return self._local(scores, query, key, value_mask)

    def _local(self, scores, query, key, value_mask):
        """Restricts `scores` to the window around each query's centre p_t."""
        if value_mask is None:
            length = ops.cast(ops.shape(key)[1], "float32") * ops.ones_like(key[:, 0, 0], dtype="float32")
        else:
            length = ops.sum(ops.cast(value_mask, "float32"), axis=-1)
        last = ops.expand_dims(ops.maximum(length - 1.0, 0.0), -1)  # (batch, 1)
        if self.local_mode == "local-m":
            steps = ops.cast(ops.arange(ops.shape(query)[1]), "float32")
            centre = ops.minimum(ops.expand_dims(steps, 0), last)  # (batch, Tq)
        else:
            hidden = ops.tanh(ops.matmul(query, self.position_kernel))
            centre = last * ops.cast(ops.sigmoid(ops.matmul(hidden, self.position_vector)), "float32")
        positions = ops.cast(ops.arange(ops.shape(key)[1]), "float32")
        distance = positions[None, None, :] - ops.expand_dims(centre, -1)  # (batch, Tq, Tv)
        in_window = ops.less_equal(ops.abs(distance), float(self.window))
        if self.local_mode == "local-p":
            sigma = self.window / 2.0
            penalty = ops.where(in_window, ops.square(distance) / (2.0 * sigma * sigma), 0.0)
            scores = scores - ops.cast(penalty, scores.dtype)
        return scores, in_window

    def _output(self, context, query):
        if not self.attentional_units:
            return context
        return ops.tanh(ops.matmul(ops.concatenate([context, query], axis=-1), self.attentional_kernel))

    def _output_dim(self, query_shape, value_shape):
        return self.attentional_units or value_shape[-1]

    def get_config(self):
        config = super().get_config()
        config.update(
            {
                "score_mode": self.score_mode,
                "window": self.window,
                "local_mode": self.local_mode,
                "units": self.units,
                "attentional_units": self.attentional_units,
                "kernel_initializer": keras.initializers.serialize(self.kernel_initializer),
                "kernel_regularizer": keras.regularizers.serialize(self.kernel_regularizer),
            }
        )
        return config
