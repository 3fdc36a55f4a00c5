"""Per-token scores of one prediction, shared by the explainer and the faithfulness check.

* `importance`: what the attention says (HAN: word weight x sentence weight;
  other models: the weights of their attention pooling over the words).
* `gradient_times_input`: the gradient of the predicted class's probability
  with respect to each token's embedding, dotted with that embedding; signed,
  so it tells words for the prediction from words against it.
"""

import numpy as np

from hierattn.data.encoding import sort_batches_by_length, trim_padding
from hierattn.errors import HierattnError


def importance(outputs, hierarchical):
    """Per-position importance from an explainer model's outputs.

    Args:
        outputs: Outputs of `hierattn.models.attention_outputs` for a batch
            (or one document).
        hierarchical: Whether the model is a HAN.

    Returns:
        For HAN, word weight x sentence weight, shaped like the id array
        `(..., sentences, words)`; otherwise the pooling weights `(..., length)`.
    """
    if hierarchical:
        return np.asarray(outputs["word_attention"]) * np.asarray(outputs["sentence_attention"])[..., None]
    (name,) = [k for k in outputs if k != "probabilities"]
    return np.asarray(outputs[name])


def gradient_times_input(model, x, classes, batch_size=32):
    """Gradient x input scores for each token of each document.

    The gradient of the probability of `classes[i]` with respect to the
    embedding of every token, dotted with that embedding. Read from the
    per-position gradient rows of the embedding lookup (TensorFlow returns
    them unsummed, one per looked-up position), so no model surgery is needed.

    Args:
        model: A hierattn model (its embedding layer is named `embedding`).
        x: Encoded documents `(n, ...)`.
        classes: Int array `(n,)`: the class to explain per document.
        batch_size: Documents per gradient computation.

    Returns:
        Float array shaped like `x`, 0 at padding.
    """
    import tensorflow as tf  # not at the top: the CLI imports this package before it needs TensorFlow

    layer = model.get_layer("embedding")
    variable = getattr(layer, "token_embedding", layer).embeddings
    table = np.asarray(variable.numpy(), dtype=np.float32)
    scores = np.zeros(x.shape, dtype=np.float32)
    for index in sort_batches_by_length(x, batch_size):
        batch = trim_padding(x[index]).astype(np.int32)
        picked = tf.one_hot(np.asarray(classes)[index], model.output.shape[-1])
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
