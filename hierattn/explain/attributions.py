"""Per-token scores of one prediction, shared by the explainer and the faithfulness check.

What the attention says of each token is the backbone's own
(`Backbone.token_attention`). Here:

* `gradient_times_input`: the gradient of the predicted class's probability
  with respect to each token's embedding, dotted with that embedding; signed,
  so it tells words for the prediction from words against it (a ranking
  the faithfulness check compares);
* `integrated_gradients`: each token's share of a score margin, whose
  tokens' shares add up to the margin's change from the all-padding
  baseline (the network's part of a word's evidence).
"""

import itertools

import numpy as np

from hierattn.data.batching import sort_batches_by_length, trim_padding
from hierattn.errors import HierattnError
from hierattn.utils.keras_compat import untracked_attribute

# The calls of a model's first single batch that run eagerly before the rest go to the traced function
# (`_path_function`): tracing costs about 6 to 10 eager calls of a small network, and a first pass of the path
# (`steps` + 2 points) takes at most 18 calls on the smallest vocabularies, one call on most.
EAGER_CALLS = 16


def gradient_times_input(model, x, classes, batch_size=32):
    """Gradient x input scores for each token of each document.

    The gradient of the probability of `classes[i]` with respect to the
    embedding of every token, dotted with that embedding. Read from the
    per-position gradient rows of the embedding lookup (TensorFlow returns
    them unsummed, one per looked-up position), so no model surgery is needed.

    Args:
        model: A hierattn `Backbone`.
        x: Encoded documents `(n, ...)`.
        classes: Int array `(n,)`: the class to explain per document.
        batch_size: Documents per gradient computation.

    Returns:
        Float array shaped like `x`, 0 at padding.
    """
    import tensorflow as tf  # not at the top: the CLI imports this package before it needs TensorFlow

    variable = model.token_embedding.embeddings
    table = np.asarray(variable.numpy(), dtype=np.float32)
    scores = np.zeros(x.shape, dtype=np.float32)
    for index in sort_batches_by_length(x, batch_size):
        batch = trim_padding(x[index]).astype(np.int32)
        picked = tf.one_hot(np.asarray(classes)[index], model.num_classes)
        with tf.GradientTape() as tape:
            probabilities = model(batch, training=False)
            target = tf.reduce_sum(probabilities * picked)
        gradient = tape.gradient(target, variable.value)
        if not isinstance(gradient, tf.IndexedSlices):  # pragma: no cover - depends on the TF gather gradient
            raise HierattnError("gradient x input needs per-position embedding gradients (tf.gather)")
        if not np.array_equal(gradient.indices.numpy(), batch.ravel()):  # pragma: no cover
            raise HierattnError("unexpected embedding gradient layout")
        rows = gradient.values.numpy().reshape(batch.shape + (-1,))
        values = np.einsum("...d,...d->...", rows, table[batch])
        values[batch == 0] = 0.0
        target_slices = (index,) + tuple(slice(0, n) for n in batch.shape[1:])
        scores[target_slices] = values
    return scores


def integrated_gradients(
    model, x, classes, versus, scale=1.0, steps=16, tolerance=None, max_steps=128, batch_size=8, odds=False
):
    """Integrated gradients of a network's score margin, on the token embeddings (Sundararajan et al. 2017).

    The margin of each document is `scale * (log p(classes[i]) - log
    p(versus[i]))` (probabilities clipped at 1e-7, as `Explanation.decision`
    reads them); with `odds` (a multi-label network's independent sigmoid
    outputs) it is the log-odds of `classes[i]` alone, `scale * (log p -
    log(1 - p))` (each clipped at 1e-7, as `LogLinearCombination` reads
    them), and `versus` is not read. Every token's embedding goes from the padding id's
    embedding (the baseline: the document with every word replaced by
    padding, its mask unchanged) to its own along a straight line; the
    gradient is integrated along it with `steps`-point Gauss-Legendre
    quadrature and dotted with the token's embedding minus the baseline. By
    completeness, a document's token terms sum to its margin minus the
    margin at the baseline, up to the quadrature's error: with `tolerance`,
    the documents whose error is above that fraction of their margin's
    change (plus 1e-4, below which no error matters) are computed again with
    twice the points, up to `max_steps`.

    The points of the path are computed in one call per batch: each
    interpolated embedding is a row of a table standing in for the model's
    embedding table (`keras.StatelessScope`, the model's own variables left
    untouched) and looked up by remapped ids, so no model surgery is needed
    and the per-position gradients come from the lookup, as in
    `gradient_times_input`.

    Args:
        model: A hierattn `Backbone`.
        x: Encoded documents `(n, ...)`.
        classes: Int array `(n,)`: the class whose margin is explained.
        versus: Int array `(n,)`: the class it is measured against.
        scale: The margin's factor (the network's weight in a combination).
        steps: Quadrature points along the path.
        tolerance: The largest error of completeness, as a fraction of
            `margin - baseline`, before more points are used; `None`: no check.
        max_steps: The most points `tolerance` may lead to.
        batch_size: Documents per call (times `steps + 2` rows).
        odds: Explain the log-odds of `classes` (sigmoid outputs) instead
            of a margin between two classes.

    Returns:
        `(scores, margin, baseline)`: float arrays shaped like `x` (0 at
        padding), `(n,)` the margin at the input and `(n,)` at the baseline.

    Example:

    >>> import numpy as np
    >>> from hierattn.models import RNNBackbone
    >>> model = RNNBackbone(vocabulary_size=30, num_classes=2, embedding_dim=4, units=4)
    >>> x = np.array([[5, 7, 9, 0]])
    >>> scores, margin, baseline = integrated_gradients(model, x, np.array([1]), np.array([0]))
    >>> bool(abs(scores.sum() - (margin - baseline)[0]) < 1e-3), float(scores[0, 3])
    (True, 0.0)
    """
    x = np.asarray(x)
    classes, versus = np.asarray(classes), np.asarray(versus)
    table = np.asarray(model.token_embedding.embeddings.numpy(), dtype=np.float32)
    groups = sort_batches_by_length(x, batch_size)
    path = _path_function(model, x.ndim, single=len(groups) == 1, odds=odds)
    scores, margins, baselines = _integrate(path, table, x, groups, classes, versus, scale, steps)
    while tolerance is not None and steps * 2 <= max_steps:
        error = np.abs(scores.reshape(len(x), -1).sum(1) - (margins - baselines))
        again = np.flatnonzero(error > tolerance * np.abs(margins - baselines) + 1e-4)
        if not len(again):
            break
        steps *= 2
        groups = [again[i : i + batch_size] for i in range(0, len(again), batch_size)]
        scores[again] = _integrate(path, table, x, groups, classes, versus, scale, steps)[0][again]
    return scores, margins, baselines


def _integrate(path, table, x, groups, classes, versus, scale, steps):
    """`integrated_gradients` with `steps` points for the documents of `groups` (batches of indices into `x`)."""
    nodes, weights = np.polynomial.legendre.leggauss(steps)
    alphas = np.concatenate([[0.0, 1.0], (nodes + 1) / 2]).astype(np.float32)  # the baseline, the input, the path
    weights = np.concatenate([[0.0, 0.0], weights / 2]).astype(np.float32)
    scores = np.zeros(x.shape, dtype=np.float32)
    margins, baselines = np.zeros(len(x), np.float32), np.zeros(len(x), np.float32)
    for index in groups:
        batch = trim_padding(x[index]).astype(np.int64)
        used, inverse = np.unique(batch, return_inverse=True)
        inverse = inverse.reshape(batch.shape) - (used[0] == 0)  # -1 at padding, else the word's row in `delta`
        used = used[used > 0]
        delta = table[used] - table[0]
        # Every point of the path gets its own rows of the stand-in table: row 0 is padding, point j's follow.
        per_call = max(1, (len(table) - 1) // max(len(used), 1))
        gradient_sum = np.zeros(batch.shape + (table.shape[1],), np.float32)
        values = np.zeros((len(alphas), len(batch)), np.float32)
        for start in range(0, len(alphas), per_call):
            points = alphas[start : start + per_call]
            ids = np.concatenate([np.where(batch > 0, 1 + j * len(used) + inverse, 0) for j in range(len(points))])
            margin, rows, positions = path(
                delta,
                points,
                ids.astype(np.int32),
                np.tile(classes[index], len(points)).astype(np.int32),
                np.tile(versus[index], len(points)).astype(np.int32),
                np.repeat(weights[start : start + len(points)], len(batch)),
                np.float32(scale),
            )
            if not np.array_equal(positions.numpy(), ids.ravel()):  # pragma: no cover - depends on the TF gather
                raise HierattnError("unexpected embedding gradient layout")
            values[start : start + len(points)] = margin.numpy().reshape(len(points), len(batch))
            gradient_sum += rows.numpy().reshape((len(points),) + batch.shape + (-1,)).sum(axis=0)
        found = np.zeros(batch.shape, np.float32)  # a batch of texts without words: nothing to attribute
        if len(used):
            found = np.einsum("...d,...d->...", gradient_sum, delta[np.maximum(inverse, 0)])
        found[batch == 0] = 0.0
        scores[(index,) + tuple(slice(0, n) for n in batch.shape[1:])] = found
        baselines[index], margins[index] = values[0], values[1]
    return scores, margins, baselines


def _path_function(model, rank, single=False, odds=False):
    """`integrated_gradients`' margins and per-position gradients at points of the path, as one `tf.function`.

    Cached on the model, traced once for any batch shape (as
    `hierattn.models.inference` does for prediction). A model's first
    `single` batch (e.g. the CLI explaining one text) runs eagerly instead:
    tracing the HAN's costs the CLI about 2 s of its cold start
    (BENCHMARKS.md, "Word evidence that adds up"). Only its first
    `EAGER_CALLS` calls, though: a path that takes more (a small vocabulary
    holds few points per call, and `tolerance` may double them) goes on in
    the traced function (a transformer's test path of 258 calls: 84 s
    eagerly, 9 s so).
    """
    import keras  # not at the top: the CLI imports this package before it needs Keras
    import tensorflow as tf

    cache = untracked_attribute(model, "_hierattn_path", dict)
    key = (rank, "odds") if odds else rank
    if key in cache:
        return cache[key]
    eager = single and ("eager", key) not in cache
    variable = model.token_embedding.embeddings
    size, dim = variable.shape

    def path(delta, points, ids, picked, other, weights, scale):
        base = tf.convert_to_tensor(variable)[0]
        interpolated = tf.reshape(base + points[:, None, None] * delta[None], (-1, dim))
        filler = tf.zeros((size - 1 - tf.shape(interpolated)[0], dim))
        rows = tf.ensure_shape(tf.concat([base[None], interpolated, filler], axis=0), (size, dim))
        with tf.GradientTape() as tape:
            tape.watch(rows)
            with keras.StatelessScope(state_mapping=[(variable, rows)]):
                probabilities = model(ids, training=False)
            probabilities = tf.cast(probabilities, tf.float32)
            log_p = tf.math.log(tf.maximum(probabilities, 1e-7))
            if odds:  # a sigmoid output's log-odds: log p - log(1 - p)
                log_q = tf.math.log(tf.maximum(1.0 - probabilities, 1e-7))
                margin = scale * (tf.gather(log_p, picked, batch_dims=1) - tf.gather(log_q, picked, batch_dims=1))
            else:
                margin = scale * (tf.gather(log_p, picked, batch_dims=1) - tf.gather(log_p, other, batch_dims=1))
            total = tf.reduce_sum(margin * weights)
        gradient = tape.gradient(total, rows)
        if not isinstance(gradient, tf.IndexedSlices):  # pragma: no cover - depends on the TF gather gradient
            raise HierattnError("integrated gradients need per-position embedding gradients (tf.gather)")
        return margin, gradient.values, gradient.indices

    float_spec = tf.TensorSpec(None, tf.float32)
    int_spec = tf.TensorSpec((None,) * rank, tf.int32)
    signature = [
        tf.TensorSpec((None, dim), tf.float32),
        tf.TensorSpec((None,), tf.float32),
        int_spec,
        tf.TensorSpec((None,), tf.int32),
        tf.TensorSpec((None,), tf.int32),
        tf.TensorSpec((None,), tf.float32),
        float_spec,
    ]

    def traced():
        if key not in cache:
            cache[key] = tf.function(path, input_signature=signature, reduce_retracing=True)
        return cache[key]

    if not eager:
        return traced()
    cache["eager", key] = True
    calls = itertools.count()

    def first_eagerly(*arguments):
        if next(calls) < EAGER_CALLS:
            return path(*(tf.convert_to_tensor(a) for a in arguments))
        return traced()(*arguments)

    return first_eagerly
