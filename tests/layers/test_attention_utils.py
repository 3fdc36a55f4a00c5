"""Tests for hierattn.layers._attention_utils (masked softmax, input parsing)."""

import keras
import numpy as np
import pytest
from keras import ops

from hierattn.layers import _attention_utils as utils

from layer_checks import assert_attention_distribution, softmax_np


def test_masked_softmax_matches_reference_and_zeroes_padding(rng):
    scores = rng.normal(size=(3, 4, 6)).astype("float32")
    mask = np.ones((3, 4, 6), bool)
    mask[0, :, 4:] = False
    mask[1, 2, :] = False  # a fully padded row
    weights = ops.convert_to_numpy(utils.masked_softmax(scores, mask))
    assert_attention_distribution(weights, mask)
    np.testing.assert_allclose(weights, softmax_np(scores, mask), atol=1e-6)


def test_masked_softmax_float16_is_finite_for_extreme_scores():
    scores = np.array([[60000.0, -60000.0, 0.0], [1.0, 2.0, 3.0]], dtype="float16")
    mask = np.array([[True, True, False], [False, False, False]])
    weights = utils.masked_softmax(ops.convert_to_tensor(scores), mask)
    assert keras.backend.standardize_dtype(weights.dtype) == "float16"
    weights = ops.convert_to_numpy(weights).astype("float32")
    np.testing.assert_array_equal(weights, [[1.0, 0.0, 0.0], [0.0, 0.0, 0.0]])


def test_masked_softmax_without_mask_is_plain_softmax(rng):
    scores = rng.normal(size=(2, 5)).astype("float32")
    weights = ops.convert_to_numpy(utils.masked_softmax(scores))
    np.testing.assert_allclose(weights, softmax_np(scores), atol=1e-6)


def test_unpack_inputs_and_masks():
    q, v = np.zeros((1, 2, 3)), np.ones((1, 4, 3))
    query, value, key = utils.unpack_inputs([q, v], "X")
    assert key is value
    assert utils.unpack_inputs((2, 5, 8), "X", allow_single=True) == ((2, 5, 8),) * 3
    with pytest.raises(ValueError, match=r"list \[query, value\]"):
        utils.unpack_inputs(q, "X")
    with pytest.raises(ValueError, match="2 or 3 tensors"):
        utils.unpack_inputs([q], "X")
    qm, vm = utils.unpack_masks([None, np.array([[1, 0, 1, 1]])])
    assert qm is None and ops.convert_to_numpy(vm).tolist() == [[True, False, True, True]]
    qm, vm = utils.unpack_masks([None, np.array([[1, 1, 1, 0]], bool), np.array([[0, 1, 1, 1]], bool)])
    assert ops.convert_to_numpy(vm).tolist() == [[False, True, True, False]]


@pytest.mark.parametrize("bad", [-0.1, 1.0, 2])
def test_check_dropout_rejects_out_of_range(bad):
    with pytest.raises(ValueError, match="dropout"):
        utils.check_dropout(bad)


def test_single_position_gets_all_the_weight_without_warnings(recwarn):
    scores = np.array([[[2.5]], [[-1.0]]], dtype="float32")
    mask = np.array([[[True]], [[False]]])
    weights = ops.convert_to_numpy(utils.masked_softmax(scores, mask))
    np.testing.assert_array_equal(weights, [[[1.0]], [[0.0]]])
    np.testing.assert_array_equal(ops.convert_to_numpy(utils.masked_softmax(scores)), [[[1.0]], [[1.0]]])
    assert not [w for w in recwarn if "softmax" in str(w.message)]
