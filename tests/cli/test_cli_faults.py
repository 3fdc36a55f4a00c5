"""Bad input and faults against the CLI (hierattn.cli): one `Error:` line, nothing lost.

Every case checks the same contract: exit code 1 or 2, exactly one line that
starts with `Error:`, no traceback anywhere in the output, no earlier file
changed and no partial file left behind. Most cases go through click's
CliRunner; those that need a real process (raw bytes on standard input, signals,
TensorFlow's C++ log lines, what is imported before an error) run `cli.py`.
"""

import hashlib
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
from click.testing import CliRunner

from hierattn.cli import cli
from hierattn.runs.directory import load_run

from conftest import mini_imdb

ROOT = pathlib.Path(__file__).resolve().parents[2]
TINY = ["--epochs", "1", "--batch-size", "16", "--embedding-dim", "8", "--embeddings", "none"]
PARTIAL_SUFFIXES = (".partial", ".tmp", ".part", ".partial.keras")


def invoke(*args, input=None):
    return CliRunner().invoke(cli, [str(a) for a in args], input=input)


def snapshot(*folders):
    """Every file under `folders` with a hash of its bytes."""
    files = {}
    for folder in folders:
        for path in pathlib.Path(folder).rglob("*"):
            if path.is_file():
                files[str(path)] = hashlib.sha256(path.read_bytes()).hexdigest()
    return files


def assert_refused(output, exit_code, before=None, after=None):
    """The contract of every bad input: one Error line, no traceback, nothing changed or left behind."""
    assert exit_code in (1, 2), output
    assert "Traceback" not in output, output
    errors = [line for line in output.splitlines() if line.startswith("Error:")]
    assert len(errors) == 1, output
    if before is not None:
        assert after == before, "files changed"
    if after is not None:
        assert not [f for f in after if f.endswith(PARTIAL_SUFFIXES)], after
    return errors[0]


def refused(*args, input=None, folders=()):
    before = snapshot(*folders)
    result = invoke(*args, input=input)
    return assert_refused(result.output, result.exit_code, before, snapshot(*folders))


def run_program(*args, input=None, env=None, timeout=240):
    """`python cli.py ARGS` in a fresh process, as a user runs it."""
    full_env = {**os.environ, "PYTHONPATH": str(ROOT), **(env or {})}
    return subprocess.run(
        [sys.executable, str(ROOT / "cli.py"), *map(str, args)],
        input=input,
        capture_output=True,
        env=full_env,
        timeout=timeout,
        cwd=ROOT,
    )


@pytest.fixture(scope="module")
def trained(cli_run):
    """The session's HAN run trained through the CLI (`cli_run`), never changed here: `workdir` has a copy."""
    return cli_run[1]


@pytest.fixture
def workdir(tmp_path, trained):
    """A folder with a copy of the trained run and a previous output file that must survive."""
    shutil.copytree(trained, tmp_path / "run")
    (tmp_path / "earlier.csv").write_text("my earlier results\n")
    return tmp_path


# Texts: through an argument, --file and standard input ---------------------------------------------------------------


@pytest.mark.parametrize("command", ["predict", "explain"])
@pytest.mark.parametrize(
    "text", ["", "   \t \n", "<br /><p></p><div class='x'></div>"], ids=["empty", "whitespace", "html-only"]
)
def test_wordless_text_arguments_are_refused(workdir, command, text):
    error = refused(command, "--run", workdir / "run", text, folders=[workdir])
    assert "the text is empty" in error or "the text has no word to read" in error


@pytest.mark.parametrize("command", ["predict", "explain"])
def test_emoji_and_one_megabyte_texts_are_answered(workdir, command):
    for text in ["\U0001f600\U0001f600 \U0001f389", "The film was great. " * 52429]:  # the second is 1 MB
        result = invoke(command, "--run", workdir / "run", text)
        assert result.exit_code == 0, result.output
        assert "predicted:" in result.output


@pytest.mark.parametrize("command", ["predict", "explain"])
@pytest.mark.parametrize(
    "content, message",
    [
        (b"", "no text"),
        (b"  \n\t\n\n", "no text"),
        (b"<p></p>\n<br/>\n", "none of the texts has a word to read|no words"),
        (b"good film\n\xff\xfe\x00\x01binary\n", "NUL bytes"),
        (b"good film\ncaf\xe9 au lait\n", "not valid utf-8 text: line 2 has the byte 0xe9"),
        (b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR", "NUL bytes|not valid utf-8"),
    ],
    ids=["empty", "whitespace", "html-only", "nul", "latin-1", "png"],
)
def test_bad_files_and_standard_input(workdir, command, content, message):
    import re

    (workdir / "texts.txt").write_bytes(content)
    from_file = refused(
        command,
        "--run",
        workdir / "run",
        "--file",
        workdir / "texts.txt",
        "--output",
        workdir / "out.csv",
        folders=[workdir],
    )
    assert re.search(message, from_file), from_file
    assert not (workdir / "out.csv").exists()
    from_stdin = refused(command, "--run", workdir / "run", "-", input=content, folders=[workdir])
    assert re.search(message, from_stdin), from_stdin


def test_files_with_some_wordless_lines_keep_their_rows(workdir):
    (workdir / "texts.txt").write_text("great film\n\n<br/>\nawful film\n")
    result = invoke(
        "predict", "--run", workdir / "run", "--file", workdir / "texts.txt", "--output", workdir / "out.csv"
    )
    assert result.exit_code == 0, result.output
    rows = (workdir / "out.csv").read_text().splitlines()
    assert rows[0] == "row,predicted,p_neg,p_pos" and len(rows) == 5
    assert rows[2] == "1,,," and rows[3] == "2,,," and rows[1].split(",")[1] in ("neg", "pos")
    latin = invoke("predict", "--run", workdir / "run", "-", "--encoding", "latin-1", input=b"caf\xe9 great\n")
    assert latin.exit_code == 0 and latin.output.splitlines()[-1].startswith("0,")


def test_emoji_and_one_megabyte_lines_in_a_file_and_on_standard_input(workdir):
    content = ("\U0001f600\U0001f389\n" + "The film was great. " * 52429 + "\n").encode()
    (workdir / "texts.txt").write_bytes(content)
    from_file = invoke(
        "predict", "--run", workdir / "run", "--file", workdir / "texts.txt", "--output", workdir / "out.csv"
    )
    assert from_file.exit_code == 0, from_file.output
    from_stdin = invoke("predict", "--run", workdir / "run", "-", input=content)
    assert from_stdin.exit_code == 0, from_stdin.output
    for rows in ((workdir / "out.csv").read_text().splitlines(), from_stdin.stdout.splitlines()):
        assert len(rows) == 3 and all(row.split(",")[1] in ("neg", "pos") for row in rows[1:])
    explained = invoke("explain", "--run", workdir / "run", "-", "--format", "json", input=content)
    assert explained.exit_code == 0 and len(json.loads(explained.stdout)) == 2


def test_binary_bytes_in_a_real_process_on_standard_input_and_as_an_argument(trained):
    for args in (["predict", "--run", trained, "-"], ["explain", "--run", trained, "-"]):
        result = run_program(*args, input=b"\xff\xd8\xff\xe0\x00\x10JFIF\x00")
        assert_refused(result.stdout.decode() + result.stderr.decode(), result.returncode)
    result = run_program("predict", "--run", trained, os.fsdecode(b"caf\xe9"))
    error = assert_refused(result.stdout.decode() + result.stderr.decode(), result.returncode)
    assert "not valid UTF-8" in error


# Table files for train csv ---------------------------------------------------------------------------------------------


def write(path, content):
    path.write_bytes(content if isinstance(content, bytes) else content.encode())
    return path


@pytest.mark.parametrize(
    "content, message",
    [
        ("comment,stars\ngood,1\nbad,0\n", "no text column found"),
        ("text,stars\ngood,1\nbad,0\n", "no label column found"),
        ("text,label\n" + "good film,pos\n" * 10, "at least two classes"),
        ("text,label\n" + "".join(f"film number {i},{i}\n" for i in range(20)), "every label occurs once"),
        (
            "text,label\ngood,pos\nbad,neg\nfine,pos\n",
            "every class needs at least 2 documents .*; too few: 'neg' \\(1\\)",
        ),
        ("text,label\n", "no usable rows"),
        ("", "No columns to parse|no usable rows"),
        ("text,label\nNaN,NaN\n,\n", "no usable rows"),
        (b"text,label\ncaf\xe9 cr\xe8me,pos\nbad,neg\n", "not valid utf-8 text: line 2 has the byte 0xe9"),
        (b"text,label\n\xc3\x28 invalid,pos\nbad,neg\n", "not valid utf-8 text: line 2 has the byte 0xc3"),
        (b"text,label\ngood,pos\x00\n", "NUL bytes"),
        ("text\tlabel\n" + "a b\tpos\n" * 3 + "a, b, c\tneg\n", "looks tab-separated"),
        ('text,label\n"unclosed quote,pos\nbad,neg\n', "could not read|no usable rows|every class"),
    ],
    ids=[
        "no-text-column",
        "no-label-column",
        "one-class",
        "all-unique-labels",
        "one-of-a-class",
        "header-only",
        "empty-file",
        "only-missing",
        "latin-1",
        "invalid-utf8",
        "nul",
        "tsv-named-csv",
        "unclosed-quote",
    ],
)
def test_bad_csv_files(tmp_path, content, message):
    import re

    path = write(tmp_path / "data.csv", content)
    error = refused("train", "csv", path, "--output", tmp_path / "run", *TINY, folders=[tmp_path])
    assert re.search(message, error), error
    assert not (tmp_path / "run").exists()


@pytest.mark.parametrize(
    "name, content, message",
    [
        (
            "data.jsonl",
            '{"text": "a", "label": 1}\n{"text": "b", "label": 0}\n{"text": "c", label: 1}\n',
            "line 3 is not valid JSON",
        ),
        ("data.jsonl", '{"text": "a", "label": 1}\n[1, 2]\n', "line 2 is a JSON list"),
        ("data.jsonl", '{"comment": "a", "label": 1}\n', "no text column found"),
        ("data.tsv", "text\tlabel\ngood\tpos\nbad\tneg\textra\tfields\n", "Expected 2 fields in line 3, saw 4"),
        ("data.tsv", "text,label\ngood,pos\n", "no text column found"),
    ],
    ids=["bad-json", "not-an-object", "no-text-field", "ragged-tsv", "csv-named-tsv"],
)
def test_bad_json_lines_and_tsv_files(tmp_path, name, content, message):
    path = write(tmp_path / name, content)
    assert message in refused("train", "csv", path, "--output", tmp_path / "run", *TINY, folders=[tmp_path])


def test_nan_labels_are_skipped_not_a_class_and_latin1_reads_with_its_encoding(tmp_path):
    rows = "".join(f"a great film {i},pos\nan awful film {i},neg\n" for i in range(6))
    path = write(
        tmp_path / "data.csv",
        ("text,label\n" + rows + "what,NaN\nwho,null\n").encode("latin-1")
        + b"caf\xe9 cr\xe8me great,pos\ncaf\xe9 awful,neg\n",
    )
    result = invoke(
        "train",
        "csv",
        path,
        "--encoding",
        "latin-1",
        "--output",
        tmp_path / "run",
        "--limit",
        "16",
        *TINY,
        "--config",
        write(tmp_path / "small.json", '{"word_units": 4, "sentence_units": 4}'),
    )
    assert result.exit_code == 0, result.output
    assert "skipped 0 without text, 2 without a label" in result.output
    classifier = load_run(tmp_path / "run").classifier
    assert classifier.label_names == ["neg", "pos"] and "café" in classifier.preprocessor.vocabulary


# Run directories: corrupt, foreign and tampered -------------------------------------------------------------------------


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
    before = CliRunner().invoke(cli, ["predict", "--run", str(workdir / "run"), "a great film"])
    damage(workdir / "run" / "model.onnx")
    after = CliRunner().invoke(cli, ["predict", "--run", str(workdir / "run"), "a great film"])
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


# Outputs: existing ones are refused and kept; missing folders are refused --------------------------------------------


@pytest.mark.parametrize(
    "args",
    [
        ["predict", "--run", "{run}", "--file", "{texts}", "--output", "{out}"],
        ["explain", "--run", "{run}", "--file", "{texts}", "--format", "csv", "--output", "{out}"],
        ["explain", "--run", "{run}", "a great film", "--format", "html", "--output", "{out}"],
        ["explain", "--run", "{run}", "--dataset", "{data}", "--output", "{out}"],
        ["evaluate", "--run", "{run}", "--data", "{data}", "--output", "{out}"],
    ],
    ids=["predict", "explain-csv", "explain-html", "explain-dataset", "evaluate"],
)
@pytest.mark.parametrize("target", ["existing", "missing-folder", "folder-is-a-file"])
def test_outputs_are_never_overwritten_and_need_their_folder(workdir, tiny_csv, args, target):
    (workdir / "texts.txt").write_text("great film\nawful film\n")
    out = {
        "existing": workdir / "earlier.csv",
        "missing-folder": workdir / "no" / "such" / "out.csv",
        "folder-is-a-file": workdir / "earlier.csv" / "out.csv",
    }[target]
    filled = [a.format(run=workdir / "run", texts=workdir / "texts.txt", out=out, data=tiny_csv[1]) for a in args]
    error = refused(*filled, folders=[workdir])
    assert {"existing": "already exists", "missing-folder": "does not exist", "folder-is-a-file": "is a file"}[
        target
    ] in error
    assert (workdir / "earlier.csv").read_text() == "my earlier results\n"


@pytest.mark.parametrize("command", ["predict", "explain", "train"])
def test_outputs_that_cannot_be_written(workdir, tiny_csv, command):
    (workdir / "texts.txt").write_text("great film\n")
    too_long = workdir / ("x" * 300 + ".csv")  # longer than any file name the system allows
    args = {
        "predict": ["predict", "--run", workdir / "run", "--file", workdir / "texts.txt", "--output", too_long],
        "explain": ["explain", "--run", workdir / "run", "a great film", "--format", "html", "--output", too_long],
        "train": ["train", "csv", tiny_csv[0], "--output", too_long / "run", *TINY],
    }[command]
    assert "file name too long" in refused(*args, folders=[workdir])


def test_missing_side_files_are_refused_when_the_options_are_read(workdir, tiny_csv):
    for option in ("--embeddings", "--test", "--unlabeled", "--config"):
        error = refused("train", "csv", tiny_csv[0], *TINY, option, workdir / "absent.txt", folders=[workdir])
        assert "does not exist" in error, option
    error = refused("evaluate", "--run", workdir / "run", "--data", workdir / "earlier.txt", folders=[workdir])
    assert "give a labelled .csv/.tsv" in error


def test_training_into_an_existing_run_is_refused_before_reading_data(workdir, tiny_csv):
    error = refused("train", "csv", workdir / "missing.csv", "--output", workdir / "run", *TINY, folders=[workdir])
    assert "already exists" in error


# Archives -----------------------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "kind, message",
    [
        ("truncated", "is truncated"),
        ("random", "not a readable .tar.gz"),
        ("traversal", "outside the archive's folder"),
        ("absolute", "outside the archive's folder"),
        ("empty-folder", "no IMDB data at"),
    ],
)
def test_bad_imdb_archives(tmp_path, kind, message):
    archive = tmp_path / "aclImdb_v1.tar.gz"
    if kind == "truncated":
        data = mini_imdb(archive).read_bytes()
        archive.write_bytes(data[: int(len(data) * 0.95)])
    elif kind == "random":
        archive.write_bytes(os.urandom(50_000))
    elif kind == "traversal":
        mini_imdb(archive, "../../escape/aclImdb")
    elif kind == "absolute":
        mini_imdb(archive, "/tmp/aclImdb")
    else:
        archive = tmp_path / "empty"
        archive.mkdir()
    error = refused("train", "imdb", archive, "--output", tmp_path / "run", *TINY, folders=[tmp_path])
    assert message in error
    assert not (tmp_path / "run").exists() and not (tmp_path / "escape").exists()


# Option values ------------------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "option, value",
    [
        ("--learning-rate", "nan"),
        ("--learning-rate", "inf"),
        ("--learning-rate", "0"),
        ("--learning-rate", "-1e-3"),
        ("--learning-rate", "fast"),
        ("--epochs", "0"),
        ("--batch-size", "-1"),
        ("--limit", "2"),
        ("--embedding-dim", "0"),
        ("--max-length", "0x40"),
        ("--model", "bert"),
        ("--encoding", "klingon"),
        ("--embeddings", "glove"),
        ("--seed", "x"),
        ("--resume", "no/such/run"),
        ("--max-length", "many"),
        ("--distribute", "everywhere"),
    ],
)
def test_invalid_option_values(tiny_csv, tmp_path, option, value):
    refused("train", "csv", tiny_csv[0], "--output", tmp_path / "run", *TINY, option, value, folders=[tmp_path])
    assert not (tmp_path / "run").exists()


@pytest.mark.parametrize(
    "args",
    [
        ["a film", "--top-k", "0"],
        ["a film", "--random-draws", "0"],
        ["a film", "--limit", "0"],
        ["a film", "--format", "pdf"],
        ["--encoding", "klingon", "--file", "{texts}"],
        ["a film", "--file", "{texts}"],
    ],
)
def test_invalid_explain_options(workdir, args):
    (workdir / "texts.txt").write_text("great film\n")
    refused(
        "explain", "--run", workdir / "run", *[a.format(texts=workdir / "texts.txt") for a in args], folders=[workdir]
    )


def test_a_diverging_training_stops_with_an_error_and_never_becomes_the_latest_run(tiny_csv, tmp_path):
    run = tmp_path / "runs" / "diverged"
    result = invoke(
        "train",
        "csv",
        tiny_csv[0],
        "--output",
        run,
        "--learning-rate",
        "1e30",
        "--epochs",
        "3",
        "--batch-size",
        "16",
        "--embedding-dim",
        "8",
        "--embeddings",
        "none",
    )
    error = assert_refused(result.output, result.exit_code)
    assert "training diverged: the loss became" in error and "lower --learning-rate" in error
    assert json.loads((run / "run.json").read_text())["status"] == "training"
    assert not (run / "model.keras").exists()
    from hierattn.runs.directory import RunError, find_latest_run

    with pytest.raises(RunError, match="no trained run found"):
        find_latest_run(tmp_path / "runs")


# Killed and interrupted training, then resumed ------------------------------------------------------------------------


@pytest.mark.slow
@pytest.mark.parametrize("sig", [signal.SIGKILL, signal.SIGINT], ids=["SIGKILL", "SIGINT"])
def test_training_killed_then_resumed(tiny_csv, tmp_path, sig):
    output = tmp_path / "run"
    settings = write(tmp_path / "small.json", '{"units": 4, "patience": 40}')  # no early stop before the signal
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
            f"interrupted: resume with  python {shlex.quote(str(ROOT / 'cli.py'))} train --resume {shlex.quote(str(output))}"
        )
    assert json.loads((output / "run.json").read_text())["status"] == "training"
    assert not (output / "model.keras").exists()
    if sig == signal.SIGINT:  # a SIGKILL while saving may leave a temporary file: resuming removes it
        assert not list(output.rglob("*.partial*"))

    resumed = invoke("train", "csv", tiny_csv[0], "--resume", output)
    assert resumed.exit_code == 0, resumed.output
    assert "resuming" in resumed.output
    assert json.loads((output / "run.json").read_text())["status"] == "complete"
    assert not list(output.rglob("*.partial*"))
    epochs = [int(row.split(",")[0]) for row in history.read_text().splitlines()[1:]]
    assert epochs == sorted(set(epochs)) and len(epochs) >= 2  # no epoch twice across the two processes
    assert invoke("predict", "a great film", "--run", output).exit_code == 0


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
        "--epochs",
        "2",
        "--batch-size",
        "16",
        "--embedding-dim",
        "8",
        "--embeddings",
        "none",
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
from hierattn.runs.directory import load_run
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


# One owner per run, clean failures on a full disk, data checked against its record (issue #28) ----------------------


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
        "--epochs",
        "2",
        "--batch-size",
        "16",
        "--embedding-dim",
        "8",
        "--embeddings",
        "none",
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


def test_a_file_that_is_not_word_vectors_is_refused_before_the_data_and_leaves_no_run(tiny_csv, tmp_path):
    (tmp_path / "vectors.bin").write_bytes(b"3 2\nfilm\x00\x01\x02\x03\x04\x05\x06\x07great\x08\x09\x10\x11")
    error = refused(
        "train",
        "csv",
        tmp_path / "missing.csv",
        "--output",
        tmp_path / "run",
        *TINY[:-2],
        "--embeddings",
        tmp_path / "vectors.bin",
        folders=[tmp_path],
    )
    assert f"{tmp_path / 'vectors.bin'} is not a text file (it holds binary data)" in error  # before the missing data
    (tmp_path / "ragged.txt").write_text("film 0.1 0.2 0.3\ngreat 0.4 0.5 0.6\nawful 0.7\n")
    error = refused(
        "train",
        "csv",
        tiny_csv[0],
        "--output",
        tmp_path / "run",
        *TINY[:-2],
        "--embeddings",
        tmp_path / "ragged.txt",
        "--embedding-dim",
        "3",
        folders=[tmp_path],
    )
    assert (
        "is not a word2vec or GloVe text file" in error
        and "line 3 has 1 numbers where the lines before have 3" in error
    )
    assert not (tmp_path / "run").exists()  # it failed before its first checkpoint: the run directory is gone


@pytest.mark.parametrize(
    "settings, message",
    [
        ('{"dropout": 2}', "dropout must be a fraction from 0 (included) up to 1 (excluded), not 2"),
        ('{"cell": "transistor"}', "cell must be one of gru, lstm, not 'transistor'"),
        ('{"model": "transformer", "num_heads": 3}', "embedding_dim (128) must be divisible by num_heads (3)"),
        ('{"model": "rnn", "window": -1}', "window must be a whole number of at least 0, or None, not -1"),
        ('{"epochs": "many"}', "epochs must be a whole number"),
    ],
)
def test_every_setting_is_checked_before_any_data_is_read(tmp_path, settings, message):
    config = write(tmp_path / "settings.json", settings)
    error = refused("train", "csv", tmp_path / "missing.csv", "--config", config, folders=[tmp_path])
    assert message in error and "missing.csv" not in error


def test_an_impossible_size_ends_in_one_line_naming_the_settings(tiny_csv, tmp_path):
    config = write(tmp_path / "huge.json", '{"embedding_dim": 100000000000}')
    error = refused(
        "train", "csv", tiny_csv[0], "--output", tmp_path / "run", *TINY[:-4], "--config", config, folders=[tmp_path]
    )
    assert error.startswith("Error: out of memory: the han model does not fit"), error
    assert "embedding_dim 100000000000, max_vocab 60000, batch_size 16" in error and "lower one of" in error
    assert not (tmp_path / "run").exists()


@pytest.mark.slow
def test_changed_recorded_data_is_refused_by_evaluate_and_resume(tmp_path):
    from hierattn.data import load_table
    from hierattn.runs.config import TrainConfig
    from hierattn.runs.data_record import describe_source
    from hierattn.runs.train import train

    from conftest import StopAfterFirstEpoch, write_corpus

    write_corpus(tmp_path)
    run = tmp_path / "run"
    assert (
        invoke(
            "train",
            "csv",
            tmp_path / "train.csv",
            "--test",
            tmp_path / "test.csv",
            "--output",
            run,
            *TINY,
            "--no-baseline",
        ).exit_code
        == 0
    )
    with open(tmp_path / "test.csv", "a") as f:
        f.write("An added review that was great,pos\n")
    error = refused("evaluate", "--run", run, folders=[tmp_path])
    assert f"{tmp_path / 'test.csv'} changed since the run recorded it" in error
    assert f"pass it with --data {tmp_path / 'test.csv'}" in error
    result = invoke("evaluate", "--run", run, "--data", tmp_path / "test.csv")
    assert result.exit_code == 0 and "on 41 documents" in result.output

    # An interrupted run (one epoch done), then its training file changes.
    unfinished = tmp_path / "unfinished"
    config = TrainConfig.from_dict(
        {
            "epochs": 3,
            "batch_size": 16,
            "embeddings": "none",
            "min_count": 1,
            "baseline": False,
            "embedding_dim": 8,
            "data": {"train": describe_source(tmp_path / "train.csv")},
        }
    )
    with pytest.raises(KeyboardInterrupt):
        train(
            load_table(tmp_path / "train.csv")[0],
            None,
            config,
            unfinished,
            log=lambda m: None,
            verbose=0,
            callbacks=[StopAfterFirstEpoch()],
        )
    with open(tmp_path / "train.csv", "a") as f:
        f.write("An added review that was awful,neg\n")
    error = refused("train", "csv", tmp_path / "train.csv", "--resume", unfinished, folders=[tmp_path])
    assert f"cannot resume {unfinished}: {tmp_path / 'train.csv'} is not the train data the run recorded" in error
    assert "restore the file, or start a new run" in error


@pytest.mark.parametrize("dataset", [False, True], ids=["text", "dataset"])
def test_a_check_where_no_word_matters_has_no_verdict_and_standard_json(workdir, dataset):
    (workdir / "unknown.txt").write_text("zzzq qqxv wwxy\n")
    args = (
        ["--dataset", workdir / "unknown.txt", "--output", workdir / "words.csv"]
        if dataset
        else ["--file", workdir / "unknown.txt"]
    )
    result = invoke("explain", "--run", workdir / "run", *args, "--check", "--random-draws", "1")
    assert result.exit_code == 0, result.output
    import re

    assert not re.search(r"\b(inf|nan|infinity)x?\b", result.output, re.IGNORECASE), result.output
    assert "no verdict (erasing words hardly moves the prediction)" in result.output
    if dataset:

        def refuse(constant):
            raise ValueError(f"non-standard JSON: {constant}")

        report = json.loads((workdir / "words.faithfulness.json").read_text(), parse_constant=refuse)
        assert report["verdict"].endswith("no verdict (erasing words hardly moves the prediction)")


def test_a_50_megabyte_text_is_explained_in_bounded_time_and_output(workdir):
    (workdir / "long.txt").write_text("The plot was thin but the acting was great. " * 1_150_000 + "\n")  # 50 MB
    started = time.perf_counter()
    result = invoke("explain", "--run", workdir / "run", "--file", workdir / "long.txt")
    assert result.exit_code == 0, result.output[-2000:]
    assert time.perf_counter() - started < 60
    assert len(result.output) < 10_000
    assert "characters after character" in result.output and "are not shown (not read by the network" in result.output


# Tables as users have them: compressed, or a spreadsheet --------------------------------------------------------------


def compressed(path, suffix):
    """`path` compressed beside it as `path` + `suffix` (`.gz`, `.bz2`, `.xz` or `.zip`), returned."""
    import bz2
    import gzip
    import lzma
    import zipfile

    target = path.with_name(path.name + suffix)
    if suffix == ".zip":
        with zipfile.ZipFile(target, "w", zipfile.ZIP_DEFLATED) as archive:
            archive.write(path, path.name)
    else:
        target.write_bytes({".gz": gzip, ".bz2": bz2, ".xz": lzma}[suffix].compress(path.read_bytes()))
    return target


def a_workbook(path):
    """A file laid out as an Excel workbook (a zip archive with `xl/`), as Excel writes one, whatever its name."""
    import zipfile

    with zipfile.ZipFile(path, "w") as archive:
        archive.writestr("[Content_Types].xml", "<Types/>")
        archive.writestr("xl/workbook.xml", "<workbook/>")
        archive.writestr("xl/worksheets/sheet1.xml", "<worksheet/>")
    return path


@pytest.mark.parametrize("name", ["reviews.xlsx", "reviews.csv"], ids=["by-name", "by-content"])
def test_an_excel_workbook_is_refused_with_how_to_save_it_as_csv(tmp_path, tiny_csv, name):
    workbook = a_workbook(tmp_path / name)
    error = refused("train", "csv", workbook, "--output", tmp_path / "run", *TINY, folders=[tmp_path])
    assert error.startswith(f"Error: {workbook} is an Excel workbook") and "save it as CSV" in error, error
    assert "NUL" not in error and not (tmp_path / "run").exists()
    error = refused("train", "csv", tiny_csv[0], "--test", workbook, "--output", tmp_path / "run", *TINY)
    assert "is an Excel workbook" in error and not (tmp_path / "run").exists()


def test_a_damaged_compressed_table_is_one_error_naming_it(tmp_path, tiny_csv):
    whole = compressed(shutil.copy(tiny_csv[0], tmp_path / "whole.csv"), ".gz").read_bytes()
    cut = write(tmp_path / "train.csv.gz", whole[: len(whole) // 2])
    error = refused("train", "csv", cut, "--output", tmp_path / "run", *TINY, folders=[tmp_path])
    assert error.startswith(f"Error: {cut} is not a readable gzip file: it is damaged or cut short"), error
    assert not (tmp_path / "run").exists()


def test_training_on_compressed_tables_reads_them_and_records_their_bytes(tmp_path, tiny_csv):
    import hashlib

    shutil.copy(tiny_csv[0], tmp_path / "train.csv")
    shutil.copy(tiny_csv[1], tmp_path / "test.tsv")
    train, test = compressed(tmp_path / "train.csv", ".gz"), tmp_path / "test.tsv.zip"
    (tmp_path / "test.tsv").write_text((tmp_path / "test.tsv").read_text().replace(",", "\t"))  # a real TSV
    compressed(tmp_path / "test.tsv", ".zip")
    result = invoke("train", "csv", train, "--test", test, "--output", tmp_path / "run", *TINY, "--no-baseline")
    assert result.exit_code == 0, result.output
    assert f"{train}: 160 of 160 rows used" in result.output and f"{test}: 40 of 40 rows used" in result.output
    recorded = json.loads((tmp_path / "run" / "config.json").read_text())["data"]
    assert recorded["train"]["sha256"] == hashlib.sha256(train.read_bytes()).hexdigest()
    assert recorded["test"]["bytes"] == test.stat().st_size
    metrics = json.loads((tmp_path / "run" / "metrics.json").read_text())
    assert metrics["test"]["documents"] == 40, metrics


def test_predict_explain_and_evaluate_read_compressed_files(workdir, tiny_csv):
    plain = shutil.copy(tiny_csv[1], workdir / "texts.csv")
    expected = invoke("predict", "--run", workdir / "run", "--file", plain, "--output", workdir / "plain.csv")
    assert expected.exit_code == 0, expected.output
    for suffix in (".gz", ".zip"):
        output = workdir / f"out{suffix}.csv"
        result = invoke("predict", "--run", workdir / "run", "--file", compressed(plain, suffix), "--output", output)
        assert result.exit_code == 0, result.output
        assert output.read_text() == (workdir / "plain.csv").read_text()
    lines = write(workdir / "texts.txt", "A great film, I loved it.\nDull and painful.\n")
    result = invoke("explain", "--run", workdir / "run", "--file", compressed(lines, ".bz2"), "--format", "json")
    assert result.exit_code == 0, result.output
    words = [{w["text"] for w in explanation["words"]} for explanation in json.loads(result.stdout)]
    assert len(words) == 2 and {"great", "loved"} <= words[0] and "painful" in words[1]
    result = invoke("evaluate", "--run", workdir / "run", "--data", compressed(plain, ".xz"))
    assert result.exit_code == 0 and "on 40 documents" in result.output, result.output
