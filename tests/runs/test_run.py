"""`hierattn.runs.run`: a run found once, each of its files read at most once, its model loaded at most once.

The counts are taken along whole commands (`hierattn predict` in process,
a server's `Service` made as `hierattn serve` makes it): every read of a
run's JSON files, every load of its bundle or Keras model, and every time a
run is looked for.
"""

import collections
import contextlib
import json
import shutil

import pytest
from click.testing import CliRunner

from hierattn import runtime
from hierattn.cli import cli
from hierattn.errors import RunError
from hierattn.models import loading
from hierattn.runs import run as run_module
from hierattn.runs.directory import BUNDLE_FILE, write_status
from hierattn.runs.run import Run, load_run
from hierattn.utils import jsonfile

pytestmark = pytest.mark.slow

TEXT = "The film was wonderful. I loved the acting!"


class Reads:
    """What was read: `files[name]` reads of each run file by its name, `runs` look-ups, `models[name]` loads."""

    def __init__(self, monkeypatch):
        self.files, self.models, self.runs = collections.Counter(), collections.Counter(), 0
        real_open, real_resolve = open, run_module.complete_run
        real_bundle, real_keras = runtime.load, loading.load_classifier

        def counted_open(path, *args, **kwargs):
            self.files[str(path).rsplit("/", 1)[-1]] += 1
            return real_open(path, *args, **kwargs)

        def resolve(*args, **kwargs):
            self.runs += 1
            return real_resolve(*args, **kwargs)

        def bundle(path, *args, **kwargs):
            self.models[BUNDLE_FILE] += 1
            return real_bundle(path, *args, **kwargs)

        def keras_model(path, *args, **kwargs):
            self.models["model.keras"] += 1
            return real_keras(path, *args, **kwargs)

        monkeypatch.setattr(jsonfile, "open", counted_open, raising=False)  # load_json's own `open`
        monkeypatch.setattr(run_module, "complete_run", resolve)
        monkeypatch.setattr(runtime, "load", bundle)
        monkeypatch.setattr(loading, "load_classifier", keras_model)

    def at_most_once(self):
        assert self.runs == 1, f"the run was looked for {self.runs} times"
        assert all(n == 1 for n in self.files.values()), f"files read more than once: {dict(self.files)}"
        assert sum(self.models.values()) == 1, f"models loaded: {dict(self.models)}"


@pytest.fixture
def reads(monkeypatch):
    return Reads(monkeypatch)


@pytest.fixture
def keras_only(han_run_dir, tmp_path):
    """A copy of the session's HAN run without its bundle: predictions come from model.keras."""
    path = shutil.copytree(han_run_dir, tmp_path / "keras-run")
    (path / BUNDLE_FILE).unlink()
    return path


def _predict(*args):
    result = CliRunner().invoke(cli, ["predict", *map(str, args)])
    assert result.exit_code == 0, result.output
    return result


def test_predict_with_a_bundle_reads_each_file_once(han_run_dir, reads):
    _predict(TEXT, "--run", han_run_dir)
    reads.at_most_once()
    assert reads.models == {BUNDLE_FILE: 1} and "metrics.json" not in reads.files


def test_predict_with_the_keras_model_reads_each_file_once(keras_only, reads):
    _predict(TEXT, "--run", keras_only, "--top-k", "1")
    reads.at_most_once()
    assert reads.models == {"model.keras": 1}  # and the run's settings and metrics, checked as load_run does


def test_predict_a_multi_label_file_reads_the_config_once(multilabel_run_dir, reads, tmp_path):
    (tmp_path / "in.txt").write_text("They talked about goal at length.\nThe bank cut rates.\n")
    _predict("--file", tmp_path / "in.txt", "--output", tmp_path / "out.csv", "--run", multilabel_run_dir)
    reads.at_most_once()
    assert reads.files["config.json"] == 1  # the label separator


@pytest.mark.parametrize(
    ("newer", "model"),
    [("keras_only", "model.keras"), ("han_run_dir", BUNDLE_FILE), ("multilabel_run_dir", BUNDLE_FILE)],
)
def test_predict_without_run_finds_the_latest_once(newer, model, han_run_dir, tmp_path, reads, request):
    root = tmp_path / "here" / "runs"
    shutil.copytree(han_run_dir, root / "older")
    shutil.copytree(request.getfixturevalue(newer), root / "newer")
    write_status(root / "older", finished="2026-01-01T00:00:00+00:00")
    write_status(root / "newer", finished="2026-02-01T00:00:00+00:00")
    reads.files.clear()
    with contextlib.chdir(tmp_path / "here"):
        result = _predict(TEXT)
    assert "run: runs/newer (the latest complete run under runs/)" in result.output
    assert reads.runs == 1 and reads.files["run.json"] == 2  # each run's status once, while choosing
    assert reads.models == {model: 1} and reads.files["config.json"] <= 1


def test_a_servers_start_reads_each_file_once(multilabel_run_dir, reads):
    from hierattn.serve.service import Service

    service = Service(multilabel_run_dir, explain=False)
    first, again = service.describe(), service.describe()
    reads.at_most_once()
    assert first["metrics"] == again["metrics"] is not None and reads.files["metrics.json"] == 1
    assert first["predictions_from"] == BUNDLE_FILE and service.run.path == multilabel_run_dir


def test_open_refuses_what_is_not_a_complete_run(han_run_dir, tmp_path):
    with pytest.raises(RunError, match="no run directory"):
        Run.open(tmp_path / "nothing")
    unfinished = shutil.copytree(han_run_dir, tmp_path / "unfinished")
    write_status(unfinished, status="training")
    with pytest.raises(RunError, match="unfinished run"):
        Run.open(unfinished)
    with pytest.raises(RunError, match="no trained run found under"):
        Run.open(root=tmp_path / "empty")


def test_a_run_given_is_used_as_it_is(han_run_dir):
    run = Run.open(han_run_dir)
    assert Run.open(run) is run and load_run(run) is run
    assert run.line == f"run: {han_run_dir}" and run.status["status"] == "complete"


def test_the_predictor_is_loaded_once_and_says_where_it_came_from(han_run_dir, keras_only):
    run = Run.open(han_run_dir)
    assert run.predicts_with is None
    assert run.predictor() is run.predictor() and run.predicts_with == BUNDLE_FILE
    fallback = Run.open(keras_only)
    assert fallback.predictor() is fallback.classifier and fallback.predicts_with == "model.keras"


def test_a_damaged_part_is_one_line(han_run_dir, tmp_path):
    path = shutil.copytree(han_run_dir, tmp_path / "run")
    (path / "metrics.json").write_text("{not json")
    run = Run.open(path)
    with pytest.raises(RunError, match="^damaged run: .*metrics.json is not valid JSON"):
        _ = run.metrics
    assert run.data == Run.open(han_run_dir).data  # what config.json records is still there
    (path / "config.json").write_text(json.dumps({"format": "something else"}))
    assert Run.open(path).data == {} and Run.open(path).label_separator == "|"
