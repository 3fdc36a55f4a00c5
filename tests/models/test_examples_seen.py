"""Tests for hierattn.models.examples_seen."""

import keras
import numpy as np

from hierattn.models.examples_seen import ExamplesSeen


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
