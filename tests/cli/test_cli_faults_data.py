"""Bad data and settings against train (hierattn.cli): one `Error:` line, nothing lost, no run left.

Every case checks the contract of bad input (`conftest.assert_refused`): exit code 1 or 2, exactly one line that
starts with `Error:`, no traceback anywhere in the output, no earlier file changed and no partial file left behind.

Tables, archives, word vectors, option values and settings are refused before any training; the tables that
are read go as far as the run's record (`stop_before_fit`).
"""

import json
import os
import shutil

import pytest

from conftest import compressed, invoke_cli, mini_imdb, refused, tiny_args, write_file

TINY = tiny_args()


# Table files for train csv ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "content, message",
    [
        ("comment,stars\ngood,1\nbad,0\n", "no text column found"),
        ("text,stars\ngood,1\nbad,0\n", "no label column found"),
        ("text,label\n" + "good film,pos\n" * 10, "at least two classes"),
        pytest.param(  # refused once training begins (hierattn.runs.train): with Keras
            "text,label\n" + "".join(f"film number {i},{i}\n" for i in range(20)),
            "every label occurs once",
            marks=pytest.mark.keras,
        ),
        pytest.param(
            "text,label\ngood,pos\nbad,neg\nfine,pos\n",
            "every class needs at least 2 documents .*; too few: 'neg' \\(1\\)",
            marks=pytest.mark.keras,
        ),
        ("text,label\n", "no usable rows"),
        ("", "No columns to parse|no usable rows"),
        ("text,label\nNaN,NaN\n,\n", "no usable rows"),
        (b"text,label\ncaf\xe9 cr\xe8me,pos\nbad,neg\n", "not valid utf-8 text: line 2 has the byte 0xe9"),
        (b"text,label\n\xc3\x28 invalid,pos\nbad,neg\n", "not valid utf-8 text: line 2 has the byte 0xc3"),
        (b"text,label\ngood,pos\x00\n", "NUL bytes"),
        ("text\tlabel\n" + "a b\tpos\n" * 3 + "a, b, c\tneg\n", "looks tab-separated"),
        ('text,label\n"unclosed quote,pos\nbad,neg\n', "could not read|no usable rows|every class"),
        (  # too few rows to read unasked: refused, naming the encoding the file looks like
            "text,label\n送餐很快，味道不错。,pos\n等了两个小时，饭都凉了。,neg\n菜量很足，下次还会再点。,pos\n"
            "米饭太硬了，汤也洒了一半。,neg\n".encode("gb18030"),
            "line 2 has the byte 0xcb at column 1; it looks like GB18030: pass --encoding gb18030",
        ),
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
        "gb18030-short",
    ],
)
def test_bad_csv_files(tmp_path, content, message):
    import re

    path = write_file(tmp_path / "data.csv", content)
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
    path = write_file(tmp_path / name, content)
    assert message in refused("train", "csv", path, "--output", tmp_path / "run", *TINY, folders=[tmp_path])


def test_nan_labels_are_skipped_not_a_class_and_latin1_reads_with_its_encoding(tmp_path, stop_before_fit):
    rows = "".join(f"a great film {i},pos\nan awful film {i},neg\n" for i in range(6))
    path = write_file(
        tmp_path / "data.csv",
        ("text,label\n" + rows + "what,NaN\nwho,null\n").encode("latin-1")
        + b"caf\xe9 cr\xe8me great,pos\ncaf\xe9 awful,neg\n",
    )
    result = invoke_cli(
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
        write_file(tmp_path / "small.json", '{"word_units": 4, "sentence_units": 4}'),
    )
    assert result.exit_code == 130, result.output  # stopped as fit began (stop_before_fit)
    assert "skipped 0 without text, 2 without a label" in result.output
    import keras  # here: the file's other tests are in the fast tier (tests/conftest.py)

    classifier = keras.saving.load_model(tmp_path / "run" / "checkpoints" / "adapted.keras")  # as fit began
    assert classifier.label_names == ["neg", "pos"] and "café" in classifier.preprocessor.vocabulary


@pytest.mark.parametrize(
    "groups, option, message",
    [
        ("abcdefgh" * 2, "writer", r"^Error: no group column 'writer' in .*; the columns are: text, label, author\. "),
        ("ab-defgh" + "abcdef-h", "author", r"^Error: the group column 'author' is empty .* in 2 of the 16 rows used "),
        pytest.param(  # refused once the data is split, after TensorFlow loads: not in the fast tier
            "a" * 16,
            "author",
            r"^Error: the validation part holds whole groups, and the 16 training documents are of ",
            marks=pytest.mark.keras,
        ),
        pytest.param(
            "aabbccdd" + "eeeeeeee",
            "author",
            r"^Error: every class needs documents in at least 2 groups .*'pos' \('e'\)",
            marks=pytest.mark.keras,
        ),
        ("abcdefgh" * 2, "", r"^Error: no group column '' in "),
    ],
    ids=["unknown-column", "missing-groups", "one-group", "class-in-one-group", "empty-name"],
)
def test_bad_group_columns(tmp_path, groups, option, message):
    import re

    rows = "".join(
        f"{'a great' if i >= 8 else 'an awful'} film {i},{'pos' if i >= 8 else 'neg'},{'' if g == '-' else g}\n"
        for i, g in enumerate(groups)
    )
    path = write_file(tmp_path / "data.csv", "text,label,author\n" + rows)
    error = refused("train", "csv", path, "--group", option, "--output", tmp_path / "run", *TINY, folders=[tmp_path])
    assert re.search(message, error), error
    assert not (tmp_path / "run").exists()


def test_train_imdb_keeps_its_options_and_groups_by_film(tmp_path):
    archive = mini_imdb(tmp_path / "aclImdb_v1.tar.gz")
    error = refused("train", "imdb", archive, "--group", "author", *TINY, folders=[tmp_path])
    assert error.startswith(
        "Error: No such option '--group'"
    )  # train imdb groups by film, without an option (train csv has one)


# Tables as users have them: compressed, or a spreadsheet ---------------------------------------------------------------


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
    cut = write_file(tmp_path / "train.csv.gz", whole[: len(whole) // 2])
    error = refused("train", "csv", cut, "--output", tmp_path / "run", *TINY, folders=[tmp_path])
    assert error.startswith(f"Error: {cut} is not a readable gzip file: it is damaged or cut short"), error
    assert not (tmp_path / "run").exists()


def test_training_on_compressed_tables_reads_them_and_records_their_bytes(tmp_path, tiny_csv, stop_before_fit):
    import hashlib

    shutil.copy(tiny_csv[0], tmp_path / "train.csv")
    shutil.copy(tiny_csv[1], tmp_path / "test.tsv")
    train, test = compressed(tmp_path / "train.csv", ".gz"), tmp_path / "test.tsv.zip"
    (tmp_path / "test.tsv").write_text((tmp_path / "test.tsv").read_text().replace(",", "\t"))  # a real TSV
    compressed(tmp_path / "test.tsv", ".zip")
    result = invoke_cli("train", "csv", train, "--test", test, "--output", tmp_path / "run", *TINY, "--no-baseline")
    assert result.exit_code == 130, result.output  # stopped as fit began (stop_before_fit), the data read and recorded
    assert f"{train}: 160 of 160 rows used" in result.output and f"{test}: 40 of 40 rows used" in result.output
    recorded = json.loads((tmp_path / "run" / "config.json").read_text())["data"]
    assert recorded["train"]["sha256"] == hashlib.sha256(train.read_bytes()).hexdigest()
    assert recorded["test"]["bytes"] == test.stat().st_size


# Archives --------------------------------------------------------------------------------------------------------------


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


# Option values, settings and side files --------------------------------------------------------------------------------


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


def test_missing_side_files_are_refused_when_the_options_are_read(workdir, tiny_csv):
    for option in ("--embeddings", "--test", "--unlabeled", "--config"):
        error = refused("train", "csv", tiny_csv[0], *TINY, option, workdir / "absent.txt", folders=[workdir])
        assert "does not exist" in error, option
    error = refused("evaluate", "--run", workdir / "run", "--data", workdir / "earlier.txt", folders=[workdir])
    assert "give a labelled .csv/.tsv" in error


@pytest.mark.keras  # the ragged file is read once training begins
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
    config = write_file(tmp_path / "settings.json", settings)
    error = refused("train", "csv", tmp_path / "missing.csv", "--config", config, folders=[tmp_path])
    assert message in error and "missing.csv" not in error


@pytest.mark.keras
def test_an_impossible_size_ends_in_one_line_naming_the_settings(tiny_csv, tmp_path):
    config = write_file(tmp_path / "huge.json", '{"embedding_dim": 100000000000}')
    error = refused(
        "train", "csv", tiny_csv[0], "--output", tmp_path / "run", *TINY[:-4], "--config", config, folders=[tmp_path]
    )
    assert error.startswith("Error: out of memory: the han model does not fit"), error
    assert "embedding_dim 100000000000, max_vocab 60000, batch_size 16" in error and "lower one of" in error
    assert not (tmp_path / "run").exists()


def test_a_chinese_table_in_gb18030_is_read_without_its_encoding_and_says_so(tmp_path, stop_before_fit, caplog):
    from conftest import make_chinese_reviews

    texts, labels = make_chinese_reviews(60)
    rows = "".join(f"{text},{label}\n" for text, label in zip(texts, labels))
    path = write_file(tmp_path / "zh.csv", ("text,label\n" + rows).encode("gb18030"))
    with caplog.at_level("INFO", logger="hierattn.data.decoding"):  # the program shows it (cli/process.py)
        result = invoke_cli("train", "csv", path, "--output", tmp_path / "run", *TINY)
    assert result.exit_code == 130, result.output  # stopped as fit began: read, the units chosen
    assert caplog.messages == [f"{path} is not UTF-8: read as GB18030 (gb18030), the encoding detected"]
    data = json.loads((tmp_path / "run" / "config.json").read_text())["data"]
    assert data["encoding"] is None and data["detected_encoding"] == "gb18030"
    import keras

    classifier = keras.saving.load_model(tmp_path / "run" / "checkpoints" / "adapted.keras")
    assert "送" in classifier.preprocessor.vocabulary  # the characters as written, not mojibake
