"""Tests for hierattn.explain.attributions: gradient x input and integrated gradients per token."""

import keras
import numpy as np
import pytest
import tensorflow as tf

from hierattn.explain.attributions import gradient_times_input, integrated_gradients
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


def reference_integrated_gradients(model, x, classes, versus, points=200):
    """Integrated gradients per token id, by moving the whole embedding table (the midpoint rule, many points).

    The gradient at each point is one traced function's call: the same sums as eager calls, in a fraction of the time.
    """
    variable = model.token_embedding.embeddings
    table = variable.numpy()
    delta = table - table[0]

    @tf.function
    def gradient(alpha):
        variable.assign(table[0] + alpha * delta)
        with tf.GradientTape() as tape:
            log_p = tf.math.log(model(x, training=False))
            margin = tf.reduce_sum(log_p[0, classes[0]] - log_p[0, versus[0]])
        return tf.convert_to_tensor(tape.gradient(margin, variable.value))

    total = np.zeros(table.shape, np.float32)
    try:
        for alpha in (np.arange(points) + 0.5) / points:
            total += gradient(tf.constant(alpha, tf.float32)).numpy() / points
    finally:
        variable.assign(table)
    return {token: float(total[token] @ delta[token]) for token in set(x[x != 0].tolist())}


@pytest.mark.parametrize(
    "builder, x, factor",
    [
        (lambda: RNNBackbone(12, 3, embedding_dim=6, units=4), np.array([[3, 4, 3, 9, 2, 5, 6, 7, 8, 10, 11, 0]]), 3.0),
        (
            lambda: HANBackbone(12, 3, embedding_dim=6, word_units=4, sentence_units=4, attention_units=4),
            np.array([[[3, 4, 3], [9, 2, 5], [6, 7, 8], [10, 11, 0]]]),
            3.0,
        ),
        (
            lambda: TransformerBackbone(12, 3, embedding_dim=8, num_heads=2, intermediate_dim=8, num_layers=1),
            np.array([[3, 4, 3, 9, 2, 5, 6, 7, 8, 10, 11, 0]]),
            1.0,  # with layer normalisation, larger weights make the path too steep for a small test
        ),
    ],
)
def test_integrated_gradients_match_a_reference_and_are_complete(builder, x, factor):
    keras.utils.set_random_seed(0)
    model = builder()
    for layer in model.layers:  # larger weights, so the margin is far from linear in the embeddings
        for weight in layer.weights:
            weight.assign(weight.numpy() * factor)
    probabilities = model(x, training=False).numpy()
    classes, versus = probabilities.argmax(1), probabilities.argmin(1)
    # 10 distinct words in a vocabulary of 12: each call holds one point of the path, so the points go in 10+ calls
    scores, margin, baseline = integrated_gradients(model, x, classes, versus, scale=2.0, steps=8, tolerance=1e-3)
    assert scores.shape == x.shape and np.all(scores[x == 0] == 0)
    expected = 2.0 * (np.log(probabilities[0, classes[0]]) - np.log(probabilities[0, versus[0]]))
    assert margin[0] == pytest.approx(expected, rel=1e-5)
    assert scores.sum() == pytest.approx(margin[0] - baseline[0], rel=1e-3, abs=1e-3)  # completeness
    for token, value in reference_integrated_gradients(model, x, classes, versus).items():
        assert 2.0 * value == pytest.approx(scores[x == token].sum(), rel=2e-2, abs=1e-3)  # kinks (ReLU): both err


def test_integrated_gradients_under_mixed_precision_are_complete():
    keras.utils.set_random_seed(0)
    model = RNNBackbone(12, 3, embedding_dim=8, units=4, dtype="mixed_float16")  # float16 compute, float32 weights
    x = np.array([[3, 4, 3, 9, 2, 5, 0]])
    probabilities = model(x, training=False).numpy()
    classes, versus = probabilities.argmax(1), probabilities.argmin(1)
    scores, margin, baseline = integrated_gradients(model, x, classes, versus, steps=8, tolerance=0.01)
    assert scores.dtype == np.float32 and np.all(scores[x == 0] == 0)
    assert scores.sum() == pytest.approx(margin[0] - baseline[0], rel=0.01, abs=1e-3)
    assert keras.config.dtype_policy().name == "float32"  # nothing process-wide changed


@pytest.mark.parametrize(
    "builder, x",
    [
        (
            lambda: RNNBackbone(30, 3, embedding_dim=6, units=4, activation="sigmoid"),
            np.array([[3, 4, 3, 9, 0], [5, 6, 0, 0, 0]]),
        ),
        (
            lambda: HANBackbone(
                30, 3, embedding_dim=6, word_units=4, sentence_units=4, attention_units=4, activation="sigmoid"
            ),
            np.array([[[3, 4, 3], [9, 0, 0]], [[5, 6, 0], [0, 0, 0]]]),
        ),
    ],
)
def test_integrated_gradients_of_a_sigmoid_output_s_log_odds_are_complete(builder, x):
    model = builder()
    classes = np.array([2, 0])
    scores, margins, baselines = integrated_gradients(model, x, classes, classes, scale=0.7, odds=True, steps=32)
    p = np.asarray(model(x, training=False), dtype=np.float64)[np.arange(len(x)), classes]
    np.testing.assert_allclose(margins, 0.7 * (np.log(p) - np.log(1 - p)), atol=1e-4)  # the label's log-odds
    np.testing.assert_allclose(scores.reshape(len(x), -1).sum(1), margins - baselines, atol=1e-3)  # completeness
    assert np.all(scores[x == 0] == 0)
    # another label of the same texts is another function: other scores
    others = (classes + 1) % 3
    other, _, _ = integrated_gradients(model, x, others, others, scale=0.7, odds=True, steps=32)
    assert not np.allclose(other, scores)
