"""`hierattn export` and `hierattn predict` with a run's bundle: through click's CliRunner and as a user's process."""

import os
import pathlib
import subprocess
import sys
import time

import pytest
from click.testing import CliRunner

from hierattn import runtime
from hierattn.cli import cli

ROOT = pathlib.Path(__file__).resolve().parents[2]
pytestmark = pytest.mark.slow


def invoke(*args):
    return CliRunner().invoke(cli, [str(a) for a in args])


def test_export_writes_a_bundle_and_never_overwrites(han_run_dir, tmp_path):
    result = invoke("export", "--run", han_run_dir, "--output", tmp_path / "model.onnx")
    assert result.exit_code == 0, result.output
    assert f"exported {tmp_path / 'model.onnx'} (" in result.stdout and f"run: {han_run_dir}" in result.stderr
    assert runtime.load(tmp_path / "model.onnx").label_names == ["neg", "pos"]
    (tmp_path / "mine.onnx").write_text("my file")
    refused = invoke("export", "--run", han_run_dir, "--output", tmp_path / "mine.onnx")
    assert refused.exit_code != 0 and "Traceback" not in refused.output
    assert [line for line in refused.output.splitlines() if line.startswith("Error:")] == [
        f"Error: {tmp_path / 'mine.onnx'} already exists; choose another --output (nothing was overwritten)"
    ]
    assert (tmp_path / "mine.onnx").read_text() == "my file"
    missing = invoke("export", "--run", tmp_path / "absent")
    assert missing.exit_code != 0 and missing.output.startswith("Error: no run directory at")


def test_a_classifier_that_cannot_be_exported_gives_one_error_line(han_run_dir, tmp_path, monkeypatch):
    from hierattn.export import converter as export

    monkeypatch.setattr(export, "TOLERANCE", -1.0)  # no graph can pass the check against the classifier
    result = invoke("export", "--run", han_run_dir, "--output", tmp_path / "model.onnx")
    assert result.exit_code == 1 and "Traceback" not in result.output
    errors = [line for line in result.output.splitlines() if line.startswith("Error:")]
    assert len(errors) == 1 and "does not give the classifier's answers" in errors[0]
    assert list(tmp_path.iterdir()) == []
    assert invoke("export", "--run", han_run_dir, "--output", "-").exit_code == 2


def test_predict_from_a_cold_start_loads_no_tensorflow(han_run_dir):
    """`python cli.py predict "text"` with a run that has its bundle: the runtime answers; TensorFlow never loads."""
    script = (
        "import runpy, sys; sys.argv = ['cli.py', 'predict', '--run', sys.argv[1], 'The film was great.']\n"
        "try:\n    runpy.run_path('cli.py', run_name='__main__')\n"
        "finally:\n    print('tensorflow' in sys.modules, 'keras' in sys.modules, file=sys.stderr)\n"
    )
    started = time.perf_counter()
    done = subprocess.run(
        [sys.executable, "-c", script, str(han_run_dir)],
        capture_output=True,
        text=True,
        cwd=ROOT,
        timeout=120,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
    )
    seconds = time.perf_counter() - started
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("predicted: ") and done.stderr.splitlines()[-1] == "False False", done.stderr
    assert seconds < 10  # loose: a loaded CI machine; benchmarks/export_runtime.py measures the cold start
