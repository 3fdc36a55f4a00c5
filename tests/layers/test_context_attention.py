"""Tests for hierattn.layers.ContextAttention."""

import keras
import numpy as np
import pytest
from keras import ops
from keras.src import testing

from hierattn.layers import ContextAttention

from layer_checks import (
    assert_attention_distribution,
    assert_keras_round_trip,
    random_mask,
    softmax_np,
)


def reference(layer, x, mask=None):
    """NumPy version of u_t = tanh(W h_t + b), a = softmax(u_t . u), sum a h."""
    kernel, bias, context = (w.numpy().astype("float64") for w in (layer.kernel, layer.bias, layer.context))
    u = np.tanh(x.astype("float64") @ kernel + bias)
    weights = softmax_np(u @ context, mask)
    return (weights[..., None] * x).sum(axis=-2), weights


class ContextAttentionLayerTest(testing.TestCase):
    def test_keras_layer_harness(self):
        self.run_layer_test(
            ContextAttention,
            init_kwargs={"units": 6},
            input_shape=(2, 5, 8),
            expected_output_shape=(2, 8),
            expected_num_trainable_weights=3,
            expected_num_non_trainable_weights=0,
            expected_num_seed_generators=0,
            supports_masking=True,
        )
        self.run_layer_test(
            ContextAttention,
            init_kwargs={"use_bias": False},
            input_shape=(2, 3, 5, 4),
            expected_output_shape=(2, 3, 4),
            expected_num_trainable_weights=2,
            supports_masking=True,
        )


@pytest.mark.parametrize("masked", [False, True])
def test_matches_numpy_formula(rng, masked):
    x = rng.normal(size=(4, 7, 5)).astype("float32")
    mask = random_mask(rng, 4, 7) if masked else None
    layer = ContextAttention(units=3)
    output, weights = layer(x, mask=mask, return_attention_scores=True)
    ref_output, ref_weights = reference(layer, x, mask)
    np.testing.assert_allclose(weights, ref_weights, atol=1e-5)
    np.testing.assert_allclose(output, ref_output, atol=1e-5)
    if masked:
        assert_attention_distribution(weights, mask)
        np.testing.assert_array_equal(ops.convert_to_numpy(output)[-1], 0.0)


def test_padded_values_do_not_change_the_output(rng):
    x = rng.normal(size=(3, 6, 4)).astype("float32")
    mask = random_mask(rng, 3, 6, full_padding_row=False)
    layer = ContextAttention()
    noisy = np.where(mask[..., None], x, 1e3 * rng.normal(size=x.shape)).astype("float32")
    np.testing.assert_allclose(layer(x, mask=mask), layer(noisy, mask=mask), atol=1e-6)


def test_implicit_mask_from_embedding_and_gradients_are_finite():
    ids = np.array([[3, 4, 5, 0, 0], [0, 0, 0, 0, 0]])
    inputs = keras.Input((5,), dtype="int32")
    embedded = keras.layers.Embedding(10, 6, mask_zero=True)(inputs)
    pooled, weights = ContextAttention(name="pool")(embedded, return_attention_scores=True)
    model = keras.Model(inputs, [pooled, weights])
    out, w = model(ids)
    assert_attention_distribution(w, ids != 0)
    np.testing.assert_array_equal(ops.convert_to_numpy(out)[1], 0.0)
    # Gradients through an all-padding document stay finite.
    import tensorflow as tf  # test-only: gradient tape of the TF backend

    with tf.GradientTape() as tape:
        loss = ops.sum(model(ids)[0])
    grads = tape.gradient(loss, model.trainable_weights)
    assert all(np.all(np.isfinite(tf.convert_to_tensor(g).numpy())) for g in grads)


def test_rank4_pools_every_sentence_and_returns_sentence_mask(rng):
    x = rng.normal(size=(2, 3, 4, 5)).astype("float32")
    mask = np.ones((2, 3, 4), bool)
    mask[0, 1] = False  # an empty sentence
    mask[1, 2, 2:] = False
    layer = ContextAttention()
    output, weights = layer(x, mask=mask, return_attention_scores=True)
    assert output.shape == (2, 3, 5) and weights.shape == (2, 3, 4)
    assert_attention_distribution(weights, mask)
    for s in range(3):  # same as pooling each sentence on its own
        np.testing.assert_allclose(output[:, s], layer(x[:, s], mask=mask[:, s]), atol=1e-6)
    sentence_mask = ops.convert_to_numpy(layer.compute_mask(x, mask))
    np.testing.assert_array_equal(sentence_mask, [[True, False, True], [True, True, True]])
    assert layer.compute_mask(x[:, 0], mask[:, 0]) is None


def test_inside_time_distributed_matches_direct_call(rng):
    ids = rng.integers(0, 9, size=(2, 3, 4))
    ids[0, 1] = 0
    inputs = keras.Input((3, 4), dtype="int32")
    embedded = keras.layers.Embedding(9, 6, mask_zero=True)(inputs)
    attention = ContextAttention()
    distributed = keras.layers.TimeDistributed(attention)(embedded)
    model = keras.Model(inputs, distributed)
    embedding = model.layers[1]
    direct = attention(embedding(ids), mask=ids != 0)
    np.testing.assert_allclose(model(ids), direct, atol=1e-6)
    np.testing.assert_array_equal(ops.convert_to_numpy(model(ids))[0, 1], 0.0)


def test_mixed_precision_masked_rows_have_no_nan(rng):
    x = rng.normal(size=(2, 5, 4)).astype("float32")
    mask = np.array([[1, 1, 0, 0, 0], [0, 0, 0, 0, 0]], bool)
    layer = ContextAttention(dtype="mixed_float16")
    output, weights = layer(x, mask=mask, return_attention_scores=True)
    assert keras.backend.standardize_dtype(weights.dtype) == "float16"
    assert_attention_distribution(ops.convert_to_numpy(weights).astype("float32"), mask, atol=2e-3)
    assert np.all(np.isfinite(ops.convert_to_numpy(output)))


def test_keras_file_round_trip_without_custom_objects(rng, tmp_path):
    inputs = keras.Input((6,), dtype="int32")
    embedded = keras.layers.Embedding(20, 8, mask_zero=True)(inputs)
    pooled, weights = ContextAttention(units=5, name="pool")(embedded, return_attention_scores=True)
    model = keras.Model(inputs, [keras.layers.Dense(2)(pooled), weights])
    ids = rng.integers(0, 20, size=(4, 6))
    ids[0, 3:] = 0
    reloaded = assert_keras_round_trip(model, ids, tmp_path)
    assert reloaded.get_layer("pool").get_config()["units"] == 5


def test_bad_arguments_are_rejected():
    with pytest.raises(ValueError, match="units must be a positive integer"):
        ContextAttention(units=0)
    with pytest.raises(ValueError, match="rank >= 3"):
        ContextAttention()(np.zeros((2, 4), "float32"))
