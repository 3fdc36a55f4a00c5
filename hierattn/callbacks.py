"""Keras callbacks of hierattn's training loop."""

import functools
import os
import time

import keras
import numpy as np

from hierattn.defaults import PROGRESS
from hierattn.errors import TrainingDiverged
from hierattn.utils.atomic import atomic_path


class StopOnNaN(keras.callbacks.Callback):
    """Stops training at the first batch whose loss is NaN or infinite.

    Like `keras.callbacks.TerminateOnNaN`, but it raises `TrainingDiverged` at
    once instead of letting the epoch end: the epoch's end callbacks never
    see the broken weights, so the checkpoints (`SaveWeights`) keep the last good epoch,
    no checkpoint is written from NaN weights, and the run stays unfinished.

    Args:
        output: The run directory, named in the error message.

    Example:

    ```python
    from hierattn.errors import TrainingDiverged

    model = keras.Sequential([keras.Input((1,)), keras.layers.Dense(1)])
    model.compile("sgd", "mse")
    x = np.array([[1.0], [np.nan]])
    try:
        model.fit(x, x, batch_size=1, verbose=0, callbacks=[StopOnNaN("runs/demo")])
    except TrainingDiverged as error:
        print(error)  # training diverged: the loss became nan at epoch 1, batch 2; ...
    ```
    """

    def __init__(self, output):
        super().__init__()
        self.output = output
        self.epoch = 0

    def on_epoch_begin(self, epoch, logs=None):
        self.epoch = epoch

    def on_train_batch_end(self, batch, logs=None):
        loss = (logs or {}).get("loss")
        if loss is None:
            return
        loss = float(np.asarray(loss))
        if not np.isfinite(loss):
            raise TrainingDiverged(
                f"training diverged: the loss became {loss} at epoch {self.epoch + 1}, batch {batch + 1}; "
                f"{self.output} stays unfinished"
                + (f", its last good epoch ({self.epoch}) kept" if self.epoch else "")
                + ". Try a lower {argument}.",
                argument="learning_rate",
            )


class SaveWeights(keras.callbacks.Callback):
    """Saves the model's weights to `path` at the end of each epoch, atomically; restores them to resume.

    Does the job of `keras.callbacks.BackupAndRestore` (without `monitor`:
    every epoch, loaded back at the start of training when `path` exists)
    or of `ModelCheckpoint(save_weights_only=True, save_best_only=True)`
    (with `monitor`: only epochs that lower it below `best`), but the file
    is written under a temporary name and moved into place
    (`hierattn.utils.atomic`): a full disk or a kill while saving leaves the
    previous file whole and no temporary file, never a truncated checkpoint.

    Args:
        path: A `.weights.h5` file.
        monitor: A metric to minimise (e.g. `"val_loss"`), or None.
        best: The best value so far (an earlier process's), or None.

    Example:

    ```python
    model = keras.Sequential([keras.Input((1,)), keras.layers.Dense(1)])
    model.compile("sgd", "mse")
    x = np.arange(8.0).reshape(-1, 1) / 8
    latest = SaveWeights("latest.weights.h5")  # every epoch; loaded back when fit starts again
    best = SaveWeights("best.weights.h5", monitor="val_loss")  # only epochs that lower val_loss
    model.fit(x, x, validation_split=0.25, epochs=2, verbose=0, callbacks=[latest, best])
    ```
    """

    def __init__(self, path, monitor=None, best=None):
        super().__init__()
        self.path = str(path)
        self.monitor = monitor
        self.best = best

    def on_train_begin(self, logs=None):
        if self.monitor is None and os.path.exists(self.path):
            optimizer = getattr(self.model, "optimizer", None)
            if optimizer is not None and not optimizer.built:  # so its saved state loads too, as BackupAndRestore does
                optimizer.build(self.model.trainable_variables)
            self.model.load_weights(self.path)

    def on_epoch_end(self, epoch, logs=None):
        if self.monitor is not None:
            value = (logs or {}).get(self.monitor)
            if value is None or not np.isfinite(value) or (self.best is not None and not value < self.best):
                return
            self.best = float(value)
        with atomic_path(self.path) as partial:
            self.model.save_weights(partial)


def early_stopping_state(values, patience):
    """Where early stopping on a loss stands after epochs whose values were `values`: what `ResumableEarlyStopping` resumes from.

    The rule of `keras.callbacks.EarlyStopping(mode="min", patience=patience)`:
    an epoch with a value below the best so far resets the wait; training
    stops at the first other epoch (not the first of all) once `patience`
    epochs have gone by without one.

    Args:
        values: The monitored value of each epoch, in order.
        patience: Epochs without improvement before stopping.

    Returns:
        `(best, best_epoch, wait, stopped)`: the lowest value (None without
        values) and its epoch, the epochs since, and whether training
        stopped (at or before the last epoch).

    Example:

    >>> early_stopping_state([0.5, 0.4, 0.45, 0.47], patience=2)
    (0.4, 1, 2, True)
    >>> early_stopping_state([0.5, 0.4, 0.45], patience=2)
    (0.4, 1, 1, False)
    """
    best, best_epoch, wait, stopped = None, 0, 0, False
    for epoch, value in enumerate(values):
        wait += 1
        if best is None or value < best:
            best, best_epoch, wait = value, epoch, 0
        elif wait >= patience and epoch > 0:
            stopped = True
    return best, best_epoch, wait, stopped


class ResumableEarlyStopping(keras.callbacks.EarlyStopping):
    """`keras.callbacks.EarlyStopping` on a loss that goes on from earlier epochs: a resumed run stops where one run through would.

    Keras's callback starts afresh at each `fit`, so a run resumed after an
    interruption would wait `patience` new epochs although the epochs before
    had already waited some. This one starts from the state the earlier
    epochs' values give (`early_stopping_state`); `restore_best_weights` is
    not supported (`RestoreBestWeights` does it across processes).

    Args:
        previous: The monitored values of the epochs before this `fit` (a
            resumed run's history).
        **kwargs: `keras.callbacks.EarlyStopping`'s arguments (`mode` is
            "min").

    Example:

    ```python
    model = keras.Sequential([keras.Input((1,)), keras.layers.Dense(1)])
    model.compile("sgd", "mse")
    x = np.arange(8.0).reshape(-1, 1) / 8
    before = [0.52, 0.47, 0.49]  # val_loss of the epochs trained before an interruption
    early_stopping = ResumableEarlyStopping(before, monitor="val_loss", patience=2)
    model.fit(x, x, validation_split=0.25, epochs=10, initial_epoch=3, verbose=0, callbacks=[early_stopping])
    # stopped after epoch 4 unless that epoch brought val_loss below 0.47
    ```
    """

    def __init__(self, previous=(), **kwargs):
        super().__init__(mode="min", **kwargs)
        self.previous = [float(value) for value in previous]

    def on_train_begin(self, logs=None):
        super().on_train_begin(logs)
        if self.previous:
            self.best, self.best_epoch, self.wait, _ = early_stopping_state(self.previous, self.patience)


class RestoreBestWeights(keras.callbacks.Callback):
    """At the end of training, loads the weights `SaveWeights(path, monitor=...)` wrote to `path`.

    Unlike `EarlyStopping(restore_best_weights=True)`, the best epoch may
    come from an earlier, interrupted process (a resumed run). Loading at
    `on_train_end` means whatever `fit` does after training (the n-gram part
    of a `TextClassifier`) starts from the best epoch.

    Args:
        path: The `.weights.h5` file of the best epoch (nothing happens if
            it does not exist).

    Example:

    ```python
    model = keras.Sequential([keras.Input((1,)), keras.layers.Dense(1)])
    model.compile("sgd", "mse")
    x = np.arange(8.0).reshape(-1, 1) / 8
    callbacks = [SaveWeights("best.weights.h5", monitor="val_loss"), RestoreBestWeights("best.weights.h5")]
    model.fit(x, x, validation_split=0.25, epochs=3, verbose=0, callbacks=callbacks)
    # the model now holds the weights of its epoch with the lowest val_loss
    ```
    """

    def __init__(self, path):
        super().__init__()
        self.path = str(path)

    def on_train_end(self, logs=None):
        if os.path.exists(self.path):
            self.model.load_weights(self.path)


class TimeBudget(keras.callbacks.Callback):
    """Stops training before an epoch that would end beyond a time budget.

    After each epoch, training stops (`model.stop_training = True`) when
    the time since training began plus the mean epoch time so far (the
    validation included) would exceed `seconds`: no epoch is begun that is
    expected to end beyond the budget, so training ends within it unless
    one epoch takes longer than the rest. The time is this `fit`'s: a
    resumed training has the whole budget again. Nothing is recorded when
    the last epoch ends, or when another callback stopped training first.

    Args:
        seconds: The budget, in seconds (a number above 0).

    Attributes:
        stopped: Whether this callback stopped training.
        stopped_epoch: The epoch (counted from 0, as Keras's
            `EarlyStopping` counts) after which it stopped, or `None`.

    Example:

    ```python
    model = keras.Sequential([keras.Input((1,)), keras.layers.Dense(1)])
    model.compile("sgd", "mse")
    x = np.arange(8.0).reshape(-1, 1) / 8
    budget = TimeBudget(1e-6)  # far too short for a second epoch
    history = model.fit(x, x, epochs=5, verbose=0, callbacks=[budget])
    print(len(history.epoch), budget.stopped, budget.stopped_epoch)  # 1 True 0
    ```
    """

    def __init__(self, seconds):
        super().__init__()
        self.seconds = seconds
        self.stopped = False
        self.stopped_epoch = None
        self._started = None
        self._epochs = 0

    def on_train_begin(self, logs=None):
        self._started = time.perf_counter()
        self._epochs = 0
        self.stopped, self.stopped_epoch = False, None

    def on_epoch_end(self, epoch, logs=None):
        self._epochs += 1
        elapsed = time.perf_counter() - self._started
        last = epoch + 1 >= self.params.get("epochs", float("inf"))
        if last or self.model.stop_training or elapsed + elapsed / self._epochs <= self.seconds:
            return
        self.model.stop_training = True
        self.stopped, self.stopped_epoch = True, epoch


class ProgressLines(keras.callbacks.Callback):
    """Progress within each epoch as whole lines, for output to a file (Keras's `verbose=2` writes one line per epoch).

    A line at each tenth of an epoch's steps and at least every
    `hierattn.defaults.PROGRESS["log_seconds"]`, so that a log is never silent
    for minutes while a long epoch runs, without the hundreds of carriage
    returns of a progress bar.

    Args:
        print_fn: Where lines go (default: `print`, standard output as
            Keras's own lines).

    Example:

    ```python
    model = keras.Sequential([keras.Input((1,)), keras.layers.Dense(1)])
    model.compile("sgd", "mse")
    x = np.arange(40.0).reshape(-1, 1) / 40
    model.fit(x, x, batch_size=4, verbose=0, callbacks=[ProgressLines()])
    # epoch 1/1: 1/10 steps (10%), 0 s, loss 0.2311  ... a line per tenth but the last
    ```
    """

    def __init__(self, print_fn=None):
        super().__init__()
        self.print_fn = print_fn or functools.partial(print, flush=True)
        self._epoch = 0
        self._started = self._shown_at = 0.0
        self._tenth = 0

    def on_epoch_begin(self, epoch, logs=None):
        self._epoch = epoch
        self._started = self._shown_at = time.monotonic()
        self._tenth = 0

    def on_train_batch_end(self, batch, logs=None):
        steps, now = self.params.get("steps"), time.monotonic()
        if steps and batch + 1 >= steps:  # the epoch's own line (Keras's) follows
            return
        tenth = 10 * (batch + 1) // steps if steps else self._tenth
        if tenth == self._tenth and now - self._shown_at < PROGRESS["log_seconds"]:
            return
        self._tenth, self._shown_at = tenth, now
        done = f"{batch + 1}/{steps} steps ({100 * (batch + 1) // steps}%)" if steps else f"{batch + 1} steps"
        loss = (logs or {}).get("loss")
        loss = f", loss {float(np.asarray(loss)):.4f}" if loss is not None else ""
        epochs = self.params.get("epochs")
        self.print_fn(f"epoch {self._epoch + 1}/{epochs}: {done}, {now - self._started:.0f} s{loss}")
