"""Tests for hierattn.models.budget: the epoch budget scaled to the corpus, the time budget added by fit, the stop reason."""

import types

import pytest
import tensorflow as tf

import hierattn
from hierattn.callbacks import TimeBudget
from hierattn.defaults import EPOCH_BUDGET
from hierattn.models.budget import budget_text, epoch_budget, stop_reason, with_budget

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


def test_with_budget_adds_the_time_budget_only_without_epochs():
    strategy = tf.distribute.get_strategy()
    mine = [TimeBudget(5)]
    assert with_budget(3, None, 5_000, 64, strategy) == (3, [])  # the caller's own cap, as in Keras
    epochs, callbacks = with_budget(None, None, 5_000, 64, strategy)
    assert epochs == 38 and [type(c) for c in callbacks] == [TimeBudget]
    assert callbacks[0].seconds == EPOCH_BUDGET["seconds"]
    epochs, callbacks = with_budget(None, mine, 5_000, 64, strategy)
    assert epochs == 38 and callbacks == mine and callbacks is not mine  # a time budget given is kept, not doubled
    epochs, _ = with_budget(None, None, 5_000, 64, strategy, validated=False)
    assert epochs == EPOCH_BUDGET["min_epochs"]  # nothing would stop training early


def test_budget_text():
    assert budget_text(None, 6_694, 64, 1200) == "up to 29 epochs (3,000 steps of 64 over 6,694 texts), or 20 min"
    assert budget_text(None, 5_000, 64) == "up to 38 epochs (3,000 steps of 64 over 5,000 texts)"
    assert budget_text(1, 5_000, 64) == "up to 1 epoch (the epochs setting)"


def test_stop_reason_names_what_ended_training():
    early = types.SimpleNamespace(stopped_epoch=0, patience=2)
    timer = types.SimpleNamespace(stopped=False)
    assert stop_reason(early, timer, 38, 38, True) == "epoch budget"
    assert stop_reason(early, None, 3, 3, False) == "epochs setting"
    assert stop_reason(early, None, 2, 3, False) == "training stopped early"
    timer.stopped = True
    assert stop_reason(early, timer, 7, 38, True) == "time budget"
    early.stopped_epoch = 6  # early stopping first: the time budget does not stop an epoch already stopped
    assert stop_reason(early, timer, 7, 38, True) == "validation loss stopped improving (patience 2)"


def test_fit_without_epochs_trains_the_budget_within_the_time_budget(monkeypatch):
    monkeypatch.setitem(EPOCH_BUDGET, "steps", 12)  # 48 texts in batches of 16: 3 steps an epoch, 4 epochs
    monkeypatch.setitem(EPOCH_BUDGET, "min_epochs", 2)
    texts, labels = make_reviews(48)
    seen = []
    original = with_budget

    def recording(*args):
        epochs, callbacks = original(*args)
        seen.append(epochs)
        seen.extend(type(c).__name__ for c in callbacks)
        return epochs, callbacks

    monkeypatch.setattr("hierattn.models.text_classifier.with_budget", recording)
    clf = hierattn.TextClassifier("rnn", embeddings="none", min_count=1, ngrams=False, **TINY_OPTIONS["rnn"])
    history = clf.fit(texts, labels, batch_size=16, verbose=0, validation_data=(texts[:8], labels[:8]))
    assert seen == [4, "TimeBudget"] and 1 <= len(history.epoch) <= 4  # early stopping may end it first
    history = clf.fit(texts, labels, batch_size=16, verbose=0)  # no validation data: the least budget
    assert seen[2:] == [2, "TimeBudget"] and len(history.epoch) == 2
    history = clf.fit(texts, labels, batch_size=16, epochs=1, verbose=0)  # an explicit epochs: no time budget
    assert seen[4:] == [1] and len(history.epoch) == 1
