"""Tests for hierattn/__main__.py: `python -m hierattn` is the `hierattn` program, quick to refuse bad input."""

import os
import pathlib
import subprocess
import sys

ROOT = pathlib.Path(__file__).resolve().parents[1]

# Imported by Python at start-up (from PYTHONPATH): at exit, says on standard output whether TensorFlow was imported.
SITECUSTOMIZE = """
import atexit, os, sys
atexit.register(lambda: os.write(1, f"\\ntensorflow imported: {'tensorflow' in sys.modules}\\n".encode()))
"""


def python_m_hierattn(*args, folder=None):
    path = [str(folder)] if folder else []
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([*path, str(ROOT)])}
    return subprocess.run(
        [sys.executable, "-m", "hierattn", *map(str, args)],
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
        cwd=folder or ROOT,
    )


def test_python_m_hierattn_help_lists_the_commands():
    result = python_m_hierattn("--help")
    assert result.returncode == 0, result.stderr
    assert result.stdout.splitlines()[:3] == [
        "Usage: hierattn [OPTIONS] COMMAND [ARGS]...",
        "",
        "  hierattn: attention-based document classification you can explain.",
    ]
    commands = [line.split()[0] for line in result.stdout.split("Commands:", 1)[1].splitlines() if line.strip()]
    assert commands == ["evaluate", "explain", "export", "predict", "serve", "train"]


def test_python_m_hierattn_refuses_bad_input_in_one_line_before_tensorflow_is_imported(tmp_path):
    (tmp_path / "sitecustomize.py").write_text(SITECUSTOMIZE)
    missing = python_m_hierattn("train", "csv", tmp_path / "missing.csv", folder=tmp_path)
    assert missing.returncode == 1 and "Traceback" not in missing.stderr
    assert missing.stderr == f"Error: no such file: {tmp_path / 'missing.csv'}\n"
    assert missing.stdout.strip() == "tensorflow imported: False"
    (tmp_path / "train.csv").write_text("text,label\ngreat,pos\nawful,neg\n")
    length = python_m_hierattn(
        "train", "csv", tmp_path / "train.csv", "--model", "rnn", "--max-length", "30x5", folder=tmp_path
    )
    assert length.returncode == 1
    assert length.stderr == "Error: --max-length for the rnn model is a number of words, e.g. 400; got '30x5'\n"
    assert length.stdout.strip() == "tensorflow imported: False"
    nothing = python_m_hierattn("train", "--resume", tmp_path / "nothing", folder=tmp_path)
    assert nothing.returncode == 1
    assert nothing.stderr == f"Error: nothing to resume at {tmp_path / 'nothing'}: it is not a run directory\n"
    assert nothing.stdout.strip() == "tensorflow imported: False"
