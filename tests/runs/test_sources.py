"""Tests for hierattn.runs.sources: a training run on IMDB or a table in one call, bad input refused first."""

import json
import shutil

import pytest

from hierattn.errors import ArgumentError, HierattnError, RunError
from hierattn.runs.config import TrainConfig
from hierattn.runs.data_record import describe_source
from hierattn.runs.sources import check_output, resume_run, train_imdb, train_table

from conftest import TINY_OPTIONS, StopAfterFirstEpoch, interrupt_once, mini_imdb, write_corpus

TINY = {"epochs": 1, "batch_size": 16, "embeddings": "none", "min_count": 1, "baseline": False}
pytestmark = pytest.mark.usefixtures("no_bundle")  # runs here skip model.onnx (tests/conftest.py)


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
    assert (config["data"]["text_column"], config["data"]["encoding"]) == ("text", None)  # as given: UTF-8 or detected
    assert "detected_encoding" not in config["data"]
    assert set(config["data"]) >= {"train", "test"}


def test_train_imdb_takes_a_train_config_too(tmp_path, eager):
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


def interrupted_table_run(folder, epochs=2):
    """A run on `folder`'s train.csv and test.csv as `train_table` records it, interrupted after its first epoch."""
    from hierattn.data import load_table
    from hierattn.runs.train import train

    data = {
        "train": describe_source(folder / "train.csv"),
        "test": describe_source(folder / "test.csv"),
        "text_column": "text",
        "label_column": "label",
        "encoding": "utf-8",
    }
    config = TrainConfig.from_dict({**TINY, **TINY_OPTIONS["han"], "epochs": epochs, "patience": 5, "data": data})
    train_data, _ = load_table(folder / "train.csv")
    test_data, _ = load_table(folder / "test.csv", label_map=train_data.label_map)
    run = folder.parent / "runs" / "han-agnews"
    with pytest.raises(KeyboardInterrupt):
        train(
            train_data,
            test_data,
            config,
            run,
            dataset_name="agnews",
            log=lambda line: None,
            verbose=0,
            callbacks=[StopAfterFirstEpoch()],
        )
    return run


@pytest.fixture(scope="module")
def unfinished(tmp_path_factory):
    """An interrupted run on agnews/train.csv and agnews/test.csv (copy it before resuming it)."""
    folder = tmp_path_factory.mktemp("corpus") / "agnews"
    folder.mkdir()
    return interrupted_table_run(write_corpus(folder))


@pytest.fixture
def unfinished_copy(unfinished, tmp_path):
    copy = tmp_path / "run"
    shutil.copytree(unfinished, copy)
    return copy


def test_resume_run_needs_only_the_run_directory_from_any_working_directory(unfinished_copy, tmp_path, monkeypatch):
    recorded = json.loads((unfinished_copy / "config.json").read_text())["data"]
    monkeypatch.chdir(tmp_path)  # not where it was trained: config.json holds absolute paths
    lines = []
    run = resume_run(unfinished_copy, log=lines.append, verbose=0)
    assert lines[0] == (
        f"resuming on the data the run recorded: train {recorded['train']['path']}, test {recorded['test']['path']}"
    )
    assert lines[1].endswith("160 of 160 rows used (text column 'text', label column 'label')")
    assert run.metrics["test"]["documents"] == 40  # the recorded test file, not typed again
    history = (unfinished_copy / "history.csv").read_text().splitlines()
    assert [row.split(",")[0] for row in history[1:]] == ["0", "1"]  # the first epoch was not trained again
    status = json.loads((unfinished_copy / "run.json").read_text())
    assert (status["status"], status["dataset"]) == ("complete", "agnews")
    with pytest.raises(RunError, match="is already complete: nothing to resume"):
        resume_run(unfinished_copy)


def test_resuming_with_other_data_or_columns_is_refused_before_any_is_read(unfinished_copy, tmp_path):
    recorded = json.loads((unfinished_copy / "config.json").read_text())["data"]
    with pytest.raises(
        ArgumentError,
        match=rf"^cannot resume {unfinished_copy} with text_column 'review': it was trained with 'text'; leave "
        "text_column out to resume with the recorded one$",
    ):
        resume_run(unfinished_copy, text_column="review")
    config = json.loads((unfinished_copy / "config.json").read_text())
    config["data"]["encoding"] = None  # as a run records it when none was given: read as UTF-8 (none detected)
    (unfinished_copy / "config.json").write_text(json.dumps(config))
    with pytest.raises(
        ArgumentError, match=rf"^cannot resume {unfinished_copy} with encoding 'latin-1': it read its files as 'utf-8'"
    ):
        resume_run(unfinished_copy, encoding="latin-1")
    archive = mini_imdb(tmp_path / "aclImdb_v1.tar.gz")
    with pytest.raises(RunError, match=rf"^cannot resume {unfinished_copy} on IMDB \({archive}\): it was trained on "):
        train_imdb(archive, resume=unfinished_copy)  # an IMDB source for a run on tables
    (tmp_path / "other").mkdir()
    other = write_corpus(tmp_path / "other", train=20, test=10)
    with pytest.raises(RunError, match=rf"{other / 'test.csv'} is not the test data the run recorded \("):
        train_table(recorded["train"]["path"], test=other / "test.csv", resume=unfinished_copy)
    assert json.loads((unfinished_copy / "run.json").read_text())["status"] == "training"  # unchanged


def test_a_run_stopped_while_word2vec_trains_resumes_it_with_the_unlabelled_texts_again(tmp_path):
    import time

    import numpy as np

    from hierattn.models import load_classifier
    from hierattn.runs.sources import TrainingInterrupted

    folder = tmp_path / "agnews"
    folder.mkdir()
    write_corpus(folder)
    rng = np.random.default_rng(0)
    words = [f"word{i}" for i in range(400)]
    # A text file, one text per line. Its size does not matter: the interrupt lands as the first checkpoint is written.
    unlabeled = tmp_path / "unlabelled.txt"
    unlabeled.write_text("\n".join(" ".join(rng.choice(words, 40)) for _ in range(2000)) + "\n")
    settings = {**TINY, **TINY_OPTIONS["han"], "embeddings": "word2vec", "embedding_dim": 16, "pretrain_epochs": 6}
    tables = {"test": folder / "test.csv", "unlabeled": unlabeled, "log": lambda line: None, "verbose": 0}
    whole = train_table(folder / "train.csv", settings, output=tmp_path / "whole", **tables)

    run = tmp_path / "run"
    checkpoint = run / "checkpoints" / "word2vec.npz"

    watcher = interrupt_once(checkpoint)  # Ctrl-C once word2vec's first epoch is saved
    with pytest.raises(TrainingInterrupted) as interrupted:
        train_table(folder / "train.csv", settings, output=run, **tables)
        time.sleep(5)  # (lands here if the run ended first: then no checkpoint is left, and the test fails below)
    watcher.join()
    assert interrupted.value.resumable and checkpoint.is_file() and not (run / "checkpoints" / "adapted.keras").exists()
    with np.load(checkpoint) as saved:
        assert 1 <= int(saved["epochs"][0]) < 6
    lines = []
    resumed = resume_run(run, log=lines.append, verbose=0)
    assert f"resuming {run}: word2vec from its last epoch saved" in lines
    assert not checkpoint.exists()  # word2vec is in adapted.keras: its checkpoint removed
    vectors = [
        load_classifier(r.path / "model.keras").backbone.token_embedding.get_weights()[0] for r in (whole, resumed)
    ]
    assert np.array_equal(*vectors)  # word2vec and the training after it as in the run never stopped
    status = json.loads((run / "run.json").read_text())
    assert status["embeddings"]["source"] == "word2vec on the training texts and unlabelled texts"


# Validation parts of whole groups ------------------------------------------------------------------------------------


def imdb_with_films(path, urls=True):
    """A tiny aclImdb_v1.tar.gz as `conftest.mini_imdb`'s, with train/urls_pos.txt and urls_neg.txt (`urls`): 30
    reviews per class of 10 films each, three reviews a film, films 5 to 9 with reviews of both classes."""
    import io
    import tarfile

    mini_imdb(path)
    with tarfile.open(path, "r:gz") as tar:
        members = [(member, tar.extractfile(member).read()) for member in tar.getmembers()]
    pages = {
        label: "".join(f"http://www.imdb.com/title/tt{i // 3 + shift:07d}/usercomments\n" for i in range(30))
        for label, shift in (("pos", 0), ("neg", 5))
    }
    with tarfile.open(path, "w:gz") as tar:
        for member, data in members:
            tar.addfile(member, io.BytesIO(data))
        for label, text in pages.items() if urls else ():
            info = tarfile.TarInfo(f"aclImdb/train/urls_{label}.txt")
            info.size = len(text.encode())
            tar.addfile(info, io.BytesIO(text.encode()))
    return path


def test_train_imdb_holds_out_whole_films_records_them_and_resumes_split_the_same(tmp_path, stop_before_fit):
    from hierattn.runs.sources import TrainingInterrupted

    archive = imdb_with_films(tmp_path / "aclImdb_v1.tar.gz")
    lines, settings = [], {**TINY, **TINY_OPTIONS["han"], "limit": 40}
    with pytest.raises(TrainingInterrupted):  # stopped as fit began: the split made and recorded
        train_imdb(archive, settings, output=tmp_path / "run", log=lines.append, verbose=0)
    said = [line for line in lines if line.startswith("validation:")]
    assert said == ["validation: 3 texts (7.5%) of 2 groups by film, fitted: 37 of 12; no film on both sides"], lines
    assert json.loads((tmp_path / "run" / "config.json").read_text())["data"]["group"] == "film"
    assert json.loads((tmp_path / "run" / "run.json").read_text())["validation_groups"] == {
        "by": "film",
        "fit": {"texts": 37, "groups": 12},
        "validation": {"texts": 3, "groups": 2},
    }
    again = []
    with pytest.raises(TrainingInterrupted):
        resume_run(tmp_path / "run", log=again.append, verbose=0)
    assert [line for line in again if line.startswith("validation:")] == said  # the recorded group, the same split
    config = json.loads((tmp_path / "run" / "config.json").read_text())
    config["data"]["imdb"] = describe_source(mini_imdb(tmp_path / "no-films.tar.gz"))  # as if it had been this one
    (tmp_path / "run" / "config.json").write_text(json.dumps(config))
    with pytest.raises(HierattnError, match="no train/urls_pos.txt and urls_neg.txt, .*cannot split its reviews again"):
        resume_run(tmp_path / "run", log=lambda line: None, verbose=0)


@pytest.mark.parametrize("urls, group", [(False, "film"), (True, None)], ids=["no-urls-files", "group-none"])
def test_train_imdb_without_films_splits_by_class_and_says_why(tmp_path, stop_before_fit, urls, group):
    from hierattn.runs.sources import TrainingInterrupted

    archive = imdb_with_films(tmp_path / "aclImdb_v1.tar.gz", urls=urls)
    lines = []
    with pytest.raises(TrainingInterrupted):
        train_imdb(archive, {**TINY, **TINY_OPTIONS["han"]}, output=tmp_path / "run", log=lines.append, group=group)
    said = (
        f"{archive} has no train/urls_pos.txt and urls_neg.txt, which name the film of each review: the validation "
        "part is split by class alone, with reviews of one film on both sides"
    )
    assert [line for line in lines if "urls_neg.txt" in line] == ([] if urls else [said])
    assert not [line for line in lines if line.startswith("validation:")]
    assert "group" not in json.loads((tmp_path / "run" / "config.json").read_text())["data"]
    assert "validation_groups" not in json.loads((tmp_path / "run" / "run.json").read_text())
    with pytest.raises(ArgumentError, match="^group for IMDB is 'film' or None; got 'author'$"):
        train_imdb(archive, group="author")


def test_train_table_with_a_group_column_resumes_with_it_and_refuses_another(tmp_path, stop_before_fit):
    import pandas as pd

    from hierattn.runs.sources import TrainingInterrupted

    folder = write_corpus(tmp_path, train=80, test=20)
    frame = pd.read_csv(folder / "train.csv")
    frame["author"] = [f"author {i % 16}" for i in range(len(frame))]
    frame.to_csv(folder / "train.csv", index=False)
    lines, settings = [], {**TINY, **TINY_OPTIONS["han"]}
    with pytest.raises(TrainingInterrupted):
        train_table(folder / "train.csv", settings, group_column="author", output=tmp_path / "run", log=lines.append)
    assert lines[0].endswith("80 of 80 rows used (text column 'text', label column 'label', group column 'author')")
    said = [line for line in lines if line.startswith("validation:")]
    assert len(said) == 1 and said[0].endswith("no author on both sides")
    assert json.loads((tmp_path / "run" / "config.json").read_text())["data"]["group"] == "author"
    with pytest.raises(ArgumentError, match=r"with group_column 'label': it split its validation part by 'author'; "):
        resume_run(tmp_path / "run", group_column="label")
    again = []
    with pytest.raises(TrainingInterrupted):
        train_table(None, resume=tmp_path / "run", group_column="author", log=again.append, verbose=0)
    assert [line for line in again if line.startswith("validation:")] == said
