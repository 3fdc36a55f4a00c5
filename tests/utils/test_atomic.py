"""Tests for hierattn.utils.atomic: files appear whole or not at all, and failures name the file."""

import errno
import os

import pytest

from hierattn.errors import ArgumentError
from hierattn.utils.atomic import (
    WriteError,
    atomic_open,
    atomic_path,
    check_new_file,
    remove_temporary_files,
    temporary_name,
    write_text,
)


def names(folder):
    return sorted(p.name for p in folder.iterdir())


def test_a_complete_write_leaves_only_the_file(tmp_path):
    with atomic_open(tmp_path / "out.csv") as f:
        f.write("a,b\n")
        assert names(tmp_path) != ["out.csv"]  # written under a temporary name first
    assert names(tmp_path) == ["out.csv"]
    assert (tmp_path / "out.csv").read_text() == "a,b\n"


def test_the_temporary_name_keeps_the_suffixes_keras_checks_and_fits_any_file_system(tmp_path):
    name = temporary_name(tmp_path / "best.weights.h5").name
    assert name.startswith(".best.weights.h5.") and name.endswith(".partial.weights.h5")
    assert temporary_name(tmp_path / "model.keras").name.endswith(".keras")
    long = "x" * 250 + ".html"
    with atomic_open(tmp_path / long) as f:
        f.write("a name of 255 characters, the most most file systems allow")
    assert names(tmp_path) == [long]


@pytest.mark.parametrize("error", [KeyboardInterrupt, ValueError, OSError(errno.EIO, "Input/output error")])
def test_any_failure_removes_the_temporary_file_and_keeps_the_old_one(tmp_path, error):
    (tmp_path / "metrics.json").write_text("old")
    with pytest.raises(BaseException):  # noqa: B017 - the parametrised error is any exception, Ctrl-C included
        with atomic_open(tmp_path / "metrics.json") as f:
            f.write("half")
            raise error
    assert names(tmp_path) == ["metrics.json"]
    assert (tmp_path / "metrics.json").read_text() == "old"


def test_os_errors_become_one_line_naming_the_file(tmp_path):
    with pytest.raises(WriteError, match=f"^input/output error while writing {tmp_path / 'x.txt'}$"):
        with atomic_open(tmp_path / "x.txt"):
            raise OSError(errno.EIO, "Input/output error")
    with pytest.raises(WriteError, match="permission denied while writing"):
        with atomic_path(tmp_path / "y.keras") as temporary:
            raise PermissionError(errno.EACCES, "Permission denied", str(temporary))
    with pytest.raises(TimeoutError):  # names no file and is no failure to write: not this file's
        with atomic_path(tmp_path / "z.keras"):
            raise TimeoutError(errno.ETIMEDOUT, "Connection timed out")
    assert names(tmp_path) == []


def test_an_error_about_another_file_passes_through(tmp_path):
    with pytest.raises(FileNotFoundError) as caught:
        with atomic_open(tmp_path / "out.csv"):
            open(tmp_path / "missing-input.txt")
    assert not isinstance(caught.value, WriteError)
    assert names(tmp_path) == []


def test_without_overwrite_a_file_that_appeared_meanwhile_wins(tmp_path):
    target = tmp_path / "page.html"
    with pytest.raises(WriteError, match="already exists .*nothing was overwritten"):
        with atomic_open(target, overwrite=False) as f:
            f.write("mine")
            target.write_text("another process's")
    assert target.read_text() == "another process's"
    assert names(tmp_path) == ["page.html"]


def test_a_full_disk_leaves_nothing_and_says_which_file(small_disk):
    target = small_disk / "page.html"
    with pytest.raises(WriteError) as caught:
        write_text(target, "x" * 200_000)
    assert str(caught.value) == f"no space left on device while writing {target}"
    assert caught.value.errno == errno.ENOSPC
    assert names(small_disk) == ["filler"]


def test_temporary_files_of_a_killed_process_are_removed(tmp_path):
    (tmp_path / "checkpoints").mkdir()
    for path in (temporary_name(tmp_path / "model.keras"), temporary_name(tmp_path / "checkpoints" / "a.weights.h5")):
        path.write_bytes(b"half")
    (tmp_path / "notes.partial.txt").write_text("a user's file, not ours")
    remove_temporary_files(tmp_path)
    assert names(tmp_path) == ["checkpoints", "notes.partial.txt"]
    assert names(tmp_path / "checkpoints") == []


def test_a_file_to_write_is_refused_early_when_it_exists_or_its_folder_does_not(tmp_path):
    (tmp_path / "old.csv").write_text("kept")
    check_new_file(tmp_path / "new.csv")
    cases = [
        (
            tmp_path / "old.csv",
            "output",
            f"{tmp_path / 'old.csv'} already exists; choose another output (nothing was overwritten)",
        ),
        (
            tmp_path / "no" / "x.csv",
            "output",
            f"the folder of output {tmp_path / 'no' / 'x.csv'} does not exist; create it first",
        ),
        (tmp_path / "old.csv" / "x.csv", "report", f"the folder of report {tmp_path / 'old.csv' / 'x.csv'} is a file"),
    ]
    for path, argument, message in cases:
        with pytest.raises(ArgumentError) as refused:
            check_new_file(path, argument)
        assert (str(refused.value), refused.value.argument) == (message, argument)
    assert (tmp_path / "old.csv").read_text() == "kept"


def test_the_example_runs(tmp_path):
    import doctest

    import hierattn.utils.atomic

    assert doctest.testmod(hierattn.utils.atomic).failed == 0
    assert os.listdir(tmp_path) == []
