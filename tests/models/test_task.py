"""Tests for hierattn.models.task.Task: what every classifier's Keras model does, here through `TextClassifier`."""

import keras
import numpy as np

import hierattn
from hierattn.kinds import MULTI, SINGLE
from hierattn.models.task import Task

from conftest import TINY_OPTIONS, make_reviews


def fit_counting_traces(monkeypatch):
    """A tiny RNN classifier fitted for an epoch in graphs, and how many times its train step was traced."""
    traces = []
    train_step = Task.train_step

    def counted(self, data):
        traces.append(1)  # Python runs here only while TensorFlow traces the step
        return train_step(self, data)

    monkeypatch.setattr(Task, "train_step", counted)
    texts, labels = make_reviews(64)
    keras.utils.set_random_seed(0)  # the same initial weights and dropout each time
    clf = hierattn.TextClassifier("rnn", embeddings="none", min_count=1, ngrams=False, seed=5, **TINY_OPTIONS["rnn"])
    clf.fit(texts, labels, epochs=1, batch_size=16, verbose=0)
    return clf, len(traces)


def test_fit_builds_the_optimizer_first_so_the_train_step_is_traced_once_and_trains_the_same(monkeypatch):
    clf, traces = fit_counting_traces(monkeypatch)
    assert traces == 1 and clf.optimizer.built
    assert clf.optimizer.iterations.numpy() == 4  # 64 texts in batches of 16: the one trace ran every step
    # Keras's own way (the optimizer built inside the first trace): traced twice, to the same weights
    monkeypatch.setattr(Task, "build_optimizer", lambda self: None)
    keras_way, keras_traces = fit_counting_traces(monkeypatch)
    assert keras_traces == 2
    for ours, theirs in zip(clf.get_weights(), keras_way.get_weights(), strict=True):
        np.testing.assert_array_equal(ours, theirs)


def test_evaluate_writes_one_plain_line_to_a_file_as_fit_does(han_run, tiny_csv, capfd):
    import pandas as pd

    table = pd.read_csv(tiny_csv[1])
    capfd.readouterr()
    han_run.evaluate(table["text"].tolist()[:20], table["label"].tolist()[:20])  # verbose="auto", stdout a file
    printed = capfd.readouterr().out
    assert "\x1b[" not in printed and "\r" not in printed and len(printed.strip().splitlines()) == 1, printed


def test_each_kind_compiles_with_its_own_loss_and_metric(monkeypatch):
    """The `"auto"` defaults: cross-entropy over the classes and accuracy, or per label and micro-F1 over 0.5."""
    given = {}
    monkeypatch.setattr(keras.Model, "compile", lambda self, **kwargs: given.update(kwargs))
    expected = {
        SINGLE: (keras.losses.CategoricalCrossentropy, "accuracy"),
        MULTI: (keras.losses.BinaryCrossentropy, "micro_f1"),
    }
    for kind, (loss, metric) in expected.items():
        clf = hierattn.TextClassifier("han", multi_label=kind.multi_label, embeddings="none")
        clf.compile()
        assert clf.kind is kind and isinstance(given["loss"], loss)
        assert [m.name for m in given["metrics"]] == [metric, "examples"]
    assert given["metrics"][0].average == "micro" and given["metrics"][0].threshold == 0.5
