"""Tests for hierattn.runs.evaluate: streamed batch scoring and run evaluation."""

import bz2
import csv
import gzip
import io
import lzma
import zipfile

import numpy as np
import pytest

from hierattn.data import LabelMap, TextDataset
from hierattn.data.text_files import iter_text_chunks, read_texts
from hierattn.errors import ArgumentError, DataError, RunError
from hierattn.runs.data_record import describe_source
from hierattn.runs.directory import CONFIG_FORMAT, write_status
from hierattn.runs.evaluate import evaluate_classifier, evaluate_run, evaluation_data
from hierattn.runs.predict import score_to_csv, texts_with_words
from hierattn.utils.jsonfile import save_json


@pytest.fixture(scope="module")
def run(rnn_run):
    """The session's tiny RNN classifier."""
    return rnn_run


def test_text_file_csv_and_stream_chunks(tmp_path):
    (tmp_path / "lines.txt").write_text("one\ntwo\nthree\n")
    assert list(iter_text_chunks(tmp_path / "lines.txt", chunk_size=2)) == [["one", "two"], ["three"]]
    (tmp_path / "t.csv").write_text("id,review\n1,good\n2,\n3,bad\n")
    assert list(iter_text_chunks(tmp_path / "t.csv", chunk_size=10)) == [["good", "", "bad"]]
    assert list(iter_text_chunks(None, stream=io.BytesIO(b"a\r\nb\n"), chunk_size=1)) == [["a"], ["b"]]
    with pytest.raises(DataError, match="standard input is not valid utf-8 text: line 2 has the byte 0xff"):
        list(iter_text_chunks(None, stream=io.BytesIO(b"a\n\xff\xfe\n")))
    with pytest.raises(DataError, match=r"standard input holds NUL bytes \(line 1\)"):
        list(iter_text_chunks(None, stream=io.BytesIO(b"a\0b\n")))
    assert list(iter_text_chunks(None, stream=io.BytesIO(b"caf\xe9\n"), encoding="latin-1")) == [["caf\u00e9"]]
    with pytest.raises(DataError, match="no such file"):
        list(iter_text_chunks(tmp_path / "missing.txt"))


def test_read_texts_skips_blank_ones(tmp_path):
    (tmp_path / "t.csv").write_text("id,review,note\n1,good,x\n2,,y\n3,  ,z\n4,bad,w\n")
    assert read_texts(tmp_path / "t.csv") == ["good", "bad"]
    assert read_texts(tmp_path / "t.csv", "note") == ["x", "y", "z", "w"]
    (tmp_path / "blank.txt").write_text("\n \n")
    with pytest.raises(DataError, match="no texts found"):
        read_texts(tmp_path / "blank.txt")


def zipped(data, name):
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        archive.writestr(name, data)
    return buffer.getvalue()


@pytest.mark.parametrize(
    "suffix, compress",
    [(".gz", gzip.compress), (".bz2", bz2.compress), (".xz", lzma.compress), (".zip", None)],
)
def test_compressed_text_and_table_files_are_read_in_chunks(tmp_path, suffix, compress):
    def write(name, text):
        data = text if isinstance(text, bytes) else text.encode()
        path = tmp_path / (name + suffix)
        path.write_bytes(zipped(data, name) if compress is None else compress(data))
        return path

    texts = write("texts.txt", "one\ntwo\n\nthree\n")
    assert list(iter_text_chunks(texts, chunk_size=2)) == [["one", "two"], ["", "three"]]
    assert read_texts(texts) == ["one", "two", "three"]
    table = write("t.csv", "id,review,label\n1,good,pos\n2,,neg\n3,bad,neg\n")
    chunks = list(iter_text_chunks(table, chunk_size=2))
    assert chunks == [["good", ""], ["bad"]] and chunks[1].columns == {"id": ["3"], "label": ["neg"]}
    with pytest.raises(DataError, match=r"latin\.txt.* is not valid utf-8 text: line 2 has the byte 0xe9"):
        list(iter_text_chunks(write("latin.txt", b"ok\ncaf\xe9\n")))


def test_spreadsheets_and_damaged_files_are_refused_as_texts_to_score(tmp_path):
    with pytest.raises(DataError, match=r"^texts\.xlsx is an Excel workbook: save it as CSV"):
        list(iter_text_chunks("texts.xlsx"))
    data = gzip.compress(b"a text\n" * 100_000)
    (tmp_path / "cut.txt.gz").write_bytes(data[: len(data) // 2])
    with pytest.raises(DataError, match=r"cut\.txt\.gz is not a readable gzip file: it is damaged or cut short"):
        read_texts(tmp_path / "cut.txt.gz")
    with pytest.raises(DataError, match=r"is a folder, not a text file$"):
        list(iter_text_chunks(tmp_path))


def test_scores_every_row_in_chunks(run, tmp_path):
    texts = [f"The film was {'great' if i % 2 else 'awful'}." for i in range(25)]
    (tmp_path / "in.txt").write_text("\n".join(texts) + "\n")
    count = score_to_csv(run, iter_text_chunks(tmp_path / "in.txt", chunk_size=7), tmp_path / "out.csv", progress=False)
    assert count == 25
    rows = list(csv.DictReader(open(tmp_path / "out.csv")))
    assert [int(r["row"]) for r in rows] == list(range(25))
    probabilities = np.array([[float(r["p_neg"]), float(r["p_pos"])] for r in rows])
    np.testing.assert_allclose(probabilities, run.predict(texts), atol=1e-6)
    assert [r["predicted"] for r in rows] == run.predict_labels(texts)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["in.txt", "out.csv"]  # no partial file left


def test_failed_scoring_leaves_no_partial_file(run, tmp_path):
    def chunks():
        yield ["fine"]
        raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        score_to_csv(run, chunks(), tmp_path / "out.csv", progress=False)
    assert list(tmp_path.iterdir()) == []


def test_evaluate_classifier_checks_classes(run):
    data = TextDataset(["great film", "awful film"], np.array([1, 0]), LabelMap(["neg", "pos"]), [0, 1])
    metrics = evaluate_classifier(run, data)
    assert metrics["documents"] == 2 and len(metrics["confusion_matrix"]) == 2
    assert metrics["calibration"]["temperature"] == run.cascade.temperature  # and how calibrated it is
    assert set(metrics["calibration"]["after"]) == {
        "ece",
        "log_loss",
        "brier",
        "coverage",
        "reliability",
        "coverage_curve",
    }
    other = TextDataset(["x", "y"], np.array([0, 1]), LabelMap(["a", "b"]), [0, 1])
    with pytest.raises(DataError, match="differ from the model"):
        evaluate_classifier(run, other)


def test_texts_with_words_keeps_the_positions_of_texts_with_words(run):
    assert texts_with_words(run, ["great film", "<br/>", "  ", "awful"]) == [0, 3]
    with pytest.raises(DataError, match=r"^the text has no word to read \(only markup, symbols or spaces\)$"):
        texts_with_words(run, ["<p></p>"])
    with pytest.raises(DataError, match="^none of the texts has a word to read"):
        texts_with_words(run, ["", "<br/>"])


def fake_run(path, dataset="data", data=None):
    """A run directory's records (run.json, config.json), without a model: what `evaluation_data` reads."""
    path.mkdir()
    write_status(path, status="complete", dataset=dataset)
    save_json(path / "config.json", CONFIG_FORMAT, {"model": "han", "data": data or {}})
    return path


def test_evaluation_data_is_the_run_s_own_test_file_with_its_columns_and_encoding(tmp_path):
    (tmp_path / "test.csv").write_bytes("body,stars,text\ncaf\u00e9 great,pos,x\nawful,neg,y\n".encode("latin-1"))
    run = fake_run(
        tmp_path / "run",
        data={
            "test": describe_source(tmp_path / "test.csv"),
            "text_column": "body",
            "label_column": "stars",
            "encoding": "latin-1",
        },
    )
    said = []
    data = evaluation_data(run, log=said.append)
    assert said == [f"data: {tmp_path / 'test.csv'} (the run's test file)"] and data.recorded
    dataset, report = data.load(["neg", "pos"])
    assert dataset.texts == ["caf\u00e9 great", "awful"] and list(dataset.labels) == [1, 0]
    assert (report["used"], report["text_column"]) == (2, "body")
    given = evaluation_data(run, tmp_path / "test.csv", text_column="text", label_column="stars", encoding="latin-1")
    assert not given.recorded and given.load(["neg", "pos"])[0].texts == ["x", "y"]


def test_evaluation_data_reads_a_compressed_table(tmp_path):
    (tmp_path / "test.tsv.gz").write_bytes(gzip.compress(b"text\tlabel\ngreat\tpos\nawful\tneg\n"))
    data = evaluation_data(fake_run(tmp_path / "run"), tmp_path / "test.tsv.gz")
    dataset, report = data.load(["neg", "pos"])
    assert dataset.texts == ["great", "awful"] and list(dataset.labels) == [1, 0] and report["used"] == 2


def test_evaluation_data_errors_name_the_data_argument(tmp_path):
    (tmp_path / "test.csv").write_text("text,label\ngreat,pos\nawful,neg\n")
    (tmp_path / "texts.txt").write_text("great\n")
    run = fake_run(tmp_path / "run", data={"test": describe_source(tmp_path / "test.csv")})
    (tmp_path / "test.csv").write_text("text,label\ngreat,pos\nawful,neg\nadded,pos\n")
    with pytest.raises(ArgumentError) as changed:
        evaluation_data(run)
    assert str(changed.value) == (
        f"{tmp_path / 'test.csv'} changed since the run recorded it (its sha256 is not the "
        f"one in config.json); to evaluate on it as it is now, pass it with data "
        f"{tmp_path / 'test.csv'}"
    )
    assert changed.value.argument == "data"
    (tmp_path / "test.csv").unlink()
    with pytest.raises(ArgumentError, match=r"no longer exists; pass labelled data with data FILE$"):
        evaluation_data(run)
    with pytest.raises(
        ArgumentError,
        match=r"^data .*texts\.txt: give a labelled \.csv/\.tsv/.* file \(this run was "
        r"not trained on IMDB\)$",
    ):
        evaluation_data(run, tmp_path / "texts.txt")
    without = fake_run(tmp_path / "without")
    with pytest.raises(
        ArgumentError, match="^this run was trained without a test file: pass labelled data with data FILE$"
    ):
        evaluation_data(without)
    (tmp_path / "other.csv").write_text("text,label\ngreat,pos\n")
    with pytest.raises(DataError, match="no label column 'stars'"):  # read and checked before any model loads
        evaluation_data(without, tmp_path / "other.csv", label_column="stars")


def saved_run(classifier, path, data=None):
    """A complete run directory holding `classifier`, with `fake_run`'s records."""
    fake_run(path, data=data)
    classifier.save(path / "model.keras")
    return path


def test_evaluate_run_chooses_the_data_then_loads_the_run_and_says_what_it_read(run, tiny_csv, tmp_path):
    recorded = saved_run(run, tmp_path / "recorded", data={"test": describe_source(tiny_csv[1])})
    said = []
    metrics = evaluate_run(recorded, log=said.append, on_table=lambda path, report: said.append((path, report["used"])))
    assert said == [f"data: {tiny_csv[1]} (the run's test file)", f"run: {recorded}", (str(tiny_csv[1]), 40)]
    assert metrics["documents"] == 40 and metrics["labels"] == ["neg", "pos"]
    given = evaluate_run(saved_run(run, tmp_path / "plain"), tiny_csv[1])  # no log, no table report: quiet
    assert given["confusion_matrix"] == metrics["confusion_matrix"]


def test_evaluate_run_refuses_a_missing_run_then_bad_data_before_loading_the_model(tiny_csv, tmp_path):
    with pytest.raises(RunError, match="^no run directory at"):
        evaluate_run(tmp_path / "absent", tiny_csv[1])
    broken = fake_run(tmp_path / "broken")
    (broken / "model.keras").write_bytes(b"not a model")  # loading it would fail: the data is refused first
    with pytest.raises(DataError, match="no label column 'stars'"):
        evaluate_run(broken, tiny_csv[1], label_column="stars")
    with pytest.raises(ArgumentError, match="^this run was trained without a test file"):
        evaluate_run(broken)
    with pytest.raises(RunError, match="model.keras is not a Keras model file"):
        evaluate_run(broken, tiny_csv[1])


def test_a_multilabel_run_is_evaluated_on_label_sets(multilabel_run_dir, multilabel_csv):
    import json

    metrics = evaluate_run(multilabel_run_dir, str(multilabel_csv[1]))
    run = json.loads((multilabel_run_dir / "metrics.json").read_text())
    recorded, parts = run["test"], run["parts"]
    recorded.pop("prediction_reviews_per_second")
    # beside the cascade's scores, as training recorded them: the share the network read, the whole combination's
    assert metrics.pop("network_read", 1.0) == pytest.approx(parts["network_read"]["test"])
    whole = metrics.pop("whole", None)
    assert whole is None or whole == {key: parts["whole"]["test"][key] for key in whole}
    # and how calibrated its probabilities are, as training measured it (a multi-label run: one temperature a label)
    assert metrics.pop("calibration") == run["calibration"]["test"]
    temperatures = run["calibration"]["test"]["temperature"]
    assert len(temperatures) == len(run["test"]["labels"]) and all(t > 0 for t in temperatures)
    assert metrics == recorded
    own = evaluate_run(multilabel_run_dir)  # the run's own test file, with its separator
    assert own["micro_f1"] == metrics["micro_f1"]


def test_a_minimum_confidence_reports_what_it_answers_and_how_well(run, tiny_csv, tmp_path):
    from hierattn.data import load_table

    test, _ = load_table(tiny_csv[1], label_map=LabelMap(run.label_names))
    probabilities = run.predict(test.texts, verbose=0)
    least = float(np.median(probabilities.max(axis=1)))  # about half of them under it
    metrics = evaluate_run(saved_run(run, tmp_path / "run"), tiny_csv[1], min_confidence=least)
    sure = probabilities.max(axis=1) >= least
    found = metrics["abstention"]
    assert found["min_confidence"] == least and found["answered"] == int(sure.sum()) > 0
    assert found["left"] == len(sure) - int(sure.sum()) and found["coverage"] == pytest.approx(sure.mean(), abs=1e-5)
    assert found["accuracy"] == pytest.approx(np.mean(probabilities[sure].argmax(1) == test.labels[sure]), abs=1e-5)
    with pytest.raises(ArgumentError, match="min_confidence must be a probability"):
        evaluate_run(tmp_path / "absent", tiny_csv[1], min_confidence=2)  # refused before the run is looked for
