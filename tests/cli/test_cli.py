"""Tests for hierattn.cli through click's CliRunner (the real commands, tiny data)."""

import json
import os
import pathlib
import re
import shlex
import shutil
import signal
import subprocess
import sys
import time

import pytest
from click.testing import CliRunner

from hierattn.cli import cli
from hierattn.cli.commands import command_line
from hierattn.runs.config import read_settings

from conftest import tiny_args, write_corpus

ROOT = pathlib.Path(__file__).resolve().parents[2]
TINY = tiny_args()
pytestmark = pytest.mark.usefixtures("no_bundle")  # runs trained here skip model.onnx (tests/conftest.py)


@pytest.fixture(scope="module")
def trained(cli_run):
    """The session's HAN run trained through the CLI (`cli_run`): the folder it ran in and the run directory."""
    folder, run_dir, _ = cli_run
    return folder, run_dir


def invoke(*args, input=None):
    return CliRunner().invoke(cli, [str(a) for a in args], input=input)


def test_train_csv_writes_a_run_and_says_where(trained, cli_run, tiny_csv, monkeypatch):
    root, run_dir = trained
    monkeypatch.chdir(root)  # where it ran: the Python it names is printed relative to it, or whole
    dataset = tiny_csv[0].parent.name  # the folder of train.csv names the dataset, not "train"
    assert run_dir.name.startswith(f"han-{dataset}-")
    assert json.loads((run_dir / "run.json").read_text())["dataset"] == dataset
    assert (run_dir / "model.keras").exists() and (run_dir / "metrics.json").exists()
    metrics = json.loads((run_dir / "metrics.json").read_text())
    assert metrics["test"]["documents"] == 40
    relative = run_dir.relative_to(root)
    wrote, explain, page = cli_run[2].stdout.splitlines()[-3:]
    bundle = ", model.onnx (the same, run without TensorFlow)" if (run_dir / "model.onnx").exists() else ""
    assert wrote.startswith(
        f"wrote {relative}/: model.keras (the whole classifier){bundle}, config.json (its settings and data), run.json "
        "(its record), history.csv, metrics.json, report.html (the test split's scores and calibration), logs/ "
        "(TensorBoard: "
    )  # every file of the run a user opens (the bundle unless a test module trained it without: no_bundle)
    assert explain == f"explain a prediction: {command_line('explain', 'your text', '--run', relative)}"
    html = command_line(
        "explain", "your text", "--run", relative, "--format", "html", "--output", relative / "explanation.html"
    )
    assert page == f"as a page: {html}"  # a whole command, the page written into the run


@pytest.mark.parametrize(
    "model, settings, expected",
    [
        (
            "transformer",
            {"num_heads": 2, "position": "learned", "patience": 3},
            {"model": "transformer", "num_heads": 2, "position": "learned", "patience": 3, "sequence_length": 16}
            | {"decision_metric": "macro_f1"},
        ),
        (
            "rnn",
            {"attention": "luong-concat", "units": 4, "epochs": 5},
            {"model": "rnn", "attention": "luong-concat", "units": 4, "embedding_dim": 8, "epochs": 1}
            | {"decision_metric": "macro_f1"},
        ),
    ],
)
def test_train_other_models(tiny_csv, tmp_path, model, settings, expected, stop_before_fit):
    # The settings of --config FILE under the options typed, as the run records them before its first epoch.
    (tmp_path / "settings.json").write_text(json.dumps(settings))
    result = invoke(
        "train",
        "csv",
        tiny_csv[0],
        "--model",
        model,
        "--max-length",
        "16",
        "--config",
        tmp_path / "settings.json",
        "--output",
        tmp_path / "run",
        "--metric",
        "macro-f1",
        *TINY,
    )
    assert result.exit_code == 130, result.output  # stopped as fit began (stop_before_fit)
    assert f"training {model} on 144 documents, validating on 16: up to 1 epoch" in result.output
    settings = read_settings(tmp_path / "run" / "config.json")  # the run's config.json is a settings file too
    assert expected.items() <= settings.items(), settings


def test_train_mirrored_with_mixed_precision(tiny_csv, tmp_path, stop_after_first_epoch):
    # One epoch under the strategy and the policy; the rest of a run is the same as without them.
    result = invoke(
        "train",
        "csv",
        tiny_csv[0],
        "--distribute",
        "mirrored",
        "--mixed-precision",
        "--max-length",
        "4x12",
        "--output",
        tmp_path / "run",
        *TINY,
    )
    assert result.exit_code == 130, result.output  # stopped once the first epoch was saved (stop_after_first_epoch)
    assert "MirroredStrategy, 1 replica in sync" in (tmp_path / "run" / "run.json").read_text()
    settings = read_settings(tmp_path / "run" / "config.json")
    assert settings["mixed_precision"] is True and (settings["max_sentences"], settings["max_words"]) == (4, 12)
    assert "examples" in (tmp_path / "run" / "history.csv").read_text().splitlines()[0]


def test_train_reports_the_baseline_beside_the_model_unless_told_not_to(cli_run, tiny_csv, tmp_path):
    result = cli_run[2]  # `train csv TRAIN --test TEST` with tiny settings and the baseline on by default
    assert result.exit_code == 0, result.output
    lines = [line for line in result.output.splitlines() if line.startswith(("validation:", "test:"))]
    assert len(lines) == 2 and all("| TF-IDF+LR baseline: accuracy" in line for line in lines)
    assert all("| network alone: accuracy" in line and "| n-gram part alone: accuracy" in line for line in lines)
    assert "fitting the TF-IDF+LR baseline on the same 144 training documents" in result.output
    assert "the network trained 1 epoch of at most 1; stopped: epochs setting" in result.output.splitlines()
    assert re.search(
        r"combined with weights \d\.\d\d and \d\.\d\d \(network share (0|1)\.\d\d, chosen on "
        r"validation\)",
        result.output,
    )
    (tmp_path / "no-ngrams.json").write_text('{"ngrams": false}')
    result = invoke(
        "train",
        "csv",
        tiny_csv[0],
        "--no-baseline",
        "--config",
        tmp_path / "no-ngrams.json",
        "--output",
        tmp_path / "none",
        *TINY,
    )
    assert result.exit_code == 0, result.output
    assert "baseline" not in result.output and "n-gram" not in result.output
    assert "test:" not in result.output and "validation: accuracy" in result.output  # no --test: no test line
    assert json.loads((tmp_path / "none" / "config.json").read_text())["baseline"] is False


# Interrupted, then resumed with nothing typed again -------------------------------------------------------------------


def test_an_interrupt_that_other_code_loses_still_prints_how_to_resume(tmp_path, capsys):
    # TensorFlow's C++ code can catch the KeyboardInterrupt of a Ctrl-C, print it and raise another error in its place
    # (seen: "AttributeError: 'list' object has no attribute '_type_spec'" while a tf.data pipeline is made). A real
    # SIGINT reaches the program's handler; what TensorFlow then does is done here by hand.
    from hierattn.cli.train import _interrupts

    run = tmp_path / "my run"
    (run / "checkpoints").mkdir(parents=True)
    (run / "checkpoints" / "adapted.keras").write_bytes(b"resumable from here")
    outside = signal.signal(signal.SIGINT, signal.default_int_handler)  # Python's own, even in a background job
    hook = sys.excepthook  # Python's, or one a library installed (importing Ray does, in another test of this process)
    with pytest.raises(SystemExit) as exit:
        with _interrupts(None):
            try:
                os.kill(os.getpid(), signal.SIGINT)
                time.sleep(5)  # the handler raises KeyboardInterrupt here
            except KeyboardInterrupt:
                error = AttributeError("'list' object has no attribute '_type_spec'")
                sys.excepthook(AttributeError, error, None)  # printed, as TensorFlow prints it
                error.run_dir = run  # as hierattn.runs.sources names the run an error ended
                raise error from None
    assert exit.value.code == 130
    printed = capsys.readouterr().err
    assert printed.strip().splitlines()[-1] == f"interrupted: resume with {command_line('train', '--resume', run)}"
    assert "AttributeError" not in printed
    assert signal.getsignal(signal.SIGINT) is signal.default_int_handler  # the program's handler is gone again
    signal.signal(signal.SIGINT, outside)
    assert sys.excepthook is hook


def test_an_error_without_a_ctrl_c_is_not_taken_for_one():
    from hierattn.cli.train import _interrupts

    with pytest.raises(AttributeError):
        with _interrupts(None):
            raise AttributeError("a real error")


def in_a_fresh_shell(line, cwd, tmp_path):
    """`line` run by a new shell on this machine: only PATH (less an activated virtual environment's) and HOME."""
    venv = os.environ.get("VIRTUAL_ENV")
    path = os.pathsep.join(p for p in os.environ["PATH"].split(os.pathsep) if not venv or not p.startswith(venv))
    home = tmp_path / "home"
    home.mkdir(exist_ok=True)
    env = {"PATH": path, "HOME": str(home)}
    return subprocess.run(["bash", "-c", line], cwd=cwd, env=env, capture_output=True, text=True, timeout=600)


@pytest.mark.slow
def test_ctrl_c_prints_the_command_that_resumes_and_resuming_needs_only_the_run(tmp_path, monkeypatch):
    work = tmp_path / "work"
    (work / "agnews").mkdir(parents=True)
    write_corpus(work / "agnews")
    (work / "quick.json").write_text('{"ngrams": false, "baseline": false}')
    run = pathlib.Path("my runs") / "first run"  # relative to `work`, with spaces
    data = ["agnews/train.csv", "--test", "agnews/test.csv"]  # relative too: recorded as absolute paths
    args = ["train", "csv", *data, "--output", run, *TINY, "--config", "quick.json"]
    process = subprocess.Popen(
        [sys.executable, str(ROOT / "cli.py"), *map(str, args)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        cwd=work,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),  # Ctrl-C's default, even in a background job
    )
    deadline = time.monotonic() + 300  # generous: a loaded CI machine
    while process.poll() is None and time.monotonic() < deadline:
        if (work / run / "checkpoints" / "adapted.keras").exists():  # resumable from here on
            break
        time.sleep(0.05)
    assert process.poll() is None, process.communicate()
    process.send_signal(signal.SIGINT)
    _, stderr = process.communicate(timeout=300)
    last = stderr.decode().strip().splitlines()[-1]
    assert process.returncode == 130 and "Traceback" not in stderr.decode(), stderr.decode()[-3000:]
    assert last.startswith("interrupted: resume with ")
    printed = last.removeprefix("interrupted: resume with ")
    command = shlex.split(printed)  # pasted into a shell: the Python that ran it, named so a new shell finds it
    assert command[-4:] == [str(ROOT / "cli.py"), "train", "--resume", str(run)]
    for copy in ("csv copy", "imdb copy"):
        shutil.copytree(work / run, work / "my runs" / copy)

    resumed = in_a_fresh_shell(printed, work, tmp_path)  # what was printed, no PATH or --test typed again
    assert resumed.returncode == 0, resumed.stderr[-3000:]
    train_file, test_file = work / "agnews" / "train.csv", work / "agnews" / "test.csv"
    assert f"resuming on the data the run recorded: train {train_file}, test {test_file}" in resumed.stdout
    assert json.loads((work / run / "metrics.json").read_text())["test"]["documents"] == 40
    logs, explain, page = resumed.stdout.splitlines()[-3:]
    assert logs.endswith(f" --logdir '{run}/logs')")
    tensorboard = logs.rsplit("(TensorBoard: ", 1)[1].split(" --logdir")[0]
    assert in_a_fresh_shell(f"command -v {tensorboard}", work, tmp_path).returncode == 0  # found as printed
    assert explain.startswith("explain a prediction: ") and page.startswith("as a page: ")
    explain, page = explain.split(": ", 1)[1], page.split(": ", 1)[1]
    assert shlex.split(explain)[-4:] == ["explain", "your text", "--run", str(run)]
    assert shlex.split(page) == [*shlex.split(explain), "--format", "html", "--output", f"{run}/explanation.html"]
    explained = in_a_fresh_shell(page.replace("'your text'", "'a fine film'"), work, tmp_path)  # pasted whole
    assert explained.returncode == 0 and "Traceback" not in explained.stderr, explained.stderr[-3000:]
    assert (
        "<!DOCTYPE html>" in (work / run / "explanation.html").read_text()
    )  # beside the run, not in the shell's folder
    monkeypatch.chdir(work)
    assert "already complete: nothing to resume" in one_line_error(invoke(*command[-3:]))

    # `train csv` needs no PATH to resume, and `train imdb` resumes a run on tables on its own tables (it does not
    # look for IMDB): both check the recorded files, here before any is read.
    test_file.unlink()
    for kind, copy in (("csv", "csv copy"), ("imdb", "imdb copy")):
        copy = pathlib.Path("my runs") / copy
        assert one_line_error(invoke("train", kind, "--resume", copy)) == (
            f"Error: cannot resume {copy}: its test data {test_file} no longer exists. Resuming needs the data the "
            "run recorded: restore the file (or give a copy of it), or start a new run."
        )


def test_train_csv_unlabeled_texts_reach_word2vec_and_the_vocabulary(tiny_csv, tmp_path, stop_before_fit):
    # "zyzzyva" occurs only in the unlabelled file: it joins the vocabulary only if those texts are used.
    (tmp_path / "extra.txt").write_text("A zyzzyva film. Really zyzzyva!\n\n" * 30)
    base = [
        "train",
        "csv",
        tiny_csv[0],
        "--unlabeled",
        tmp_path / "extra.txt",
        "--epochs",
        "1",
        "--batch-size",
        "16",
        "--embedding-dim",
        "8",
        "--model",
        "transformer",
        "--max-length",
        "16",
    ]
    result = invoke(*base, "--output", tmp_path / "w2v")
    assert result.exit_code == 130, result.output  # stopped as fit began (stop_before_fit): word2vec was trained
    assert "30 unlabelled texts" in result.output and "on 174 texts" in result.output  # 144 training + 30
    assert "unlabelled" in json.loads((tmp_path / "w2v" / "run.json").read_text())["embeddings"]["source"]
    unused = invoke(*base, "--embeddings", "none", "--output", tmp_path / "unused")
    assert "--unlabeled texts would go unused" in one_line_error(unused)
    (tmp_path / "blank.txt").write_text("\n  \n")
    blank = invoke(*base, "--unlabeled", tmp_path / "blank.txt", "--output", tmp_path / "blank")
    assert "no texts found" in one_line_error(blank)
    assert not (tmp_path / "unused").exists() and not (tmp_path / "blank").exists()


def test_predict_text_file_and_stdin(trained, tmp_path):
    root, run_dir = trained
    result = invoke("predict", "The film was great. I loved it!", "--run", run_dir)
    assert result.exit_code == 0, result.output
    assert "predicted:" in result.output and "pos:" in result.output
    runner = CliRunner()
    with runner.isolated_filesystem(tmp_path):
        shutil.copytree(run_dir, pathlib.Path("runs") / run_dir.name)
        latest = runner.invoke(cli, ["predict", "an awful film"])  # the latest run under ./runs
    assert latest.exit_code == 0 and "predicted:" in latest.output
    (tmp_path / "in.txt").write_text("great film\nawful film\n")
    result = invoke("predict", "--run", run_dir, "--file", tmp_path / "in.txt", "--output", tmp_path / "out.csv")
    assert result.exit_code == 0, result.output
    assert (tmp_path / "out.csv").read_text().splitlines()[0] == "row,predicted,p_neg,p_pos"
    again = invoke("predict", "--run", run_dir, "--file", tmp_path / "in.txt", "--output", tmp_path / "out.csv")
    assert again.exit_code == 1 and "already exists" in again.output
    piped = invoke("predict", "-", "--run", run_dir, input="great film\nboring\n")
    assert piped.exit_code == 0 and len([line for line in piped.output.splitlines() if line[:1].isdigit()]) == 2
    # "not sure" as an answer: one text under the minimum, then every piped text, with a summary on standard error
    unsure = invoke("predict", "a film", "--run", run_dir, "--min-confidence", "1")
    assert unsure.exit_code == 0 and unsure.stdout.startswith("predicted: none: not sure enough (confidence 0.")
    assert "left for a person" in unsure.stdout and "neg:" in unsure.stdout
    sure = invoke("predict", "great film", "--run", run_dir, "--min-confidence", "0")
    assert sure.exit_code == 0 and re.match(r"predicted: \w+ \(confidence [01]\.\d{4}\)\n", sure.stdout)
    piped = invoke("predict", "-", "--run", run_dir, "--min-confidence", "1", input="a film\nMr. Smith directed it.\n")
    assert piped.exit_code == 0 and piped.stdout.splitlines()[0] == "row,predicted,confidence,p_neg,p_pos"
    assert [line.split(",")[1] for line in piped.stdout.splitlines()[1:]] == ["", ""]
    assert "2 of 2 texts left for a person: their confidence is under 1\n" in piped.stderr


@pytest.mark.parametrize(
    "command",
    [["predict", "a great film"], ["explain", "a great film"], ["evaluate"]],
    ids=["predict", "explain", "evaluate"],
)
def test_the_run_chosen_for_the_user_is_named_on_standard_error(trained, command, monkeypatch):
    root, run_dir = trained
    monkeypatch.chdir(root)  # its runs/ holds one run: the latest
    chosen = invoke(*command)
    assert chosen.exit_code == 0, chosen.output
    relative = run_dir.relative_to(root)
    assert f"run: {relative} (the latest complete run under runs/)\n" in chosen.stderr
    assert "run:" not in chosen.stdout  # standard output stays what can be piped
    named = invoke(*command, "--run", run_dir)
    assert named.exit_code == 0 and f"run: {run_dir}\n" in named.stderr and "latest" not in named.stderr


def test_table_id_and_label_columns_travel_to_the_outputs(trained, tmp_path):
    _, run_dir = trained
    table = tmp_path / "reviews.csv"
    table.write_text("id,text,label\nr1,great film,pos\nr2,<br/>,neg\nr3,awful boring film,neg\n")
    result = invoke("predict", "--run", run_dir, "--file", table, "--output", tmp_path / "p.csv")
    assert result.exit_code == 0, result.output
    rows = (tmp_path / "p.csv").read_text().splitlines()
    assert rows[0] == "row,id,label,predicted,p_neg,p_pos"
    assert rows[1].startswith("0,r1,pos,") and rows[2] == "1,r2,neg,,," and rows[3].startswith("2,r3,neg,")
    page = invoke("explain", "--run", run_dir, "--file", table, "--format", "html", "--output", tmp_path / "e.html")
    assert page.exit_code == 0, page.output
    html = (tmp_path / "e.html").read_text()
    assert "<h3>Document r1</h3>" in html and "<h3>Document r3</h3>" in html and "true label: neg" in html
    assert "(the runner-up)" in html and "pushes towards <b>" in html
    words = invoke("explain", "--run", run_dir, "--dataset", table, "--output", tmp_path / "w.csv")
    assert words.exit_code == 0 and "accuracy" in words.output
    documents = (tmp_path / "w.documents.csv").read_text().splitlines()
    assert documents[1].split(",")[1:3] == ["r1", "pos"]


def test_evaluate(trained, tiny_csv, tmp_path):
    _, run_dir = trained
    result = invoke("evaluate", "--run", run_dir, "--data", tiny_csv[1], "--output", tmp_path / "m.json")
    assert result.exit_code == 0, result.output
    assert "accuracy" in result.output and json.loads((tmp_path / "m.json").read_text())["documents"] == 40
    assert f"{tiny_csv[1]}: 40 of 40 rows used (text column 'text', label column 'label')\n" in result.stderr
    assert "rows used" not in result.stdout  # standard output: the scores alone, for piping
    recorded = invoke("evaluate", "--run", run_dir)  # the run's own test file, from config.json
    assert recorded.exit_code == 0, recorded.output

    def numbers(output):
        return [
            line.split("doc/s]")[-1] for line in output.splitlines() if "macro-F1" in line or line.startswith("  ")
        ]  # (after any progress bar on the same line)

    # the accuracy line (with a cut, then the share the network read and the whole combination's scores), then the
    # labelled confusion matrix: its header and a row per class
    cut = json.loads((run_dir / "metrics.json").read_text())["parts"]["cascade"]["cut"]
    read = [line for line in result.output.splitlines() if line.startswith("the network read ")]
    assert len(read) == (cut is not None) and all("with the network on every document: accuracy" in r for r in read)
    assert numbers(result.output) == numbers(recorded.output) and len(numbers(result.output)) == 4 + len(read)
    always = invoke("evaluate", "--run", run_dir, "--network", "always")
    assert always.exit_code == 0 and "the network read" not in always.output
    # how calibrated the probabilities are, before and after the run's temperature, as training measured it
    trained_metrics = json.loads((run_dir / "metrics.json").read_text())
    assert json.loads((tmp_path / "m.json").read_text())["calibration"] == trained_metrics["calibration"]["test"]
    for output in (result.output, always.output):
        assert [line.split(":")[0] for line in output.splitlines() if "surest" in line or "(temperature" in line] == [
            f"calibration (temperature {trained_metrics['parts']['cascade']['temperature' if output is result.output else 'temperature_always']:.3g})",
            "accuracy of the surest 90% / 80% / 50% of documents",
        ]
    data = json.loads((run_dir / "config.json").read_text())["data"]
    assert data["test"]["path"] == str(pathlib.Path(tiny_csv[1]).resolve()) and len(data["train"]["sha256"]) == 64
    unsure = invoke("evaluate", "--run", run_dir, "--min-confidence", "0", "--output", tmp_path / "a.json")
    assert unsure.exit_code == 0 and "with a minimum confidence of 0: 40 answered (coverage 100.00%)" in unsure.stdout
    assert json.loads((tmp_path / "a.json").read_text())["abstention"]["left"] == 0
    page = invoke("evaluate", "--run", run_dir, "--output", tmp_path / "report.html")
    assert page.exit_code == 0 and (tmp_path / "report.html").read_text().count("<svg") == 2
    assert (run_dir / "report.html").read_text().count("<svg") == 2  # the run's own, of its test split


def one_line_error(result, code=1):
    assert result.exit_code == code, result.output
    assert "Traceback" not in result.output
    return result.output.strip().splitlines()[-1]


def test_error_paths(trained, tiny_csv, tmp_path):
    root, run_dir = trained
    assert "'bert' is not one of" in one_line_error(invoke("train", "csv", tiny_csv[0], "--model", "bert"), code=2)
    assert "no such file" in one_line_error(invoke("train", "csv", tmp_path / "none.csv", *TINY))
    reused = invoke("train", "csv", tmp_path / "none.csv", "--config", run_dir / "config.json")
    assert "no such file" in one_line_error(reused)  # a run's config.json is accepted as settings
    assert "no text column 'body'" in one_line_error(invoke("train", "csv", tiny_csv[0], "--text-column", "body"))
    assert "already exists" in one_line_error(invoke("train", "csv", tiny_csv[0], "--output", run_dir, *TINY))
    assert "not a hierattn run" in one_line_error(invoke("predict", "text", "--run", tmp_path))
    assert "the text is empty" in one_line_error(invoke("predict", "   ", "--run", run_dir))
    broken = tmp_path / "broken"
    shutil.copytree(run_dir, broken)
    (broken / "model.keras").write_bytes(b"garbage")
    (broken / "model.onnx").unlink()  # predict reads the bundle first, model.keras without one
    assert "is not a Keras model file" in one_line_error(invoke("predict", "text", "--run", broken))
    assert "IMDB" in one_line_error(invoke("train", "imdb", tmp_path / "nowhere", *TINY))
    assert "nothing to resume" in one_line_error(invoke("train", "csv", tiny_csv[0], "--resume", tmp_path / "x"))
    assert "--resume continues a run with its own settings" in one_line_error(
        invoke("train", "csv", tiny_csv[0], "--resume", run_dir, "--epochs", "3"), code=2
    )
    assert "--max-length for the rnn model is a number of words" in one_line_error(
        invoke("train", "csv", tiny_csv[0], "--model", "rnn", "--max-length", "30x5", *TINY)
    )
    assert "--max-length for the han model is SENTENCESxWORDS" in one_line_error(
        invoke("train", "csv", tiny_csv[0], "--max-length", "5", *TINY)
    )
    (tmp_path / "words.json").write_text('{"max_words": 5}')
    assert "max_words applies to the han" in one_line_error(
        invoke("train", "csv", tiny_csv[0], "--model", "rnn", "--config", tmp_path / "words.json", *TINY)
    )
    assert "needs --output" in one_line_error(
        invoke("train", "csv", tiny_csv[0], "--distribute", "multi-worker", *TINY), code=2
    )
    bad_settings = {
        '{"depth": 3}': "unknown setting 'depth' for the han model: choose from",
        '{"teacher": "tfidf"}': "unknown setting 'teacher'",
        "[1, 2]": "must hold one JSON object of settings",
        '{"cell": "rnn"}': "cell must be one of gru, lstm, not 'rnn'",
    }
    for settings, message in bad_settings.items():
        (tmp_path / "bad.json").write_text(settings)
        result = invoke(
            "train", "csv", tiny_csv[0], "--config", tmp_path / "bad.json", "--output", tmp_path / "opt", *TINY
        )
        assert message in one_line_error(result), settings
    transformer = ["--model", "transformer", "--output", tmp_path / "opt", "--config", tmp_path / "bad.json", *TINY]
    (tmp_path / "bad.json").write_text('{"num_heads": 3}')
    assert "must be divisible by num_heads" in one_line_error(invoke("train", "csv", tiny_csv[0], *transformer))
    assert not (tmp_path / "opt").exists()  # refused before anything was written


def test_train_imdb_on_a_mini_archive(tmp_path, eager):
    import io
    import tarfile

    archive = tmp_path / "aclImdb_v1.tar.gz"
    with tarfile.open(archive, "w:gz") as tar:
        for split in ("train", "test"):
            for label, words in (("pos", "great superb"), ("neg", "awful dull")):
                for i in range(12):
                    data = f"A {words.split()[i % 2]} film. Really {words.split()[(i + 1) % 2]}!".encode()
                    info = tarfile.TarInfo(f"aclImdb/{split}/{label}/{i}_{8 if label == 'pos' else 2}.txt")
                    info.size = len(data)
                    tar.addfile(info, io.BytesIO(data))
    result = invoke("train", "imdb", archive, "--output", tmp_path / "run", *TINY)
    assert result.exit_code == 0, result.output
    status = json.loads((tmp_path / "run" / "run.json").read_text())
    assert status["dataset"] == "imdb" and status["status"] == "complete"
    evaluation = invoke("evaluate", "--run", tmp_path / "run")  # the archive recorded in config.json
    assert evaluation.exit_code == 0 and "on 24 documents" in evaluation.output


def test_explain_formats(trained, tmp_path):
    _, run_dir = trained
    text = "The film was great. Mr. Smith's acting was awful!"
    result = invoke("explain", text, "--run", run_dir, "--top-k", "3")
    assert result.exit_code == 0, result.output
    assert "\npredicted:" in result.output and "evidence for" in result.output and "margin of" in result.output
    # attention, the second layer, is left out when the network has no weight (the tiny run's usual case)
    assert ("where the network read" in result.output) == ("network has no weight" not in result.output)
    as_json = invoke("explain", text, "--run", run_dir, "--format", "json")
    (item,) = json.loads(as_json.stdout)  # stdout only: the "run:" line goes to stderr
    read = item["decision"]["network_read"]  # attention sums to 1 where the network read the text, else no pass: 0
    assert len(item["words"]) == 10 and abs(sum(w["weight"] for w in item["words"]) - float(read)) < 1e-4
    assert [text[w["start"] : w["end"]] for w in item["words"]] == [w["text"] for w in item["words"]]
    (tmp_path / "texts.txt").write_text("great film\n\nawful film. boring!\n")
    result = invoke(
        "explain", "--run", run_dir, "--file", tmp_path / "texts.txt", "--format", "csv", "--output", tmp_path / "w.csv"
    )
    assert result.exit_code == 0, result.output
    lines = (tmp_path / "w.csv").read_text().splitlines()
    assert (
        lines[0].startswith("document,id,true_label,predicted,sentence,word") and len(lines) == 1 + 2 + 4
    )  # header, "great film", "awful film. boring !"
    page = invoke(
        "explain", "-", "--run", run_dir, "--format", "html", "--output", tmp_path / "e.html", input="great film\n"
    )
    assert page.exit_code == 0 and "<!DOCTYPE html>" in (tmp_path / "e.html").read_text()
    again = invoke("explain", text, "--run", run_dir, "--format", "html", "--output", tmp_path / "e.html")
    assert again.exit_code == 1 and "already exists" in again.output
    assert "the text is empty" in one_line_error(invoke("explain", "  ", "--run", run_dir))


def test_explain_dataset_and_check(trained, tiny_csv, tmp_path):
    _, run_dir = trained
    output = tmp_path / "words.csv"
    result = invoke(
        "explain",
        "--run",
        run_dir,
        "--dataset",
        tiny_csv[1],
        "--limit",
        "30",
        "--top-k",
        "3",
        "--output",
        output,
        "--check",
        "--random-draws",
        "2",
    )
    assert result.exit_code == 0, result.output
    assert "explained 30 documents" in result.output
    for ranking in ("evidence", "attention", "gradient", "random"):
        assert f"| {ranking} | comprehensiveness |" in result.output and f"| {ranking} | sufficiency |" in result.output
    assert result.output.strip().splitlines()[-1].startswith("evidence: comprehensiveness ")  # the verdict, last
    words = output.read_text().splitlines()
    assert words[0].startswith("predicted,word,occurrences,documents,evidence")
    documents = (tmp_path / "words.documents.csv").read_text().splitlines()
    assert len(documents) == 1 + 30 * 3  # every generated review has at least 3 words
    check = json.loads((tmp_path / "words.faithfulness.json").read_text())
    assert check["documents"] == 30 and set(check["aopc"]) == {"evidence", "attention", "gradient", "random"}
    assert result.output.strip().splitlines()[-1] == check["verdict"]
    before = output.read_text()
    again = invoke("explain", "--run", run_dir, "--dataset", tiny_csv[1], "--output", output)
    assert again.exit_code == 1 and "already exists" in again.output and output.read_text() == before
    both = invoke("explain", "some text", "--run", run_dir, "--dataset", tiny_csv[1])
    assert both.exit_code != 0 and "not both" in both.output
    missing = one_line_error(invoke("explain", "--run", run_dir, "--dataset", tmp_path / "nope.csv"))
    assert "no such dataset" in missing


def test_explain_check_on_single_text(trained):
    _, run_dir = trained
    result = invoke("explain", "The film was great. I loved the acting!", "--run", run_dir, "--check")
    assert result.exit_code == 0, result.output
    assert "predicted:" in result.output and "| evidence | sufficiency |" in result.output
    verdict = result.output.strip().splitlines()[-1]
    assert verdict.startswith("evidence: comprehensiveness ") and verdict.endswith("faithful"), verdict
    one_word = invoke("explain", "great", "--run", run_dir, "--check")
    assert one_word.exit_code == 0, one_word.output
    last = one_word.output.strip().splitlines()[-1]
    assert last.endswith("no verdict (one word per text: every ranking erases the same)"), last
    help_text = " ".join(invoke("explain", "--help").output.split())
    assert "comprehensiveness" in help_text and "sufficiency" in help_text and "verdict" in help_text


def test_train_help_is_short_and_shows_every_default():
    import re

    for command in ("imdb", "csv"):
        text = invoke("train", command, "--help").output
        blocks = re.split(r"\n(?=  -)", text.split("Options:", 1)[1])
        options = [b for b in blocks if b.strip().startswith("-") and "--help" not in b]
        assert all("[default:" in " ".join(b.split()) for b in options), command
        if command == "imdb":  # at most 15 options, besides -h/--help
            assert len(options) <= 15, [b.split()[0] for b in options]
    epochs = " ".join(invoke("train", "csv", "--help").output.split("--epochs", 1)[1].split("--batch-size")[0].split())
    assert "By default about 3,000 batches' worth (8 to 40 epochs)" in epochs and "20 minutes" in epochs
    assert "[default: (scaled to the corpus); x>=1]" in epochs
    for word in ("teacher", "adversarial", "distill", "runs-dir", "model-option", "max-sentences", "sequence-length"):
        assert word not in invoke("train", "imdb", "--help").output


def test_train_csv_multi_label_and_its_evaluation(multilabel_csv, tmp_path):
    train, test = multilabel_csv
    tiny = tiny_args()
    run_dir = tmp_path / "run"
    result = invoke("train", "csv", train, "--test", test, "--multi-label", *tiny, "--output", run_dir)
    assert result.exit_code == 0, result.output
    assert re.search(r"test: micro-F1 [\d.]+, macro-F1 [\d.]+, samples-F1 [\d.]+, subset accuracy", result.output)
    assert "thresholds: chosen on" in result.output and "TF-IDF+LR baseline: micro-F1" in result.output
    evaluated = invoke("evaluate", "--run", run_dir)
    assert evaluated.exit_code == 0, evaluated.output
    lines = evaluated.output.splitlines()
    table = lines[lines.index("per label:") + 1 :]
    assert table[0].split() == ["label", "documents", "precision", "recall", "F1"]
    rows = [line.split()[0] for line in table[1:] if line.startswith("  ")]
    assert sorted(rows) == ["food", "money", "sport"]


def test_label_separator_needs_multi_label(tiny_csv):
    result = invoke("train", "csv", tiny_csv[0], "--label-separator", ";")
    assert one_line_error(result, code=2) == "Error: --label-separator applies with --multi-label"


def test_train_csv_reads_chinese_in_the_units_it_chooses_or_is_told(tmp_path, stop_before_fit):
    import pandas as pd

    from conftest import make_chinese_reviews

    texts, labels = make_chinese_reviews(160)
    pd.DataFrame({"text": texts, "label": labels}).to_csv(tmp_path / "zh.csv", index=False)
    chosen = invoke("train", "csv", tmp_path / "zh.csv", *TINY, "--output", tmp_path / "auto")
    assert chosen.exit_code == 130, chosen.output  # stopped as fit began: the units were chosen and the vocabulary made
    assert "units: 100% of the letters are in scripts written without spaces; " in chosen.output
    record = json.loads((tmp_path / "auto" / "run.json").read_text())["units"]
    assert record["units"] in ("characters", "subwords") and set(record["scores"]) == {"characters", "subwords"}
    forced = invoke("train", "csv", tmp_path / "zh.csv", *TINY, "--units", "subwords", "--output", tmp_path / "sub")
    assert forced.exit_code == 130 and "subwords; limits: " in forced.output and "units: " not in forced.output
    wrong = invoke("train", "csv", tmp_path / "zh.csv", "--units", "letters")
    assert wrong.exit_code == 2 and "'letters' is not one of 'auto', 'words', 'characters', 'subwords'" in wrong.output
