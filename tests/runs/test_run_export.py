"""`hierattn.runs.export`: a run's bundle written when training ends, exported again, and loaded to predict."""

import hashlib
import json
import shutil

import numpy as np
import pytest

from hierattn import runtime
from hierattn.errors import ArgumentError
from hierattn.runs.export import export_run
from hierattn.runs.predict import load_predictor, predict_file, predict_text

from conftest import invoke_cli, make_run, rewrite_bundle_metadata

pytestmark = pytest.mark.slow


def test_training_writes_the_bundle_and_records_it(han_run_dir, han_run):
    status = json.loads((han_run_dir / "run.json").read_text())
    bundle = status["bundle"]
    assert bundle["file"] == "model.onnx" and bundle["bytes"] == (han_run_dir / "model.onnx").stat().st_size
    assert bundle["seconds"] > 0
    assert bundle["sha256"] == hashlib.sha256((han_run_dir / "model.onnx").read_bytes()).hexdigest()
    assert bundle["mtime_ns"] == (han_run_dir / "model.onnx").stat().st_mtime_ns
    texts = ["The film was wonderful.", "I found the acting dreadful!"]
    np.testing.assert_allclose(
        runtime.load(han_run_dir / "model.onnx").predict(texts), han_run.predict(texts, verbose=0), atol=1e-5
    )


def test_a_bundle_unchanged_since_it_was_recorded_is_not_hashed_and_one_touched_is(han_run_dir, tmp_path, monkeypatch):
    run = shutil.copytree(han_run_dir, tmp_path / "run")  # copy2: the same modification times
    hashed = []
    monkeypatch.setattr("hierattn.runs.run.bundle_digest", lambda file: hashed.append(file) or "0" * 64)
    assert isinstance(load_predictor(run), runtime.Predictor) and hashed == []
    (run / "model.onnx").touch()  # another time: hashed, and (by the stand-in digest) not the file recorded
    said = []
    assert not isinstance(load_predictor(run, log=said.append), runtime.Predictor) and len(hashed) == 1
    assert "is not the bundle this run wrote" in said[0]


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


def _predicted(run, text="The film was wonderful."):
    """`hierattn predict TEXT --run RUN`'s output, which must succeed."""
    result = invoke_cli("predict", text, "--run", run)
    assert result.exit_code == 0 and "Traceback" not in result.output, result.output
    return result.output


def test_another_runs_bundle_is_set_aside_and_model_keras_predicts(han_run_dir, multilabel_run_dir, tmp_path):
    """A multi-label run's model.onnx put in place of a single-label run's: not its sha256, so model.keras answers."""
    run = shutil.copytree(han_run_dir, tmp_path / "run")
    shutil.copyfile(multilabel_run_dir / "model.onnx", run / "model.onnx")
    keras_only = shutil.copytree(han_run_dir, tmp_path / "keras-only")
    (keras_only / "model.onnx").unlink()
    output = _predicted(run)
    said, answer = output.split("\n", 1)
    assert said == (
        f"{run / 'model.onnx'} is not the bundle this run wrote (its sha256 is not run.json's record): "
        "predicting with model.keras"
    )
    assert answer == _predicted(keras_only).replace(str(keras_only), str(run))


def test_a_run_without_a_recorded_sha256_keeps_its_bundle_unless_its_labels_differ(
    han_run_dir, multilabel_run_dir, tmp_path
):
    """Runs written before bundles were recorded with their sha256: their own bundle predicts, another run's not."""
    run = shutil.copytree(han_run_dir, tmp_path / "run")
    status = json.loads((run / "run.json").read_text())
    del status["bundle"]["sha256"]
    (run / "run.json").write_text(json.dumps(status))
    assert isinstance(load_predictor(run), runtime.Predictor)
    shutil.copyfile(multilabel_run_dir / "model.onnx", run / "model.onnx")
    said = []
    assert type(load_predictor(run, log=said.append)).__name__ == "TextClassifier"
    assert said[0] == (
        f"{run / 'model.onnx'} is not this run's: its labels are not those of config.json: predicting with model.keras"
    )


def test_a_bundle_in_a_run_that_wrote_none_is_set_aside(han_run_dir, tmp_path):
    run = shutil.copytree(han_run_dir, tmp_path / "run")
    status = json.loads((run / "run.json").read_text())
    status["bundle"] = {"error": "the classifier could not be converted to ONNX"}
    (run / "run.json").write_text(json.dumps(status))
    said = []
    assert type(load_predictor(run, log=said.append)).__name__ == "TextClassifier"
    assert "its run.json says no bundle was written: predicting with model.keras" in said[0]


def test_an_edited_bundle_in_a_run_gives_one_line_and_model_keras_answers(han_run_dir, tmp_path):
    """Through the CLI: a run without a recorded sha256, its bundle refused at load by its metadata; no traceback."""

    run = shutil.copytree(han_run_dir, tmp_path / "run")
    rewrite_bundle_metadata(han_run_dir / "model.onnx", run / "model.onnx", lambda m: m.update(label_names=["a", "a"]))
    status = json.loads((run / "run.json").read_text())
    del status["bundle"]["sha256"]  # only the metadata's check can tell
    (run / "run.json").write_text(json.dumps(status))
    output = _predicted(run)
    assert output.splitlines()[0] == (
        f"{run / 'model.onnx'}: its hierattn metadata is damaged (label_names: 'a' appears twice): "
        "predicting with model.keras"
    )
