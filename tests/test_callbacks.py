"""Tests for hierattn.callbacks: stopping at the first NaN loss, before the epoch ends; restoring the best epoch;
stopping within a time budget."""

import types

import keras
import numpy as np
import pytest

import hierattn.callbacks
from hierattn.callbacks import ProgressLines, RestoreBestWeights, StopOnNaN, TimeBudget
from hierattn.defaults import PROGRESS
from hierattn.errors import TrainingDiverged


class EpochEnds(keras.callbacks.Callback):
    def __init__(self):
        super().__init__()
        self.ended = []

    def on_epoch_end(self, epoch, logs=None):
        self.ended.append(epoch)


def test_raises_at_the_first_nan_batch_before_any_epoch_end_callback_runs():
    x = np.ones((8, 2), np.float32)
    y = np.array([1.0, 1.0, 1.0, np.nan, 1.0, 1.0, 1.0, 1.0], np.float32)  # batch 2 of epoch 2 turns the mean NaN
    model = keras.Sequential([keras.Input((2,)), keras.layers.Dense(1)])
    model.compile("sgd", "mse")
    ends = EpochEnds()
    model.fit(x[:3], y[:3], batch_size=2, epochs=1, verbose=0, callbacks=[StopOnNaN("run"), ends])
    with pytest.raises(
        TrainingDiverged,
        match=r"^training diverged: the loss became nan at epoch 1, batch 2; run stays "
        r"unfinished\. Try a lower learning_rate\.$",
    ) as diverged:
        model.fit(x, y, batch_size=2, epochs=2, verbose=0, callbacks=[StopOnNaN("run"), ends])
    assert diverged.value.naming("--learning-rate").endswith("Try a lower --learning-rate.")
    assert ends.ended == [0]  # only the first, clean fit ended an epoch


def test_names_the_last_good_epoch():
    callback = StopOnNaN("out")
    callback.on_epoch_begin(3)
    with pytest.raises(
        TrainingDiverged, match=r"epoch 4, batch 7; out stays unfinished, its last good epoch \(3\) kept"
    ):
        callback.on_train_batch_end(6, {"loss": float("inf")})
    callback.on_train_batch_end(7, {"loss": 0.5})  # a finite loss passes


def test_restore_best_weights_loads_the_checkpoint_when_training_ends(tmp_path):
    x, y = np.ones((8, 2), np.float32), np.ones((8, 1), np.float32)
    model = keras.Sequential([keras.Input((2,)), keras.layers.Dense(1)])
    model.compile("sgd", "mse")
    best = tmp_path / "best.weights.h5"
    model.fit(x, y, epochs=1, verbose=0, callbacks=[RestoreBestWeights(best)])  # no checkpoint yet: nothing happens
    model.save_weights(best)
    saved = [w.copy() for w in model.get_weights()]
    model.fit(x, y, epochs=3, verbose=0, callbacks=[RestoreBestWeights(best)])
    for got, expected in zip(model.get_weights(), saved):
        np.testing.assert_array_equal(got, expected)


def test_save_weights_keeps_the_best_epoch_atomically_and_restores_the_latest_with_the_optimizer(tmp_path):
    from hierattn.callbacks import SaveWeights

    x, y = np.ones((8, 2), np.float32), np.ones((8, 1), np.float32)
    model = keras.Sequential([keras.Input((2,)), keras.layers.Dense(1)])
    model.compile(keras.optimizers.Adam(0.1), "mse")
    latest, best = tmp_path / "latest.weights.h5", tmp_path / "best.weights.h5"
    model.fit(
        x,
        y,
        validation_data=(x, y),
        epochs=2,
        verbose=0,
        callbacks=[SaveWeights(latest), SaveWeights(best, monitor="val_loss", best=-1.0)],
    )
    assert sorted(p.name for p in tmp_path.iterdir()) == ["latest.weights.h5"]  # no epoch beat -1, no temporary file
    trained = [w.copy() for w in model.get_weights()]
    moments = [v.numpy().copy() for v in model.optimizer.variables]

    fresh = keras.Sequential([keras.Input((2,)), keras.layers.Dense(1)])
    fresh.compile(keras.optimizers.Adam(0.1), "mse")
    callback = SaveWeights(latest)
    callback.set_model(fresh)
    callback.on_train_begin()  # resuming: the latest epoch's weights and Adam's state come back
    for got, expected in zip(fresh.get_weights(), trained):
        np.testing.assert_array_equal(got, expected)
    for got, expected in zip(fresh.optimizer.variables, moments):
        np.testing.assert_array_equal(got.numpy(), expected)


class TenSecondEpochs(keras.callbacks.Callback):
    """A clock for `hierattn.callbacks` on which each epoch takes 10 s; it stops training after `stop_after` epochs."""

    def __init__(self, stop_after=None):
        super().__init__()
        self.now, self.stop_after = 0.0, stop_after

    def on_epoch_end(self, epoch, logs=None):
        self.now += 10.0
        if self.stop_after is not None and epoch + 1 >= self.stop_after:
            self.model.stop_training = True


@pytest.mark.parametrize(
    "seconds, epochs, stop_after, trained, stopped_epoch",
    [
        (35, 10, None, 3, 2),  # after 3 epochs (30 s), a 4th would end at 40 s
        (40, 10, None, 4, 3),  # a 5th would end at 50 s: the budget is not exceeded by ending on it
        (35, 3, None, 3, None),  # the 3rd epoch is the last anyway: nothing to stop
        (35, 10, 2, 2, None),  # another callback stopped training first
    ],
)
def test_time_budget_begins_no_epoch_that_would_end_beyond_it(
    monkeypatch, seconds, epochs, stop_after, trained, stopped_epoch
):
    clock = TenSecondEpochs(stop_after)
    monkeypatch.setattr(hierattn.callbacks, "time", types.SimpleNamespace(perf_counter=lambda: clock.now))
    x, y = np.ones((8, 2), np.float32), np.ones((8, 1), np.float32)
    model = keras.Sequential([keras.Input((2,)), keras.layers.Dense(1)])
    model.compile("sgd", "mse")
    budget = TimeBudget(seconds)
    history = model.fit(x, y, epochs=epochs, verbose=0, callbacks=[clock, budget])
    assert len(history.epoch) == trained
    assert (budget.stopped, budget.stopped_epoch) == (stopped_epoch is not None, stopped_epoch)


def test_progress_lines_say_each_tenth_of_an_epoch_but_the_last_and_the_loss():
    model = keras.Sequential([keras.Input((1,)), keras.layers.Dense(1)])
    model.compile("sgd", "mse")
    x = np.arange(40.0).reshape(-1, 1) / 40
    lines = []
    model.fit(x, x, batch_size=2, epochs=2, verbose=0, callbacks=[ProgressLines(lines.append)])
    assert len(lines) == 18  # 20 steps an epoch: a line at each tenth (2, 4, ..., 18), the 20th is Keras's own
    assert lines[0].startswith("epoch 1/2: 2/20 steps (10%), ") and ", loss " in lines[0]
    assert lines[-1].startswith("epoch 2/2: 18/20 steps (90%), ")


def test_progress_lines_also_come_every_log_seconds_between_tenths(monkeypatch):
    monkeypatch.setitem(PROGRESS, "log_seconds", 0)  # every step is "30 s later"
    model = keras.Sequential([keras.Input((1,)), keras.layers.Dense(1)])
    model.compile("sgd", "mse")
    x = np.arange(40.0).reshape(-1, 1) / 40
    lines = []
    model.fit(x, x, batch_size=1, epochs=1, verbose=0, callbacks=[ProgressLines(lines.append)])
    assert [line.split(":")[1].split(" steps")[0].strip() for line in lines] == [f"{i}/40" for i in range(1, 40)]
