"""Tests for hierattn.layers.LuongAttention."""

import keras
import numpy as np
import pytest
from keras import ops
from keras.src import testing

from hierattn.layers import LuongAttention

from layer_checks import (
    assert_attention_distribution,
    assert_keras_round_trip,
    random_mask,
    softmax_np,
)


def np_scores(layer, query, key):
    """NumPy versions of the three score functions."""
    q, k = query.astype("float64"), key.astype("float64")
    if layer.score_mode == "dot":
        return q @ k.transpose(0, 2, 1)
    w = layer.score_kernel.numpy().astype("float64")
    if layer.score_mode == "general":
        return q @ w @ k.transpose(0, 2, 1)
    dq = q.shape[-1]
    hidden = np.tanh((q @ w[:dq])[:, :, None, :] + (k @ w[dq:])[:, None, :, :])
    return hidden @ layer.score_vector.numpy().astype("float64")


class LuongLayerTest(testing.TestCase):
    def test_keras_layer_harness(self):
        for kwargs, trainable in [
            ({"score_mode": "dot"}, 0),
            ({"score_mode": "general"}, 1),
            ({"score_mode": "concat", "units": 3}, 2),
            ({"score_mode": "general", "window": 2, "local_mode": "local-p"}, 3),
            ({"score_mode": "dot", "window": 1, "local_mode": "local-m", "attentional_units": 5}, 1),
        ]:
            self.run_layer_test(
                LuongAttention,
                init_kwargs=kwargs,
                input_shape=((2, 3, 4), (2, 6, 4)),
                expected_output_shape=(2, 3, kwargs.get("attentional_units", 4)),
                expected_num_trainable_weights=trainable,
                supports_masking=True,
            )


@pytest.mark.parametrize("masked", [False, True])
def test_dot_matches_keras_attention(rng, masked):
    query = rng.normal(size=(3, 4, 5)).astype("float32")
    value = rng.normal(size=(3, 6, 5)).astype("float32")
    mask = [None, random_mask(rng, 3, 6, full_padding_row=False)] if masked else None
    ours, our_w = LuongAttention("dot")([query, value], mask=mask, return_attention_scores=True)
    theirs, their_w = keras.layers.Attention(score_mode="dot")([query, value], mask=mask, return_attention_scores=True)
    np.testing.assert_allclose(ours, theirs, atol=1e-5)
    np.testing.assert_allclose(our_w, their_w, atol=1e-5)


@pytest.mark.parametrize("score_mode", ["dot", "general", "concat"])
def test_global_scores_match_numpy(rng, score_mode):
    query = rng.normal(size=(2, 3, 4)).astype("float32")
    value = rng.normal(size=(2, 5, 4)).astype("float32")
    value_mask = random_mask(rng, 2, 5)
    layer = LuongAttention(score_mode, units=6)
    output, weights = layer([query, value], mask=[None, value_mask], return_attention_scores=True)
    ref_w = softmax_np(np_scores(layer, query, value), value_mask[:, None, :])
    np.testing.assert_allclose(weights, ref_w, atol=1e-5)
    np.testing.assert_allclose(output, ref_w @ value, atol=1e-5)
    assert_attention_distribution(weights, value_mask[:, None, :])


def test_local_m_attends_only_inside_the_window(rng):
    query = rng.normal(size=(2, 6, 4)).astype("float32")
    value = rng.normal(size=(2, 6, 4)).astype("float32")
    value_mask = np.array([[1] * 6, [1, 1, 1, 0, 0, 0]], bool)
    window = 1
    layer = LuongAttention("general", window=window, local_mode="local-m")
    _, weights = layer([query, value], mask=[None, value_mask], return_attention_scores=True)
    lengths = value_mask.sum(1)
    centre = np.minimum(np.arange(6)[None, :], (lengths - 1)[:, None])  # p_t = t, clipped
    allowed = (np.abs(np.arange(6)[None, None, :] - centre[:, :, None]) <= window) & value_mask[:, None, :]
    ref = softmax_np(np_scores(layer, query, value), allowed)
    np.testing.assert_allclose(weights, ref, atol=1e-5)
    assert_attention_distribution(weights, allowed)


def test_local_p_matches_gaussian_formula(rng):
    query = rng.normal(size=(2, 3, 4)).astype("float32")
    value = rng.normal(size=(2, 8, 4)).astype("float32")
    value_mask = np.array([[1] * 8, [1] * 5 + [0] * 3], bool)
    window = 2
    layer = LuongAttention("dot", window=window, local_mode="local-p", units=5)
    _, weights = layer([query, value], mask=[None, value_mask], return_attention_scores=True)
    wp, vp = layer.position_kernel.numpy(), layer.position_vector.numpy()
    last = value_mask.sum(1) - 1.0
    centre = last[:, None] / (1.0 + np.exp(-(np.tanh(query @ wp) @ vp)))  # S * sigmoid(...)
    distance = np.arange(8)[None, None, :] - centre[:, :, None]
    allowed = (np.abs(distance) <= window) & value_mask[:, None, :]
    align = softmax_np(np_scores(layer, query, value), allowed)
    gaussian = np.exp(-(distance**2) / (2 * (window / 2) ** 2))
    ref = align * gaussian
    ref = ref / ref.sum(-1, keepdims=True)  # renormalised (documented)
    np.testing.assert_allclose(weights, ref, atol=1e-5)
    assert_attention_distribution(weights, allowed)


def test_attentional_hidden_state(rng):
    query = rng.normal(size=(2, 3, 4)).astype("float32")
    value = rng.normal(size=(2, 5, 6)).astype("float32")
    layer = LuongAttention("general", attentional_units=7)
    output, weights = layer([query, value], return_attention_scores=True)
    context = ops.convert_to_numpy(weights) @ value
    ref = np.tanh(np.concatenate([context, query], -1) @ layer.attentional_kernel.numpy())
    assert output.shape == (2, 3, 7)
    np.testing.assert_allclose(output, ref, atol=1e-5)


def test_rank2_query_and_round_trip(rng, tmp_path):
    state = keras.Input((8,))
    tokens = keras.Input((6,), dtype="int32")
    embedded = keras.layers.Embedding(12, 8, mask_zero=True)(tokens)
    context, weights = LuongAttention("concat", window=2, local_mode="local-p", name="luong")(
        [state, embedded], return_attention_scores=True
    )
    model = keras.Model([state, tokens], [context, weights])
    ids = rng.integers(1, 12, size=(3, 6))
    ids[1, 3:] = 0
    states = rng.normal(size=(3, 8)).astype("float32")
    context_out, w = model([states, ids])
    assert context_out.shape == (3, 8) and w.shape == (3, 6)
    assert_attention_distribution(w, ids != 0)
    reloaded = assert_keras_round_trip(model, [states, ids], tmp_path)
    assert reloaded.get_layer("luong").get_config()["local_mode"] == "local-p"


def test_bad_arguments_are_rejected():
    with pytest.raises(ValueError, match="score_mode must be one of"):
        LuongAttention("cosine")
    with pytest.raises(ValueError, match="window must be None or an integer >= 0"):
        LuongAttention(window=-1)
    with pytest.raises(ValueError, match="local-p attention needs window >= 1"):
        LuongAttention(window=0, local_mode="local-p")
    with pytest.raises(ValueError, match="local_mode"):
        LuongAttention(window=2, local_mode="local-x")
    with pytest.raises(ValueError, match="same size"):
        LuongAttention("dot")([np.zeros((1, 2, 3), "float32"), np.zeros((1, 4, 5), "float32")])
