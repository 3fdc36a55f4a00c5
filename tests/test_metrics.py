"""Tests for hierattn.metrics."""

import keras
import numpy as np
import pytest

from hierattn.metrics import ExamplesSeen, classification_metrics


def test_examples_seen_counts_rows_until_reset():
    metric = ExamplesSeen()
    metric.update_state(np.zeros((5, 2)), np.zeros((5, 2)))
    metric.update_state(np.zeros((3, 2)), np.zeros((3, 2)))
    assert float(metric.result()) == 8
    metric.reset_state()
    assert float(metric.result()) == 0


def test_examples_seen_round_trips_and_counts_an_epoch_in_fit():
    restored = keras.metrics.deserialize(keras.metrics.serialize(ExamplesSeen(name="seen")))
    assert isinstance(restored, ExamplesSeen) and restored.name == "seen"
    model = keras.Sequential([keras.Input((3,)), keras.layers.Dense(2, activation="softmax")])
    model.compile("sgd", "categorical_crossentropy", metrics=[ExamplesSeen()])
    x, y = np.zeros((37, 3)), np.eye(2)[np.arange(37) % 2]
    history = model.fit(x, y, batch_size=8, epochs=2, validation_data=(x[:5], y[:5]), verbose=0)
    assert history.history["examples"] == [37.0, 37.0]
    assert history.history["val_examples"] == [5.0, 5.0]


def test_metrics_on_a_known_case():
    metrics = classification_metrics([0, 0, 1, 1, 2], [0, 1, 1, 1, 0], ["a", "b", "c"])
    assert metrics["accuracy"] == pytest.approx(0.6)
    assert metrics["confusion_matrix"] == [[1, 1, 0], [0, 2, 0], [1, 0, 0]]
    # F1: a = 0.5, b = 0.8, c = 0 -> macro 0.4333
    assert metrics["macro_f1"] == pytest.approx((0.5 + 0.8 + 0.0) / 3)
    assert metrics["report"]["b"]["recall"] == 1.0 and metrics["documents"] == 5
