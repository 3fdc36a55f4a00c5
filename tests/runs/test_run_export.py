"""`hierattn.runs.export`: a run's bundle written when training ends, exported again, and loaded to predict."""

import json
import shutil

import numpy as np
import pytest

from hierattn import runtime
from hierattn.errors import ArgumentError
from hierattn.runs.export import export_run
from hierattn.runs.predict import load_predictor, predict_file, predict_text

from conftest import make_run

pytestmark = pytest.mark.slow


def test_training_writes_the_bundle_and_records_it(han_run_dir, han_run):
    status = json.loads((han_run_dir / "run.json").read_text())
    bundle = status["bundle"]
    assert bundle["file"] == "model.onnx" and bundle["bytes"] == (han_run_dir / "model.onnx").stat().st_size
    assert bundle["seconds"] > 0
    texts = ["The film was wonderful.", "I found the acting dreadful!"]
    np.testing.assert_allclose(
        runtime.load(han_run_dir / "model.onnx").predict(texts), han_run.predict(texts, verbose=0), atol=1e-5
    )


def test_load_predictor_prefers_the_bundle(han_run_dir, tmp_path):
    said = []
    model = load_predictor(han_run_dir, log=said.append)
    assert isinstance(model, runtime.Predictor) and said == [f"run: {han_run_dir}"]
    without = shutil.copytree(han_run_dir, tmp_path / "run")
    (without / "model.onnx").unlink()
    assert type(load_predictor(without)).__name__ == "TextClassifier"


def test_predicting_from_the_bundle_or_the_keras_model_gives_the_same_file(han_run_dir, tmp_path):
    lines = ["The film was great.", "<br />", "The film was awful. I found the acting dreadful!", "Zzyzx qwv."]
    (tmp_path / "in.txt").write_text("\n".join(lines) + "\n")
    without = shutil.copytree(han_run_dir, tmp_path / "run")
    (without / "model.onnx").unlink()
    predict_file(tmp_path / "in.txt", tmp_path / "bundle.csv", han_run_dir, progress=False)
    predict_file(tmp_path / "in.txt", tmp_path / "keras.csv", without, progress=False)
    assert (tmp_path / "bundle.csv").read_text() == (tmp_path / "keras.csv").read_text()
    assert predict_text(lines[0], han_run_dir) == pytest.approx(predict_text(lines[0], without), abs=1e-6)


def test_export_run_writes_a_new_file_and_refuses_an_existing_one(han_run_dir, tmp_path):
    path = export_run(han_run_dir, tmp_path / "copy.onnx")
    assert runtime.load(path).label_names == runtime.load(han_run_dir / "model.onnx").label_names
    (tmp_path / "mine.onnx").write_text("my file")
    with pytest.raises(ArgumentError, match="already exists"):
        export_run(han_run_dir, tmp_path / "mine.onnx")
    assert (tmp_path / "mine.onnx").read_text() == "my file"


def test_a_run_whose_classifier_cannot_be_exported_completes_without_a_bundle(tiny_csv, tmp_path, monkeypatch):
    from hierattn.export import converter as export

    monkeypatch.setattr(export, "TOLERANCE", -1.0)  # no graph can pass the check
    path = tmp_path / "run"
    classifier = make_run(tiny_csv, path, "rnn")
    status = json.loads((path / "run.json").read_text())
    assert status["status"] == "complete" and "does not give the classifier's answers" in status["bundle"]["error"]
    assert not (path / "model.onnx").exists()
    assert type(load_predictor(path)).__name__ == "TextClassifier"
    assert predict_text("The film was great.", path) == pytest.approx(
        dict(zip(classifier.label_names, classifier.predict(["The film was great."])[0].tolist())), abs=1e-6
    )


def test_a_bundle_with_damaged_metadata_is_refused_and_predict_falls_back(han_run_dir, tmp_path):
    import onnx

    from hierattn.errors import DataError

    run = shutil.copytree(han_run_dir, tmp_path / "run")
    model = onnx.load(run / "model.onnx")
    (entry,) = [p for p in model.metadata_props if p.key == "hierattn"]
    metadata = json.loads(entry.value)
    del metadata["vocabulary"]["tokens"]
    entry.value = json.dumps(metadata)
    onnx.save(model, run / "model.onnx")
    with pytest.raises(DataError, match="metadata is damaged"):
        runtime.load(run / "model.onnx")
    said = []
    assert type(load_predictor(run, log=said.append)).__name__ == "TextClassifier"
    assert "predicting with model.keras" in said[0]
