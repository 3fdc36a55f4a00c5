"""Tests for hierattn.run_data: what a run recorded of its data, and what changed since."""

from hierattn.run_data import data_changes, describe_source


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
