"""The decision rule for macro-F1: offsets chosen on validation, applied in every path.

The choice on synthetic scores: tests/test_tuning.py.
"""

import json
import shutil

import numpy as np
import pandas as pd
import pytest
from fastapi.testclient import TestClient

from hierattn import runtime
from hierattn.batch import BatchPredictor
from hierattn.errors import ArgumentError
from hierattn.policy import DecisionPolicy
from hierattn.runs.config import TrainConfig, read_settings
from hierattn.runs.directory import BUNDLE_FILE, read_status, write_status
from hierattn.runs.predict import predict_file
from hierattn.runs.run import bundle_digest, load_run
from hierattn.serve import create_app

from conftest import make_reviews, make_run, rewrite_bundle_metadata

TEXTS = ["a good and great film, a joy", "a bad and awful plot", "great", "awful awful awful. bad.", "fine", "ok"]


def test_a_run_for_macro_f1_chooses_and_keeps_its_offsets(tiny_csv, tmp_path):
    texts, labels = make_reviews(200, seed=3)
    kept = [i for i, label in enumerate(labels) if label == "pos" or i % 5 == 0]  # neg is rare
    table = tmp_path / "train.csv"
    pd.DataFrame({"text": [texts[i] for i in kept], "label": [labels[i] for i in kept]}).to_csv(table, index=False)
    classifier = make_run((table, None), tmp_path / "run", "han", bundle=True, decision_metric="macro_f1")
    assert classifier.decision_metric == "macro_f1" and len(classifier.offsets) == 2
    assert list(classifier.policy.offsets) == classifier.offsets
    metrics = json.loads((tmp_path / "run" / "metrics.json").read_text())
    assert metrics["decision"]["offsets"] == classifier.offsets and metrics["decision"]["metric"] == "macro_f1"
    settings = read_settings(tmp_path / "run" / "config.json")  # a run's config.json is a settings file
    assert TrainConfig.from_dict(settings).classifier["decision_metric"] == "macro_f1"
    predictor = runtime.load(tmp_path / "run" / BUNDLE_FILE)
    assert (
        predictor.offsets == pytest.approx(classifier.offsets) and list(predictor.policy.offsets) == predictor.offsets
    )
    with pytest.raises(ArgumentError, match="decision_metric must be one of accuracy, macro_f1"):
        type(classifier)("han", decision_metric="f1")
    with pytest.raises(ArgumentError, match="applies to a single-label classifier"):
        type(classifier)("han", multi_label=True, decision_metric="macro_f1")


def test_offsets_are_applied_the_same_in_every_path(han_run, han_run_dir, tmp_path):
    """Keras, the bundle on the runtime, predict --file, batch and the server answer with the same offsets."""
    offsets = [0.0, 0.0]
    names = han_run.label_names
    probabilities = han_run.predict(TEXTS, verbose=0)
    # an offset that turns some answers: just past the log-odds of the middle text (texts of equal log-odds
    # there would tie, and a tie keeps the first class)
    gaps = np.log(probabilities[:, 0]) - np.log(probabilities[:, 1])
    offsets[1] = float(np.median(gaps)) + 1e-3
    expected = DecisionPolicy(names, offsets=offsets).labels(probabilities)
    assert expected != DecisionPolicy(names).labels(probabilities)  # the offsets matter here
    run = tmp_path / "run"
    shutil.copytree(han_run_dir, run)
    rewrite_bundle_metadata(han_run_dir / BUNDLE_FILE, run / BUNDLE_FILE, lambda m: m.update(offsets=offsets))
    digest = bundle_digest(run / BUNDLE_FILE)  # recorded as the run's own bundle (run.json's sha256)
    write_status(run, bundle={**read_status(run)["bundle"], "sha256": digest})
    han_run.offsets = offsets
    try:
        assert han_run.predict_labels(TEXTS) == expected
        assert [e.label for e in han_run.explain(TEXTS[:2])] == expected[:2]
    finally:
        han_run.offsets = None
    assert runtime.load(run / BUNDLE_FILE).predict_labels(TEXTS) == expected
    source = tmp_path / "texts.txt"
    source.write_text("\n".join(TEXTS) + "\n")
    predict_file(source, tmp_path / "predictions.csv", run, progress=False)
    assert pd.read_csv(tmp_path / "predictions.csv")["predicted"].tolist() == expected
    assert BatchPredictor(run)(pd.DataFrame({"text": TEXTS}))["predicted"].tolist() == expected
    with TestClient(create_app(run, explain=False)) as client:
        answers = client.post("/v1/predict", json={"texts": TEXTS}).json()["predictions"]
        assert [a["label"] for a in answers] == expected
        assert client.get("/v1/model").json()["offsets"] == dict(zip(names, offsets))


def test_explanations_add_up_with_the_offsets(han_run):
    han_run.offsets = [0.0, 0.7]
    try:
        (explanation,) = han_run.explain(["a good and great film, a joy"])
    finally:
        han_run.offsets = None
    d = explanation.decision
    c, r = explanation.label, d["versus"]
    assert d["offset_term"] == pytest.approx(
        (0.7 if c == han_run.label_names[1] else 0.0) - (0.7 if r == han_run.label_names[1] else 0.0)
    )
    constant = d["network_baseline"] + d["integration_error"] + d["ngram_bias"] + d["not_shown"] + d["offset_term"]
    words = sum(w.evidence for w in explanation.words)
    assert words + constant == pytest.approx(d["margin"], abs=1e-4)
    p = explanation.probabilities
    assert d["margin"] == pytest.approx(np.log(p[c]) - np.log(p[r]) + d["offset_term"], abs=1e-3)


def test_load_run_keeps_the_offsets(tmp_path, han_run_dir, han_run):
    han_run.offsets, han_run.decision_metric = [0.0, 0.25], "macro_f1"
    try:
        han_run.save(tmp_path / "model.keras")
    finally:
        han_run.offsets, han_run.decision_metric = None, "accuracy"
    import hierattn

    loaded = hierattn.load_classifier(tmp_path / "model.keras")
    assert loaded.offsets == [0.0, 0.25] and loaded.decision_metric == "macro_f1"
    chosen = type(han_run)("han", label_names=["neg", "pos"], offsets=[0.0, 0.7])  # set by hand, the default metric
    assert list(type(han_run).from_config(chosen.get_config()).policy.offsets) == [0.0, 0.7]
    assert load_run(han_run_dir).classifier.offsets is None  # the run on disk is untouched
