"""How long a network trains when no `epochs` is given: an epoch budget scaled to the corpus, and a time budget.

The epoch budget (`epoch_budget`) depends only on the number of training
texts and the batch size, so a resumed run has the same one; the time budget
(`hierattn.callbacks.TimeBudget`) bounds each `fit`. Early stopping on the
validation loss usually ends training before either. The constants are
`hierattn.defaults.EPOCH_BUDGET`.
"""

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


def with_budget(epochs, callbacks, num_texts, batch_size, strategy, validated=True):
    """What `TextClassifier.fit` trains with: `epochs`, or the budget's, and its callbacks with the time budget.

    Given `epochs` (the caller's own cap, as in Keras), both are returned
    unchanged. Without (`None`): `epoch_budget(num_texts, batch_size)` and
    the callbacks with a `TimeBudget(EPOCH_BUDGET["seconds"])` added,
    unless they hold one or the training spans several workers (`timed`).
    Without validation texts (`validated=False`) nothing stops training
    early, so the budget is `EPOCH_BUDGET["min_epochs"]`.

    Returns:
        `(epochs, callbacks)`, the second a new list.
    """
    callbacks = list(callbacks or [])
    if epochs is not None:
        return epochs, callbacks
    if timed(strategy) and not any(isinstance(c, TimeBudget) for c in callbacks):
        callbacks.append(TimeBudget(EPOCH_BUDGET["seconds"]))
    return (epoch_budget(num_texts, batch_size) if validated else EPOCH_BUDGET["min_epochs"]), callbacks


def budget_text(epochs, num_texts, batch_size, seconds=None):
    """The budget in words: "up to 38 epochs (3,000 steps of 64 over 5,000 texts), or 20 min".

    Args:
        epochs: The given `epochs`, or `None` for the epoch budget.
        num_texts: Training texts.
        batch_size: Documents per batch.
        seconds: The time budget, or `None` for none.
    """
    if epochs is not None:
        text = f"up to {epochs} epoch{'s' if epochs != 1 else ''} (the epochs setting)"
    else:
        text = (
            f"up to {epoch_budget(num_texts, batch_size)} epochs ({EPOCH_BUDGET['steps']:,} steps of "
            f"{batch_size} over {num_texts:,} texts)"
        )
    return text + (f", or {seconds / 60:g} min" if seconds is not None else "")


def stop_reason(early_stopping, time_budget, epochs_trained, epochs, budgeted):
    """What ended a finished training, in words (metrics.json's `stopped_by`).

    Args:
        early_stopping: The training's `keras.callbacks.EarlyStopping`.
        time_budget: Its `TimeBudget`, or `None`.
        epochs_trained: Epochs trained in all (every process of a resumed run).
        epochs: The most epochs.
        budgeted: Whether `epochs` is the epoch budget (not the setting).
    """
    if early_stopping.stopped_epoch:
        return f"validation loss stopped improving (patience {early_stopping.patience})"
    if time_budget is not None and time_budget.stopped:
        return "time budget"
    if epochs_trained >= epochs:
        return "epoch budget" if budgeted else "epochs setting"
    return "training stopped early"  # a callback given by the caller
