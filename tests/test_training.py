"""Tests for hierattn.training: end-to-end runs on a tiny generated corpus."""

import io
import json
import zipfile

import h5py
import numpy as np
import pytest
import tensorflow as tf

from hierattn.data import load_table
from hierattn.data.dataset import sample
from hierattn.data.pipeline import make_train_dataset
from hierattn.errors import ArgumentError, HierattnError
from hierattn.runs import RunError, load_run, read_status
from hierattn.train_config import TrainConfig, check_backbone, length_settings
from hierattn.training import train

from conftest import TINY_OPTIONS, StopAfterFirstEpoch


def tiny_config(model="han", **kwargs):
    values = {
        "model": model,
        "epochs": 2,
        "batch_size": 16,
        "embeddings": "none",
        "min_count": 1,
        "backbone": {**TINY_OPTIONS[model], "embedding_dim": 16, **kwargs.pop("backbone", {})},
    }
    values.update(kwargs)
    return TrainConfig(**values)


@pytest.fixture(scope="module")
def data(tiny_csv):
    train_data, _ = load_table(tiny_csv[0])
    test_data, _ = load_table(tiny_csv[1], label_map=train_data.label_map)
    return train_data, test_data


@pytest.fixture(scope="module")
def han_learned(data, tmp_path_factory):
    """A HAN run trained long enough to learn the tiny task (12 epochs), with the test data: its config and `Run`.

    `test_han_learns_the_tiny_task` checks what it learned, and
    `test_each_model_trains_saves_and_reloads_identically[han]` its files.
    """
    train_data, test_data = data
    config = tiny_config("han", epochs=12, learning_rate=5e-3, patience=12)
    output = tmp_path_factory.mktemp("han-learned") / "run"
    return config, train(train_data, test_data, config, output, log=lambda m: None, verbose=0)


@pytest.mark.parametrize("model", ["han", "transformer", "rnn"])
def test_each_model_trains_saves_and_reloads_identically(data, tmp_path, model, request):
    train_data, test_data = data
    if model == "han":  # the run that learns the tiny task, trained once for this test and the next
        config, run = request.getfixturevalue("han_learned")
    else:
        backbone = {"attention": "luong-general"} if model == "rnn" else {}
        config = tiny_config(model, backbone=backbone)
        run = train(train_data, test_data, config, tmp_path / "run", log=lambda m: None, verbose=0)
    files = {p.name for p in run.path.iterdir()}
    assert files == {"model.keras", "config.json", "history.csv", "metrics.json", "logs", "run.json"}
    assert "checkpoints" not in files  # resume state is cleaned up once complete
    metrics = json.loads((run.path / "metrics.json").read_text())
    assert metrics["test"]["documents"] == 40 and 0.0 <= metrics["test"]["accuracy"] <= 1.0
    assert len(metrics["test"]["confusion_matrix"]) == 2 and "macro_f1" in metrics["validation"]
    assert len((run.path / "history.csv").read_text().strip().splitlines()) == 1 + config.epochs  # header + epochs
    texts = test_data.texts[:7] + ["", "zzz qqq", "word " * 500]
    reloaded = load_run(run.path).classifier
    # Same probabilities to float32 precision (separately traced graphs may
    # round the last bit differently).
    np.testing.assert_allclose(reloaded.predict(texts), run.classifier.predict(texts), rtol=1e-6, atol=1e-6)
    assert reloaded.predict_labels(texts[:1])[0] in ("neg", "pos")
    assert reloaded.label_names == ["neg", "pos"]
    # The run's model file is for use, not to resume: no optimizer state (checkpoints/ had it).
    with zipfile.ZipFile(run.path / "model.keras") as archive:
        assert not json.loads(archive.read("config.json")).get("compile_config")
        with h5py.File(io.BytesIO(archive.read("model.weights.h5"))) as weights:
            assert "optimizer" not in weights and "backbone" in weights
    assert run.classifier.compiled and run.classifier.optimizer.iterations.numpy() > 0  # saving left it as it was
    labels = [reloaded.label_names[i] for i in test_data.labels[:16]]
    assert reloaded.evaluate(test_data.texts[:16], labels, verbose=0, return_dict=True)["accuracy"] == pytest.approx(
        run.classifier.evaluate(test_data.texts[:16], labels, verbose=0, return_dict=True)["accuracy"]
    )


def test_han_learns_the_tiny_task(han_learned):
    _, run = han_learned
    assert run.metrics["parts"]["network"]["test"]["accuracy"] >= 0.9  # the attention network alone
    assert run.metrics["test"]["accuracy"] >= 0.9


@pytest.fixture(scope="module")
def seeded_runs(data, tmp_path_factory):
    """Two RNN runs with the same settings and seed, on the training and test data (for the next two tests)."""
    train_data, test_data = data
    root = tmp_path_factory.mktemp("seeded")
    return [
        train(train_data, test_data, tiny_config("rnn", seed=7), root / name, log=lambda m: None, verbose=0)
        for name in ("a", "b")
    ]


def test_the_baseline_is_fitted_on_the_same_split_and_scored_on_the_same_texts(data, seeded_runs, tmp_path):
    train_data, test_data = data
    run = seeded_runs[0]
    metrics = json.loads((run.path / "metrics.json").read_text())
    baseline = metrics["baseline"]
    assert baseline["train_documents"] == metrics["train_documents"] == run.metrics["train_documents"] == 144
    for split in ("validation", "test"):
        assert baseline[split]["documents"] == metrics[split]["documents"]
        assert baseline[split]["labels"] == metrics[split]["labels"]
    assert baseline["test"]["accuracy"] >= 0.9
    parts = metrics["parts"]  # each part of the classifier alone, on the same texts
    a, b = parts["network_weight"], parts["ngram_weight"]
    assert parts["network_share"] == pytest.approx(a / (a + b))
    best = min(parts["shares_tried"], key=lambda row: row["log_loss"])
    assert (best["scale"] * best["share"], best["scale"] * (1 - best["share"])) == pytest.approx((a, b))
    for part in ("network", "ngrams"):
        for split in ("validation", "test"):
            assert parts[part][split]["documents"] == metrics[split]["documents"]
    skipped = train(
        train_data,
        None,
        tiny_config("rnn", epochs=1, baseline=False, ngrams=False),
        tmp_path / "none",
        log=lambda m: None,
        verbose=0,
    )
    assert "baseline" not in skipped.metrics and "parts" not in skipped.metrics
    assert skipped.classifier.ngram_logits is None


def test_seed_makes_runs_reproducible(data, seeded_runs):
    train_data, _ = data
    first, second = seeded_runs
    assert (first.path / "history.csv").read_text() == (second.path / "history.csv").read_text()
    texts = train_data.texts[:5]
    np.testing.assert_allclose(first.classifier.predict(texts), second.classifier.predict(texts), atol=1e-6)


def test_interrupted_run_resumes_and_never_overwrites(data, tmp_path, monkeypatch):
    import hierattn.models.text_classifier as classifier

    train_data, test_data = data
    output = tmp_path / "run"
    config = tiny_config("han", epochs=3, patience=5)
    with pytest.raises(KeyboardInterrupt):
        train(train_data, test_data, config, output, log=lambda m: None, verbose=0, callbacks=[StopAfterFirstEpoch()])
    assert not (output / "model.keras").exists()  # no half-written model
    with pytest.raises(RunError, match="unfinished run"):
        load_run(output)
    with pytest.raises(RunError, match="already exists and is not empty"):
        train(train_data, test_data, config, output, log=lambda m: None, verbose=0)
    first_epochs = []
    original = classifier.make_train_dataset

    def spy(*args, first_epoch=0, **kwargs):
        first_epochs.append(first_epoch)
        return original(*args, first_epoch=first_epoch, **kwargs)

    monkeypatch.setattr(classifier, "make_train_dataset", spy)
    run = train(train_data, test_data, config, output, resume=True, log=lambda m: None, verbose=0)
    assert first_epochs == [1]  # the shuffles continue with the second epoch's
    epochs = [line.split(",")[0] for line in (output / "history.csv").read_text().strip().splitlines()[1:]]
    assert epochs == ["0", "1", "2"]  # the first epoch was not run again
    assert run.metrics["test"]["documents"] == 40
    with pytest.raises(RunError, match="already complete"):
        train(train_data, test_data, config, output, resume=True, log=lambda m: None, verbose=0)


def test_training_inside_a_distribution_strategy_scope(data, tmp_path):
    train_data, _ = data
    strategy = tf.distribute.MirroredStrategy(["/cpu:0"])
    with strategy.scope():
        run = train(
            train_data, None, tiny_config("transformer", epochs=1), tmp_path / "run", log=lambda m: None, verbose=0
        )
    assert run.metrics["validation"]["documents"] == 16


def test_bad_configs_are_rejected(data, tmp_path):
    train_data, _ = data
    for config, message in [
        (tiny_config("han", limit=2), "limit must be at least 4 documents"),
        (TrainConfig(model="bert"), "unknown model"),
        (tiny_config("han", learning_rate=float("nan")), "learning rate must be a finite number above 0"),
        (tiny_config("han", learning_rate=0.0), "learning rate must be a finite number above 0"),
        (tiny_config("han", validation_split=1.0), "validation_split must be a fraction"),
        (tiny_config("han", patience=0), "patience must be a whole number of at least 1"),
        (tiny_config("han", sequence_length=10), "sequence_length applies to the transformer and rnn"),
        (tiny_config("rnn", max_words=10), "max_words applies to the han"),
        (tiny_config("rnn", backbone={"num_layers": 2}), "unknown rnn setting"),
        (tiny_config("rnn", embeddings="no/such/file.txt"), "embeddings must be word2vec, none or a word-vector"),
        (tiny_config("transformer", backbone={"embedding_dim": 10, "num_heads": 4}), "must be divisible"),
    ]:
        with pytest.raises(HierattnError, match=message):
            train(train_data, None, config, tmp_path / "x", log=lambda m: None, verbose=0)


def test_embeddings_start_from_a_vectors_file(data, tmp_path):
    from conftest import NEGATIVE, POSITIVE

    train_data, _ = data
    vectors = tmp_path / "vectors.txt"
    rng = np.random.default_rng(0)
    words = POSITIVE + NEGATIVE + ["film", "acting"]
    table = {w: rng.normal(size=16).round(4) for w in words}
    vectors.write_text("".join(f"{w} {' '.join(map(str, v))}\n" for w, v in table.items()))
    config = tiny_config("rnn", embeddings=str(vectors), epochs=1, learning_rate=1e-9)
    train(train_data, None, config, tmp_path / "run", log=lambda m: None, verbose=0)
    loaded = load_run(tmp_path / "run").classifier
    weights = loaded.backbone.get_layer("embedding").get_weights()[0]
    for word, vector in table.items():  # (a learning rate of 1e-9 leaves them as they were)
        np.testing.assert_allclose(weights[loaded.preprocessor.vocabulary.lookup(word)], vector, atol=1e-5)


def test_train_batches_are_reshuffled_per_epoch_and_resume_where_they_stopped():
    x = np.arange(1, 41, dtype=np.int32).reshape(20, 2)
    y = np.arange(20) % 2

    def firsts(dataset, epochs):
        return [[tuple(b[:, 0]) for b, _ in dataset] for _ in range(epochs)]

    fresh = firsts(make_train_dataset(x, y, 4, 7, 2), 3)
    assert fresh[0] != fresh[1] and sorted(sum(fresh[0], ())) == list(range(1, 41, 2))
    assert firsts(make_train_dataset(x, y, 4, 7, 2, first_epoch=1), 2) == fresh[1:]


def test_limit_cuts_training_test_and_unlabelled_texts_alike(data, tmp_path, monkeypatch):
    train_data, test_data = data
    unlabeled = [f"an unlabelled text number {i}" for i in range(100)]
    seen = {}

    def fake_word2vec(sentences, **kwargs):
        seen["sentences"] = len(sentences)
        return {}

    monkeypatch.setattr("hierattn.models.text_classifier.train_word2vec", fake_word2vec)
    run = train(
        train_data,
        test_data,
        tiny_config("han", limit=20, embeddings="word2vec"),
        tmp_path / "run",
        unlabeled=unlabeled,
        log=lambda m: None,
        verbose=0,
    )
    assert run.metrics["test"]["documents"] == 20
    assert run.metrics["train_documents"] + run.metrics["validation"]["documents"] == 20
    assert seen["sentences"] <= 18 * 3 + 20  # the fitted part's sentences plus 20 one-sentence unlabelled texts
    assert sample(list(range(10)), 20, 0) == list(range(10)) and sample(None, 5, 0) is None
    assert sample(list(range(100)), 5, 1) == sample(list(range(100)), 5, 1) == sorted(sample(list(range(100)), 5, 1))


def test_a_diverging_loss_stops_training_and_leaves_the_run_unfinished(data, tmp_path):
    from hierattn.errors import TrainingDiverged

    with pytest.raises(TrainingDiverged, match=r"the loss became (nan|inf) at epoch 1, batch \d+; .* stays unfinished"):
        train(
            data[0],
            None,
            tiny_config("rnn", learning_rate=1e30, epochs=2),
            tmp_path / "run",
            log=lambda m: None,
            verbose=0,
        )
    assert read_status(tmp_path / "run")["status"] == "training"
    assert not (tmp_path / "run" / "model.keras").exists()


def test_settings_split_into_training_and_builder_ones_from_one_source_of_defaults():
    from hierattn.defaults import BACKBONES, TRAINING
    from hierattn.models import TransformerBackbone

    config = TrainConfig.from_dict({"model": "transformer", "epochs": 3, "num_layers": 2, "patience": 4})
    assert (config.epochs, config.patience, config.backbone) == (3, 4, {"num_layers": 2})
    assert TrainConfig().epochs == TRAINING["epochs"] and TrainConfig().learning_rate == TRAINING["learning_rate"]
    with pytest.raises(HierattnError, match="unknown setting 'teacher' for the han model"):
        TrainConfig.from_dict({"teacher": "tfidf"})
    import inspect

    signature = inspect.signature(TransformerBackbone).parameters
    assert all(signature[name].default == value for name, value in BACKBONES["transformer"].items())
    check_backbone(config)


def test_pretrained_vectors_are_rescaled_only_for_the_sinusoidal_embedding(data, tmp_path):
    from hierattn import TextClassifier

    from conftest import NEGATIVE, POSITIVE

    vectors = tmp_path / "vectors.txt"
    rng = np.random.default_rng(0)
    vectors.write_text(
        "".join(
            f"{w} {' '.join(map(str, rng.normal(0, 0.4, 16).round(4)))}\n"
            for w in POSITIVE + NEGATIVE + ["film", "acting"]
        )
    )
    texts, labels = data[0].texts, [data[0].label_map.names[i] for i in data[0].labels]
    for model, options in (("transformer", {"num_heads": 2, "intermediate_dim": 8}), ("rnn", {"units": 4})):
        clf = TextClassifier(model, embeddings=str(vectors), min_count=1, embedding_dim=16, **options)
        clf.adapt(texts, labels, verbose=0)
        layer = clf.backbone.get_layer("embedding")
        weights = getattr(layer, "token_embedding", layer).get_weights()[0]
        film = weights[clf.preprocessor.vocabulary.lookup("film")]
        if model == "transformer":  # stored at scale d^-1/2, which x sqrt(d) brings to 1 (same directions)
            assert np.std(weights[1:]) == pytest.approx(16**-0.5, rel=1e-3)
        else:
            assert np.std(film) > 0.2


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


def test_mixed_precision_setting_reaches_the_saved_classifier(data, tmp_path):
    train_data, _ = data
    with pytest.raises(HierattnError, match="mixed_precision must be true or false"):
        tiny_config("han", mixed_precision="yes").validate()
    with pytest.raises(HierattnError, match="baseline must be true or false"):
        tiny_config("han", baseline=1).validate()
    run = train(
        train_data,
        None,
        tiny_config("han", epochs=1, mixed_precision=True),
        tmp_path / "run",
        log=lambda m: None,
        verbose=0,
    )
    assert json.loads((tmp_path / "run" / "config.json").read_text())["mixed_precision"] is True
    assert load_run(tmp_path / "run").classifier.backbone.get_layer("word_encoder").dtype_policy.name == "mixed_float16"
    assert run.classifier.dtype_policy.name == "mixed_float16"
