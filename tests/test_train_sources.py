"""Tests for hierattn.train_sources: a training run on IMDB or a table in one call, bad input refused first."""

import json

import pytest

from hierattn.errors import ArgumentError, HierattnError, RunError
from hierattn.train_config import TrainConfig
from hierattn.train_sources import check_output, train_imdb, train_table

from conftest import TINY_OPTIONS, mini_imdb

TINY = {"epochs": 1, "batch_size": 16, "embeddings": "none", "min_count": 1, "baseline": False}


def test_train_table_reads_the_data_trains_and_records_it(tiny_csv, tmp_path):
    lines = []
    settings = {**TINY, "model": "rnn", **TINY_OPTIONS["rnn"], "max_length": "12"}
    run = train_table(tiny_csv[0], settings, test=tiny_csv[1], output=tmp_path / "run", log=lines.append, verbose=0)
    assert run.path == tmp_path / "run" and run.metrics["test"]["documents"] == 40
    assert lines[0].endswith("160 of 160 rows used (text column 'text', label column 'label')")
    assert f"run directory: {tmp_path / 'run'}" in lines
    config = json.loads((tmp_path / "run" / "config.json").read_text())
    assert config["classifier"]["backbone"] == "rnn" and config["epochs"] == 1
    assert config["classifier"]["preprocessor"]["config"]["sequence_length"] == 12
    assert (config["data"]["text_column"], config["data"]["encoding"]) == ("text", "utf-8")
    assert set(config["data"]) >= {"train", "test"}


def test_train_imdb_takes_a_train_config_too(tmp_path):
    archive = mini_imdb(tmp_path / "aclImdb_v1.tar.gz")
    config = TrainConfig.from_dict({**TINY, **TINY_OPTIONS["han"]})
    run = train_imdb(archive, config, output=tmp_path / "run", log=lambda line: None, verbose=0)
    assert (
        run.metrics["test"]["documents"] == 60 and json.loads((run.path / "run.json").read_text())["dataset"] == "imdb"
    )
    assert config.data == {}  # the config given is not changed: the run records its own


def test_bad_settings_and_outputs_are_refused_before_any_data_is_read(tmp_path):
    missing = tmp_path / "missing.csv"
    with pytest.raises(HierattnError, match="^embedding_dim must be a whole number of at least 1, not 0$"):
        train_table(missing, {"embedding_dim": 0})
    (tmp_path / "taken").mkdir()
    (tmp_path / "taken" / "file").write_text("x")
    with pytest.raises(RunError, match="already exists and is not empty"):
        train_table(missing, {}, output=tmp_path / "taken")
    with pytest.raises(RunError, match="nothing to resume"):
        train_imdb(tmp_path / "nowhere", resume=tmp_path / "taken")
    with pytest.raises(ArgumentError, match="^resume continues a run with its own settings and directory"):
        train_table(missing, {"epochs": 2}, resume=tmp_path / "taken")
    with pytest.raises(ArgumentError, match="^unlabeled texts would go unused: only word2vec embeddings use them"):
        train_table(missing, {"embeddings": "none"}, unlabeled=tmp_path / "taken" / "file")
    with pytest.raises(ArgumentError, match="^a multi-worker run needs output"):
        check_output(distribute="multi-worker")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["taken"]  # nothing written
