"""Tests for hierattn.ngrams.LogLinearCombination."""

import keras
import numpy as np
from keras.src import testing

from hierattn.ngrams.combination import LogLinearCombination

from layer_checks import assert_keras_round_trip


class LogLinearCombinationLayerTest(testing.TestCase):
    def test_keras_layer_harness(self):
        self.run_layer_test(
            LogLinearCombination,
            init_kwargs={},
            input_data={"probabilities": np.full((2, 3), 1 / 3, "float32"), "logits": np.zeros((2, 3), "float32")},
            call_kwargs={},
            expected_output_shape=(2, 3),
            expected_num_trainable_weights=0,
            expected_num_non_trainable_weights=1,
            run_training_check=False,
        )


def test_starts_as_the_network_alone(rng):
    p = rng.dirichlet(np.ones(4), size=5).astype("float32")
    out = np.asarray(LogLinearCombination()(p, rng.normal(size=(5, 4)).astype("float32")))
    np.testing.assert_allclose(out, p, rtol=1e-5)


def test_matches_numpy(rng):
    p = rng.dirichlet(np.ones(3), size=6).astype("float32")
    z = rng.normal(size=(6, 3)).astype("float32")
    layer = LogLinearCombination()
    layer.build()
    layer.mixing.assign([0.3, 0.7])
    scores = 0.3 * np.log(p) + 0.7 * z
    expected = np.exp(scores) / np.exp(scores).sum(axis=1, keepdims=True)
    np.testing.assert_allclose(np.asarray(layer(p, z)), expected, rtol=1e-5)
    zero = p.copy()
    zero[0] = [1.0, 0.0, 0.0]  # a probability of exactly 0 stays finite
    assert np.all(np.isfinite(np.asarray(layer(zero, z))))


def test_saves_and_loads(tmp_path, rng):
    p, z = keras.Input((3,)), keras.Input((3,))
    layer = LogLinearCombination()
    model = keras.Model([p, z], layer(p, z))
    layer.mixing.assign([0.4, 0.6])
    inputs = [rng.dirichlet(np.ones(3), size=2).astype("float32"), rng.normal(size=(2, 3)).astype("float32")]
    assert_keras_round_trip(model, inputs, tmp_path)


def test_docstring_example_runs():
    import doctest

    import hierattn.ngrams.combination as module

    result = doctest.testmod(module)
    assert result.attempted >= 4 and result.failed == 0


def test_a_sigmoid_combination_combines_each_label_on_its_log_odds(rng):
    from hierattn.ngrams.mixing import combine

    p = rng.uniform(0.01, 0.99, size=(6, 4)).astype("float32")
    z = rng.normal(size=(6, 4)).astype("float32")
    layer = LogLinearCombination(activation="sigmoid")
    layer.build()
    np.testing.assert_allclose(np.asarray(layer(p, z)), p, rtol=1e-4)  # a = 1, b = 0: the network alone
    layer.mixing.assign([0.3, 0.7])
    expected = 1 / (1 + np.exp(-(0.3 * np.log(p / (1 - p)) + 0.7 * z)))
    np.testing.assert_allclose(np.asarray(layer(p, z)), expected, rtol=1e-5)
    np.testing.assert_allclose(combine(p, z, 0.3, 0.7, activation="sigmoid"), expected, rtol=1e-5)
    edges = p.copy()
    edges[0, :2] = [0.0, 1.0]  # probabilities of exactly 0 and 1 stay finite
    assert np.all(np.isfinite(np.asarray(layer(edges, z))))
    config = layer.get_config()
    assert config["activation"] == "sigmoid"
    assert LogLinearCombination.from_config(config).activation == "sigmoid"


def test_refuses_an_unknown_activation():
    import pytest

    with pytest.raises(ValueError, match="activation must be"):
        LogLinearCombination(activation="relu")
