"""Tests for hierattn.runs.explain: texts, a file's rows or a dataset explained in one call with a run directory."""

import io
import json

import pytest

from hierattn.errors import ArgumentError, DataError, HierattnError, RunError
from hierattn.explain import FaithfulnessReport
from hierattn.runs.explain import explain_dataset, explain_file, explain_texts, faithfulness_path


@pytest.fixture(scope="module")
def run_dir(han_run_dir):
    """The session's tiny HAN run."""
    return han_run_dir


def test_faithfulness_path_sits_beside_the_output():
    assert str(faithfulness_path("out/words.csv")) == "out/words.faithfulness.json"


def test_explain_texts_leaves_out_texts_without_words_and_checks_on_request(run_dir):
    said = []
    texts = ["The film was great. I loved it!", "<br />", "Awful film."]
    explanations, report = explain_texts(texts, run_dir, ids=["a", "b", "c"], log=said.append)
    assert said == [f"run: {run_dir}", "skipped 1 text(s) without words (only markup or spaces)"]
    assert [e.doc_id for e in explanations] == ["a", "c"] and report is None
    explanations, report = explain_texts(texts[:1], run_dir, check=True, random_draws=1)
    assert explanations[0].decision["margin"] > 0
    assert isinstance(report, FaithfulnessReport) and report.documents == 1
    assert report.mean_words == len(explanations[0].words)  # the check erases the words the explanation shows
    with pytest.raises(DataError, match="^the text has no word to read"):
        explain_texts(["<p></p>"], run_dir)


def test_explain_file_carries_a_table_s_ids_and_labels(run_dir, tmp_path):
    (tmp_path / "t.csv").write_text("id,text,label\nr1,The film was great.,pos\nr2,  ,neg\nr3,Awful.,neg\n")
    explanations, report = explain_file(tmp_path / "t.csv", run_dir)
    assert [(e.doc_id, e.true_label) for e in explanations] == [("r1", "pos"), ("r3", "neg")] and report is None
    (explanation,), _ = explain_file(None, run_dir, stream=io.BytesIO(b"\ngreat film\n"))
    assert explanation.doc_id is None and explanation.text == "great film"


def test_explain_file_reads_its_input_before_the_run(tmp_path):
    (tmp_path / "blank.txt").write_text("\n  \n")
    with pytest.raises(DataError, match=r"^no text to explain in .*blank\.txt \(every line is blank\)$"):
        explain_file(tmp_path / "blank.txt", tmp_path / "absent")
    with pytest.raises(DataError, match="^no text to explain in standard input"):
        explain_file(None, tmp_path / "absent", stream=io.BytesIO(b"\n"))
    with pytest.raises(DataError, match="no such file"):
        explain_file(tmp_path / "missing.txt", tmp_path / "absent")
    (tmp_path / "one.txt").write_text("a film\n")
    with pytest.raises(RunError, match="^no run directory at"):
        explain_file(tmp_path / "one.txt", tmp_path / "absent")


def test_explain_dataset_writes_the_tables_and_the_check_beside_them(run_dir, tiny_csv, tmp_path):
    output = tmp_path / "words.csv"
    said = []
    summary, report = explain_dataset(
        tiny_csv[1], run_dir, limit=12, top_k=3, output=output, check=True, random_draws=1, log=said.append
    )
    assert said == [f"run: {run_dir}"] and summary.documents == 12
    assert summary.outputs == [str(output), str(tmp_path / "words.documents.csv")]
    saved = json.loads((tmp_path / "words.faithfulness.json").read_text())
    assert saved["documents"] == report.documents == 12 and saved["verdict"] == report.verdict()
    summary, report = explain_dataset(tiny_csv[1], run_dir, limit=5)
    assert (summary.documents, summary.outputs, report) == (5, [], None)


def test_explain_dataset_refuses_files_to_write_and_the_dataset_before_the_run(tiny_csv, tmp_path):
    absent = tmp_path / "absent"
    (tmp_path / "words.faithfulness.json").write_text("earlier")
    with pytest.raises(ArgumentError, match=r"words\.faithfulness\.json already exists; choose another output"):
        explain_dataset(tmp_path / "nope.csv", absent, output=tmp_path / "words.csv", check=True)
    with pytest.raises(HierattnError, match="no such dataset"):
        explain_dataset(tmp_path / "nope.csv", absent, output=tmp_path / "words.csv")
    with pytest.raises(RunError, match="^no run directory at"):
        explain_dataset(tiny_csv[1], absent, output=tmp_path / "words.csv")
    assert [p.name for p in tmp_path.iterdir()] == ["words.faithfulness.json"]


def test_a_multi_label_run_explains_each_predicted_label_or_the_one_named(multilabel_run_dir, multilabel_csv, tmp_path):
    texts = ["They talked about bank at length. They talked about bread at length.", "<br />"]
    explanations, _ = explain_texts(texts, multilabel_run_dir, ids=["x", "y"])
    assert explanations and all(e.doc_id == "x" and e.threshold is not None for e in explanations)
    (only,), report = explain_texts(texts[:1], multilabel_run_dir, label="sport", check=True, random_draws=1)
    assert only.label == "sport" and report.documents == 1
    with pytest.raises(ArgumentError, match=r"^label 'weather' is not one of the classifier's labels"):
        explain_texts(texts, multilabel_run_dir, label="weather")
    (tmp_path / "t.csv").write_text("id,text,labels\nr1,They talked about goal at length.,sport\n")
    explanations, _ = explain_file(tmp_path / "t.csv", multilabel_run_dir, label=["money", "food"])
    assert [(e.doc_id, e.true_label, e.label) for e in explanations] == [
        ("r1", "sport", "money"),
        ("r1", "sport", "food"),
    ]
    summary, report = explain_dataset(
        multilabel_csv[1],
        multilabel_run_dir,
        limit=10,
        top_k=2,
        output=tmp_path / "words.csv",
        check=True,
        random_draws=1,
    )
    assert summary.documents == 10 and summary.labelled == 10 and report.documents >= 10
    assert set(summary.class_documents) <= {"sport", "money", "food"}
    with pytest.raises(ArgumentError, match=r"^label 'weather' is not one of"):
        explain_dataset(multilabel_csv[1], multilabel_run_dir, limit=3, label="weather")
