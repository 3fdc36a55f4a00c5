"""`hierattn.runs.export`: a run's bundle written when training ends, exported again, and loaded to predict."""

import json
import shutil

import numpy as np
import pytest

from hierattn import runtime
from hierattn.errors import ArgumentError
from hierattn.runs.export import export_run, load_model
from hierattn.runs.predict import predict_file, predict_text

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


def test_load_model_prefers_the_bundle(han_run_dir, tmp_path):
    said = []
    model = load_model(han_run_dir, log=said.append)
    assert isinstance(model, runtime.Predictor) and said == [f"run: {han_run_dir}"]
    without = shutil.copytree(han_run_dir, tmp_path / "run")
    (without / "model.onnx").unlink()
    assert type(load_model(without)).__name__ == "TextClassifier"


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
