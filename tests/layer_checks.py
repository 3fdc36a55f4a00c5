"""Assertions shared by the layer tests (imported by the test modules)."""

import keras
import numpy as np
from keras import ops


def assert_attention_distribution(weights, mask, atol=1e-5):
    """Padded positions 0, real positions sum to 1, all-padding rows all 0.

    Args:
        weights: Array `(..., T)`.
        mask: Boolean array broadcastable to `weights`.
        atol: Tolerance on the sums (float16 weights need about 1e-3).
    """
    weights = np.asarray(weights, dtype="float64")
    mask = np.broadcast_to(np.asarray(mask, bool), weights.shape)
    assert np.all(np.isfinite(weights)), "attention weights contain NaN/inf"
    assert np.all(weights[~mask] == 0.0), "padded positions got non-zero weight"
    sums = weights.sum(axis=-1)
    has_real = mask.any(axis=-1)
    np.testing.assert_allclose(sums[has_real], 1.0, atol=atol)
    assert np.all(sums[~has_real] == 0.0), "a fully padded row got weight"


def assert_keras_round_trip(model, inputs, tmp_path, atol=1e-6):
    """Saves `model` as .keras, reloads it WITHOUT custom_objects, compares."""
    path = str(tmp_path / "model.keras")
    before = model.predict(inputs, verbose=0)
    model.save(path)
    # The registered layers must resolve without custom_objects.
    reloaded = keras.saving.load_model(path)
    after = reloaded.predict(inputs, verbose=0)
    before, after = keras.tree.flatten(before), keras.tree.flatten(after)
    assert len(before) == len(after)
    for b, a in zip(before, after):
        np.testing.assert_allclose(a, b, atol=atol)
    return reloaded


def random_mask(rng, batch, length, full_padding_row=True):
    """Left-aligned padding mask with varied lengths, optionally one empty row."""
    lengths = rng.integers(1, length + 1, size=batch)
    if full_padding_row:
        lengths[-1] = 0
    return np.arange(length)[None, :] < lengths[:, None]


def softmax_np(scores, mask=None):
    """NumPy reference: masked softmax with zeros for fully masked rows."""
    scores = np.asarray(scores, dtype="float64")
    if mask is not None:
        mask = np.broadcast_to(mask, scores.shape)
        scores = np.where(mask, scores, -np.inf)
    peak = np.max(scores, axis=-1, keepdims=True)
    peak = np.where(np.isfinite(peak), peak, 0.0)
    exp = np.exp(scores - peak)
    total = exp.sum(axis=-1, keepdims=True)
    return np.divide(exp, total, out=np.zeros_like(exp), where=total > 0)


def full_table_outputs(layer, ids, idf, kernel, bias):
    """An `NgramLogits`'s logits and contributions from tables of every bucket, as it computed them before.

    `idf` `(num_buckets,)` and `kernel` `(num_buckets, classes)`: the layer
    held these whole before it kept only the features seen in training.
    """
    feature_ids = layer.feature_ids(ids)
    x = ops.where(feature_ids >= 0, ops.take(idf, ops.maximum(feature_ids, 0)), 0.0)
    x = x / ops.maximum(ops.sqrt(ops.sum(ops.square(x), axis=-1, keepdims=True)), 1e-12)
    contributions = ops.take(kernel, ops.maximum(feature_ids, 0), axis=0) * x[..., None]
    return np.asarray(ops.sum(contributions, axis=1) + bias), np.asarray(contributions)
