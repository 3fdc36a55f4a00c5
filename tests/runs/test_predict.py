"""Tests for hierattn.runs.predict: one text, or a file or stream into a CSV, in one call with a run directory."""

import csv
import io

import numpy as np
import pytest

from hierattn.errors import ArgumentError, DataError, RunError
from hierattn.runs.predict import predict_file, predict_text


@pytest.fixture(scope="module")
def run(rnn_run_dir, rnn_run):
    """`(run directory, its classifier)`: the session's tiny RNN run (no bundle: predict uses model.keras)."""
    return rnn_run_dir, rnn_run


def test_predict_text_gives_each_class_its_probability(run):
    path, classifier = run
    said = []
    probabilities = predict_text("The film was great.", path, log=said.append)
    assert said == [f"run: {path}"]
    assert list(probabilities) == ["neg", "pos"] and all(type(p) is float for p in probabilities.values())
    np.testing.assert_allclose(list(probabilities.values()), classifier.predict(["The film was great."])[0], atol=1e-6)
    with pytest.raises(DataError, match=r"^the text has no word to read"):
        predict_text("<br /><p></p>", path)
    with pytest.raises(RunError, match="^no run directory at"):
        predict_text("a film", path.parent / "absent")


def test_predict_file_writes_a_row_per_text(run, tmp_path):
    path, classifier = run
    texts = ["The film was great.", "<br />", "The film was awful."]
    (tmp_path / "in.txt").write_text("\n".join(texts) + "\n")
    said = []
    assert predict_file(tmp_path / "in.txt", tmp_path / "out.csv", path, log=said.append, progress=False) == 2
    rows = list(csv.DictReader(open(tmp_path / "out.csv")))
    assert said == [f"run: {path}", "1 of 3 texts has no words (blank, or only markup): its prediction cells are empty"]
    assert [r["row"] for r in rows] == ["0", "1", "2"]
    assert [rows[0]["predicted"], rows[1]["predicted"], rows[2]["predicted"]] == [
        classifier.predict_labels([texts[0]])[0],
        "",
        classifier.predict_labels([texts[2]])[0],
    ]


def test_predict_file_reads_a_stream_into_a_stream(run):
    path, _ = run
    output = io.StringIO()
    count = predict_file(None, output, path, stream=io.BytesIO(b"caf\xe9 great\n"), encoding="latin-1", progress=False)
    assert count == 1 and output.getvalue().splitlines()[0] == "row,predicted,p_neg,p_pos"


def test_predict_file_checks_its_output_then_its_input_before_the_run(run, tmp_path):
    path, _ = run
    (tmp_path / "in.txt").write_text("a film\n")
    (tmp_path / "out.csv").write_text("earlier")
    absent = tmp_path / "absent"
    with pytest.raises(ArgumentError, match="out.csv already exists; choose another output"):
        predict_file(tmp_path / "missing.txt", tmp_path / "out.csv", absent)
    with pytest.raises(DataError, match="no such file"):
        predict_file(tmp_path / "missing.txt", tmp_path / "new.csv", absent)
    with pytest.raises(RunError, match="no run directory at"):
        predict_file(tmp_path / "in.txt", tmp_path / "new.csv", absent)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["in.txt", "out.csv"]


def test_predict_file_keeps_the_tables_names_of_the_columns_it_carries(run, tmp_path):
    path, _ = run
    (tmp_path / "in.csv").write_text("review_id,text,labels\n7,A fine film.,pos\n8,Dull.,neg\n")
    predict_file(tmp_path / "in.csv", tmp_path / "out.csv", path, progress=False)
    rows = list(csv.reader(open(tmp_path / "out.csv")))
    assert rows[0][:4] == ["row", "review_id", "labels", "predicted"]  # not renamed to id and label
    assert [row[:3] for row in rows[1:]] == [["0", "7", "pos"], ["1", "8", "neg"]]
