"""Tests for hierattn.runs.data_record: what a run recorded of its data, what changed since, and what it resumes on."""

import re
import shutil

import pytest

from hierattn.errors import RunError
from hierattn.runs.data_record import data_changes, data_to_resume, describe_source


def test_data_changes_name_what_differs_from_the_record(tmp_path):

    train_file, test_file = tmp_path / "train.csv", tmp_path / "test.csv"
    train_file.write_text("text,label\na,b\n")
    test_file.write_text("text,label\nc,d\n")
    recorded = {"train": describe_source(train_file), "test": describe_source(test_file), "text_column": "text"}
    assert data_changes(recorded) == {}
    assert data_changes(recorded, {"train": describe_source(train_file), "test": describe_source(test_file)}) == {}
    test_file.write_text("text,label\nc,e\n")
    assert data_changes(recorded) == {
        "test": f"{test_file} changed since the run recorded it (its sha256 is not the one in config.json)"
    }
    changes = data_changes(recorded, {"train": describe_source(test_file)})
    assert "is not the train data the run recorded" in changes["train"]
    assert "none is given now" in changes["test"]
    test_file.unlink()
    assert data_changes(recorded)["test"] == f"{test_file} no longer exists"


def test_a_run_resumes_on_the_files_it_recorded_or_on_copies_of_them(tmp_path):
    train_file, test_file, other = tmp_path / "train.csv", tmp_path / "test.csv", tmp_path / "other.csv"
    train_file.write_text("text,label\na,b\n")
    test_file.write_text("text,label\nc,d\n")
    other.write_text("text,label\ne,f\n")
    words = tmp_path / "words.txt"
    words.write_text("some unlabelled text\n")
    recorded = {
        name: describe_source(f) for name, f in (("train", train_file), ("test", test_file), ("unlabeled", words))
    }
    run = tmp_path / "run"
    # Nothing given: the recorded files (the unlabelled texts are not read again, so need not be there).
    words.unlink()
    assert data_to_resume(run, recorded) == {"train": str(train_file), "test": str(test_file)}
    # A run stopped while word2vec trained reads them again: there they must be, unchanged.
    with pytest.raises(RunError, match=rf"its unlabeled data {re.escape(str(words))} no longer exists"):
        data_to_resume(run, recorded, unlabeled=True)
    words.write_text("some unlabelled text\n")
    assert data_to_resume(run, recorded, unlabeled=True)["unlabeled"] == str(words)
    # A copy of the recorded test file, elsewhere: the same content, accepted.
    shutil.copy(test_file, tmp_path / "copy.csv")
    assert data_to_resume(run, recorded, {"test": tmp_path / "copy.csv"})["test"] == str(tmp_path / "copy.csv")

    def refused(given=None):
        with pytest.raises(RunError) as error:
            data_to_resume(run, recorded, given)
        return str(error.value)

    assert refused({"train": other}) == (
        f"cannot resume {run}: {other} is not the train data the run recorded ({train_file}: another sha256). "
        "Leave it out to resume on the train data the run recorded, or start a new run."
    )
    assert refused({"imdb": tmp_path}) == (
        f"cannot resume {run} on IMDB ({tmp_path}): it was trained on the table {train_file}; give no data to "
        "resume it on the data it recorded"
    )
    assert refused({"unlabeled": other}).startswith(f"cannot resume {run}: {other} is not the unlabeled data")
    test_file.write_text("text,label\nc,changed\n")
    assert refused() == (
        f"cannot resume {run}: its test data {test_file} changed since the run recorded it (its sha256 is not the "
        "one in config.json). Resuming needs the data the run recorded: restore the file, or start a new run."
    )
    test_file.unlink()
    assert refused() == (
        f"cannot resume {run}: its test data {test_file} no longer exists. Resuming needs the data the run "
        "recorded: restore the file (or give a copy of it), or start a new run."
    )
    imdb_run = {"imdb": describe_source(tmp_path)}  # a folder: no sha256, compared by path
    assert data_to_resume(run, imdb_run) == {"imdb": str(tmp_path)}
    with pytest.raises(RunError, match=r"on the table .*other.csv: it was trained on IMDB \("):
        data_to_resume(run, imdb_run, {"train": other})
    with pytest.raises(RunError, match="it recorded no data"):
        data_to_resume(run, {})
    assert data_to_resume(run, {}, {"train": other, "test": None}) == {"train": str(other)}
    given = {"train": other, "unlabeled": other}  # a run of the Python API: what is given, unlabelled texts if needed
    assert data_to_resume(run, {}, given) == {"train": str(other)}
    assert data_to_resume(run, {}, given, unlabeled=True) == {"train": str(other), "unlabeled": str(other)}
