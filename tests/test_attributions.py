"""Tests for hierattn.explain.attributions: gradient x input per token."""

import numpy as np
import pytest
import tensorflow as tf

from hierattn.explain.attributions import gradient_times_input
from hierattn.models import HANBackbone, RNNBackbone, TransformerBackbone


@pytest.mark.parametrize(
    "builder, x",
    [
        (lambda: RNNBackbone(30, 2, embedding_dim=6, units=4), np.array([[3, 4, 3, 9, 0], [5, 6, 0, 0, 0]])),
        (
            lambda: HANBackbone(30, 2, embedding_dim=6, word_units=4, sentence_units=4, attention_units=4),
            np.array([[[3, 4, 3], [9, 0, 0]], [[5, 6, 0], [0, 0, 0]]]),
        ),
        (
            lambda: TransformerBackbone(30, 2, embedding_dim=8, num_heads=2, intermediate_dim=8, num_layers=1),
            np.array([[3, 4, 3, 9, 0], [5, 6, 0, 0, 0]]),
        ),
    ],
)
def test_gradient_times_input_matches_dense_embedding_gradient(builder, x):
    model = builder()
    classes = np.array([1, 0])
    scores = gradient_times_input(model, x, classes)
    assert scores.shape == x.shape
    assert np.all(scores[x == 0] == 0)
    variable = model.token_embedding.embeddings
    table = variable.numpy()
    for i in range(len(x)):
        with tf.GradientTape() as tape:
            p = model(x[i : i + 1], training=False)[0, classes[i]]
        dense = tf.convert_to_tensor(tape.gradient(p, variable.value)).numpy()
        for token in set(x[i][x[i] != 0].tolist()):
            # the per-position scores of a token id add up to its dense gradient row . embedding
            expected = float(dense[token] @ table[token])
            assert scores[i][x[i] == token].sum() == pytest.approx(expected, rel=1e-4, abs=1e-7)
