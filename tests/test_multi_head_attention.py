"""Tests for hierattn.layers.MultiHeadAttention."""

import keras
import numpy as np
import pytest
from keras import ops
from keras.src import testing

from hierattn.layers import MultiHeadAttention
from layer_checks import assert_attention_distribution, assert_keras_round_trip, random_mask


def keras_twin(ours, query, value):
    """A keras.layers.MultiHeadAttention holding exactly our weights."""
    heads, head_dim = ours.num_heads, ours.head_dim
    theirs = keras.layers.MultiHeadAttention(heads, key_dim=head_dim)
    theirs(query, value)
    for name, dense in [("query", theirs._query_dense), ("key", theirs._key_dense), ("value", theirs._value_dense)]:
        kernel = getattr(ours, f"{name}_kernel").numpy()
        bias = getattr(ours, f"{name}_bias").numpy()
        dense.set_weights([kernel.reshape(kernel.shape[0], heads, head_dim), bias.reshape(heads, head_dim)])
    out_kernel = ours.output_kernel.numpy()
    theirs._output_dense.set_weights([out_kernel.reshape(heads, head_dim, -1), ours.output_bias.numpy()])
    return theirs


class MultiHeadAttentionLayerTest(testing.TestCase):
    def test_keras_layer_harness(self):
        self.run_layer_test(
            MultiHeadAttention,
            init_kwargs={"num_heads": 2, "d_model": 8},
            input_shape=(2, 5, 6),
            expected_output_shape=(2, 5, 6),
            expected_num_trainable_weights=8,
            supports_masking=True,
        )
        self.run_layer_test(
            MultiHeadAttention,
            init_kwargs={"num_heads": 4, "d_model": 8, "output_dim": 3, "use_bias": False, "dropout": 0.1},
            input_shape=((2, 5, 6), (2, 7, 4)),
            expected_output_shape=(2, 5, 3),
            expected_num_trainable_weights=4,
            expected_num_seed_generators=1,
            supports_masking=True,
        )


@pytest.mark.parametrize("causal", [False, True])
def test_matches_keras_multi_head_attention(rng, causal):
    query = rng.normal(size=(3, 5, 8)).astype("float32")
    value = query if causal else rng.normal(size=(3, 7, 8)).astype("float32")
    value_mask = random_mask(rng, 3, value.shape[1], full_padding_row=False)
    ours = MultiHeadAttention(num_heads=2, d_model=8)
    inputs = query if causal else [query, value]
    mask = value_mask if causal else [None, value_mask]
    out, w = ours(inputs, mask=mask, return_attention_scores=True, use_causal_mask=causal)
    theirs = keras_twin(ours, query, value)
    kout, kw = theirs(
        query,
        value,
        value_mask=value_mask,
        query_mask=value_mask if causal else None,
        return_attention_scores=True,
        use_causal_mask=causal,
    )
    rows = value_mask if causal else np.ones(query.shape[:2], bool)  # real query rows
    np.testing.assert_allclose(ops.convert_to_numpy(out)[rows], ops.convert_to_numpy(kout)[rows], atol=1e-5)
    np.testing.assert_allclose(
        ops.convert_to_numpy(w).transpose(0, 2, 1, 3)[rows],
        ops.convert_to_numpy(kw).transpose(0, 2, 1, 3)[rows],
        atol=1e-5,
    )


def test_padding_and_fully_padded_rows(rng):
    x = rng.normal(size=(3, 6, 8)).astype("float32")
    mask = random_mask(rng, 3, 6)  # last example is all padding
    layer = MultiHeadAttention(num_heads=4, d_model=8)
    _, w = layer(x, mask=mask, return_attention_scores=True, use_causal_mask=True)
    allowed = mask[:, None, :, None] & mask[:, None, None, :] & np.tril(np.ones((6, 6), bool))
    assert_attention_distribution(w, allowed)
    np.testing.assert_array_equal(ops.convert_to_numpy(layer.compute_mask(x, mask)), mask)


def test_round_trip_with_implicit_mask(rng, tmp_path):
    ids_in = keras.Input((6,), dtype="int32")
    x = keras.layers.Embedding(10, 8, mask_zero=True)(ids_in)
    out, w = MultiHeadAttention(2, 8, name="mha")(x, return_attention_scores=True)
    model = keras.Model(ids_in, [out, w])
    ids = rng.integers(1, 10, size=(2, 6))
    ids[0, 4:] = 0
    _, weights = model(ids)
    assert np.all(ops.convert_to_numpy(weights)[0, :, :4, 4:] == 0)
    assert_keras_round_trip(model, ids, tmp_path)


def test_alibi_bias_matches_the_formula(rng, tmp_path):
    x = rng.normal(size=(2, 5, 8)).astype("float32")
    mask = np.array([[True] * 5, [True, True, True, False, False]])
    layer = MultiHeadAttention(num_heads=2, d_model=8, position_bias="alibi")
    _, w = layer(x, mask=mask, return_attention_scores=True)
    heads, dh = 2, 4

    def split(name):
        kernel, bias = getattr(layer, f"{name}_kernel").numpy(), getattr(layer, f"{name}_bias").numpy()
        return (x @ kernel + bias).reshape(2, 5, heads, dh).transpose(0, 2, 1, 3)

    logits = split("query") @ split("key").transpose(0, 1, 3, 2) / np.sqrt(dh)
    distance = np.abs(np.arange(5)[:, None] - np.arange(5)[None, :])
    slopes = np.array([2.0**-4, 2.0**-8])  # 2^(-8i/h) for h = 2
    logits = logits - slopes[None, :, None, None] * distance
    logits = np.where(mask[:, None, None, :], logits, -np.inf)
    expected = np.exp(logits - logits.max(-1, keepdims=True))
    expected /= expected.sum(-1, keepdims=True)
    real = np.broadcast_to(mask[:, None, :, None] & mask[:, None, None, :], (2, heads, 5, 5))
    np.testing.assert_allclose(ops.convert_to_numpy(w)[real], expected[real], atol=1e-5)
    assert_attention_distribution(w, real)
    assert layer.get_config()["position_bias"] == "alibi"
    inputs = keras.Input((None, 8))
    model = keras.Model(inputs, MultiHeadAttention(2, 8, position_bias="alibi", name="mha")(inputs))
    assert_keras_round_trip(model, x, tmp_path)


def test_bad_arguments_are_rejected():
    with pytest.raises(ValueError, match="position_bias must be one of"):
        MultiHeadAttention(2, 8, position_bias="rope")
    with pytest.raises(ValueError, match="d_model must be divisible by num_heads"):
        MultiHeadAttention(num_heads=3, d_model=8)
    with pytest.raises(ValueError, match="num_heads must be a positive integer"):
        MultiHeadAttention(num_heads=0, d_model=8)
    with pytest.raises(ValueError, match="dropout"):
        MultiHeadAttention(2, 8, dropout=-0.5)
