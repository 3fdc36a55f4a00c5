"""Tests for hierattn.layers.TokenAndPositionEmbedding."""

import math

import keras
import numpy as np
import pytest
from keras import ops
from keras.src import testing

from hierattn.layers import TokenAndPositionEmbedding
from hierattn.layers.positional_encoding import sinusoidal_table

from layer_checks import assert_keras_round_trip


class TokenAndPositionEmbeddingLayerTest(testing.TestCase):
    def test_keras_layer_harness(self):
        for kwargs, trainable in [
            ({"vocabulary_size": 20, "embedding_dim": 6}, 1),
            ({"vocabulary_size": 20, "embedding_dim": 6, "sequence_length": 8, "position": "learned"}, 2),
        ]:
            self.run_layer_test(
                TokenAndPositionEmbedding,
                init_kwargs=kwargs,
                input_data=np.array([[1, 2, 3, 0], [4, 0, 0, 0]], "int32"),
                expected_output_shape=(2, 4, 6),
                expected_num_trainable_weights=trainable,
                supports_masking=True,
                run_training_check=False,  # the harness's toy loss has no float input to train
            )


def test_sinusoidal_values_and_mask():
    layer = TokenAndPositionEmbedding(10, 4)
    ids = np.array([[1, 5, 0]])
    out = ops.convert_to_numpy(layer(ids))
    table = layer.token_embedding.embeddings.numpy()
    expected = table[ids[0]] * math.sqrt(4) + ops.convert_to_numpy(sinusoidal_table(3, 4))
    np.testing.assert_allclose(out[0], expected, atol=1e-5)
    np.testing.assert_array_equal(ops.convert_to_numpy(layer.compute_mask(ids)), [[True, True, False]])


def test_scale_multiplies_the_token_embeddings_and_round_trips(tmp_path):
    inputs = keras.Input((None,), dtype="int32")
    layer = TokenAndPositionEmbedding(10, 4, scale=0.5, name="embed")
    model = keras.Model(inputs, layer(inputs))
    ids = np.array([[3, 7, 2]])
    table = layer.token_embedding.embeddings.numpy()
    expected = table[ids[0]] * 0.5 + ops.convert_to_numpy(sinusoidal_table(3, 4))
    np.testing.assert_allclose(ops.convert_to_numpy(model(ids))[0], expected, atol=1e-6)
    assert layer.token_scale == 0.5 and TokenAndPositionEmbedding(10, 16).token_scale == 4.0
    assert_keras_round_trip(model, ids, tmp_path)


def test_learned_positions_and_round_trip(tmp_path):
    inputs = keras.Input((5,), dtype="int32")
    layer = TokenAndPositionEmbedding(12, 4, sequence_length=5, position="learned", name="embed")
    model = keras.Model(inputs, layer(inputs))
    ids = np.array([[3, 4, 0, 0, 0], [1, 2, 3, 4, 5]])
    out = ops.convert_to_numpy(model(ids))
    tokens = layer.token_embedding.embeddings.numpy()
    positions = layer.position_embedding.embeddings.numpy()
    np.testing.assert_allclose(out[1], tokens[ids[1]] + positions[:5], atol=1e-6)
    assert_keras_round_trip(model, ids, tmp_path)


def test_bad_arguments_are_rejected():
    with pytest.raises(ValueError, match="position='learned' needs sequence_length"):
        TokenAndPositionEmbedding(10, 4, position="learned")
    with pytest.raises(ValueError, match="position must be one of"):
        TokenAndPositionEmbedding(10, 4, position="rotary")
    with pytest.raises(ValueError, match="scale must be positive"):
        TokenAndPositionEmbedding(10, 4, scale=0)
    with pytest.raises(ValueError, match="vocabulary_size"):
        TokenAndPositionEmbedding(0, 4)
    with pytest.raises(ValueError, match="position must be one of"):
        TokenAndPositionEmbedding(10, 4, position="none")
