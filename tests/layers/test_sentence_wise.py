"""Tests for hierattn.layers.SentenceWise."""

import keras
import numpy as np
from keras import ops

from hierattn.layers import SentenceWise

from layer_checks import assert_keras_round_trip


def test_matches_time_distributed_with_masks(rng):
    ids = rng.integers(1, 20, size=(3, 4, 6))
    ids[0, 2:] = 0  # empty sentences
    ids[1, 1, 3:] = 0
    inputs = keras.Input((None, None), dtype="int32")
    embedded = keras.layers.Embedding(20, 5, mask_zero=True)(inputs)
    gru = keras.layers.Bidirectional(keras.layers.GRU(4, return_sequences=True))
    folded = SentenceWise(gru)(embedded)
    model = keras.Model(inputs, folded)
    reference = keras.Model(inputs, keras.layers.TimeDistributed(gru)(embedded))
    np.testing.assert_allclose(model(ids), reference(ids[:, :, :]), atol=1e-6)
    # Any number of sentences and words works with the same model.
    assert model(ids[:, :2, :5]).shape == (3, 2, 5, 8)


def test_masks_are_passed_or_reduced():
    x = np.zeros((2, 3, 4, 5), "float32")
    mask = np.ones((2, 3, 4), bool)
    mask[0, 1] = False
    keep = SentenceWise(keras.layers.Dense(2))
    keep(x)
    np.testing.assert_array_equal(ops.convert_to_numpy(keep.compute_mask(x, mask)), mask)
    reduce = SentenceWise(keras.layers.GRU(2))
    out = reduce(x, mask=mask)
    assert out.shape == (2, 3, 2)
    np.testing.assert_array_equal(ops.convert_to_numpy(reduce.compute_mask(x, mask)), mask.any(-1))
    assert keep.compute_mask(x, None) is None


def test_round_trip(rng, tmp_path):
    inputs = keras.Input((None, None), dtype="int32")
    x = keras.layers.Embedding(10, 4, mask_zero=True)(inputs)
    x = SentenceWise(keras.layers.Bidirectional(keras.layers.GRU(3, return_sequences=True)), name="words")(x)
    model = keras.Model(inputs, x)
    assert_keras_round_trip(model, rng.integers(0, 10, size=(2, 3, 4)), tmp_path)


def test_rank_check():
    import pytest

    with pytest.raises(ValueError, match="SentenceWise expects"):
        SentenceWise(keras.layers.Dense(2)).build((4, 5))
