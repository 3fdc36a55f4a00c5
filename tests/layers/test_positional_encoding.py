"""Tests for hierattn.layers.PositionalEncoding."""

import keras
import numpy as np
import pytest
from keras import ops
from keras.src import testing

from hierattn.layers import PositionalEncoding
from hierattn.layers.positional_encoding import sinusoidal_table

from layer_checks import assert_keras_round_trip


def numpy_table(length, dim, wavelength=10000.0):
    pe = np.zeros((length, dim))
    for pos in range(length):
        for i in range(0, dim, 2):
            pe[pos, i] = np.sin(pos / wavelength ** (i / dim))
            if i + 1 < dim:
                pe[pos, i + 1] = np.cos(pos / wavelength ** (i / dim))
    return pe


class PositionalEncodingLayerTest(testing.TestCase):
    def test_keras_layer_harness(self):
        self.run_layer_test(
            PositionalEncoding,
            init_kwargs={"max_wavelength": 1000},
            input_shape=(2, 7, 6),
            expected_output_shape=(2, 7, 6),
            expected_num_trainable_weights=0,
            supports_masking=True,
        )


@pytest.mark.parametrize("dim", [6, 7])
def test_table_matches_paper_formula(dim):
    np.testing.assert_allclose(ops.convert_to_numpy(sinusoidal_table(11, dim)), numpy_table(11, dim), atol=1e-5)


def test_adds_encoding_and_passes_mask(rng, tmp_path):
    x = rng.normal(size=(2, 5, 4)).astype("float32")
    out = PositionalEncoding(max_wavelength=100)(x)
    np.testing.assert_allclose(out, x + numpy_table(5, 4, 100.0), atol=1e-5)
    inputs = keras.Input((5,), dtype="int32")
    encoded = PositionalEncoding()(keras.layers.Embedding(9, 4, mask_zero=True)(inputs))
    assert encoded._keras_mask is not None
    model = keras.Model(inputs, encoded)
    assert_keras_round_trip(model, np.array([[1, 2, 3, 0, 0]]), tmp_path)


def test_bad_arguments_are_rejected():
    with pytest.raises(ValueError, match="max_wavelength"):
        PositionalEncoding(max_wavelength=0)
