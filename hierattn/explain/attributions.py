"""Per-token scores of one prediction, shared by the explainer and the faithfulness check.

What the attention says of each token is the backbone's own
(`Backbone.token_attention`). Here:

* `gradient_times_input`: the gradient of the predicted class's probability
  with respect to each token's embedding, dotted with that embedding; signed,
  so it tells words for the prediction from words against it.
"""

import numpy as np

from hierattn.data.batching import sort_batches_by_length, trim_padding
from hierattn.errors import HierattnError


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
