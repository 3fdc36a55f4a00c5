"""Tests for hierattn.layers.BahdanauAttention."""

import keras
import numpy as np
import pytest
from keras import ops
from keras.src import testing

from hierattn.layers import BahdanauAttention

from layer_checks import (
    assert_attention_distribution,
    assert_keras_round_trip,
    random_mask,
    softmax_np,
)


def reference(layer, query, value, key=None, value_mask=None):
    """NumPy: score = v . tanh(W_q q + W_k k + b), softmax over keys."""
    key = value if key is None else key
    wq, wk, b, v = (
        w.numpy().astype("float64") for w in (layer.query_kernel, layer.key_kernel, layer.bias, layer.score_vector)
    )
    hidden = np.tanh((query @ wq)[:, :, None, :] + (key @ wk)[:, None, :, :] + b)
    mask = None if value_mask is None else value_mask[:, None, :]
    weights = softmax_np(hidden @ v, mask)
    return weights @ value, weights


class BahdanauLayerTest(testing.TestCase):
    def test_keras_layer_harness(self):
        self.run_layer_test(
            BahdanauAttention,
            init_kwargs={"units": 4},
            input_shape=((2, 3, 5), (2, 6, 7)),
            expected_output_shape=(2, 3, 7),
            expected_num_trainable_weights=4,
            expected_num_seed_generators=0,
            supports_masking=True,
        )
        self.run_layer_test(
            BahdanauAttention,
            init_kwargs={"units": 4, "use_bias": False, "dropout": 0.2, "seed": 1},
            input_shape=((2, 5), (2, 6, 7), (2, 6, 3)),
            expected_output_shape=(2, 7),
            expected_num_trainable_weights=3,
            expected_num_seed_generators=1,
            supports_masking=True,
        )


@pytest.mark.parametrize("masked", [False, True])
@pytest.mark.parametrize("with_key", [False, True])
def test_matches_numpy_formula(rng, masked, with_key):
    query = rng.normal(size=(3, 2, 4)).astype("float32")
    value = rng.normal(size=(3, 5, 6)).astype("float32")
    key = rng.normal(size=(3, 5, 3)).astype("float32") if with_key else None
    value_mask = random_mask(rng, 3, 5) if masked else None
    layer = BahdanauAttention(units=7)
    inputs = [query, value] + ([key] if with_key else [])
    output, weights = layer(inputs, mask=[None, value_mask], return_attention_scores=True)
    ref_output, ref_weights = reference(layer, query, value, key, value_mask)
    np.testing.assert_allclose(weights, ref_weights, atol=1e-5)
    np.testing.assert_allclose(output, ref_output, atol=1e-5)
    if masked:
        assert_attention_distribution(weights, value_mask[:, None, :])


def test_rank2_query_gives_one_context_per_example(rng):
    query = rng.normal(size=(3, 4)).astype("float32")
    value = rng.normal(size=(3, 5, 6)).astype("float32")
    mask = random_mask(rng, 3, 5)
    layer = BahdanauAttention(units=3)
    output, weights = layer([query, value], mask=[None, mask], return_attention_scores=True)
    assert output.shape == (3, 6) and weights.shape == (3, 5)
    ref_output, ref_weights = reference(layer, query[:, None, :], value, value_mask=mask)
    np.testing.assert_allclose(weights, ref_weights[:, 0], atol=1e-5)
    np.testing.assert_allclose(output, ref_output[:, 0], atol=1e-5)
    assert layer.compute_mask([query, value], [None, mask]) is None


def test_query_mask_zeroes_padded_queries_and_is_propagated(rng):
    query = rng.normal(size=(2, 3, 4)).astype("float32")
    value = rng.normal(size=(2, 5, 4)).astype("float32")
    query_mask = np.array([[1, 1, 0], [1, 0, 0]], bool)
    layer = BahdanauAttention(units=3)
    output, weights = layer([query, value], mask=[query_mask, None], return_attention_scores=True)
    output, weights = ops.convert_to_numpy(output), ops.convert_to_numpy(weights)
    assert np.all(output[~query_mask] == 0) and np.all(weights[~query_mask] == 0)
    np.testing.assert_allclose(weights[query_mask].sum(-1), 1.0, atol=1e-6)
    np.testing.assert_array_equal(
        ops.convert_to_numpy(layer.compute_mask([query, value], [query_mask, None])), query_mask
    )


def test_implicit_masks_and_round_trip(rng, tmp_path):
    source = keras.Input((6,), dtype="int32")
    target = keras.Input((4,), dtype="int32")
    embed = keras.layers.Embedding(15, 8, mask_zero=True)
    context, weights = BahdanauAttention(5, name="attn")([embed(target), embed(source)], return_attention_scores=True)
    model = keras.Model([source, target], [context, weights])
    src = rng.integers(1, 15, size=(3, 6))
    src[0, 4:] = 0
    tgt = rng.integers(1, 15, size=(3, 4))
    tgt[1, 2:] = 0
    _, w = model([src, tgt])
    w = ops.convert_to_numpy(w)
    assert np.all(w[0][:, 4:] == 0) and np.all(w[1, 2:] == 0)
    assert_keras_round_trip(model, [src, tgt], tmp_path)


def test_bad_arguments_are_rejected():
    with pytest.raises(ValueError, match="units"):
        BahdanauAttention(units=-2)
    with pytest.raises(ValueError, match="dropout"):
        BahdanauAttention(units=2, dropout=1.5)
    with pytest.raises(ValueError, match=r"list \[query, value\]"):
        BahdanauAttention(units=2)(np.zeros((1, 2, 3), "float32"))
