"""Tests for hierattn.models.budget: the epoch budget scaled to the corpus, the time budget, decided in one place, the stop reason."""

import types

import pytest
import tensorflow as tf

import hierattn
from hierattn.callbacks import TimeBudget
from hierattn.defaults import EPOCH_BUDGET
from hierattn.models.budget import Budget, decide_budget, epoch_budget

from conftest import TINY_OPTIONS, make_reviews


@pytest.mark.parametrize(
    "num_texts, batch_size, epochs",
    [
        (1_000, 64, 40),  # 16 steps an epoch: 188 epochs for 3,000 steps, clipped to the most
        (5_000, 64, 38),  # 79 steps: ceil(3000 / 79)
        (6_694, 64, 29),  # 105 steps
        (22_500, 64, 9),  # 352 steps (IMDB's training part)
        (100_000, 64, 8),  # 1,563 steps: 2 epochs, raised to the least
        (1, 64, 40),
        (5_000, 1, 8),
    ],
)
def test_epoch_budget_scales_with_the_corpus_within_its_bounds(num_texts, batch_size, epochs):
    assert epoch_budget(num_texts, batch_size) == epochs


def test_epoch_budget_follows_the_defaults(monkeypatch):
    monkeypatch.setitem(EPOCH_BUDGET, "steps", 18)
    monkeypatch.setitem(EPOCH_BUDGET, "min_epochs", 2)
    assert epoch_budget(144, 16) == 2  # 9 steps an epoch
    assert epoch_budget(0, 16) == 18  # no texts: one step an epoch, not a division by zero


def test_the_budget_has_a_time_budget_only_without_epochs():
    strategy = tf.distribute.get_strategy()
    mine = [TimeBudget(5)]
    budget = decide_budget(3, 5_000, 64, strategy)  # the caller's own cap, as in Keras
    assert budget == Budget(3) and (budget.time_budget, budget.budgeted, budget.seconds) == (None, False, None)
    assert budget.with_callbacks(None) == [] and budget.with_callbacks(mine) == mine
    budget = decide_budget(None, 5_000, 64, strategy)
    assert (budget.epochs, budget.budgeted, budget.seconds) == (38, True, EPOCH_BUDGET["seconds"])
    assert budget.with_callbacks(None) == [budget.time_budget] and isinstance(budget.time_budget, TimeBudget)
    callbacks = budget.with_callbacks([])
    assert budget.with_callbacks(callbacks) == callbacks  # added once
    budget = decide_budget(None, 5_000, 64, strategy, callbacks=mine)
    assert budget.time_budget is mine[0] and budget.seconds == 5  # a time budget given is kept, not doubled
    callbacks = budget.with_callbacks(mine)
    assert callbacks == mine and callbacks is not mine
    budget = decide_budget(None, 5_000, 64, strategy, validated=False)
    assert budget.epochs == EPOCH_BUDGET["min_epochs"]  # nothing would stop training early


def test_no_time_budget_across_several_workers(monkeypatch):
    monkeypatch.setattr("hierattn.models.budget.in_multi_worker_mode", lambda strategy: True)
    budget = decide_budget(None, 5_000, 64, tf.distribute.get_strategy())
    assert (budget.epochs, budget.time_budget, budget.budgeted) == (38, None, True)


def test_budget_text():
    strategy = tf.distribute.get_strategy()
    budget = decide_budget(None, 6_694, 64, strategy, callbacks=[TimeBudget(1200)])
    assert (
        budget.text(6_694, 64)
        == "up to 29 epochs (the budget for 6,694 texts: about 3,000 batches of 64, within 8 to 40 epochs), or 20 min"
    )
    assert (
        Budget(38, budgeted=True).text(5_000, 64)
        == "up to 38 epochs (the budget for 5,000 texts: about 3,000 batches of 64, within 8 to 40 epochs)"
    )
    assert decide_budget(1, 5_000, 64, strategy).text(5_000, 64) == "up to 1 epoch (the epochs setting)"


def test_stop_reason_names_what_ended_training():
    early = types.SimpleNamespace(stopped_epoch=0, patience=2)
    timer = types.SimpleNamespace(stopped=False)
    assert Budget(38, timer, budgeted=True).stop_reason(early, 38) == "epoch budget"
    assert Budget(3).stop_reason(early, 3) == "epochs setting"
    assert Budget(3).stop_reason(early, 2) == "training stopped early"
    timer.stopped = True
    assert Budget(38, timer, budgeted=True).stop_reason(early, 7) == "time budget"
    early.stopped_epoch = 6  # early stopping first: the time budget does not stop an epoch already stopped
    assert Budget(38, timer, budgeted=True).stop_reason(early, 7) == "validation loss stopped improving (patience 2)"


def test_fit_without_epochs_trains_the_budget_within_the_time_budget(monkeypatch):
    monkeypatch.setitem(EPOCH_BUDGET, "steps", 12)  # 48 texts in batches of 16: 3 steps an epoch, 4 epochs
    monkeypatch.setitem(EPOCH_BUDGET, "min_epochs", 2)
    texts, labels = make_reviews(48)
    seen = []
    original = decide_budget

    def recording(*args):
        budget = original(*args)
        seen.append(budget.epochs)
        seen.extend(type(c).__name__ for c in budget.with_callbacks(None))
        return budget

    monkeypatch.setattr("hierattn.models.text_classifier.decide_budget", recording)
    clf = hierattn.TextClassifier("rnn", embeddings="none", min_count=1, ngrams=False, **TINY_OPTIONS["rnn"])
    history = clf.fit(texts, labels, batch_size=16, verbose=0, validation_data=(texts[:8], labels[:8]))
    assert seen == [4, "TimeBudget"] and 1 <= len(history.epoch) <= 4  # early stopping may end it first
    history = clf.fit(texts, labels, batch_size=16, verbose=0)  # no validation data: the least budget
    assert seen[2:] == [2, "TimeBudget"] and len(history.epoch) == 2
    history = clf.fit(texts, labels, batch_size=16, epochs=1, verbose=0)  # an explicit epochs: no time budget
    assert seen[4:] == [1] and len(history.epoch) == 1
