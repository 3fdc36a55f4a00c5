"""`hierattn.runs.predict` with a multi-label run (label sets, the run's separator) and top-k, of either kind of run."""

import csv
import json
import shutil

import numpy as np
import pytest

from hierattn import runtime
from hierattn.errors import ArgumentError
from hierattn.runs.directory import BUNDLE_FILE
from hierattn.runs.predict import predict_file, predict_one, predict_text
from hierattn.runs.table import PredictionTable

from conftest import make_topics

pytestmark = pytest.mark.slow

TEXTS = make_topics(10, seed=3)[0]


@pytest.fixture(scope="module")
def bundle(multilabel_run_dir):
    return runtime.load(multilabel_run_dir / BUNDLE_FILE)


def _rows(path):
    with open(path, newline="") as handle:
        return list(csv.DictReader(handle))


def test_predict_one_gives_the_label_set_and_every_probability(multilabel_run_dir, bundle):
    said = []
    answer = predict_one(TEXTS[1], multilabel_run_dir, log=said.append)
    assert said == [f"run: {multilabel_run_dir}"]
    assert set(answer) == {"labels", "thresholds", "probabilities"}
    assert answer["labels"] == bundle.predict_labels(TEXTS[1:2])[0]
    assert list(answer["probabilities"]) == bundle.label_names
    np.testing.assert_allclose(list(answer["probabilities"].values()), bundle.predict(TEXTS[1:2])[0], atol=1e-6)
    assert answer["thresholds"] == dict(zip(bundle.label_names, bundle.thresholds))
    assert predict_text(TEXTS[1], multilabel_run_dir) == answer["probabilities"]
    json.dumps(answer)  # plain JSON


def test_predict_one_ranks_the_top_k(multilabel_run_dir, han_run_dir):
    answer = predict_one(TEXTS[0], multilabel_run_dir, top_k=2)
    values = [p for _, p in answer["top_k"]]
    assert len(answer["top_k"]) == 2 and values == sorted(values, reverse=True)
    assert all(answer["probabilities"][name] == p for name, p in answer["top_k"])
    single = predict_one("a good and great film", han_run_dir, top_k=5)
    assert set(single) == {"label", "probabilities", "top_k"} and len(single["top_k"]) == 2  # two classes
    assert single["top_k"][0][0] == single["label"]
    with pytest.raises(ArgumentError, match="^top_k must be a whole number"):
        predict_one("a film", han_run_dir, top_k=0)


def test_answers_of_a_single_label_model_are_as_before(han_run_dir):
    model = runtime.load(han_run_dir / BUNDLE_FILE)
    probabilities = model.predict(["a good film", "an awful film"])
    found = PredictionTable(model.decision, probabilities).answers()
    assert [a["label"] for a in found] == model.predict_labels(["a good film", "an awful film"])
    assert all(set(a) == {"label", "probabilities"} for a in found)
    assert model.decision.labels(np.full((1, 2), np.nan)) == [None]


def test_predict_file_writes_label_sets_joined_by_the_runs_separator(multilabel_run_dir, bundle, tmp_path):
    texts = [*TEXTS, "<br />"]
    (tmp_path / "in.txt").write_text("\n".join(texts) + "\n")
    assert predict_file(tmp_path / "in.txt", tmp_path / "out.csv", multilabel_run_dir, progress=False) == len(TEXTS)
    rows = _rows(tmp_path / "out.csv")
    names = bundle.label_names
    assert list(rows[0]) == ["row", "predicted", *(f"p_{n}" for n in names)]
    expected = bundle.predict_labels(TEXTS)
    assert any(len(labels) > 1 for labels in expected)  # the file shows joined sets
    assert [r["predicted"] for r in rows] == ["|".join(labels) for labels in expected] + [""]
    got = np.array([[float(r[f"p_{n}"]) for n in names] for r in rows[:-1]])
    np.testing.assert_allclose(got, bundle.predict(TEXTS), atol=1e-6)
    assert all(rows[-1][f"p_{n}"] == "" for n in names)  # a text without words: empty cells


def test_the_separator_recorded_by_the_run_joins_its_labels(multilabel_run_dir, bundle, tmp_path):
    run = tmp_path / "run"
    shutil.copytree(multilabel_run_dir, run)
    config = json.loads((run / "config.json").read_text())
    config["data"]["label_separator"] = ";"
    (run / "config.json").write_text(json.dumps(config))
    (tmp_path / "in.txt").write_text("\n".join(TEXTS) + "\n")
    predict_file(tmp_path / "in.txt", tmp_path / "out.csv", run, progress=False)
    assert [r["predicted"] for r in _rows(tmp_path / "out.csv")] == [
        ";".join(labels) for labels in bundle.predict_labels(TEXTS)
    ]


@pytest.mark.parametrize("k", [2, 7])
def test_predict_file_adds_ranked_columns(multilabel_run_dir, bundle, tmp_path, k):
    (tmp_path / "in.txt").write_text("\n".join([*TEXTS, "<br />"]) + "\n")
    predict_file(tmp_path / "in.txt", tmp_path / "out.csv", multilabel_run_dir, progress=False, top_k=k)
    rows = _rows(tmp_path / "out.csv")
    ranks = min(k, 3)
    names = bundle.label_names
    ranked = [c for i in range(1, ranks + 1) for c in (f"top_{i}", f"p_top_{i}")]
    assert list(rows[0]) == ["row", "predicted", *(f"p_{n}" for n in names), *ranked]
    for row in rows[:-1]:
        values = [float(row[f"p_top_{i}"]) for i in range(1, ranks + 1)]
        assert values == sorted(values, reverse=True)
        assert all(row[f"p_top_{i}"] == row[f"p_{row[f'top_{i}']}"] for i in range(1, ranks + 1))
        assert len({row[f"top_{i}"] for i in range(1, ranks + 1)}) == ranks
    assert all(rows[-1][c] == "" for c in ranked)


def test_predict_file_ranks_a_single_label_runs_classes(han_run_dir, tmp_path):
    (tmp_path / "in.txt").write_text("a good and great film\nan awful plot\n")
    predict_file(tmp_path / "in.txt", tmp_path / "out.csv", han_run_dir, progress=False, top_k=1)
    rows = _rows(tmp_path / "out.csv")
    assert list(rows[0]) == ["row", "predicted", "p_neg", "p_pos", "top_1", "p_top_1"]
    assert all(r["top_1"] == r["predicted"] and r["p_top_1"] == r[f"p_{r['predicted']}"] for r in rows)
    with pytest.raises(ArgumentError, match="^top_k must be a whole number"):
        predict_file(tmp_path / "in.txt", tmp_path / "other.csv", han_run_dir, progress=False, top_k=0)
    assert not (tmp_path / "other.csv").exists()
