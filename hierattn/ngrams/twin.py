"""`NgramLogits` computed in NumPy: the same features, values and contributions, for code outside a graph.

The layer computes with Keras ops so that it traces into `predict`'s graph
and exports to ONNX; called eagerly on one document at a time (as the
explainer does), every call converts its tables (over a million rows for
IMDB) to tensors and runs a few hundred small ops. These functions read the
layer's settings and tables and compute the same numbers with NumPy
(`numpy.searchsorted` for the layer's binary search); tests compare them
with the layer.
"""

import numpy as np

from hierattn.ngrams.logits import _MULTIPLIER, _PRIME


def ngram_features(layer, ids):
    """`NgramLogits.ngram_features` in NumPy: the feature id of the n-gram starting at each position, per order.

    Args:
        layer: An `NgramLogits` (its `vocabulary_size`, `ngram_max` and `num_buckets`).
        ids: Int ids `(batch, ..., length)`, 0 for padding.

    Returns:
        One `(rows, length)` int64 array per order n, -1 where no n-gram of that order starts.
    """
    ids = np.asarray(ids, np.int64)
    ids = ids.reshape(-1, ids.shape[-1])
    features = [np.where(ids > 0, ids, -1)]
    key, present = ids, ids > 0
    hashed_buckets = layer.num_buckets - layer.vocabulary_size
    for n in range(2, layer.ngram_max + 1):
        following = np.pad(ids[:, n - 1 :], [(0, 0), (0, n - 1)])
        key = key * layer.vocabulary_size + following
        present = present & (following > 0)
        bucket = (key % _PRIME) * _MULTIPLIER % _PRIME % hashed_buckets + layer.vocabulary_size
        features.append(np.where(present, bucket, -1))
    return features


def contributions(layer, ids):
    """`layer(ids, return_contributions=True)` in NumPy: logits, distinct feature ids, their contributions.

    Args:
        layer: A fitted `NgramLogits`.
        ids: Int ids `(batch, ..., length)`, 0 for padding.

    Returns:
        `(logits (batch, classes), feature_ids (batch, k), contributions (batch, k, classes))`, float32 and int32,
        as the layer gives them: `feature_ids` sorted, -1 for none.
    """
    ids = np.asarray(ids)
    batch = ids.shape[0]
    flat = np.sort(np.concatenate(ngram_features(layer, ids), axis=-1).reshape(batch, -1), axis=-1).astype(np.int32)
    firsts = np.concatenate([np.ones((batch, 1), bool), flat[:, 1:] != flat[:, :-1]], axis=-1)
    feature_ids = np.where(firsts, flat, -1)
    table = layer._ids  # the kept ids, then a sentinel above every feature id
    rows = np.searchsorted(table, feature_ids)
    rows = np.where(table[np.minimum(rows, len(table) - 1)] == feature_ids, rows, layer.num_kept)
    values = np.where(feature_ids >= 0, layer._idf[rows], 0.0).astype(np.float32)
    if layer.tf == "sublinear":
        values = values * np.where(feature_ids >= 0, 1.0 + np.log(np.maximum(_counts(flat, firsts), 1)), 0.0)
    if layer.normalize:
        values = values / np.maximum(np.sqrt(np.sum(np.square(values), axis=-1, keepdims=True)), 1e-12)
    found = layer._kernel[rows] * values[..., None].astype(np.float32)
    logits = found.sum(axis=1) + layer._bias
    return logits.astype(np.float32), feature_ids, found.astype(np.float32)


def _counts(flat, firsts):
    """How often each run's id occurs in its sorted row, at the run's first entry (0 elsewhere)."""
    counts = np.zeros(flat.shape, np.int64)
    for row in range(len(flat)):
        starts = np.flatnonzero(firsts[row])
        counts[row, starts] = np.diff(np.append(starts, flat.shape[1]))
    return counts
