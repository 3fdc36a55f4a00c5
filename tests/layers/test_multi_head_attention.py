"""Tests for hierattn.layers.MultiHeadAttention (Keras's layer, padded queries attending to nothing)."""

import keras
import numpy as np
import pytest
from keras import ops
from keras.src import testing

from hierattn.layers import MultiHeadAttention

from layer_checks import assert_attention_distribution, assert_keras_round_trip, random_mask, softmax_np


class MultiHeadAttentionLayerTest(testing.TestCase):
    def test_keras_layer_harness(self):
        self.run_layer_test(
            MultiHeadAttention,
            init_kwargs={"num_heads": 2, "key_dim": 4},
            input_shape={"query_shape": (2, 5, 6), "value_shape": (2, 7, 6)},
            expected_output_shape=(2, 5, 6),
            expected_num_trainable_weights=8,
            supports_masking=True,
            run_training_check=False,
        )


def _twin(ours, query, value):
    theirs = keras.layers.MultiHeadAttention(ours.num_heads, key_dim=ours.key_dim)
    theirs(query, value)
    theirs.set_weights(ours.get_weights())
    return theirs


@pytest.mark.parametrize("causal", [False, True])
def test_same_as_keras_on_rows_with_a_real_key(rng, causal):
    query = rng.normal(size=(3, 5, 8)).astype("float32")
    value = query if causal else rng.normal(size=(3, 7, 8)).astype("float32")
    value_mask = random_mask(rng, 3, value.shape[1], full_padding_row=False)
    query_mask = value_mask if causal else None
    ours = MultiHeadAttention(num_heads=2, key_dim=4)
    out, w = ours(
        query, value, query_mask=query_mask, value_mask=value_mask, return_attention_scores=True, use_causal_mask=causal
    )
    kout, kw = _twin(ours, query, value)(
        query, value, query_mask=query_mask, value_mask=value_mask, return_attention_scores=True, use_causal_mask=causal
    )
    rows = value_mask if causal else np.ones(query.shape[:2], bool)
    np.testing.assert_allclose(ops.convert_to_numpy(out)[rows], ops.convert_to_numpy(kout)[rows], atol=1e-5)
    np.testing.assert_allclose(
        ops.convert_to_numpy(w).transpose(0, 2, 1, 3)[rows],
        ops.convert_to_numpy(kw).transpose(0, 2, 1, 3)[rows],
        atol=1e-5,
    )


def test_weights_match_a_numpy_reference(rng):
    x = rng.normal(size=(2, 4, 6)).astype("float32")
    layer = MultiHeadAttention(num_heads=2, key_dim=3)
    _, w = layer(x, x, return_attention_scores=True)
    q_kernel, q_bias, k_kernel, k_bias = (v.numpy() for v in layer.weights[:4])
    q = np.einsum("btd,dhk->bhtk", x, q_kernel) + q_bias[None, :, None, :]
    k = np.einsum("btd,dhk->bhtk", x, k_kernel) + k_bias[None, :, None, :]
    expected = softmax_np(q @ k.transpose(0, 1, 3, 2) / np.sqrt(3))
    np.testing.assert_allclose(ops.convert_to_numpy(w), expected, atol=1e-5)


@pytest.mark.parametrize("dropout", [0.0, 0.2])
def test_fully_padded_rows_get_zero_weights_and_zero_context(rng, dropout):
    x = rng.normal(size=(3, 6, 8)).astype("float32")
    mask = random_mask(rng, 3, 6)  # the last example is all padding
    layer = MultiHeadAttention(num_heads=4, key_dim=2, dropout=dropout)
    pairs = mask[:, :, None] & mask[:, None, :]  # (a NumPy query_mask would be ignored, as in Keras)
    out, w = layer(x, x, attention_mask=pairs, return_attention_scores=True, use_causal_mask=True)
    allowed = mask[:, None, :, None] & mask[:, None, None, :] & np.tril(np.ones((6, 6), bool))
    assert_attention_distribution(w, allowed)
    assert np.isfinite(ops.convert_to_numpy(out)).all()
    without_scores = layer(x, x, attention_mask=pairs, use_causal_mask=True)  # Keras would use its fused kernel
    np.testing.assert_allclose(ops.convert_to_numpy(without_scores), ops.convert_to_numpy(out), atol=1e-6)
    context = layer._output_dense.bias.numpy()  # a zero context projects to the output bias
    np.testing.assert_allclose(ops.convert_to_numpy(out)[2], np.broadcast_to(context, (6, 8)), atol=1e-6)
    assert not np.allclose(ops.convert_to_numpy(out)[0, 0], context)


def test_round_trip_with_implicit_mask(rng, tmp_path):
    ids_in = keras.Input((6,), dtype="int32")
    x = keras.layers.Embedding(10, 8, mask_zero=True)(ids_in)
    out, w = MultiHeadAttention(2, 4, name="mha")(x, x, return_attention_scores=True)
    model = keras.Model(ids_in, [out, w])
    ids = rng.integers(1, 10, size=(2, 6))
    ids[0, 4:] = 0
    _, weights = model(ids)
    assert np.all(ops.convert_to_numpy(weights)[0, :, :4, 4:] == 0)
    assert np.all(ops.convert_to_numpy(weights)[0, :, 4:, :] == 0)  # padded queries attend to nothing
    assert_keras_round_trip(model, ids, tmp_path)


def test_is_the_keras_layer():
    layer = MultiHeadAttention(num_heads=2, key_dim=4, value_dim=3, dropout=0.1)
    assert isinstance(layer, keras.layers.MultiHeadAttention)
    assert MultiHeadAttention.from_config(layer.get_config()).get_config() == layer.get_config()


def test_rows_without_keys_attend_to_nothing_over_two_attention_axes(rng):
    # A (batch, 3, 4, d) grid attended over both axes; the first document's last two rows and the second
    # document are padding.
    x = rng.normal(size=(2, 3, 4, 8)).astype("float32")
    mask = np.ones((2, 3, 4), bool)
    mask[0, 2:] = False
    mask[1] = False
    pairs = mask[:, :, :, None, None] & mask[:, None, None, :, :]
    layer = MultiHeadAttention(num_heads=2, key_dim=4, attention_axes=(1, 2))
    out, w = layer(x, x, attention_mask=pairs, return_attention_scores=True)
    w = ops.convert_to_numpy(w)  # (batch, heads, 3, 4, 3, 4)
    np.testing.assert_allclose(w.sum(axis=(-2, -1)), np.broadcast_to(mask[:, None], w.shape[:4]), atol=1e-6)
    assert np.all(w[:, :, :, :, ~mask[0]][0] == 0) and np.all(w[1] == 0)
    bias = layer._output_dense.bias.numpy()
    np.testing.assert_allclose(ops.convert_to_numpy(out)[1], np.broadcast_to(bias, (3, 4, 8)), atol=1e-6)
