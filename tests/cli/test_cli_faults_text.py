"""Bad texts and outputs against predict and explain (hierattn.cli): one `Error:` line, nothing lost.

Every case checks the contract of bad input (`conftest.assert_refused`): exit code 1 or 2, exactly one line that
starts with `Error:`, no traceback anywhere in the output, no earlier file changed and no partial file left behind.

Texts come through an argument, --file or standard input (one case in a real process, for raw bytes).
"""

import json
import os
import shutil
import time

import pytest

from conftest import assert_refused, compressed, invoke_cli, refused, run_program, tiny_args, write_file

TINY = tiny_args()


@pytest.fixture(scope="module")
def trained(cli_run):
    """The session's HAN run trained through the CLI (`cli_run`), never changed here: `workdir` has a copy."""
    return cli_run[1]


# Texts: through an argument, --file and standard input -----------------------------------------------------------------


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
        result = invoke_cli(command, "--run", workdir / "run", text)
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
    result = invoke_cli(
        "predict", "--run", workdir / "run", "--file", workdir / "texts.txt", "--output", workdir / "out.csv"
    )
    assert result.exit_code == 0, result.output
    rows = (workdir / "out.csv").read_text().splitlines()
    assert rows[0] == "row,predicted,p_neg,p_pos" and len(rows) == 5
    assert rows[2] == "1,,," and rows[3] == "2,,," and rows[1].split(",")[1] in ("neg", "pos")
    latin = invoke_cli("predict", "--run", workdir / "run", "-", "--encoding", "latin-1", input=b"caf\xe9 great\n")
    assert latin.exit_code == 0 and latin.output.splitlines()[-1].startswith("0,")


def test_emoji_and_one_megabyte_lines_in_a_file_and_on_standard_input(workdir):
    content = ("\U0001f600\U0001f389\n" + "The film was great. " * 52429 + "\n").encode()
    (workdir / "texts.txt").write_bytes(content)
    from_file = invoke_cli(
        "predict", "--run", workdir / "run", "--file", workdir / "texts.txt", "--output", workdir / "out.csv"
    )
    assert from_file.exit_code == 0, from_file.output
    from_stdin = invoke_cli("predict", "--run", workdir / "run", "-", input=content)
    assert from_stdin.exit_code == 0, from_stdin.output
    for rows in ((workdir / "out.csv").read_text().splitlines(), from_stdin.stdout.splitlines()):
        assert len(rows) == 3 and all(row.split(",")[1] in ("neg", "pos") for row in rows[1:])
    explained = invoke_cli("explain", "--run", workdir / "run", "-", "--format", "json", input=content)
    assert explained.exit_code == 0 and len(json.loads(explained.stdout)) == 2


def test_binary_bytes_in_a_real_process_on_standard_input_and_as_an_argument(trained):
    for args in (["predict", "--run", trained, "-"], ["explain", "--run", trained, "-"]):
        result = run_program(*args, input=b"\xff\xd8\xff\xe0\x00\x10JFIF\x00")
        assert_refused(result.stdout.decode() + result.stderr.decode(), result.returncode)
    result = run_program("predict", "--run", trained, os.fsdecode(b"caf\xe9"))
    error = assert_refused(result.stdout.decode() + result.stderr.decode(), result.returncode)
    assert "not valid UTF-8" in error


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


@pytest.mark.parametrize("dataset", [False, True], ids=["text", "dataset"])
def test_a_check_where_no_word_matters_has_no_verdict_and_standard_json(workdir, dataset):
    (workdir / "unknown.txt").write_text("zzzq qqxv wwxy\n")
    args = (
        ["--dataset", workdir / "unknown.txt", "--output", workdir / "words.csv"]
        if dataset
        else ["--file", workdir / "unknown.txt"]
    )
    result = invoke_cli("explain", "--run", workdir / "run", *args, "--check", "--random-draws", "1")
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
    result = invoke_cli("explain", "--run", workdir / "run", "--file", workdir / "long.txt")
    assert result.exit_code == 0, result.output[-2000:]
    assert time.perf_counter() - started < 60
    assert len(result.output) < 10_000
    assert "characters after character" in result.output and "are not shown (not read by the network" in result.output


def test_predict_explain_and_evaluate_read_compressed_files(workdir, tiny_csv):
    plain = shutil.copy(tiny_csv[1], workdir / "texts.csv")
    expected = invoke_cli("predict", "--run", workdir / "run", "--file", plain, "--output", workdir / "plain.csv")
    assert expected.exit_code == 0, expected.output
    for suffix in (".gz", ".zip"):
        output = workdir / f"out{suffix}.csv"
        result = invoke_cli(
            "predict", "--run", workdir / "run", "--file", compressed(plain, suffix), "--output", output
        )
        assert result.exit_code == 0, result.output
        assert output.read_text() == (workdir / "plain.csv").read_text()
    lines = write_file(workdir / "texts.txt", "A great film, I loved it.\nDull and painful.\n")
    result = invoke_cli("explain", "--run", workdir / "run", "--file", compressed(lines, ".bz2"), "--format", "json")
    assert result.exit_code == 0, result.output
    words = [{w["text"] for w in explanation["words"]} for explanation in json.loads(result.stdout)]
    assert len(words) == 2 and {"great", "loved"} <= words[0] and "painful" in words[1]
    result = invoke_cli("evaluate", "--run", workdir / "run", "--data", compressed(plain, ".xz"))
    assert result.exit_code == 0 and "on 40 documents" in result.output, result.output


# Outputs: existing ones are refused and kept; missing folders are refused ----------------------------------------------


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
