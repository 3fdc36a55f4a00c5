"""The program against faults (cli.py in real processes): quiet, fast to refuse, one line per epoch in a file.

Every case checks the contract of bad input (`conftest.assert_refused`): exit code 1 or 2, exactly one line that
starts with `Error:`, no traceback anywhere in the output, no earlier file changed and no partial file left behind.

Each case runs a fresh Python process: TensorFlow's C++ log lines and what is imported before an error can
only be seen there.
"""

import os
import pathlib
import subprocess
import sys

import pytest

from conftest import assert_refused, run_program, tiny_args

ROOT = pathlib.Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def trained(cli_run):
    """The session's HAN run trained through the CLI (`cli_run`), never changed here: `workdir` has a copy."""
    return cli_run[1]


# The program: quiet, fast to refuse, one line per epoch in a file ------------------------------------------------------


TF_CPP_LINE = r"^(?:[IWEF]\d{4} |WARNING: All log messages|.*(?:cuInit|cuda|oneDNN|cpu_feature_guard|TF_ENABLE_ONEDNN))"


def test_no_tensorflow_cpp_lines_unless_verbose_and_one_line_per_epoch_in_a_file(tiny_csv, tmp_path):
    import re

    with_missing_labels = tmp_path / "train.csv"
    with_missing_labels.write_text(tiny_csv[0].read_text() + "no label here,NaN\n")
    train = run_program(
        "train",
        "csv",
        with_missing_labels,
        "--test",
        tiny_csv[1],
        "--output",
        tmp_path / "run",
        *tiny_args(2),
    )
    assert train.returncode == 0, train.stderr.decode()
    assert "Warning" not in train.stderr.decode() and "1 without a label" in train.stderr.decode()
    stdout = train.stdout.decode()
    assert "\x1b[" not in stdout and "\r" not in stdout and "\b" not in stdout  # no progress-bar redraws in a file
    epoch_lines = [line for line in stdout.splitlines() if "val_loss" in line]
    assert 1 <= len(epoch_lines) <= 2, stdout
    outputs = [train]
    for args in (
        ["predict", "--run", tmp_path / "run", "a great film"],
        ["explain", "--run", tmp_path / "run", "a great film. an awful plot."],
        ["evaluate", "--run", tmp_path / "run"],
    ):
        result = run_program(*args)
        assert result.returncode == 0, result.stderr.decode()
        outputs.append(result)
    for result in outputs:
        text = result.stdout.decode() + result.stderr.decode()
        assert not re.search(TF_CPP_LINE, text, re.M), text


QUIETING = """
import os, sys
from hierattn.cli import configure_process
configure_process(verbose=sys.argv[1] == "verbose")
os.write(2, b"written to file descriptor 2, as C++ code writes\\n")
sys.stderr.write("written to sys.stderr, as Python code writes\\n")
"""


@pytest.mark.parametrize("mode", ["quiet", "verbose"])
def test_the_program_discards_only_what_is_written_to_file_descriptor_2_unless_verbose(mode):
    result = subprocess.run(
        [sys.executable, "-c", QUIETING, mode],
        capture_output=True,
        text=True,
        timeout=60,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
    )
    assert result.returncode == 0
    assert "written to sys.stderr" in result.stderr
    assert ("written to file descriptor 2" in result.stderr) == (mode == "verbose")


FAST_FAIL = """
import sys
from click.testing import CliRunner
from hierattn.cli import cli
from hierattn.runs.run import load_run
result = CliRunner().invoke(cli, sys.argv[1:])
print(result.exit_code, "tensorflow" in sys.modules, "keras" in sys.modules)
print(result.output)
"""


@pytest.mark.parametrize(
    "args",
    [
        ["train", "csv", "{tmp}/missing.csv"],
        ["train", "csv", "{train}", "--text-column", "body"],
        ["train", "csv", "{one_class}"],
        ["train", "imdb", "{tmp}/nowhere"],
        ["train", "csv", "{train}", "--learning-rate", "nan"],
        ["predict", "--run", "{tmp}/no-run", "a film"],
        ["predict", "--run", "{run}", "--file", "{tmp}/missing.txt"],
        ["predict", "--run", "{run}", "--file", "{latin}"],
        ["evaluate", "--run", "{run}", "--data", "{tmp}/missing.csv"],
        ["evaluate", "--run", "{run}", "--data", "{train}", "--label-column", "stars"],
        ["explain", "--run", "{run}", "--dataset", "{tmp}/missing.csv"],
        ["explain", "--run", "{run}", "   "],
    ],
    ids=[
        "train-path",
        "train-column",
        "train-one-class",
        "imdb-path",
        "option-value",
        "predict-run",
        "predict-file",
        "predict-encoding",
        "evaluate-path",
        "evaluate-column",
        "explain-dataset",
        "explain-empty",
    ],
)
def test_errors_come_before_tensorflow_is_imported(trained, tiny_csv, tmp_path, args):
    (tmp_path / "one.csv").write_text("text,label\n" + "a film,pos\n" * 5)
    (tmp_path / "latin.txt").write_bytes(b"caf\xe9\n")
    filled = [
        a.format(
            tmp=tmp_path, train=tiny_csv[0], run=trained, one_class=tmp_path / "one.csv", latin=tmp_path / "latin.txt"
        )
        for a in args
    ]
    result = subprocess.run(
        [sys.executable, "-c", FAST_FAIL, *map(str, filled)],
        capture_output=True,
        text=True,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
        timeout=120,
        cwd=tmp_path,
    )
    code, tensorflow_imported, keras_imported = result.stdout.split("\n", 1)[0].split()
    assert_refused(result.stdout.split("\n", 1)[1], int(code))
    assert (tensorflow_imported, keras_imported) == ("False", "False"), result.stdout


WITHOUT_SCIKIT_LEARN = """
import sys
from hierattn.cli import configure_process
configure_process(verbose=True)
import tensorflow, keras
loaded = "sklearn" in sys.modules
import sklearn
print(loaded, type(tensorflow.__spec__.loader).__name__, type(keras.__loader__).__name__, sklearn.__name__)
"""


def test_the_program_loads_tensorflow_without_scikit_learn_which_is_importable_after():
    result = subprocess.run(
        [sys.executable, "-c", WITHOUT_SCIKIT_LEARN],
        capture_output=True,
        text=True,
        timeout=120,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
    )
    assert result.stdout.split() == ["False", "SourceFileLoader", "SourceFileLoader", "sklearn"], result.stderr


def test_the_program_selects_the_bfc_allocator_unless_the_user_chose(tmp_path):
    script = (
        "import os, sys; from hierattn.cli import configure_process; configure_process(); "
        "print(os.environ['TF_CPU_ALLOCATOR_USE_BFC'])"
    )
    env = {k: v for k, v in os.environ.items() if k != "TF_CPU_ALLOCATOR_USE_BFC"}
    for setting, expected in ((None, "true"), ("false", "false")):
        child_env = {**env, "PYTHONPATH": str(ROOT), **({"TF_CPU_ALLOCATOR_USE_BFC": setting} if setting else {})}
        result = subprocess.run(
            [sys.executable, "-c", script], capture_output=True, text=True, env=child_env, timeout=60
        )
        assert result.stdout.strip() == expected, result.stderr


def test_the_program_says_once_which_encoding_it_detected_even_without_verbose(tmp_path):
    path = tmp_path / "zh.csv"
    path.write_bytes(
        ("text,label\n" + "送餐很快，味道不错。,pos\n等了两个小时，饭都凉了。,neg\n" * 20).encode("gb18030")
    )
    script = (
        "import sys; from hierattn.cli import configure_process; configure_process(verbose=sys.argv[1] == 'verbose'); "
        "from hierattn.data import read_table; print(len(read_table(sys.argv[2])))"
    )
    for mode in ("quiet", "verbose"):
        result = subprocess.run(
            [sys.executable, "-c", script, mode, str(path)],
            capture_output=True,
            text=True,
            env={**os.environ, "PYTHONPATH": str(ROOT)},
            timeout=60,
        )
        assert result.stdout.strip() == "40", result.stderr
        said = [line for line in result.stderr.splitlines() if "the encoding detected" in line]
        assert said == [f"{path} is not UTF-8: read as GB18030 (gb18030), the encoding detected"], result.stderr
