"""Tests for hierattn.explain.attributions: attention importance and gradient x input per token."""

import numpy as np
import pytest
import tensorflow as tf

from hierattn.explain.attributions import gradient_times_input, importance
from hierattn.models import build_han, build_rnn, build_transformer


def test_importance_is_word_times_sentence_weight_for_han_and_the_pooling_weights_otherwise():
    word = np.array([[[0.5, 0.5, 0.0], [1.0, 0.0, 0.0]]])  # (documents, sentences, words)
    sentence = np.array([[0.25, 0.75]])
    han = importance({"probabilities": np.array([[0.1, 0.9]]), "word_attention": word, "sentence_attention": sentence},
                     hierarchical=True)
    np.testing.assert_allclose(han, [[[0.125, 0.125, 0.0], [0.75, 0.0, 0.0]]])
    pooling = np.array([[0.2, 0.8, 0.0]])
    flat = importance({"probabilities": np.array([[0.3, 0.7]]), "pooling_attention": pooling}, hierarchical=False)
    np.testing.assert_array_equal(flat, pooling)
    np.testing.assert_allclose(importance({"word_attention": word[0], "sentence_attention": sentence[0]}, True),
                               han[0])  # one document


@pytest.mark.parametrize("builder, x", [
    (lambda: build_rnn(30, 2, embedding_dim=6, units=4), np.array([[3, 4, 3, 9, 0], [5, 6, 0, 0, 0]])),
    (lambda: build_han(30, 2, embedding_dim=6, word_units=4, sentence_units=4, attention_units=4),
     np.array([[[3, 4, 3], [9, 0, 0]], [[5, 6, 0], [0, 0, 0]]])),
    (lambda: build_transformer(30, 2, embedding_dim=8, num_heads=2, intermediate_dim=8, num_layers=1),
     np.array([[3, 4, 3, 9, 0], [5, 6, 0, 0, 0]])),
])
def test_gradient_times_input_matches_dense_embedding_gradient(builder, x):
    model = builder()
    classes = np.array([1, 0])
    scores = gradient_times_input(model, x, classes)
    assert scores.shape == x.shape
    assert np.all(scores[x == 0] == 0)
    layer = model.get_layer("embedding")
    variable = getattr(layer, "token_embedding", layer).embeddings
    table = variable.numpy()
    for i in range(len(x)):
        with tf.GradientTape() as tape:
            p = model(x[i : i + 1], training=False)[0, classes[i]]
        dense = tf.convert_to_tensor(tape.gradient(p, variable.value)).numpy()
        for token in set(x[i][x[i] != 0].tolist()):
            # the per-position scores of a token id add up to its dense gradient row . embedding
            expected = float(dense[token] @ table[token])
            assert scores[i][x[i] == token].sum() == pytest.approx(expected, rel=1e-4, abs=1e-7)
