"""Runs against the CLI (hierattn.cli): damaged run directories, and trainings that fail, are killed or contend.

Every case checks the contract of bad input (`conftest.assert_refused`): exit code 1 or 2, exactly one line that
starts with `Error:`, no traceback anywhere in the output, no earlier file changed and no partial file left behind.

Some cases run `cli.py` in a real process, to send it signals or start two at once.
"""

import json
import os
import pathlib
import shlex
import shutil
import signal
import subprocess
import sys
import time

import keras
import pytest

from hierattn.runs.run import load_run
from hierattn.utils.shell import interpreter

from conftest import assert_refused, invoke_cli, refused, tiny_args, write_file

ROOT = pathlib.Path(__file__).resolve().parents[2]
TINY = tiny_args()
pytestmark = pytest.mark.usefixtures("no_bundle")  # runs trained here in this process skip model.onnx


# Run directories: corrupt, foreign and tampered ------------------------------------------------------------------------


def tamper_model_truncated(run):
    data = (run / "model.keras").read_bytes()
    (run / "model.keras").write_bytes(data[: len(data) // 2])


def tamper_model_random(run):
    (run / "model.keras").write_bytes(os.urandom(4096))


def tamper_model_lambda(run):
    inputs = keras.Input((None, None), dtype="int32")
    outputs = keras.layers.Lambda(lambda x: keras.ops.one_hot(x[:, 0, 0] % 2, 2))(inputs)
    keras.Model(inputs, outputs).save(run / "model.keras")


def tamper_json(relative, change):
    def tamper(run):
        path = run / relative
        payload = json.loads(path.read_text())
        change(payload)
        path.write_text(json.dumps(payload))

    return tamper


def tamper_remove(relative):
    return lambda run: (run / relative).unlink()


def tamper_write(relative, text):
    return lambda run: (run / relative).write_text(text)


VOCABULARY = "assets/layers/text_preprocessor/vocabulary.json"


def tamper_inside(member, change=None, text=None):
    """Rewrites (or with neither `change` nor `text`, removes) one file inside model.keras."""
    import zipfile

    def tamper(run):
        path = run / "model.keras"
        with zipfile.ZipFile(path) as archive:
            files = {name: archive.read(name) for name in archive.namelist()}
        assert member in files, sorted(files)
        if change is not None:
            payload = json.loads(files[member])
            change(payload)
            files[member] = json.dumps(payload).encode()
        elif text is not None:
            files[member] = text.encode()
        else:
            del files[member]
        with zipfile.ZipFile(path, "w") as archive:
            for name, data in files.items():
                archive.writestr(name, data)

    return tamper


def _preprocessor(payload):
    return payload["config"]["preprocessor"]["config"]


@pytest.mark.parametrize(
    "tamper, message",
    [
        (tamper_model_truncated, "is not a Keras model file"),
        (tamper_model_random, "is not a Keras model file"),
        (tamper_model_lambda, "holds Python code .* only if you trust its source\\.$"),
        (tamper_remove("model.keras"), "has no model.keras"),
        (
            tamper_inside("config.json", lambda p: p["config"].update(label_names=["neg", "pos", "meh"])),
            "3 label names for a backbone with 2 outputs",
        ),
        (tamper_inside("config.json", lambda p: p["config"].update(label_names="neg")), "3 label names for a backbone"),
        (tamper_inside(VOCABULARY), "not a trained hierattn TextClassifier"),
        (
            tamper_inside(VOCABULARY, lambda p: p["tokens"].extend(f"extra{i}" for i in range(500))),
            "its vocabulary has .* ids but the embedding has .* rows",
        ),
        (tamper_inside(VOCABULARY, lambda p: p.update(tokens={"a": 1})), "'tokens' must be a list of strings"),
        (tamper_inside(VOCABULARY, lambda p: p.update(tokens=5)), "'tokens' must be a list of strings"),
        (
            tamper_inside("config.json", lambda p: _preprocessor(p).update(max_words="ten")),
            "max_words must be a whole number of at least 1, or None, not 'ten'",
        ),
        (tamper_inside("config.json", lambda p: _preprocessor(p).update(tokenizer=[1])), "could not be loaded"),
        (tamper_inside("config.json", text="{not json"), "could not be loaded"),
        (tamper_write("run.json", "\x00\x01garbage"), "is not valid JSON"),
        (tamper_json("run.json", lambda p: p.update(status="training")), "is an unfinished run"),
        (tamper_remove("run.json"), "is not a hierattn run"),
        (
            tamper_json("config.json", lambda p: p.update(format="something-else")),
            "is not a hierattn.train-config/3 file",
        ),
    ],
    ids=[
        "model-truncated",
        "model-random",
        "model-lambda",
        "model-missing",
        "labels-extra-class",
        "labels-wrong-type",
        "vocabulary-missing",
        "vocabulary-beyond-embedding",
        "vocabulary-dict",
        "vocabulary-number",
        "preprocessor-size-string",
        "preprocessor-tokenizer-list",
        "model-config-not-json",
        "status-binary",
        "status-unfinished",
        "status-missing",
        "config-foreign",
    ],
)
@pytest.mark.parametrize("command", ["predict", "explain", "evaluate"])
def test_corrupt_and_tampered_runs(workdir, tiny_csv, tamper, message, command):
    import re

    if command == "predict":  # the Keras path's checks: predict reads the run's bundle when it has one
        (workdir / "run" / "model.onnx").unlink()
    tamper(workdir / "run")
    args = ["--data", tiny_csv[1]] if command == "evaluate" else ["a great film"]
    error = refused(command, "--run", workdir / "run", *args, folders=[workdir])
    assert re.search(message, error), error


@pytest.mark.parametrize(
    ("damage", "note"),
    [
        (lambda path: path.write_bytes(path.read_bytes()[:2000]), "not an ONNX model onnxruntime can load"),
        (lambda path: path.write_bytes(b"\x00\x01garbage" * 100), "not an ONNX model onnxruntime can load"),
        (lambda path: path.write_text(""), "not an ONNX model onnxruntime can load"),
    ],
    ids=["truncated", "random", "empty"],
)
def test_a_damaged_bundle_falls_back_to_the_keras_model(workdir, damage, note):
    """A run whose model.onnx cannot be loaded still predicts, from model.keras, with the same answer, and says so."""
    before = invoke_cli("predict", "--run", workdir / "run", "a great film")
    damage(workdir / "run" / "model.onnx")
    after = invoke_cli("predict", "--run", workdir / "run", "a great film")
    assert before.exit_code == after.exit_code == 0, after.output
    assert after.stdout == before.stdout
    assert note in after.stderr and "predicting with model.keras" in after.stderr


def test_a_foreign_folder_and_a_file_as_the_run(workdir, monkeypatch):
    (workdir / "foreign").mkdir()
    (workdir / "foreign" / "model.keras").write_text("x")
    assert "not a hierattn run" in refused("predict", "text", "--run", workdir / "foreign", folders=[workdir])
    assert "no run directory at" in refused("predict", "text", "--run", workdir / "texts.txt", folders=[workdir])
    monkeypatch.chdir(workdir / "foreign")  # no runs/ here
    assert "no trained run found under runs/" in refused("predict", "text", folders=[workdir])


def test_training_into_an_existing_run_is_refused_before_reading_data(workdir, tiny_csv):
    error = refused("train", "csv", workdir / "missing.csv", "--output", workdir / "run", *TINY, folders=[workdir])
    assert "already exists" in error


# Diverging, killed and interrupted training, then resumed --------------------------------------------------------------


def test_a_diverging_training_stops_with_an_error_and_never_becomes_the_latest_run(tiny_csv, tmp_path):
    run = tmp_path / "runs" / "diverged"
    result = invoke_cli(
        "train",
        "csv",
        tiny_csv[0],
        "--output",
        run,
        "--learning-rate",
        "1e30",
        *tiny_args(3),
    )
    error = assert_refused(result.output, result.exit_code)
    assert "training diverged: the loss became" in error and "lower --learning-rate" in error
    assert json.loads((run / "run.json").read_text())["status"] == "training"
    assert not (run / "model.keras").exists()
    from hierattn.runs.directory import RunError, find_latest_run

    with pytest.raises(RunError, match="no trained run found"):
        find_latest_run(tmp_path / "runs")


@pytest.mark.slow
@pytest.mark.parametrize("sig", [signal.SIGKILL, signal.SIGINT], ids=["SIGKILL", "SIGINT"])
def test_training_killed_then_resumed(tiny_csv, tmp_path, sig):
    output = tmp_path / "run"
    settings = write_file(tmp_path / "small.json", '{"units": 4, "patience": 40}')  # no early stop before the signal
    args = [
        "train",
        "csv",
        tiny_csv[0],
        "--output",
        output,
        "--epochs",
        "12",  # enough to be signalled mid-training, few enough to resume quickly
        "--batch-size",
        "4",
        "--embedding-dim",
        "8",
        "--embeddings",
        "none",
        "--model",
        "rnn",
        "--config",
        settings,
    ]
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    # Ctrl-C's default action, even when this test runs in a background job (whose shell ignores SIGINT, and the
    # program, like any, then inherits the ignoring).
    process = subprocess.Popen(
        [sys.executable, str(ROOT / "cli.py"), *map(str, args)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env=env,
        cwd=ROOT,
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),
    )
    history = output / "history.csv"
    deadline = time.monotonic() + 180
    while time.monotonic() < deadline and process.poll() is None:
        if history.exists() and len(history.read_text().splitlines()) >= 2:  # header + one finished epoch
            break
        time.sleep(0.2)
    assert process.poll() is None, process.communicate()
    process.send_signal(sig)
    stdout, stderr = process.communicate(timeout=60)
    output_text = stdout.decode() + stderr.decode()
    assert "Traceback" not in output_text, output_text
    if sig == signal.SIGINT:
        assert process.returncode == 130
        assert output_text.strip().splitlines()[-1] == (
            f"interrupted: resume with {interpreter()} {shlex.quote(str(ROOT / 'cli.py'))} train --resume "
            f"{shlex.quote(str(output))}"
        )
    assert json.loads((output / "run.json").read_text())["status"] == "training"
    assert not (output / "model.keras").exists()
    if sig == signal.SIGINT:  # a SIGKILL while saving may leave a temporary file: resuming removes it
        assert not list(output.rglob("*.partial*"))

    resumed = invoke_cli("train", "csv", tiny_csv[0], "--resume", output)
    assert resumed.exit_code == 0, resumed.output
    assert "resuming" in resumed.output
    assert json.loads((output / "run.json").read_text())["status"] == "complete"
    assert not list(output.rglob("*.partial*"))
    epochs = [int(row.split(",")[0]) for row in history.read_text().splitlines()[1:]]
    assert epochs == sorted(set(epochs)) and len(epochs) >= 2  # no epoch twice across the two processes
    assert invoke_cli("predict", "a great film", "--run", output).exit_code == 0


# One owner per run, clean failures on a full disk, data checked against its record (issue #28) -------------------------


@pytest.mark.slow
def test_two_trainings_into_one_output_exactly_one_wins(tiny_csv, tmp_path):
    output = tmp_path / "run"
    args = [
        sys.executable,
        str(ROOT / "cli.py"),
        "train",
        "csv",
        str(tiny_csv[0]),
        "--output",
        str(output),
        *tiny_args(2),
        "--no-baseline",
    ]
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    processes = [
        subprocess.Popen(args, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, env=env, cwd=ROOT) for _ in range(2)
    ]
    results = [(p.wait(timeout=240), p.stdout.read().decode()) for p in processes]
    assert sorted(code for code, _ in results) == [0, 1], results
    loser = next(text for code, text in results if code == 1)
    error = assert_refused(loser, 1)
    assert "in use by another hierattn process" in error or "already exists" in error, error
    assert "wrote" not in loser
    assert json.loads((output / "run.json").read_text())["status"] == "complete"
    history = (output / "history.csv").read_text().splitlines()
    assert [row.split(",")[0] for row in history[1:]] == ["0", "1"]  # one process's two epochs, none of the other's
    assert load_run(output).classifier.predict(["a great film"]).shape == (1, 2)
    assert not list(output.rglob("*.partial*"))


def test_resuming_a_run_that_another_process_holds_is_refused_at_once(workdir, tiny_csv):
    from hierattn.runs.directory import claim_run_dir, write_status

    run = workdir / "run"
    write_status(run, status="training")  # an unfinished run with its first checkpoint, as while it trains
    (run / "checkpoints").mkdir()
    shutil.copy(run / "model.keras", run / "checkpoints" / "adapted.keras")
    with claim_run_dir(run, resume=True):  # held by "another process" (another open of the directory)
        error = refused("train", "csv", tiny_csv[0], "--resume", run, folders=[workdir])
    assert "in use by another hierattn process" in error


@pytest.mark.parametrize(
    "args",
    [
        ["explain", "--run", "{run}", "a great film", "--format", "html", "--output", "{disk}/page.html"],
        ["explain", "--run", "{run}", "--file", "{texts}", "--format", "json", "--output", "{disk}/e.json"],
        ["predict", "--run", "{run}", "--file", "{texts}", "--output", "{disk}/predictions.csv"],
        ["evaluate", "--run", "{run}", "--data", "{test}", "--output", "{disk}/metrics.json"],
        ["explain", "--run", "{run}", "--dataset", "{test}", "--output", "{disk}/words.csv"],
        ["train", "csv", "{train}", "--output", "{disk}/run", *TINY],
    ],
    ids=["explain-html", "explain-json", "predict", "evaluate", "explain-dataset", "train"],
)
def test_a_full_disk_leaves_no_file_and_names_the_one_it_was_writing(workdir, tiny_csv, small_disk, args):
    (workdir / "texts.txt").write_text("great film\nawful film\n")
    filled = [
        a.format(run=workdir / "run", disk=small_disk, texts=workdir / "texts.txt", test=tiny_csv[1], train=tiny_csv[0])
        for a in args
    ]
    error = refused(*filled, folders=[workdir])
    assert f"Error: no space left on device while writing {small_disk}/" in error, error
    assert sorted(p.name for p in small_disk.iterdir()) == ["filler"]  # no temporary file, no run directory


def test_changed_recorded_data_is_refused_by_evaluate_and_resume(cli_run, tiny_csv, tmp_path):
    from hierattn.runs.directory import write_status

    # The session's CLI run, on copies of the files it recorded: the same bytes, recorded at the copies' paths.
    run = shutil.copytree(cli_run[1], tmp_path / "run")
    config = json.loads((run / "config.json").read_text())
    for name, source in zip(("train", "test"), tiny_csv):
        shutil.copy(source, tmp_path / f"{name}.csv")
        config["data"][name]["path"] = str((tmp_path / f"{name}.csv").resolve())
    (run / "config.json").write_text(json.dumps(config, indent=2))
    original = (tmp_path / "test.csv").read_bytes()
    with open(tmp_path / "test.csv", "a") as f:
        f.write("An added review that was great,pos\n")
    error = refused("evaluate", "--run", run, folders=[tmp_path])
    assert f"{tmp_path / 'test.csv'} changed since the run recorded it" in error
    assert f"pass it with --data {tmp_path / 'test.csv'}" in error
    result = invoke_cli("evaluate", "--run", run, "--data", tmp_path / "test.csv")
    assert result.exit_code == 0 and "on 41 documents" in result.output
    (tmp_path / "test.csv").write_bytes(original)

    # An unfinished run (its first checkpoint saved, as while it trains), then its training file changes.
    unfinished = shutil.copytree(run, tmp_path / "unfinished")
    write_status(unfinished, status="training")
    (unfinished / "checkpoints").mkdir()
    shutil.copy(unfinished / "model.keras", unfinished / "checkpoints" / "adapted.keras")
    with open(tmp_path / "train.csv", "a") as f:
        f.write("An added review that was awful,neg\n")
    error = refused("train", "csv", tmp_path / "train.csv", "--resume", unfinished, folders=[tmp_path])
    assert f"cannot resume {unfinished}: {tmp_path / 'train.csv'} is not the train data the run recorded" in error
    assert "restore the file, or start a new run" in error
