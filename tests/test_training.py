"""Tests for hierattn.training: end-to-end runs on a tiny generated corpus."""

import json

import keras
import numpy as np
import pytest
import tensorflow as tf

from conftest import TINY_OPTIONS
from hierattn.data import load_table
from hierattn.errors import HierattnError
from hierattn.runs import RunError, load_run, read_status
from hierattn.data.dataset import sample
from hierattn.training import TrainConfig, learning_rate, make_train_dataset, train


def tiny_config(model="han", **kwargs):
    values = dict(model=model, epochs=2, batch_size=16, embedding_dim=16, pretrain="none", min_count=1,
                  model_options=TINY_OPTIONS[model])
    values.update(kwargs)
    return TrainConfig(**values)


@pytest.fixture(scope="module")
def data(tiny_csv):
    train_data, _ = load_table(tiny_csv[0])
    test_data, _ = load_table(tiny_csv[1], label_map=train_data.label_map)
    return train_data, test_data


@pytest.mark.parametrize("model", ["han", "transformer", "rnn"])
def test_each_model_trains_saves_and_reloads_identically(data, tmp_path, model):
    train_data, test_data = data
    run = train(train_data, test_data, tiny_config(model, attention="luong-general"), tmp_path / "run", log=lambda m: None,
                verbose=0)
    files = {p.name for p in (tmp_path / "run").iterdir()}
    assert {"model.keras", "encoder", "labels.json", "config.json", "history.csv", "metrics.json", "logs",
            "run.json"} <= files
    assert "checkpoints" not in files  # resume state is cleaned up once complete
    metrics = json.loads((tmp_path / "run" / "metrics.json").read_text())
    assert metrics["test"]["documents"] == 40 and 0.0 <= metrics["test"]["accuracy"] <= 1.0
    assert len(metrics["test"]["confusion_matrix"]) == 2 and "macro_f1" in metrics["validation"]
    assert len((tmp_path / "run" / "history.csv").read_text().strip().splitlines()) == 3  # header + 2 epochs
    texts = test_data.texts[:7] + ["", "zzz qqq", "word " * 500]
    reloaded = load_run(tmp_path / "run")
    # Same probabilities to float32 precision (separately traced graphs may
    # round the last bit differently).
    np.testing.assert_allclose(reloaded.predict_proba(texts), run.predict_proba(texts), rtol=1e-6, atol=1e-6)
    assert reloaded.predict(texts[:1])[0] in ("neg", "pos")


def test_han_learns_the_tiny_task(data, tmp_path):
    train_data, test_data = data
    run = train(train_data, test_data, tiny_config("han", epochs=12, learning_rate=5e-3, patience=12),
                tmp_path / "run", log=lambda m: None, verbose=0)
    assert run.metrics["test"]["accuracy"] >= 0.9


def test_teacher_soft_targets_are_used_for_training(data, tmp_path, monkeypatch):
    import hierattn.training as training

    seen = {}
    original = training.make_train_dataset

    def spy(x, y, *args, **kwargs):
        seen["targets"] = y
        return original(x, y, *args, **kwargs)

    monkeypatch.setattr(training, "make_train_dataset", spy)
    messages = []
    train_data, _ = data
    run = train(train_data, None, tiny_config("transformer", epochs=1, teacher="tfidf", teacher_weight=0.3),
                tmp_path / "run", log=messages.append, verbose=0)
    targets = seen["targets"]
    assert targets.shape == (run.metrics["train_documents"], 2)
    np.testing.assert_allclose(targets.sum(1), 1.0, atol=1e-6)
    assert targets.max() <= 1.0 and targets.max(1).min() >= 0.7  # 0.7 x label + 0.3 x teacher
    assert 0.7 < targets.max(1).mean() < 1.0
    assert any("TF-IDF + LR teacher" in m for m in messages)


def test_seed_makes_runs_reproducible(data, tmp_path):
    train_data, _ = data
    first = train(train_data, None, tiny_config("rnn", seed=7), tmp_path / "a", log=lambda m: None, verbose=0)
    second = train(train_data, None, tiny_config("rnn", seed=7), tmp_path / "b", log=lambda m: None, verbose=0)
    assert (tmp_path / "a" / "history.csv").read_text() == (tmp_path / "b" / "history.csv").read_text()
    texts = train_data.texts[:5]
    np.testing.assert_allclose(first.predict_proba(texts), second.predict_proba(texts), atol=1e-6)


class StopAfterFirstEpoch(keras.callbacks.Callback):
    def on_epoch_end(self, epoch, logs=None):
        raise KeyboardInterrupt


def test_interrupted_run_resumes_and_never_overwrites(data, tmp_path, monkeypatch):
    import hierattn.training as training

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
    original = training.make_train_dataset

    def spy(*args, first_epoch=0):
        first_epochs.append(first_epoch)
        return original(*args, first_epoch=first_epoch)

    monkeypatch.setattr(training, "make_train_dataset", spy)
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
        run = train(train_data, None, tiny_config("transformer", epochs=1), tmp_path / "run", log=lambda m: None,
                    verbose=0)
    assert run.metrics["validation"]["documents"] == 16


def test_unlabeled_texts_train_on_the_teachers_probabilities(data, tmp_path, monkeypatch):
    import hierattn.training as training

    seen = {}
    original = training.make_train_dataset

    def spy(x, y, *args, **kwargs):
        seen["x"], seen["targets"] = x, y
        return original(x, y, *args, **kwargs)

    monkeypatch.setattr(training, "make_train_dataset", spy)
    train_data, test_data = data
    unlabeled = list(test_data.texts[:30]) + ["zebracorn " * 5, "zebracorn again"]
    messages = []
    config = tiny_config("transformer", epochs=1, teacher="nblr", teacher_weight=0.0, distill_unlabeled=True)
    run = train(train_data, None, config, tmp_path / "run", unlabeled=unlabeled, log=messages.append, verbose=0)
    fitted = run.metrics["train_documents"] - len(unlabeled)
    x, targets = seen["x"], seen["targets"]
    assert len(x) == len(targets) == run.metrics["train_documents"] == 144 + 32
    np.testing.assert_allclose(targets.sum(1), 1.0, atol=1e-6)
    assert set(np.unique(targets[:fitted])) == {0.0, 1.0}  # labelled texts: their labels (weight 0)
    assert 0.0 < targets[fitted:].max(1).min() < 1.0  # unlabelled: the teacher's probabilities
    np.testing.assert_array_equal(x[fitted:fitted + 30], run.encoder.encode(unlabeled[:30], mode="flat"))
    assert "zebracorn" in run.encoder.vocabulary  # the unlabelled texts join the vocabulary
    assert any("labelling 32 unlabelled texts with the NB-LR" in m for m in messages)

    messages.clear()
    train(train_data, None, config, tmp_path / "alone", log=messages.append, verbose=0)
    assert "no unlabelled texts: training on the labelled ones only" in messages


def test_bad_configs_are_rejected(data, tmp_path):
    train_data, _ = data
    for config, message in [
        (tiny_config("han", limit=2), "--limit"),
        (TrainConfig(model="bert"), "unknown model"),
        (tiny_config("han", label_smoothing=1.5), "label smoothing"),
        (tiny_config("han", lr_schedule="step"), "learning-rate schedule"),
        (tiny_config("transformer", truncating="middle"), "unknown truncation 'middle'"),
        (tiny_config("transformer", teacher="bert"), "unknown teacher"),
        (tiny_config("transformer", teacher="tfidf", teacher_weight=2.0), "teacher weight"),
        (tiny_config("transformer", distill_unlabeled=True), "needs a teacher"),
        (tiny_config("rnn", adversarial=-1.0), "adversarial perturbation size"),
        (tiny_config("rnn", adversarial=float("inf")), "adversarial perturbation size"),
        (tiny_config("han", learning_rate=float("nan")), "learning rate must be a finite number above 0"),
        (tiny_config("han", learning_rate=0.0), "learning rate must be a finite number above 0"),
        (tiny_config("han", validation_fraction=1.0), "validation fraction"),
        (tiny_config("han", patience=0), "patience must be at least 1"),
    ]:
        with pytest.raises(HierattnError, match=message):
            train(train_data, None, config, tmp_path / "x", log=lambda m: None, verbose=0)


def test_model_defaults_fill_only_unset_fields():
    config = TrainConfig(model="transformer")
    assert config.embedding_dim == 128 and config.model_options["norm_first"] is True
    assert TrainConfig(model="transformer", epochs=5, embedding_dim=32).epochs == 5
    assert TrainConfig(model="transformer", embedding_dim=32).embedding_dim == 32
    assert TrainConfig(model="han").lr_schedule == "constant" and TrainConfig(model="han").epochs == 8


def test_cosine_schedule_warms_up_then_decays_to_zero():
    config = TrainConfig(model="han", learning_rate=2e-3, lr_schedule="cosine", epochs=2, batch_size=10)
    schedule = learning_rate(config, 500)  # 50 steps per epoch, 100 in all, 10 of warm-up
    values = [float(schedule(step)) for step in (0, 5, 10, 55, 100)]
    assert values[0] == pytest.approx(0.0, abs=1e-9) and values[1] == pytest.approx(1e-3, rel=1e-3)
    assert values[2] == pytest.approx(2e-3, rel=1e-3) and values[3] == pytest.approx(1e-3, rel=1e-2)
    assert values[4] == pytest.approx(0.0, abs=1e-7)
    assert learning_rate(TrainConfig(model="han"), 500) == 1e-3


def test_frozen_embeddings_keep_the_given_vectors(data, tmp_path):
    from conftest import NEGATIVE, POSITIVE

    train_data, _ = data
    vectors = tmp_path / "vectors.txt"
    rng = np.random.default_rng(0)
    words = POSITIVE + NEGATIVE + ["film", "acting"]
    table = {w: rng.normal(size=16).round(4) for w in words}
    vectors.write_text("".join(f"{w} {' '.join(map(str, v))}\n" for w, v in table.items()))
    config = tiny_config("rnn", vectors=str(vectors), freeze_embeddings=True)
    run = train(train_data, None, config, tmp_path / "run", log=lambda m: None, verbose=0)
    loaded = load_run(tmp_path / "run")
    for model in (run.model, loaded.model):
        layer = model.get_layer("embedding")
        assert not layer.trainable
        weights = layer.get_weights()[0]
        for word, vector in table.items():
            np.testing.assert_allclose(weights[loaded.encoder.vocabulary.lookup(word)], vector, atol=1e-6)


def test_freezing_keeps_the_words_but_trains_a_projection(data, tmp_path):
    train_data, _ = data
    options = {**TINY_OPTIONS["transformer"], "model_dim": 8}
    config = tiny_config("transformer", embedding_dim=16, pretrain="word2vec", freeze_embeddings=True,
                         model_options=options)
    start = {}

    class Snapshot(keras.callbacks.Callback):
        def on_train_begin(self, logs=None):
            layer = self.model.get_layer("embedding")
            start["words"] = layer.token_embedding.embeddings.numpy()
            start["projection"] = layer.projection.kernel.numpy()

    run = train(train_data, None, config, tmp_path / "run", log=lambda m: None, verbose=0, callbacks=[Snapshot()])
    layer = run.model.get_layer("embedding")
    assert layer.token_embedding.embeddings.shape == (len(run.encoder.vocabulary), 16)
    assert not layer.token_embedding.trainable and layer.projection.trainable
    assert layer.projection.kernel.shape == (16, 8)
    np.testing.assert_array_equal(layer.token_embedding.embeddings.numpy(), start["words"])
    assert np.abs(layer.projection.kernel.numpy() - start["projection"]).max() > 1e-4


def test_pretrained_vectors_are_rescaled_only_for_the_scaled_embeddings():
    from hierattn.models import build_rnn, build_transformer
    from hierattn.training import set_embeddings

    matrix = np.random.default_rng(0).normal(0, 0.4, size=(50, 16)).astype(np.float32)
    matrix[0] = 0
    transformer = build_transformer(50, 2, embedding_dim=16, num_heads=2, ff_dim=8, num_layers=1)
    set_embeddings(transformer, matrix)
    loaded = transformer.get_layer("embedding").token_embedding.get_weights()[0]
    assert np.std(loaded[1:]) == pytest.approx(16 ** -0.5, rel=1e-4)
    np.testing.assert_allclose(loaded, matrix * (loaded[5, 0] / matrix[5, 0]), rtol=1e-5)  # same directions
    gentle = build_transformer(50, 2, embedding_dim=16, num_heads=2, ff_dim=8, num_layers=1, embedding_scale=2.0)
    set_embeddings(gentle, matrix)  # stored at std 1/2, so that x2 gives the same unit-scale tokens
    assert np.std(gentle.get_layer("embedding").token_embedding.get_weights()[0][1:]) == pytest.approx(0.5, rel=1e-4)
    alibi = build_transformer(50, 2, embedding_dim=16, num_heads=2, ff_dim=8, num_layers=1, position="alibi")
    set_embeddings(alibi, matrix)  # also scaled by sqrt(d), so also stored at d^-1/2
    assert np.std(alibi.get_layer("embedding").token_embedding.get_weights()[0][1:]) == pytest.approx(0.25, rel=1e-4)
    assert alibi.get_layer("embedding").position == "none"
    assert alibi.get_layer("encoder_1").position_bias == "alibi"
    learned = build_transformer(50, 2, max_len=8, embedding_dim=16, num_heads=2, ff_dim=8, position="learned")
    set_embeddings(learned, matrix)
    np.testing.assert_array_equal(learned.get_layer("embedding").token_embedding.get_weights()[0], matrix)
    rnn = build_rnn(50, 2, embedding_dim=16, units=4)
    set_embeddings(rnn, matrix)
    np.testing.assert_array_equal(rnn.get_layer("embedding").get_weights()[0], matrix)


def test_model_options_are_parsed_and_checked_before_training():
    from hierattn.training import TrainConfig, check_model_options, parse_options

    options = parse_options(["num_layers=2", "norm_first=false", "position=alibi", "word_dropout=0.1"])
    assert options == {"num_layers": 2, "norm_first": False, "position": "alibi", "word_dropout": 0.1}
    config = TrainConfig(model="transformer", model_options=options).validate()
    check_model_options(config)
    assert config.model_options["num_heads"] == 4 and config.model_options["num_layers"] == 2  # defaults kept
    with pytest.raises(HierattnError, match="unknown rnn model option"):
        check_model_options(TrainConfig(model="rnn", model_options={"max_len": 5}))  # a TrainConfig field
    with pytest.raises(HierattnError, match="must be divisible"):
        check_model_options(TrainConfig(model="transformer", embedding_dim=10))


def test_adversarial_training_saves_the_plain_model(data, tmp_path):
    train_data, test_data = data
    run = train(train_data, None, tiny_config("transformer", adversarial=1.0), tmp_path / "run", log=lambda m: None,
                verbose=0)
    reloaded = load_run(tmp_path / "run")
    assert type(reloaded.model) is keras.Model or type(reloaded.model).__name__ == "Functional"
    assert "AdversarialTrainer" not in (tmp_path / "run" / "model.keras").read_bytes().decode("latin-1")
    np.testing.assert_allclose(reloaded.predict_proba(test_data.texts[:5]), run.predict_proba(test_data.texts[:5]),
                               rtol=1e-6, atol=1e-6)


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

    monkeypatch.setattr("hierattn.embeddings.train_word2vec", fake_word2vec)
    run = train(train_data, test_data, tiny_config("han", limit=20, pretrain="word2vec"), tmp_path / "run",
                unlabeled=unlabeled, log=lambda m: None, verbose=0)
    assert run.metrics["test"]["documents"] == 20
    assert run.metrics["train_documents"] + run.metrics["validation"]["documents"] == 20
    assert seen["sentences"] <= 18 * 3 + 20  # the fitted part's sentences plus 20 one-sentence unlabelled texts
    assert sample(list(range(10)), 20, 0) == list(range(10)) and sample(None, 5, 0) is None
    assert sample(list(range(100)), 5, 1) == sample(list(range(100)), 5, 1) == sorted(sample(list(range(100)), 5, 1))


def test_a_diverging_loss_stops_training_and_leaves_the_run_unfinished(data, tmp_path):
    from hierattn.errors import TrainingDiverged

    with pytest.raises(TrainingDiverged, match=r"the loss became (nan|inf) at epoch 1, batch \d+; .* stays unfinished"):
        train(data[0], None, tiny_config("rnn", learning_rate=1e30, epochs=2), tmp_path / "run", log=lambda m: None,
              verbose=0)
    assert read_status(tmp_path / "run")["status"] == "training"
    assert not (tmp_path / "run" / "model.keras").exists()
