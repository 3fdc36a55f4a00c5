"""How long a network trains: its epochs, and when no `epochs` is given, an epoch budget scaled to the corpus and a time budget.

`decide_budget` is the one place that decides it, for `TextClassifier.fit`
and for a run (`hierattn.runs.train`), which decides it before its `fit`
(to log and record it) and hands `fit` the epochs decided. The epoch budget
(`epoch_budget`) depends only on the number of training texts and the batch
size, so a resumed run has the same one; the time budget
(`hierattn.callbacks.TimeBudget`) bounds each `fit`. Early stopping on the
validation loss usually ends training before either. The constants are
`hierattn.defaults.EPOCH_BUDGET`.
"""

import dataclasses
import math

from hierattn.callbacks import TimeBudget
from hierattn.defaults import EPOCH_BUDGET
from hierattn.distribute import in_multi_worker_mode


def epoch_budget(num_texts, batch_size):
    """The most epochs of a training on `num_texts` texts: about `EPOCH_BUDGET["steps"]` batches, clipped.

    `ceil(steps / ceil(num_texts / batch_size))` kept within
    `EPOCH_BUDGET["min_epochs"]` and `EPOCH_BUDGET["max_epochs"]`: small
    corpora get more epochs (at batch 64: 40 for 1,000 texts, 38 for 5,000,
    9 for 22,500).

    Args:
        num_texts: Training texts (the validation texts not counted).
        batch_size: Documents per batch (the global batch when distributed).

    Returns:
        The number of epochs, an int.

    Example:

    >>> epoch_budget(5000, 64)
    38
    """
    steps_per_epoch = max(1, math.ceil(num_texts / batch_size))
    epochs = math.ceil(EPOCH_BUDGET["steps"] / steps_per_epoch)
    return int(min(max(epochs, EPOCH_BUDGET["min_epochs"]), EPOCH_BUDGET["max_epochs"]))


def timed(strategy):
    """Whether a training under `strategy` has the time budget: not across several workers.

    Each worker would measure its own time and could stop after another
    epoch than the others, which then wait for it forever; a multi-worker
    training is bounded by its epoch budget only.
    """
    return not in_multi_worker_mode(strategy)


@dataclasses.dataclass(frozen=True)
class Budget:
    """How long a training may go on, as `decide_budget` decided it.

    Attributes:
        epochs: The most epochs.
        time_budget: The `TimeBudget` callback that bounds the training's
            time, or `None`.
        budgeted: Whether `epochs` is the epoch budget (no `epochs` was
            given), not the caller's own number.

    Example:

    >>> budget = decide_budget(None, 5000, 64, strategy=None)
    >>> budget.epochs, budget.budgeted, budget.seconds
    (38, True, 1200)
    >>> budget.text(5000, 64)
    'up to 38 epochs (the budget for 5,000 texts: about 3,000 batches of 64, within 8 to 40 epochs), or 20 min'
    """

    epochs: int
    time_budget: TimeBudget = None
    budgeted: bool = False

    @property
    def seconds(self):
        """The time budget in seconds, or `None` for none."""
        return None if self.time_budget is None else self.time_budget.seconds

    def with_callbacks(self, callbacks):
        """`callbacks` as a new list, with the time budget added unless they hold it already."""
        callbacks = list(callbacks or [])
        if self.time_budget is not None and not any(c is self.time_budget for c in callbacks):
            callbacks.append(self.time_budget)
        return callbacks

    def text(self, num_texts, batch_size):
        """The budget in words: "up to 38 epochs (the budget for 5,000 texts: about 3,000 batches of 64, within 8 to 40 epochs), or 20 min".

        Args:
            num_texts: Training texts.
            batch_size: Documents per batch.
        """
        if not self.budgeted:
            text = f"up to {self.epochs} epoch{'s' if self.epochs != 1 else ''} (the epochs setting)"
        else:
            text = (
                f"up to {self.epochs} epochs (the budget for {num_texts:,} texts: about {EPOCH_BUDGET['steps']:,} "
                f"batches of {batch_size}, within {EPOCH_BUDGET['min_epochs']} to {EPOCH_BUDGET['max_epochs']} epochs)"
            )
        return text + (f", or {self.seconds / 60:g} min" if self.seconds is not None else "")

    def stop_reason(self, early_stopping, epochs_trained):
        """What ended a finished training, in words (metrics.json's `stopped_by`).

        Args:
            early_stopping: The training's `keras.callbacks.EarlyStopping`.
            epochs_trained: Epochs trained in all (every process of a resumed run).
        """
        if early_stopping.stopped_epoch:
            return f"validation loss stopped improving (patience {early_stopping.patience})"
        if self.time_budget is not None and self.time_budget.stopped:
            return "time budget"
        if epochs_trained >= self.epochs:
            return "epoch budget" if self.budgeted else "epochs setting"
        return "training stopped early"  # a callback given by the caller


def decide_budget(epochs, num_texts, batch_size, strategy, validated=True, callbacks=()):
    """How long a training may go on: the one place that decides it (`TextClassifier.fit`'s and a run's).

    Given `epochs` (the caller's own cap, as in Keras), that many and no
    time budget. Without (`None`): `epoch_budget(num_texts, batch_size)`,
    and a `TimeBudget(EPOCH_BUDGET["seconds"])` unless `callbacks` hold one
    (which is then the training's) or the training spans several workers
    (`timed`). Without validation texts (`validated=False`) nothing stops
    training early, so the epoch budget is `EPOCH_BUDGET["min_epochs"]`.

    Args:
        epochs: The most epochs given, or `None`.
        num_texts: Training texts (the validation texts not counted).
        batch_size: Documents per batch (the global batch when distributed).
        strategy: The `tf.distribute` strategy the training runs under.
        validated: Whether the training has validation texts.
        callbacks: The training's callbacks (a `TimeBudget` among them is kept).

    Returns:
        A `Budget`.

    Example:

    >>> decide_budget(3, 5000, 64, None)
    Budget(epochs=3, time_budget=None, budgeted=False)
    """
    if epochs is not None:
        return Budget(epochs)
    time_budget = next((c for c in callbacks or () if isinstance(c, TimeBudget)), None)
    if time_budget is None and timed(strategy):
        time_budget = TimeBudget(EPOCH_BUDGET["seconds"])
    epochs = epoch_budget(num_texts, batch_size) if validated else EPOCH_BUDGET["min_epochs"]
    return Budget(epochs, time_budget, budgeted=True)
