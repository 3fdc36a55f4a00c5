"""Keras callbacks of hierattn's training loop."""

import keras
import numpy as np

from hierattn.errors import TrainingDiverged


class StopOnNaN(keras.callbacks.Callback):
    """Stops training at the first batch whose loss is NaN or infinite.

    Like `keras.callbacks.TerminateOnNaN`, but it raises `TrainingDiverged` at
    once instead of letting the epoch end: the epoch's end callbacks never
    see the broken weights, so `BackupAndRestore` keeps the last good epoch,
    no checkpoint is written from NaN weights, and the run stays unfinished.

    Args:
        output: The run directory, named in the error message.
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
                + ". Try a lower --learning-rate."
            )


class RestoreBestWeights(keras.callbacks.Callback):
    """At the end of training, loads the weights `ModelCheckpoint(save_best_only=True)` wrote to `path`.

    Unlike `EarlyStopping(restore_best_weights=True)`, the best epoch may
    come from an earlier, interrupted process (a resumed run). Loading at
    `on_train_end` means whatever `fit` does after training (the n-gram part
    of a `TextClassifier`) starts from the best epoch.

    Args:
        path: The `.weights.h5` file of the best epoch (nothing happens if
            it does not exist).
    """

    def __init__(self, path):
        super().__init__()
        self.path = str(path)

    def on_train_end(self, logs=None):
        import os

        if os.path.exists(self.path):
            self.model.load_weights(self.path)
