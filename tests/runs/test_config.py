"""Tests for hierattn.runs.config: flat settings, their checks, and reading config.json of either format."""

import dataclasses
import json
import pathlib

import pytest

from hierattn.defaults import BACKBONES, PREPROCESSING, TRAINING
from hierattn.errors import ArgumentError, DataError, HierattnError, RunError
from hierattn.runs.config import (
    CONFIG_FORMAT,
    FLAT_FORMAT,
    TrainConfig,
    classifier_arguments,
    flat_settings,
    length_settings,
    load_config,
    read_config,
    read_settings,
    size_settings,
)
from hierattn.utils.jsonfile import save_json


def test_flat_settings_split_into_the_classifiers_arguments_and_the_runs_own():
    config = TrainConfig.from_dict(
        {"model": "transformer", "epochs": 3, "num_layers": 2, "patience": 4, "seed": 5, "mixed_precision": True}
    )
    assert (config.epochs, config.patience, config.model, config.seed) == (3, 4, "transformer", 5)
    assert config.classifier == {"backbone": "transformer", "num_layers": 2, "seed": 5, "dtype": "mixed_float16"}
    assert TrainConfig().epochs == TRAINING["epochs"] and TrainConfig().learning_rate == TRAINING["learning_rate"]
    assert (TrainConfig().model, TrainConfig().seed, TrainConfig().uses_unlabeled) == ("han", TRAINING["seed"], True)
    assert not TrainConfig.from_dict({"embeddings": "none"}).uses_unlabeled
    # A `backbone` object of builder arguments (config.json of format /2), and `max_length`.
    assert classifier_arguments({"model": "han", "backbone": {"word_units": 8}, "max_length": "3x7"}) == {
        "backbone": "han",
        "word_units": 8,
        "max_sentences": 3,
        "max_words": 7,
    }


@pytest.mark.parametrize(
    "settings, message",
    [
        ({"teacher": "tfidf"}, "unknown setting 'teacher' for the han model: choose from attention_units, baseline"),
        ({"model": "rnn", "num_layers": 2}, "unknown setting 'num_layers' for the rnn model"),
        ({"model": "bert"}, "unknown model 'bert': choose one of han, transformer, rnn"),
        ({"epochs": "many"}, "epochs must be a whole number of at least 1, or None, not 'many'"),
        ({"epochs": 0}, "epochs must be a whole number of at least 1, or None, not 0"),
        ({"limit": 2}, "limit must be a whole number of at least 4, or None, not 2"),
        ({"learning_rate": float("nan")}, "learning_rate must be a finite number above 0, not nan"),
        ({"validation_split": 1.0}, "validation_split must be a fraction between 0 and 1"),
        ({"baseline": 1}, "baseline must be True or False, not 1"),
        ({"mixed_precision": "yes"}, "mixed_precision must be True or False, not 'yes'"),
        # The classifier's arguments, by the checks its classes make when constructed:
        ({"dropout": 2}, "dropout must be a fraction from 0 (included) up to 1 (excluded), not 2"),
        ({"cell": "transistor"}, "cell must be one of gru, lstm, not 'transistor'"),
        ({"model": "transformer", "num_heads": 3}, "embedding_dim (128) must be divisible by num_heads (3)"),
        ({"model": "rnn", "window": -1}, "window must be a whole number of at least 0, or None, not -1"),
        ({"sequence_length": 10}, "sequence_length applies to the transformer and rnn model(s), not to han"),
        ({"model": "rnn", "max_words": 10}, "max_words applies to the han model(s), not to rnn"),
        ({"min_count": 0}, "min_count must be a whole number of at least 1, not 0"),
        ({"seed": -1}, "seed must be a whole number of at least 0, not -1"),
        ({"embeddings": "no/such/file.txt"}, "embeddings must be 'word2vec', 'none' or the path of a word-vector"),
    ],
)
def test_each_bad_setting_is_refused_in_one_line(settings, message):
    with pytest.raises(HierattnError) as error:
        TrainConfig.from_dict(settings)
    assert message in str(error.value) and "\n" not in str(error.value)


def test_a_file_that_is_not_word_vectors_is_refused_by_its_own_error(tmp_path):
    (tmp_path / "vectors.bin").write_bytes(b"\0\1\2")
    with pytest.raises(DataError, match="is not a text file"):
        TrainConfig.from_dict({"embeddings": str(tmp_path / "vectors.bin")})


def test_a_config_is_checked_when_made_and_not_changed_after():
    assert TrainConfig(epochs=2).validate().epochs == 2
    assert TrainConfig().epochs is None and TRAINING["epochs"] is None  # scaled to the corpus
    with pytest.raises(HierattnError, match="epochs must be a whole number of at least 1, or None, not 2.5"):
        TrainConfig(epochs=2.5)
    with pytest.raises(HierattnError, match="batch_size must be a whole number of at least 1, not 0"):
        TrainConfig(batch_size=0)
    with pytest.raises(HierattnError, match="its config names its backbone"):
        TrainConfig({"backbone": {"class_name": "HANBackbone"}})
    config = TrainConfig(epochs=2)
    with pytest.raises(dataclasses.FrozenInstanceError):
        config.epochs = 0
    assert dataclasses.replace(config, batch_size=8).batch_size == 8
    with pytest.raises(HierattnError, match="batch_size must be a whole number of at least 1, not 0"):
        dataclasses.replace(config, batch_size=0)  # a new config: checked as it is made


def test_with_data_records_the_data_on_a_copy_made_as_every_config_is(monkeypatch):
    config = TrainConfig.from_dict({"model": "rnn", "epochs": 3})
    checked = []
    monkeypatch.setattr(TrainConfig, "validate", lambda self: checked.append(self) or self)
    recorded = config.with_data({"train": {"path": "/data/train.csv"}})
    assert (recorded.data, recorded.epochs, recorded.classifier) == (
        {"train": {"path": "/data/train.csv"}},
        3,
        config.classifier,
    )
    assert config.data == {} and checked == [recorded]  # the config given is not changed; the copy is checked


def test_a_bad_run_setting_in_config_json_is_refused_when_read(tmp_path):
    save_json(tmp_path / "config.json", CONFIG_FORMAT, {"classifier": {"backbone": "rnn"}, "batch_size": 0, "data": {}})
    with pytest.raises(HierattnError, match="^batch_size must be a whole number of at least 1, not 0$"):
        load_config(tmp_path)


@pytest.mark.parametrize(
    "model, text, settings",
    [
        ("han", "30x40", {"max_sentences": 30, "max_words": 40}),
        ("han", "12 X 7", {"max_sentences": 12, "max_words": 7}),
        ("transformer", "400", {"sequence_length": 400}),
        ("rnn", "64", {"sequence_length": 64}),
    ],
)
def test_max_length_sets_the_limits_of_the_model(model, text, settings):
    assert length_settings(model, text) == settings


@pytest.mark.parametrize(
    "model, text", [("han", "40"), ("han", "0x40"), ("han", "axb"), ("rnn", "30x40"), ("transformer", "-5")]
)
def test_max_length_of_the_wrong_form_is_refused(model, text):
    with pytest.raises(ArgumentError, match=f"^max_length for the {model} model is"):
        length_settings(model, text)


@pytest.mark.parametrize("model, text", [("han", "1000x1000"), ("transformer", "131073")])
def test_max_length_past_the_ids_a_saved_classifier_may_read_is_refused(model, text):
    with pytest.raises(ArgumentError, match="^max_length reads at most 131,072 ids a document; got '1"):
        length_settings(model, text)
    assert length_settings(model, "2x65536" if model == "han" else "131072")  # the bound itself


@pytest.mark.keras  # a TextClassifier's config
def test_flat_settings_of_a_classifier_config_in_either_form():
    from hierattn.models import TextClassifier

    arguments = {"backbone": "rnn", "units": 4, "sequence_length": 30, "seed": 2, "dtype": "mixed_float16"}
    full = TextClassifier.from_config({**arguments, "label_names": ["a", "b"]}).get_config()
    expected = {"model": "rnn", "units": 4, "sequence_length": 30, "seed": 2, "mixed_precision": True}
    assert flat_settings(arguments) == expected
    assert expected.items() <= flat_settings(json.loads(json.dumps(full))).items()
    assert TrainConfig.from_dict(flat_settings(full)).classifier["units"] == 4  # a full config's settings are settings


def test_size_settings_name_the_values_that_set_the_memory():
    assert size_settings(TrainConfig.from_dict({"model": "rnn", "embedding_dim": 64, "batch_size": 8})) == (
        f"embedding_dim 64, max_vocab {PREPROCESSING['max_vocab']}, batch_size 8, sequence_length from the data"
    )
    han = size_settings(TrainConfig.from_dict({"max_length": "5x6"}))
    assert han.startswith(f"embedding_dim {BACKBONES['han']['embedding_dim']},") and han.endswith(
        "max_sentences 5, max_words 6"
    )


FLAT = {  # config.json of format /2, as hierattn wrote it before format /3
    "model": "han",
    "epochs": 3,
    "batch_size": 16,
    "learning_rate": 0.001,
    "patience": 2,
    "validation_split": 0.1,
    "seed": 1,
    "embeddings": "none",
    "pretrain_epochs": 5,
    "max_sentences": 4,
    "max_words": 12,
    "sequence_length": None,
    "min_count": 1,
    "max_vocab": 60000,
    "limit": None,
    "mixed_precision": True,
    "baseline": True,
    "ngrams": False,
    "backbone": {"embedding_dim": 8},
    "data": {"train": {"path": "/data/train.csv", "bytes": 10, "sha256": "ab"}},
}


def test_config_json_of_format_2_is_read_as_format_3(tmp_path):
    save_json(tmp_path / "config.json", FLAT_FORMAT, FLAT)
    config = read_config(tmp_path)
    assert config == {
        "classifier": {
            "backbone": "han",
            "seed": 1,
            "embeddings": "none",
            "pretrain_epochs": 5,
            "max_sentences": 4,
            "max_words": 12,
            "sequence_length": None,
            "min_count": 1,
            "max_vocab": 60000,
            "ngrams": False,
            "embedding_dim": 8,
            "dtype": "mixed_float16",
        },
        "epochs": 3,
        "batch_size": 16,
        "learning_rate": 0.001,
        "patience": 2,
        "validation_split": 0.1,
        "limit": None,
        "baseline": True,
        "data": FLAT["data"],
    }
    loaded = load_config(tmp_path)
    assert (loaded.model, loaded.seed, loaded.epochs, loaded.data) == ("han", 1, 3, FLAT["data"])
    assert read_config(tmp_path / "config.json") == config


def test_a_config_json_without_epochs_has_the_budget_and_one_with_epochs_keeps_them(tmp_path):
    classifier = {"backbone": "rnn", "units": 4}
    for epochs, expected in ((None, None), (5, 5)):
        save_json(tmp_path / "config.json", CONFIG_FORMAT, {"classifier": classifier, "epochs": epochs, "data": {}})
        assert load_config(tmp_path).epochs == expected
        assert read_settings(tmp_path / "config.json")["epochs"] == expected
    save_json(tmp_path / "config.json", CONFIG_FORMAT, {"classifier": classifier, "data": {}})  # no epochs at all
    assert load_config(tmp_path).epochs is None


def test_config_json_of_another_kind_is_refused(tmp_path):
    (tmp_path / "config.json").write_text('{"format": "something-else"}')
    with pytest.raises(DataError, match=f"is not a {CONFIG_FORMAT} file"):
        read_config(tmp_path)
    save_json(tmp_path / "config.json", CONFIG_FORMAT, {"epochs": 2, "teacher": "tfidf"})
    with pytest.raises(RunError, match="config.json does not describe a training run"):
        load_config(tmp_path)


def test_settings_files_flat_or_a_runs_config_json(tmp_path):
    (tmp_path / "flat.json").write_text('{"epochs": 3, "num_layers": 2}')
    assert read_settings(tmp_path / "flat.json") == {"epochs": 3, "num_layers": 2}
    save_json(tmp_path / "old.json", FLAT_FORMAT, FLAT)
    old = read_settings(tmp_path / "old.json")
    assert "data" not in old and (old["model"], old["embedding_dim"], old["mixed_precision"], old["epochs"]) == (
        "han",
        8,
        True,
        3,
    )
    assert TrainConfig.from_dict(old).classifier == read_config(tmp_path / "old.json")["classifier"]
    save_json(
        tmp_path / "new.json", CONFIG_FORMAT, {"classifier": {"backbone": "rnn", "units": 4}, "epochs": 2, "data": {}}
    )
    assert read_settings(tmp_path / "new.json") == {"model": "rnn", "units": 4, "epochs": 2}
    (tmp_path / "run.json").write_text('{"format": "hierattn.run/1", "status": "complete"}')
    with pytest.raises(DataError, match="is a hierattn.run/1 file, not settings"):
        read_settings(tmp_path / "run.json")


def test_settings_are_checked_without_keras():
    import subprocess
    import sys

    script = (
        "import sys; from hierattn.runs.config import TrainConfig\n"
        "try:\n    TrainConfig.from_dict({'model': 'rnn', 'units': 0})\nexcept Exception as e:\n    print(e)\n"
        "print('keras' in sys.modules, 'tensorflow' in sys.modules)"
    )
    root = str(pathlib.Path(__file__).resolve().parents[2])
    result = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=120, cwd=root)
    assert result.stdout.splitlines() == ["units must be a whole number of at least 1, not 0", "False False"]


@pytest.mark.parametrize("classifier", [None, "rnn", ["han"]])
def test_a_format_3_config_without_a_classifier_object_is_refused_in_one_line(tmp_path, classifier):
    payload = {"epochs": 2} if classifier is None else {"classifier": classifier, "epochs": 2}
    save_json(tmp_path / "config.json", CONFIG_FORMAT, payload)
    with pytest.raises(DataError, match=r"config.json has no classifier settings \(a JSON object under"):
        read_settings(tmp_path / "config.json")
    with pytest.raises(RunError, match=r"does not describe a training run \(.*has no classifier settings"):
        load_config(tmp_path)
