"""Tests for hierattn.batch.files: the inputs a path, folder or glob names, read in chunks; the output folder."""

import errno

import numpy as np
import pandas as pd
import pytest

from hierattn.batch.files import OutputFolder, check_inputs, count_rows, file_names, input_files, read_chunks
from hierattn.errors import ArgumentError, DataError, WriteError


@pytest.fixture
def inputs(tmp_path):
    folder = tmp_path / "in"
    (folder / "sub").mkdir(parents=True)
    pd.DataFrame({"id": ["a", "b", "c"], "review": ["one", "two", ""]}).to_csv(folder / "a.csv", index=False)
    pd.DataFrame({"text": ["four", "five"], "label": ["pos", "neg"]}).to_json(
        folder / "sub" / "b.jsonl", orient="records", lines=True
    )
    pd.DataFrame({"text": ["six"], "id": [7]}).to_parquet(folder / "c.parquet", index=False)
    (folder / "_SUCCESS").write_text("")
    (folder / ".hidden.csv").write_text("text\nx\n")
    (folder / "notes.md").write_text("not an input")
    return folder


def test_a_folder_gives_its_table_and_text_files_in_order(inputs):
    files = input_files(inputs)
    assert [p.relative_to(inputs).as_posix() for p in files] == ["a.csv", "c.parquet", "sub/b.jsonl"]
    assert file_names(files, inputs) == ["a.csv", "c.parquet", "sub/b.jsonl"]


def test_a_glob_and_a_file(inputs):
    assert input_files(f"{inputs}/*") == [inputs / "a.csv", inputs / "c.parquet"]  # not _SUCCESS, notes.md, .hidden
    (inputs / "_temporary").mkdir()
    (inputs / "_temporary" / "part-0.csv").write_text("text\nhalf-written\n")
    assert inputs / "_temporary" / "part-0.csv" not in input_files(inputs)
    files = input_files(f"{inputs}/**/*.jsonl")
    assert files == [inputs / "sub" / "b.jsonl"] and file_names(files, f"{inputs}/**/*.jsonl") == [str(files[0])]
    assert input_files(inputs / "a.csv") == [inputs / "a.csv"] and file_names(files, inputs / "a.csv") == [None]


def test_nothing_to_read_is_one_error(inputs, tmp_path):
    with pytest.raises(DataError, match=r"^no such file or folder: "):
        input_files(tmp_path / "absent.csv")
    with pytest.raises(DataError, match=r"^no table or text file matches "):
        input_files(f"{tmp_path}/*.tsv")
    (tmp_path / "empty").mkdir()
    with pytest.raises(DataError, match=r"holds no table or text file"):
        input_files(tmp_path / "empty")


def test_every_input_is_checked_before_work(inputs):
    assert check_inputs(input_files(inputs)) == ["id", "label"]
    (inputs / "d.csv").write_text("title\nno text column here\n")
    with pytest.raises(DataError, match=r"no text column found"):
        check_inputs(input_files(inputs))
    (inputs / "d.csv").write_text("text\n")  # a header and no rows: nothing to read, not an error
    pd.DataFrame({"text": []}).to_parquet(inputs / "e.parquet")
    assert check_inputs([inputs / "d.csv", inputs / "e.parquet"]) == []


def test_rows_are_numbered_across_chunks_with_every_carried_column(inputs):
    frames = list(read_chunks(inputs / "a.csv", "a.csv", ["id", "label"], chunk_size=2))
    assert [len(f) for f in frames] == [2, 1]
    whole = pd.concat(frames, ignore_index=True)
    assert list(whole.columns) == ["file", "row", "text", "id", "label"]
    assert whole["row"].tolist() == [0, 1, 2] and whole["text"].tolist() == ["one", "two", ""]
    assert whole["id"].tolist() == ["a", "b", "c"] and whole["label"].isna().all()
    alone = next(read_chunks(inputs / "c.parquet", None, ["id"]))
    assert list(alone.columns) == ["row", "text", "id"] and alone["id"].tolist() == ["7"]


def test_rows_are_counted_from_parquet_metadata_only(inputs):
    assert count_rows([inputs / "c.parquet"]) == 1
    assert count_rows([inputs / "c.parquet", inputs / "a.csv"]) is None


def test_parts_appear_only_when_the_folder_is_complete(tmp_path):
    target = tmp_path / "out"
    frame = pd.DataFrame({"row": range(5), "p_pos": [0.1, 0.2, 0.3, 0.4, 0.5]})
    with OutputFolder(target, part_rows=2) as folder:
        folder.write(frame.iloc[:3])
        assert not target.exists()
        folder.write(frame.iloc[3:])
    assert sorted(p.name for p in target.iterdir()) == [
        "part-00000.parquet",
        "part-00001.parquet",
        "part-00002.parquet",
    ]
    whole = pd.concat([pd.read_parquet(p) for p in sorted(target.iterdir())], ignore_index=True)
    pd.testing.assert_frame_equal(whole, frame, check_dtype=False)
    assert list(tmp_path.iterdir()) == [target]


def test_a_failed_job_leaves_nothing_and_an_existing_folder_is_kept(tmp_path):
    with pytest.raises(RuntimeError), OutputFolder(tmp_path / "out") as folder:
        folder.write(pd.DataFrame({"row": [0]}))
        raise RuntimeError("the job failed")
    assert list(tmp_path.iterdir()) == []
    (tmp_path / "out").mkdir()
    (tmp_path / "out" / "earlier.csv").write_text("kept")
    with pytest.raises(ArgumentError, match="already exists"):
        OutputFolder(tmp_path / "out")
    with pytest.raises(ArgumentError, match="output format must be one of parquet, csv"):
        OutputFolder(tmp_path / "new", fmt="xlsx")
    for rows in (0, -5, 2.5, float("inf")):  # 0 wrote empty parts without end
        with pytest.raises(ArgumentError, match="^part_rows must be a whole number of at least 1"):
            OutputFolder(tmp_path / "new", part_rows=rows)
    folder = OutputFolder(tmp_path / "late")
    (tmp_path / "late").mkdir()  # another process made it meanwhile
    with pytest.raises(WriteError, match="already exists"), folder:
        folder.write(pd.DataFrame({"row": [0]}))
    assert list((tmp_path / "late").iterdir()) == [] and (tmp_path / "out" / "earlier.csv").read_text() == "kept"


def test_parquet_parts_have_one_schema_whatever_their_values(tmp_path):
    blank = {"file": ["a", "a"], "row": [0, 1], "id": [None, None], "predicted": [None, None], "p_pos": [np.nan] * 2}
    full = {"file": ["b", "b"], "row": [0, 1], "id": ["x", "y"], "predicted": ["pos", "neg"], "p_pos": [0.5, 0.25]}
    with OutputFolder(tmp_path / "out", part_rows=2) as folder:
        folder.write(pd.DataFrame(blank))
        folder.write(pd.DataFrame(full))
    whole = pd.read_parquet(tmp_path / "out")  # one table: a part of only missing values has the types of the others
    assert (
        whole["id"].tolist()[2:] == ["x", "y"]
        and whole["p_pos"].dtype == np.float32
        and whole["row"].tolist() == [0, 1, 0, 1]
    )


def test_csv_parts_read_as_predict_file_writes(tmp_path):
    frame = pd.DataFrame({"row": [0, 1], "predicted": ["pos", None], "p_pos": [0.25, float("nan")]})
    with OutputFolder(tmp_path / "out", fmt="csv") as folder:
        folder.write(frame)
    assert (tmp_path / "out" / "part-00000.csv").read_text() == "row,predicted,p_pos\n0,pos,0.250000\n1,,\n"


def test_a_full_disk_is_one_error(small_disk):
    import shutil

    if shutil.disk_usage(small_disk).free > 65536:
        pytest.skip("no full file system to write on here (mounting a small tmpfs needs root)")
    with pytest.raises(WriteError, match=r"while writing .*out$") as raised:
        with OutputFolder(small_disk / "out", part_rows=1) as folder:
            folder.write(pd.DataFrame({"text": ["x" * 200_000, "y"]}))
    assert raised.value.errno == errno.ENOSPC
    assert sorted(p.name for p in small_disk.iterdir()) == ["filler"]
