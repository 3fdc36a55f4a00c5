"""Tests for hierattn.cli.options through click's CliRunner: option values, shared checks, errors as one line.

None of these loads a model or imports TensorFlow: every case is refused (or parsed) before.
"""

import errno

import click
import pytest
from click.testing import CliRunner

from hierattn.cli import cli
from hierattn.cli.commands import program_name
from hierattn.cli.options import (
    FiniteFloat,
    friendly_errors,
    interrupted_text,
    one_text,
    option_name,
)
from hierattn.errors import ArgumentError, DataError, HierattnError, RunError
from hierattn.runs.directory import CONFIG_FORMAT, write_status
from hierattn.utils.jsonfile import save_json


def invoke(*args, input=None):
    return CliRunner().invoke(cli, [str(a) for a in args], input=input, prog_name="hierattn")


def usage_error(result, command):
    """The last line of a usage error (exit code 2) after click's usage lines."""
    assert result.exit_code == 2, result.output
    lines = result.output.splitlines()
    assert lines[:3] == [
        f"Usage: hierattn {command} [OPTIONS] {'[PATH]' if command == 'train csv' else '[TEXT]'}",
        f"Try 'hierattn {command} --help' for help.",
        "",
    ], result.output
    return lines[-1]


@pytest.mark.parametrize(
    "value, message",
    [
        ("nan", "'nan' is not a finite number > 0."),
        ("inf", "'inf' is not a finite number > 0."),
        ("0", "'0' is not a finite number > 0."),
        ("fast", "'fast' is not a number."),
    ],
)
def test_learning_rate_is_a_finite_positive_float(tmp_path, value, message):
    result = invoke("train", "csv", tmp_path / "t.csv", "--learning-rate", value)
    assert usage_error(result, "train csv") == f"Error: Invalid value for '--learning-rate': {message}"


def test_finite_float_bounds_are_named_in_its_message():
    fraction = FiniteFloat(0.0, 1.0, min_open=False, max_open=True)
    assert fraction.convert("0", None, None) == 0.0
    with pytest.raises(click.BadParameter, match=r"^'1' is not a finite number >= 0 and < 1\.$"):
        fraction.convert("1", None, None)


def test_text_and_file_options_are_one_or_the_other(tmp_path):
    (tmp_path / "t.csv").write_text("text\ngreat\n")
    assert (
        usage_error(invoke("predict", "a film", "--file", tmp_path / "t.csv"), "predict")
        == "Error: give either a text (or - for standard input) or --file, not both"
    )
    assert usage_error(invoke("predict"), "predict") == "Error: give a text, --file FILE, or - for standard input"
    assert (
        usage_error(invoke("explain"), "explain")
        == "Error: give a text, --file FILE, - for standard input, or --dataset"
    )
    assert (
        usage_error(invoke("explain", "a film", "--dataset", tmp_path / "t.csv"), "explain")
        == "Error: give either --dataset or texts (a text, --file or -), not both"
    )


def test_resume_takes_no_other_training_option(tmp_path):
    result = invoke("train", "csv", tmp_path / "t.csv", "--resume", tmp_path / "run", "--epochs", "3")
    assert (
        usage_error(result, "train csv")
        == "Error: --resume continues a run with its own settings: give no other training option"
    )
    assert usage_error(invoke("train", "csv"), "train csv") == (
        "Error: Missing argument 'PATH': the training table (or --resume RUN_DIR)."
    )
    cases = {
        ("--resume", tmp_path / "run", "csv", tmp_path / "t.csv"): "give --resume and --distribute after csv (or "
        "--resume alone: train --resume RUN_DIR)",
        ("--distribute", "mirrored"): "give the data to train on (train imdb, train csv) or a run to resume "
        "(--resume RUN_DIR)",
    }
    for args, message in cases.items():
        result = invoke("train", *args)
        assert (result.exit_code, result.output.splitlines()[-1]) == (2, f"Error: {message}")
    plain = invoke("train", "--resume", tmp_path / "nothing")
    assert (plain.exit_code, plain.output) == (
        1,
        f"Error: nothing to resume at {tmp_path / 'nothing'}: it is not a run directory\n",
    )


def test_an_interruption_says_how_to_resume_or_that_nothing_can_be():
    from hierattn.runs.sources import TrainingInterrupted

    resumable = TrainingInterrupted("runs/my run", resumable=True)
    assert interrupted_text(resumable) == (f"interrupted: resume with {program_name()} train --resume 'runs/my run'")
    assert interrupted_text(resumable, "mirrored").endswith("train --resume 'runs/my run' --distribute mirrored")
    assert interrupted_text(TrainingInterrupted("runs/x", resumable=False)) == (
        "interrupted before the run's first checkpoint: nothing to resume (its directory was removed)"
    )
    assert interrupted_text(KeyboardInterrupt()) == "interrupted before training began: nothing to resume"


def test_outputs_are_refused_before_any_work(tmp_path):
    (tmp_path / "earlier.csv").write_text("x\n")
    for command in ("predict", "explain"):
        existing = invoke(command, "a film", "--output", tmp_path / "earlier.csv", "--run", tmp_path / "none")
        assert (existing.exit_code, existing.output) == (
            1,
            f"Error: {tmp_path / 'earlier.csv'} already exists; choose another --output (nothing was overwritten)\n",
        )
    missing = invoke("evaluate", "--output", tmp_path / "no" / "m.json", "--run", tmp_path / "none")
    assert (missing.exit_code, missing.output) == (
        1,
        f"Error: the folder of --output {tmp_path / 'no' / 'm.json'} does not exist; create it first\n",
    )


def test_a_text_argument_is_checked_before_the_run_is_looked_for(tmp_path):
    for command in ("predict", "explain"):
        assert invoke(command, "  \t ", "--run", tmp_path / "none").output == "Error: the text is empty\n"
        assert (
            invoke(command, "a film", "--run", tmp_path / "none").output
            == f"Error: no run directory at {tmp_path / 'none'}\n"
        )
    with pytest.raises(
        HierattnError,
        match=r"^the text is not valid UTF-8 \(a stray byte at character 4\); pass it in "
        r"a file with --file FILE --encoding ENCODING$",
    ):
        one_text("caf\udce9")


def test_library_errors_about_an_argument_name_its_option(tmp_path):
    assert option_name("max_length") == "--max-length" and option_name("data") == "--data"
    assert option_name("run_dir") == "--run"
    (tmp_path / "t.csv").write_text("text,label\ngreat,pos\nawful,neg\n")
    result = invoke("train", "csv", tmp_path / "t.csv", "--model", "rnn", "--max-length", "30x5")
    assert (result.exit_code, result.output) == (
        1,
        "Error: --max-length for the rnn model is a number of words, e.g. 400; got '30x5'\n",
    )
    (tmp_path / "m.csv").write_text('text,label\n"good film",a|b\n"bad film",b\n')
    result = invoke("train", "csv", tmp_path / "m.csv", "--multi-label", "--metric", "macro-f1")
    assert (result.exit_code, result.output) == (
        1,
        (
            "Error: --metric applies to a single-label classifier: a multi-label classifier's thresholds are chosen "
            "per label by F1 already\n"
        ),
    )
    assert invoke("train", "imdb", "--metric", "macro-f1").exit_code == 2  # IMDB's two classes are balanced
    run = tmp_path / "run"  # a run's records, without a model: evaluate refuses before it would load one
    run.mkdir()
    write_status(run, status="complete", dataset="t")
    save_json(run / "config.json", CONFIG_FORMAT, {"model": "han", "data": {}})
    (tmp_path / "texts.txt").write_text("great\n")
    result = invoke("evaluate", "--run", run, "--data", tmp_path / "texts.txt")
    assert result.exit_code == 1
    assert result.output == (
        f"Error: --data {tmp_path / 'texts.txt'}: give a labelled .csv/.tsv/.tab/.jsonl/.ndjson/"
        ".json file (this run was not trained on IMDB)\n"
    )
    result = invoke("evaluate", "--run", run)
    assert (result.exit_code, result.output) == (
        1,
        "Error: this run was trained without a test file: pass labelled data with --data FILE\n",
    )


def test_friendly_errors_turn_each_kind_of_failure_into_one_line():
    def command_raising(error):
        @click.command()
        @friendly_errors
        def command():
            raise error

        return command

    cases = [
        (ArgumentError("{argument} must be at least 1", argument="top_k"), 1, "Error: --top-k must be at least 1\n"),
        (RunError("no run; name one with {argument}", argument="run_dir"), 1, "Error: no run; name one with --run\n"),
        (DataError("Name it with {argument}.", argument="text_column"), 1, "Error: Name it with --text-column.\n"),
        (HierattnError("the run is damaged"), 1, "Error: the run is damaged\n"),
        (OSError(errno.EACCES, "Permission denied", "/root/x.csv"), 1, "Error: /root/x.csv: permission denied\n"),
        (MemoryError(), 1, "Error: out of memory: the data does not fit in this machine's memory; try --limit N\n"),
        (KeyboardInterrupt(), 130, "\nError: interrupted\n"),
    ]
    for error, code, output in cases:
        result = CliRunner().invoke(command_raising(error), [])
        assert (result.exit_code, result.output) == (code, output), error
