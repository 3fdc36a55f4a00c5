"""Tests for hierattn.runs.train: end-to-end runs on a tiny generated corpus."""

import io
import json
import zipfile

import h5py
import keras
import numpy as np
import pytest
import tensorflow as tf

from hierattn.data import load_table
from hierattn.data.dataset import sample
from hierattn.data.pipeline import make_train_dataset
from hierattn.errors import HierattnError
from hierattn.models.budget import decide_budget
from hierattn.runs.config import FLAT_FORMAT, TrainConfig
from hierattn.runs.directory import RunError, read_status
from hierattn.runs.run import load_run
from hierattn.runs.train import train

from conftest import TINY_OPTIONS, StopAfterFirstEpoch


def tiny_config(model="han", **kwargs):
    backbone = {**TINY_OPTIONS[model], "embedding_dim": 16, **kwargs.pop("backbone", {})}
    settings = {"model": model, "epochs": 2, "batch_size": 16, "embeddings": "none", "min_count": 1, **backbone}
    return TrainConfig.from_dict({**settings, **kwargs})


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
    return config, train(train_data, test_data, config, output, log=lambda m: None, verbose=0, bundle=False)


@pytest.mark.parametrize("model", ["han", "transformer", "rnn"])
def test_each_model_trains_saves_and_reloads_identically(data, tmp_path, model, request):
    train_data, test_data = data
    if model == "han":  # the run that learns the tiny task, trained once for this test and the next
        config, run = request.getfixturevalue("han_learned")
    else:
        backbone = {"attention": "luong-general"} if model == "rnn" else {}
        config = tiny_config(model, backbone=backbone)
        run = train(train_data, test_data, config, tmp_path / "run", log=lambda m: None, verbose=0, bundle=False)
    files = {p.name for p in run.path.iterdir()}  # no model.onnx: the tests train with bundle=False
    assert files == {"model.keras", "config.json", "history.csv", "metrics.json", "logs", "run.json", "report.html"}
    assert (run.path / "report.html").read_text().count("<svg") == 2  # the test split's pictures
    assert "bundle" not in read_status(run.path)
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
        train(
            train_data, test_data, tiny_config("rnn", seed=7), root / name, log=lambda m: None, verbose=0, bundle=False
        )
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
        bundle=False,
    )
    assert "baseline" not in skipped.metrics and "parts" not in skipped.metrics
    assert skipped.classifier.ngram_logits is None


def test_seed_makes_runs_reproducible(data, seeded_runs):
    train_data, _ = data
    first, second = seeded_runs
    assert json.loads((first.path / "config.json").read_text())["classifier"]["seed"] == 7  # the seed given, recorded
    assert (first.path / "history.csv").read_text() == (second.path / "history.csv").read_text()
    texts = train_data.texts[:5]
    np.testing.assert_allclose(first.classifier.predict(texts), second.classifier.predict(texts), atol=1e-6)


def test_interrupted_run_resumes_and_never_overwrites(data, tmp_path, monkeypatch, eager):
    import hierattn.data.pipeline as pipeline  # where `fit_datasets` takes it from

    train_data, test_data = data
    output = tmp_path / "run"
    config = tiny_config("han", epochs=3, patience=5)
    with pytest.raises(KeyboardInterrupt):
        train(
            train_data,
            test_data,
            config,
            output,
            log=lambda m: None,
            verbose=0,
            bundle=False,
            callbacks=[StopAfterFirstEpoch()],
        )
    assert not (output / "model.keras").exists()  # no half-written model
    with pytest.raises(RunError, match="unfinished run"):
        load_run(output)
    with pytest.raises(RunError, match="already exists and is not empty"):
        train(train_data, test_data, config, output, log=lambda m: None, verbose=0, bundle=False)
    first_epochs = []
    original = pipeline.make_train_dataset

    def spy(*args, first_epoch=0, **kwargs):
        first_epochs.append(first_epoch)
        return original(*args, first_epoch=first_epoch, **kwargs)

    monkeypatch.setattr(pipeline, "make_train_dataset", spy)
    run = train(train_data, test_data, config, output, resume=True, log=lambda m: None, verbose=0, bundle=False)
    assert first_epochs == [1]  # the shuffles continue with the second epoch's
    epochs = [line.split(",")[0] for line in (output / "history.csv").read_text().strip().splitlines()[1:]]
    assert epochs == ["0", "1", "2"]  # the first epoch was not run again
    assert run.metrics["test"]["documents"] == 40
    assert (run.metrics["epochs_trained"], run.metrics["epoch_budget"], run.metrics["stopped_by"]) == (
        3,
        3,
        "epochs setting",
    )
    assert run.metrics["time_budget_seconds"] is None  # an explicit epochs is the only cap
    with pytest.raises(RunError, match="already complete"):
        train(train_data, test_data, config, output, resume=True, log=lambda m: None, verbose=0, bundle=False)


def test_without_epochs_a_run_trains_within_the_epoch_budget_the_same_when_resumed(data, tmp_path, monkeypatch):
    from hierattn.defaults import EPOCH_BUDGET

    monkeypatch.setitem(EPOCH_BUDGET, "steps", 18)  # 144 training texts in batches of 16: 9 steps, 2 epochs
    monkeypatch.setitem(EPOCH_BUDGET, "min_epochs", 1)
    monkeypatch.setitem(EPOCH_BUDGET, "seconds", 6000)
    train_data, _ = data
    config = tiny_config("rnn", epochs=None, patience=5, ngrams=False, baseline=False)
    output, lines, decided = tmp_path / "run", [], []

    def recording(module):
        def decide(epochs, *args, **kwargs):
            budget = decide_budget(epochs, *args, **kwargs)
            decided.append((module, epochs, budget.epochs, budget.budgeted))
            return budget

        return decide

    for module in ("hierattn.runs.network", "hierattn.models.text_classifier"):
        monkeypatch.setattr(f"{module}.decide_budget", recording(module))
    with pytest.raises(KeyboardInterrupt):
        train(
            train_data,
            None,
            config,
            output,
            log=lines.append,
            verbose=0,
            bundle=False,
            callbacks=[StopAfterFirstEpoch()],
        )
    # Decided once, by the run; fit is given the epochs decided, and keeps them.
    assert decided == [("hierattn.runs.network", None, 2, True), ("hierattn.models.text_classifier", 2, 2, False)]
    assert (
        "training rnn on 144 documents, validating on 16: up to 2 epochs (the budget for 144 texts: about 18 batches "
        "of 16, within 1 to 40 epochs), or 100 min" in lines
    )
    assert json.loads((output / "config.json").read_text())["epochs"] is None
    run = train(train_data, None, config, output, resume=True, log=lambda m: None, verbose=0, bundle=False)
    metrics = json.loads((output / "metrics.json").read_text())
    assert (metrics["epochs_trained"], metrics["epoch_budget"], metrics["time_budget_seconds"]) == (2, 2, 6000)
    assert metrics["stopped_by"] == run.metrics["stopped_by"] == "epoch budget"

    monkeypatch.setitem(EPOCH_BUDGET, "seconds", 1e-6)  # no second epoch fits
    run = train(train_data, None, config, tmp_path / "timed", log=lambda m: None, verbose=0, bundle=False)
    assert (run.metrics["epochs_trained"], run.metrics["epoch_budget"], run.metrics["stopped_by"]) == (
        1,
        2,
        "time budget",
    )


class InterruptWhenTrainingEnds(keras.callbacks.Callback):
    """Interrupts as Ctrl-C would once the network's epochs have ended (before the n-gram part, test and baseline)."""

    def on_train_end(self, logs=None):
        raise KeyboardInterrupt


class InterruptAfterEpochs(keras.callbacks.Callback):
    """Interrupts as Ctrl-C would once `epochs` epochs are saved."""

    def __init__(self, epochs):
        super().__init__()
        self.epochs = epochs

    def on_epoch_end(self, epoch, logs=None):
        if epoch + 1 == self.epochs:
            raise KeyboardInterrupt


def history_epochs(output):
    return [row.split(",")[0] for row in (output / "history.csv").read_text().strip().splitlines()[1:]]


def test_a_run_whose_network_finished_trains_no_further_epoch_when_resumed(data, tmp_path, monkeypatch):
    from hierattn.defaults import EPOCH_BUDGET

    monkeypatch.setitem(EPOCH_BUDGET, "steps", 18)  # 144 training texts in batches of 16: 2 epochs
    monkeypatch.setitem(EPOCH_BUDGET, "min_epochs", 1)
    monkeypatch.setitem(EPOCH_BUDGET, "seconds", 1e-6)  # the time budget stops training after the first
    train_data, _ = data
    config = tiny_config("rnn", epochs=None, patience=5, baseline=False)
    output = tmp_path / "run"
    with pytest.raises(KeyboardInterrupt):  # while the n-gram part would be fitted
        train(
            train_data,
            None,
            config,
            output,
            log=lambda m: None,
            verbose=0,
            bundle=False,
            callbacks=[InterruptWhenTrainingEnds()],
        )
    assert history_epochs(output) == ["0"] and read_status(output)["stopped_by"] == "time budget"
    monkeypatch.setitem(EPOCH_BUDGET, "seconds", 6000)  # a new process's time budget would allow the second epoch
    lines = []
    run = train(train_data, None, config, output, resume=True, log=lines.append, verbose=0, bundle=False)
    assert "the network finished training before the interruption (time budget): no further epoch" in lines
    assert history_epochs(output) == ["0"]
    metrics = json.loads((output / "metrics.json").read_text())
    assert (
        (metrics["epochs_trained"], metrics["stopped_by"])
        == (1, "time budget")
        == (
            run.metrics["epochs_trained"],
            run.metrics["stopped_by"],
        )
    )
    assert "parts" in metrics  # what remained was done: the n-gram part fitted and weighed


def test_a_run_that_stopped_early_trains_no_further_epoch_when_resumed(data, tmp_path):
    import csv

    train_data, test_data = data
    config = tiny_config("rnn", epochs=8, patience=2, baseline=False)
    output = tmp_path / "run"
    with pytest.raises(KeyboardInterrupt):
        train(
            train_data,
            None,
            config,
            output,
            log=lambda m: None,
            verbose=0,
            bundle=False,
            callbacks=[InterruptAfterEpochs(3)],
        )
    # The history of a run that had stopped early (the validation loss did not improve for 2 epochs) when it was
    # interrupted, left by a hierattn that did not record why training ended: known from history.csv alone.
    with open(output / "history.csv", newline="") as f:
        rows = list(csv.DictReader(f))
    for row, loss in zip(rows, ("0.5", "0.6", "0.7")):
        row["val_loss"] = loss
    with open(output / "history.csv", "w", newline="") as f:
        writer = csv.DictWriter(f, fieldnames=list(rows[0]))
        writer.writeheader()
        writer.writerows(rows)
    assert "stopped_by" not in read_status(output)
    run = train(train_data, test_data, config, output, resume=True, log=lambda m: None, verbose=0, bundle=False)
    assert history_epochs(output) == ["0", "1", "2"]  # the run trained 3 more and recorded 6 as 9
    assert run.metrics["epochs_trained"] == 3
    assert run.metrics["stopped_by"] == "validation loss stopped improving (patience 2)"
    assert run.metrics["test"]["documents"] == 40


def test_early_stopping_goes_on_from_the_epochs_before_an_interruption():
    from hierattn.callbacks import ResumableEarlyStopping, early_stopping_state

    assert early_stopping_state([], 2) == (None, 0, 0, False)
    assert early_stopping_state([0.5, 0.6], 2) == (0.5, 0, 1, False)
    assert early_stopping_state([0.5, 0.6, 0.7], 2) == (0.5, 0, 2, True)
    assert early_stopping_state([0.5, 0.6, 0.4, 0.45], 2) == (0.4, 2, 1, False)
    assert early_stopping_state([0.5, 0.6, 0.7, 0.4], 2)[3]  # stopped at the third: later epochs do not undo it
    model = keras.Sequential([keras.Input((1,)), keras.layers.Dense(1)])
    model.compile("sgd", "mse")
    x = np.arange(8.0).reshape(-1, 1)

    def epochs_run(early_stopping):
        fit = model.fit(
            x, x + 100, validation_split=0.25, epochs=6, initial_epoch=1, verbose=0, callbacks=[early_stopping]
        )
        return len(fit.epoch)

    # An earlier epoch reached a validation loss of 0, which no epoch can beat: with patience 1, the first epoch
    # after the interruption stops training; Keras's own callback, starting afresh, trains at least two.
    assert epochs_run(ResumableEarlyStopping([0.0], monitor="val_loss", patience=1)) == 1
    assert epochs_run(keras.callbacks.EarlyStopping(monitor="val_loss", patience=1)) >= 2


def test_training_inside_a_distribution_strategy_scope(data, tmp_path):
    train_data, _ = data
    strategy = tf.distribute.MirroredStrategy(["/cpu:0"])
    with strategy.scope():
        run = train(
            train_data,
            None,
            tiny_config("transformer", epochs=1),
            tmp_path / "run",
            log=lambda m: None,
            verbose=0,
            bundle=False,
        )
    assert run.metrics["validation"]["documents"] == 16


def test_bad_configs_are_refused_and_leave_no_run_directory(data, tmp_path):
    train_data, _ = data
    for settings, error, message in [
        # The run's own settings, when the config is made.
        ({"limit": 2}, HierattnError, "limit must be a whole number of at least 4"),
        ({"learning_rate": float("nan")}, HierattnError, "learning_rate must be a finite number above 0"),
        ({"validation_split": 1.0}, HierattnError, "validation_split must be a fraction"),
        ({"patience": 0}, HierattnError, "patience must be a whole number of at least 1, not 0"),
        # The classifier checks its own arguments, when the run makes it.
        ({"classifier": {"backbone": "han", "embedding_dim": 0}}, ValueError, "embedding_dim must be a whole number"),
        ({"classifier": {"backbone": "rnn", "max_words": 10}}, ValueError, "max_words applies to the han"),
    ]:
        with pytest.raises(error, match=message):
            train(
                train_data, None, TrainConfig(**settings), tmp_path / "x", log=lambda m: None, verbose=0, bundle=False
            )
        assert not (tmp_path / "x").exists()


def test_embeddings_start_from_a_vectors_file(data, tmp_path):
    from conftest import NEGATIVE, POSITIVE

    train_data, _ = data
    vectors = tmp_path / "vectors.txt"
    rng = np.random.default_rng(0)
    words = POSITIVE + NEGATIVE + ["film", "acting"]
    table = {w: rng.normal(size=16).round(4) for w in words}
    vectors.write_text("".join(f"{w} {' '.join(map(str, v))}\n" for w, v in table.items()))
    config = tiny_config("rnn", embeddings=str(vectors), epochs=1, learning_rate=1e-9)
    train(train_data, None, config, tmp_path / "run", log=lambda m: None, verbose=0, bundle=False)
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


def test_limit_cuts_training_test_and_unlabelled_texts_alike(data, tmp_path, monkeypatch, eager):
    train_data, test_data = data
    unlabeled = [f"an unlabelled text number {i}" for i in range(100)]
    seen = {}

    def fake_word2vec(sentences, **kwargs):
        seen["sentences"] = len(sentences)
        return {}

    monkeypatch.setattr("hierattn.models.embeddings.train_word2vec", fake_word2vec)
    run = train(
        train_data,
        test_data,
        tiny_config("han", limit=20, embeddings="word2vec"),
        tmp_path / "run",
        unlabeled=unlabeled,
        log=lambda m: None,
        verbose=0,
        bundle=False,
    )
    assert run.metrics["test"]["documents"] == 20
    assert run.metrics["train_documents"] + run.metrics["validation"]["documents"] == 20
    assert seen["sentences"] <= 18 * 3 + 20  # the fitted part's sentences plus 20 one-sentence unlabelled texts
    assert sample(list(range(10)), 20, 0) == list(range(10)) and sample(None, 5, 0) is None
    assert sample(list(range(100)), 5, 1) == sample(list(range(100)), 5, 1) == sorted(sample(list(range(100)), 5, 1))


def test_a_diverging_loss_stops_training_and_leaves_the_run_unfinished(data, tmp_path, eager):
    from hierattn.errors import TrainingDiverged

    with pytest.raises(TrainingDiverged, match=r"the loss became (nan|inf) at epoch 1, batch \d+; .* stays unfinished"):
        train(
            data[0],
            None,
            tiny_config("rnn", learning_rate=1e30, epochs=2),
            tmp_path / "run",
            log=lambda m: None,
            verbose=0,
            bundle=False,
        )
    assert read_status(tmp_path / "run")["status"] == "training"
    assert not (tmp_path / "run" / "model.keras").exists()


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


def test_mixed_precision_setting_reaches_the_saved_classifier(data, tmp_path, eager):
    train_data, _ = data
    run = train(
        train_data,
        None,
        tiny_config("han", epochs=1, mixed_precision=True),
        tmp_path / "run",
        log=lambda m: None,
        verbose=0,
        bundle=False,
    )
    assert json.loads((tmp_path / "run" / "config.json").read_text())["classifier"]["dtype"]["config"] == {
        "name": "mixed_float16"
    }
    assert load_run(tmp_path / "run").classifier.backbone.get_layer("word_encoder").dtype_policy.name == "mixed_float16"
    assert run.classifier.dtype_policy.name == "mixed_float16"


def test_config_json_holds_the_untrained_classifier_and_the_run_settings_as_given(han_learned):
    from hierattn.models import TextClassifier

    given, run = han_learned  # 12 epochs, a learning rate and a patience given, other settings by default
    config = json.loads((run.path / "config.json").read_text())
    assert config.pop("format") == "hierattn.train-config/3"
    run_settings = {"epochs", "batch_size", "learning_rate", "patience", "validation_split", "limit", "baseline"}
    assert set(config) == {"classifier", "data"} | run_settings
    assert (config["epochs"], config["learning_rate"], config["patience"]) == (12, 5e-3, 12)
    classifier = config["classifier"]
    assert (classifier["backbone"], classifier["seed"], classifier["label_names"]) == (
        "han",
        given.seed,
        ["neg", "pos"],
    )
    assert classifier["backbone_options"] == {**TINY_OPTIONS["han"], "embedding_dim": 16}
    limits = classifier["preprocessor"]["config"]
    assert (limits["max_sentences"], limits["max_words"]) == (None, None)  # chosen by adapt: model.keras has them
    assert run.classifier.preprocessor.max_sentences >= 1 and run.classifier.preprocessor.max_words >= 1
    untrained = TextClassifier.from_config(classifier)  # the classifier the run started from
    assert untrained.get_config() == classifier and not untrained.adapted
    assert run.config == config and load_run(run.path).config == config


def test_a_run_of_config_format_2_resumes_and_reads(data, tmp_path):
    from hierattn.runs.run import Run
    from hierattn.utils.jsonfile import save_json

    output = tmp_path / "run"
    config = tiny_config("rnn", epochs=2, patience=5, seed=4)
    with pytest.raises(KeyboardInterrupt):
        train(
            data[0],
            None,
            config,
            output,
            log=lambda m: None,
            verbose=0,
            bundle=False,
            callbacks=[StopAfterFirstEpoch()],
        )
    # config.json as hierattn wrote it before format /3: flat settings, the limit adapt chose written back.
    backbone = {**TINY_OPTIONS["rnn"], "embedding_dim": 16}
    flat = {
        "model": "rnn",
        "epochs": 2,
        "batch_size": 16,
        "learning_rate": 0.001,
        "patience": 5,
        "validation_split": 0.1,
        "seed": 4,
        "embeddings": "none",
        "pretrain_epochs": 5,
        "max_sentences": None,
        "max_words": None,
        "sequence_length": 9,
        "min_count": 1,
        "max_vocab": 60000,
        "limit": None,
        "mixed_precision": False,
        "baseline": False,
        "ngrams": True,
        "backbone": backbone,
        "data": {"train": {"path": "/somewhere/train.csv"}},
    }
    save_json(output / "config.json", FLAT_FORMAT, flat, indent=2)
    run = train(data[0], None, TrainConfig(), output, resume=True, log=lambda m: None, verbose=0, bundle=False)
    assert len((output / "history.csv").read_text().strip().splitlines()) == 3  # header + the two epochs
    assert "baseline" not in run.metrics  # the recorded settings were used, not those given
    converted = {
        "classifier": {
            "backbone": "rnn",
            "seed": 4,
            "embeddings": "none",
            "pretrain_epochs": 5,
            "max_sentences": None,
            "max_words": None,
            "sequence_length": 9,
            "min_count": 1,
            "max_vocab": 60000,
            "ngrams": True,
            **backbone,
        },
        **{name: flat[name] for name in ("epochs", "batch_size", "learning_rate", "patience", "validation_split")},
        "limit": None,
        "baseline": False,
        "data": flat["data"],
    }
    assert run.config == converted and load_run(output).config == converted
    assert Run(output).data == flat["data"]


def test_a_multilabel_run_reports_label_set_scores_each_part_and_the_tuned_baseline(multilabel_run_dir, multilabel_csv):
    from hierattn.metrics import multilabel_metrics

    metrics = json.loads((multilabel_run_dir / "metrics.json").read_text())
    config = json.loads((multilabel_run_dir / "config.json").read_text())
    assert config["classifier"]["multi_label"] is True and config["data"]["label_separator"] == "|"
    scores = {"micro_f1", "macro_f1", "samples_f1", "subset_accuracy", "hamming_loss"}
    for split in ("validation", "test"):
        assert scores <= set(metrics[split]) and "accuracy" not in metrics[split]
        assert scores <= set(metrics["baseline"][split])
        for part in ("network", "ngrams"):
            assert scores <= set(metrics["parts"][part][split])
            assert len(metrics["parts"][part]["thresholds"]) == 3  # each part alone at its own thresholds
    assert "one-vs-rest, thresholds chosen on validation" in metrics["baseline"]["model"]
    # the test scores are those of the saved classifier's label sets on the test file
    classifier = load_run(multilabel_run_dir).classifier
    test, _ = load_table(multilabel_csv[1], label_map=None, label_separator="|")
    assert test.label_map.names == classifier.label_names
    predicted = classifier.over_thresholds(classifier.predict(test.texts, verbose=0))
    metrics["test"].pop("prediction_reviews_per_second")
    assert multilabel_metrics(test.labels, predicted, classifier.label_names) == metrics["test"]
