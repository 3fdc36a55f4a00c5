"""Tests for hierattn.layers.TransformerEncoderBlock."""

import keras
import numpy as np
import pytest
from keras import ops
from keras.src import testing

from hierattn.layers import TransformerEncoderBlock

from layer_checks import assert_attention_distribution, assert_keras_round_trip, random_mask


class TransformerEncoderBlockLayerTest(testing.TestCase):
    def test_keras_layer_harness(self):
        for normalize_first in (False, True):
            self.run_layer_test(
                TransformerEncoderBlock,
                init_kwargs={
                    "num_heads": 2,
                    "intermediate_dim": 12,
                    "dropout": 0.1,
                    "normalize_first": normalize_first,
                },
                input_shape=(2, 5, 8),
                expected_output_shape=(2, 5, 8),
                # 8 attention + 4 feed-forward + 4 layer-norm weights
                expected_num_trainable_weights=16,
                supports_masking=True,
            )


@pytest.mark.parametrize("normalize_first", [False, True])
def test_padding_does_not_leak_into_real_positions(rng, normalize_first):
    x = rng.normal(size=(3, 6, 8)).astype("float32")
    mask = random_mask(rng, 3, 6, full_padding_row=False)
    block = TransformerEncoderBlock(num_heads=2, intermediate_dim=16, normalize_first=normalize_first)
    out, w = block(x, mask=mask, return_attention_scores=True)
    noisy = np.where(mask[..., None], x, 50.0 * rng.normal(size=x.shape)).astype("float32")
    out_noisy = block(noisy, mask=mask)
    real = np.broadcast_to(mask[..., None], x.shape)
    np.testing.assert_allclose(ops.convert_to_numpy(out)[real], ops.convert_to_numpy(out_noisy)[real], atol=1e-5)
    assert_attention_distribution(w, mask[:, None, :, None] & mask[:, None, None, :])


def test_post_norm_matches_hand_composition(rng):
    x = rng.normal(size=(2, 4, 8)).astype("float32")
    block = TransformerEncoderBlock(num_heads=2, intermediate_dim=16, dropout=0.0)
    out = block(x)
    h = block.attention_norm(x + block.attention(x, x))
    expected = block.ffn_norm(h + block.ffn_output(block.ffn_hidden(h)))
    np.testing.assert_allclose(out, expected, atol=1e-5)


def test_stack_with_mask_round_trip(rng, tmp_path):
    inputs = keras.Input((7,), dtype="int32")
    x = keras.layers.Embedding(30, 8, mask_zero=True)(inputs)
    x = TransformerEncoderBlock(2, 16, name="block1")(x)
    x, w = TransformerEncoderBlock(4, 16, normalize_first=True, name="block2")(x, return_attention_scores=True)
    model = keras.Model(inputs, [keras.layers.GlobalAveragePooling1D()(x), w])
    ids = rng.integers(1, 30, size=(3, 7))
    ids[2, 2:] = 0
    assert_keras_round_trip(model, ids, tmp_path, atol=1e-5)


def test_width_not_divisible_by_heads_is_rejected():
    with pytest.raises(ValueError, match="divisible by num_heads"):
        TransformerEncoderBlock(num_heads=3, intermediate_dim=8)(np.zeros((1, 2, 8), "float32"))
    with pytest.raises(ValueError, match="intermediate_dim"):
        TransformerEncoderBlock(num_heads=2, intermediate_dim=0)
