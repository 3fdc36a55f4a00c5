"""A multi-label run's bundle: its metadata says so and holds the thresholds; the runtime gives the classifier's answers."""

import json
import shutil

import numpy as np
import pytest

from hierattn import runtime
from hierattn.errors import ArgumentError, DataError
from hierattn.runs.directory import BUNDLE_FILE
from hierattn.runs.predict import load_predictor

from conftest import make_topics, rewrite_bundle_metadata

pytestmark = pytest.mark.slow

TEXTS = [*make_topics(12, seed=5)[0], "Qwxzv blorptk zzyzx.", "The bank raised the price of bread and cheese."]


@pytest.fixture(scope="module")
def predictor(multilabel_run_dir):
    return runtime.load(multilabel_run_dir / BUNDLE_FILE)


def test_the_metadata_says_multi_label_and_holds_the_thresholds(predictor, multilabel_run):
    assert predictor.metadata["multi_label"] is True
    assert predictor.metadata["thresholds"] == pytest.approx(multilabel_run.thresholds)
    assert predictor.multi_label and predictor.thresholds == pytest.approx(multilabel_run.thresholds)
    assert predictor.label_names == list(multilabel_run.label_names)


def test_a_single_label_bundle_has_neither_key(han_run_dir):
    predictor = runtime.load(han_run_dir / BUNDLE_FILE)
    assert "multi_label" not in predictor.metadata and "thresholds" not in predictor.metadata
    assert (predictor.multi_label, predictor.thresholds) == (False, None)
    with pytest.raises(ValueError, match="multi-label"):
        predictor.over_thresholds(np.zeros((1, 2)))


def test_probabilities_and_label_sets_are_the_classifiers(predictor, multilabel_run):
    expected = multilabel_run.predict(TEXTS, verbose=0)
    found = predictor.predict(TEXTS)
    np.testing.assert_allclose(found, expected, rtol=0, atol=1e-5)
    assert not np.allclose(found.sum(axis=1), 1.0)  # independent sigmoids, not a softmax
    labels = predictor.predict_labels(TEXTS)
    assert labels == multilabel_run.predict_labels(TEXTS)
    assert all(isinstance(row, list) for row in labels)
    names = predictor.label_names
    assert all(row == [n for n in names if n in row] for row in labels)  # in label_names order
    np.testing.assert_array_equal(predictor.over_thresholds(found), (found > np.array(predictor.thresholds)) * 1)


def test_top_k_is_the_classifiers_sorted_and_matches_predict(predictor, multilabel_run):
    probabilities = predictor.predict(TEXTS)
    for k in (1, 2, 3, 10):
        ranked = predictor.predict_top_k(TEXTS, k)
        expected = multilabel_run.predict_top_k(TEXTS, k)
        assert len(ranked) == len(TEXTS) and all(len(row) == min(k, 3) for row in ranked)
        for row, theirs, p in zip(ranked, expected, probabilities):
            values = [value for _, value in row]
            assert values == [p[predictor.label_names.index(name)] for name, _ in row]  # predict's, exactly
            assert values == sorted(values, reverse=True) == sorted(p, reverse=True)[: min(k, 3)]
            # the classifier's ranking, within the export's tolerance (a tiny model's near-ties may swap)
            np.testing.assert_allclose([value for _, value in theirs], values, atol=1e-5)
            assert len({name for name, _ in row}) == len(row)


def test_top_k_of_a_single_label_bundle(han_run_dir, han_run):
    predictor = runtime.load(han_run_dir / BUNDLE_FILE)
    texts = ["a good and great film", "an awful plot"]
    assert [row[0][0] for row in predictor.predict_top_k(texts, 1)] == predictor.predict_labels(texts)
    assert [[n for n, _ in row] for row in predictor.predict_top_k(texts, 5)] == [
        [n for n, _ in row] for row in han_run.predict_top_k(texts, 5)
    ]


@pytest.mark.parametrize("k", [0, -1, 1.5, True, "2"])
def test_top_k_refuses_what_is_not_a_count(predictor, k):
    with pytest.raises(ArgumentError, match="^k must be a whole number of at least 1"):
        predictor.predict_top_k(TEXTS[:1], k)


def test_thresholds_that_do_not_fit_the_labels_are_damaged_metadata(multilabel_run_dir, tmp_path):
    target = tmp_path / "model.onnx"
    rewrite_bundle_metadata(multilabel_run_dir / BUNDLE_FILE, target, lambda m: m.update(thresholds=[0.5]))
    with pytest.raises(DataError, match=r"metadata is damaged \(thresholds must be 3 numbers between 0 and 1"):
        runtime.load(target)


def test_a_multi_label_runs_bundle_that_does_not_say_so_is_passed_over(multilabel_run_dir, tmp_path):
    """A bundle exported before bundles held thresholds: predictions come from model.keras, which has them."""
    run = tmp_path / "run"
    shutil.copytree(multilabel_run_dir, run)

    def older(metadata):
        del metadata["multi_label"], metadata["thresholds"]
        for key in ("temperature", "temperature_always"):  # a label's temperature came later still
            metadata.get("cascade", {}).pop(key, None)

    rewrite_bundle_metadata(multilabel_run_dir / BUNDLE_FILE, run / BUNDLE_FILE, older)
    status = json.loads((run / "run.json").read_text())
    del status["bundle"]["sha256"]  # as a run written then recorded it: no digest to tell the bundle is not its own
    (run / "run.json").write_text(json.dumps(status))
    said = []
    model = load_predictor(run, log=said.append)
    assert not hasattr(model, "metadata") and model.multi_label  # the Keras classifier
    assert "without its thresholds" in said[0] and "predicting with model.keras" in said[0]
