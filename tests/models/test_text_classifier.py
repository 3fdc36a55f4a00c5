"""Tests for hierattn.models.text_classifier.TextClassifier: raw strings in, one .keras file out."""

import json
import os
import pathlib
import re
import subprocess
import sys

import keras
import numpy as np
import pandas as pd
import pytest

import hierattn
from hierattn.errors import DataError

from conftest import TINY_OPTIONS, make_reviews

ROOT = pathlib.Path(__file__).resolve().parents[2]

# The tests that use `eager` fit tiny classifiers with Keras functions eager (conftest.eagerly): they test what fit does
# with its arguments, not how a graph trains, which `fitted`, the README's example and mixed precision still do here.


@pytest.fixture(scope="module")
def reviews():
    return make_reviews(160)


@pytest.fixture(scope="module")
def fitted(reviews):
    texts, labels = reviews
    clf = hierattn.TextClassifier("han", embeddings="none", min_count=1, **TINY_OPTIONS["han"])
    clf.fit(texts, labels, validation_split=0.1, epochs=3, verbose=0)
    return clf


def test_readme_python_api_runs_as_written(tmp_path, monkeypatch, reviews):
    readme = (ROOT / "README.md").read_text()
    section = readme.split("## Python API", 1)[1]
    code = re.search(r"```python\n(.*?)```", section, re.S).group(1)
    assert len(code.strip().splitlines()) <= 10
    texts, labels = reviews
    monkeypatch.chdir(tmp_path)
    pd.DataFrame({"text": texts, "label": labels}).to_csv("reviews.csv", index=False)
    namespace = {}
    exec(compile(code, "README.md", "exec"), namespace)  # as written
    clf = namespace["clf"]
    assert isinstance(clf, hierattn.TextClassifier) and (tmp_path / "reviews.keras").is_file()
    assert clf.predict_labels(["The film was great."])[0] in ("neg", "pos")


LOAD_AND_PREDICT = """
import json, sys
import hierattn.models, keras
classifier = keras.saving.load_model(sys.argv[1])  # safe mode is on by default
print(json.dumps(classifier.predict(json.loads(sys.argv[2])).tolist()))
"""


def test_one_file_loads_in_a_fresh_process_with_only_import_hierattn_models(fitted, tmp_path):
    path = tmp_path / "reviews.keras"
    fitted.save(path)
    assert sorted(os.listdir(tmp_path)) == ["reviews.keras"]
    texts = ["The film was great. I found the acting superb!", "awful and boring", "Mr. Smith directed it.", "zzz"]
    result = subprocess.run(
        [sys.executable, "-c", LOAD_AND_PREDICT, str(path), json.dumps(texts)],
        capture_output=True,
        text=True,
        timeout=180,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
    )
    assert result.returncode == 0, result.stderr[-3000:]
    probabilities = np.array(json.loads(result.stdout.strip().splitlines()[-1]))
    np.testing.assert_allclose(probabilities, fitted.predict(texts), rtol=1e-6, atol=1e-6)


@pytest.mark.usefixtures("eager")
def test_reloaded_classifier_keeps_everything_and_trains_on(fitted, reviews, tmp_path):
    fitted.save(tmp_path / "c.keras")
    loaded = keras.saving.load_model(tmp_path / "c.keras")
    assert loaded.label_names == ["neg", "pos"] and loaded.architecture == "han"
    assert loaded.preprocessor.get_config() == fitted.preprocessor.get_config()
    assert loaded.preprocessor.vocabulary.tokens == fitted.preprocessor.vocabulary.tokens
    assert loaded.compiled and loaded.optimizer.iterations.numpy() == fitted.optimizer.iterations.numpy()
    texts, labels = reviews
    loaded.fit(texts[:32], labels[:32], epochs=1, verbose=0)  # continues: same vocabulary, same classes
    assert loaded.preprocessor.vocabulary.tokens == fitted.preprocessor.vocabulary.tokens
    with pytest.raises(DataError, match="labels not seen in training: meh"):
        loaded.fit(texts[:2], ["pos", "meh"], epochs=1, verbose=0)


def test_predict_explain_and_evaluate_on_raw_strings(fitted, reviews):
    texts, labels = reviews
    probabilities = fitted.predict(texts[:3])
    assert probabilities.shape == (3, 2) and probabilities.dtype == np.float32
    np.testing.assert_allclose(probabilities.sum(1), 1.0, atol=1e-6)
    assert fitted.predict_labels(texts[:3]) == [fitted.label_names[i] for i in probabilities.argmax(1)]
    (explanation,) = fitted.explain(["The plot was thin. The acting was superb."], attention=True)
    assert sum(w.weight for w in explanation.words) == pytest.approx(1.0, abs=1e-5)
    assert explanation.label in ("neg", "pos") and '<div class="hierattn-x">' in explanation._repr_html_()
    metrics = fitted.evaluate(texts[:40], labels[:40], verbose=0, return_dict=True)
    assert set(metrics) >= {"loss", "accuracy"} and 0.0 <= metrics["accuracy"] <= 1.0
    scores = fitted.evaluate(texts[:40], labels[:40], verbose=0)  # Keras's contract: a list, loss first
    assert isinstance(scores, list) and scores[0] == pytest.approx(metrics["loss"])
    assert sorted(scores) == pytest.approx(sorted(metrics.values()))
    with pytest.raises(DataError, match="not a single string"):
        fitted.predict("one text")


@pytest.mark.parametrize("model", ["transformer", "rnn"])
@pytest.mark.usefixtures("eager")
def test_flat_backbones(model, reviews, tmp_path):
    texts, labels = reviews
    clf = hierattn.TextClassifier(model, embeddings="none", min_count=1, sequence_length=12, **TINY_OPTIONS[model])
    history = clf.fit(texts, labels, validation_data=(texts[:20], labels[:20]), epochs=1, batch_size=32, verbose=0)
    assert "val_loss" in history.history
    assert clf.preprocessor.mode == "flat" and clf.preprocessor(texts[:2])["token_ids"].shape == (2, 12)
    clf.save(tmp_path / "m.keras")
    np.testing.assert_allclose(
        keras.saving.load_model(tmp_path / "m.keras").predict(texts[:4]), clf.predict(texts[:4]), atol=1e-6
    )


def test_defaults_come_from_one_place_and_wrong_arguments_are_refused():
    from hierattn.defaults import BACKBONES

    clf = hierattn.TextClassifier("transformer")
    assert clf.backbone is None and clf.backbone_options == {} and not clf.adapted
    assert set(BACKBONES["transformer"]) >= {"num_layers", "intermediate_dim", "normalize_first"}
    with pytest.raises(ValueError, match="unknown han argument.*ff_dim"):
        hierattn.TextClassifier("han", ff_dim=8)
    with pytest.raises(ValueError, match="backbone must be one of"):
        hierattn.TextClassifier("bert")
    with pytest.raises(DataError, match="fit needs the texts' labels"):
        hierattn.TextClassifier("han").fit(["a text"])
    with pytest.raises(DataError, match="fit takes texts"):
        hierattn.TextClassifier("han").fit(np.ones((2, 3), "int32"), [0, 1])


@pytest.mark.usefixtures("eager")
def test_a_backbone_built_by_hand(reviews):
    texts, labels = reviews
    backbone = hierattn.RNNBackbone(50, 2, embedding_dim=8, units=4)
    preprocessor = hierattn.TextPreprocessor("flat", min_count=1, max_vocab=48, sequence_length=10)
    clf = hierattn.TextClassifier(backbone, preprocessor=preprocessor, embeddings="none")
    clf.fit(texts, labels, epochs=1, verbose=0)
    assert clf.backbone is backbone and clf.label_names == ["neg", "pos"]


@pytest.mark.parametrize("model", ["han", "transformer", "rnn"])
def test_mixed_precision_is_correct_on_cpu(reviews, tmp_path, model):

    texts, labels = reviews
    before = keras.config.dtype_policy().name
    clf = hierattn.TextClassifier(model, embeddings="none", min_count=1, dtype="mixed_float16", **TINY_OPTIONS[model])
    history = clf.fit(texts, labels, epochs=2, batch_size=16, validation_split=0.2, verbose=0)
    assert keras.config.dtype_policy().name == before  # the process-wide policy is untouched
    assert isinstance(clf.optimizer, keras.optimizers.LossScaleOptimizer)
    assert np.all(np.isfinite(history.history["loss"] + history.history["val_loss"]))
    probabilities = clf.predict(texts[:8] + ["Dull."])
    assert probabilities.dtype == np.float32
    np.testing.assert_allclose(probabilities.sum(axis=1), 1.0, atol=1e-6)

    ids = clf.preprocessor(["The film was great. I found the acting superb! Mr. Smith directed it.", "Dull."])
    ids = ids["token_ids"]
    outputs = clf.backbone.attention_model()(ids)
    weights = [np.asarray(outputs[name]) for name in outputs if name != "probabilities"]
    assert weights and all(w.dtype == np.float16 for w in weights)
    word_mask = ids != 0
    for w in weights:
        mask = word_mask if w.shape == word_mask.shape else word_mask.any(axis=-1)
        assert np.all(w[~mask] == 0)  # exactly zero on padding
        np.testing.assert_allclose(w.astype(np.float32).sum(axis=-1)[mask.any(axis=-1)], 1.0, atol=2e-3)

    clf.save(tmp_path / "mixed.keras")
    loaded = keras.saving.load_model(tmp_path / "mixed.keras")
    assert loaded.backbone.token_embedding.dtype_policy.name == "mixed_float16"
    assert loaded.backbone.get_layer("probabilities").dtype_policy.name == "float32"
    np.testing.assert_allclose(loaded.predict(texts[:8]), probabilities[:8], atol=1e-6)


def test_the_ngram_part_is_fitted_after_the_network_and_saved_with_it(fitted, reviews, tmp_path):
    texts, labels = reviews
    report = fitted.ngram_report
    a, b = (float(v) for v in np.asarray(fitted.combination.mixing))
    assert (a, b) == pytest.approx((report["network_weight"], report["ngram_weight"]))
    assert report["network_share"] == pytest.approx(a / (a + b)) and len(report["shares"]) == 21
    assert set(report["validation_accuracy"]) == {"network", "ngrams", "combined"}
    assert np.abs(np.asarray(fitted.ngram_logits.kernel)).sum() > 0
    x = fitted.preprocessor(texts[:20])
    from hierattn.ngrams.mixing import combine, ngram_logits

    network = fitted.predict_ids(x["token_ids"], part="network")
    expected = combine(network, ngram_logits(fitted.ngram_logits, x["ngram_ids"]), a, b)
    np.testing.assert_allclose(fitted.predict_ids(x), expected, atol=1e-5)
    np.testing.assert_allclose(np.asarray(fitted(x)), expected, atol=1e-5)  # Keras's call on the dict of ids
    np.testing.assert_allclose(fitted.predict(texts[:20], verbose=0), expected, atol=1e-5)
    assert report["recipe"]["weighting"] in ("tfidf", "nb") and len(report["candidates"]) >= 5
    fitted.save(tmp_path / "c.keras")
    loaded = keras.saving.load_model(tmp_path / "c.keras")
    np.testing.assert_allclose(np.asarray(loaded.combination.mixing), [a, b])
    np.testing.assert_array_equal(np.asarray(loaded.ngram_logits.kernel), np.asarray(fitted.ngram_logits.kernel))


@pytest.mark.usefixtures("eager")
def test_the_network_trains_alone_whether_or_not_there_is_an_ngram_part(reviews):
    texts, labels = reviews
    weights = []
    for ngrams in (True, False):
        keras.utils.set_random_seed(0)
        clf = hierattn.TextClassifier("han", embeddings="none", min_count=1, ngrams=ngrams, **TINY_OPTIONS["han"])
        clf.fit(texts[:64], labels[:64], validation_split=0.25, epochs=1, verbose=0)
        weights.append(clf.backbone.get_weights())
        assert (clf.ngram_logits is None) == (not ngrams)
    for with_part, without in zip(*weights):
        np.testing.assert_allclose(with_part, without, rtol=1e-5, atol=1e-6)
    x = clf.preprocessor(texts[:5])
    np.testing.assert_allclose(clf.predict(texts[:5]), clf.predict_ids(x, part="network"))
    with pytest.raises(ValueError, match="no n-gram part"):
        clf.predict_ids(x, part="ngrams")
    with pytest.raises(ValueError, match="part must be None, 'whole', 'network' or 'ngrams'"):
        clf.predict_ids(x, part="attention")


def _as_tensor(texts):
    import tensorflow as tf

    return tf.constant(texts)


def _as_dataset(texts):
    import tensorflow as tf

    return tf.data.Dataset.from_tensor_slices(texts)


def _as_batched_dataset(texts):
    return _as_dataset(texts).batch(3)


@pytest.mark.parametrize("kind", [list, tuple, np.array, pd.Series, _as_tensor, _as_dataset, _as_batched_dataset])
def test_keras_verbs_take_texts_in_every_form(fitted, reviews, kind):
    texts, labels = reviews
    expected = fitted.predict(texts[:7])
    np.testing.assert_allclose(fitted.predict(kind(texts[:7]), verbose=0), expected, atol=1e-6)
    if kind not in (_as_dataset, _as_batched_dataset):
        np.testing.assert_allclose(np.asarray(fitted(kind(texts[:7]))), expected, atol=1e-5)


@pytest.mark.parametrize("batched", [False, True])
@pytest.mark.usefixtures("eager")
def test_fit_and_evaluate_take_a_dataset_of_texts_and_labels(reviews, batched):
    import tensorflow as tf

    texts, labels = reviews
    dataset = tf.data.Dataset.from_tensor_slices((texts, labels))
    dataset = dataset.batch(16) if batched else dataset
    clf = hierattn.TextClassifier("han", embeddings="none", min_count=1, ngrams=False, **TINY_OPTIONS["han"])
    history = clf.fit(dataset, epochs=1, verbose=0)
    assert clf.label_names == ["neg", "pos"] and len(history.history["loss"]) == 1
    from_dataset = clf.evaluate(dataset, verbose=0, return_dict=True)
    from_lists = clf.evaluate(texts, labels, verbose=0, return_dict=True)
    assert from_dataset == pytest.approx(from_lists)
    with pytest.raises(DataError, match="inside the dataset"):
        clf.evaluate(dataset, labels)


@pytest.mark.usefixtures("eager")
def test_labels_as_names_integers_or_one_hot_rows(fitted, reviews):
    texts, labels = reviews
    ids = fitted.label_ids(labels[:40])
    by_name = fitted.evaluate(texts[:40], labels[:40], verbose=0, return_dict=True)
    by_one_hot = fitted.evaluate(texts[:40], np.eye(2)[ids], verbose=0, return_dict=True)
    assert by_one_hot == pytest.approx(by_name)
    integer = hierattn.TextClassifier("han", embeddings="none", min_count=1, ngrams=False, **TINY_OPTIONS["han"])
    integer.fit(texts[:64], ids.tolist() + fitted.label_ids(labels[40:64]).tolist(), epochs=1, verbose=0)
    assert integer.label_names == [0, 1]
    one_hot = hierattn.TextClassifier("han", embeddings="none", min_count=1, ngrams=False, **TINY_OPTIONS["han"])
    one_hot.fit(texts[:64], keras.utils.to_categorical(fitted.label_ids(labels[:64]), 3), epochs=1, verbose=0)
    assert one_hot.label_names == [0, 1, 2] and one_hot.predict(texts[:2]).shape == (2, 3)
    with pytest.raises(DataError, match="one-hot"):
        fitted.evaluate(texts[:2], np.array([[0.5, 0.5], [1.0, 0.0]]))
    with pytest.raises(DataError, match="3 columns but the classifier has 2 classes"):
        fitted.evaluate(texts[:2], np.eye(3)[:2])


def test_summary_before_fit_after_fit_and_after_loading(fitted, tmp_path):
    lines = []
    hierattn.TextClassifier("han").summary(print_fn=lines.append)
    assert "text_preprocessor" in "\n".join(lines)
    for model in (fitted, None):
        if model is None:
            fitted.save(tmp_path / "s.keras")
            model = keras.saving.load_model(tmp_path / "s.keras")
        lines = []
        model.summary(print_fn=lines.append)
        text = "\n".join(lines)
        assert "HANBackbone" in text and "NgramLogits" in text and "Total params" in text


def test_a_classifier_saved_by_hierattn_0_5_loads_with_its_weights(fitted, reviews, tmp_path):
    # hierattn 0.5 saved backbones as anonymous functional models; the same file
    # now loads into a HANBackbone, predicting the same.
    import zipfile

    fitted.save(tmp_path / "new.keras")
    backbone = fitted.backbone
    functional = keras.saving.serialize_keras_object(keras.Model(backbone.input, backbone.output, name="han"))
    assert functional["class_name"] == "Functional"
    with zipfile.ZipFile(tmp_path / "new.keras") as source, zipfile.ZipFile(tmp_path / "old.keras", "w") as target:
        for item in source.infolist():
            data = source.read(item.filename)
            if item.filename == "config.json":
                config = json.loads(data)
                config["config"]["backbone"] = functional
                data = json.dumps(config).encode()
            target.writestr(item, data)
    loaded = hierattn.load_classifier(tmp_path / "old.keras")
    assert isinstance(loaded.backbone, hierattn.HANBackbone)
    assert loaded.backbone.get_config() == backbone.get_config()
    texts, _ = reviews
    np.testing.assert_allclose(loaded.predict(texts[:6]), fitted.predict(texts[:6]), atol=1e-6)


@pytest.mark.usefixtures("eager")
def test_fit_is_keras_fit_of_the_network_then_fit_ngrams_then_tune(reviews):
    from hierattn.models.inputs import split_validation

    texts, labels = reviews
    clf = hierattn.TextClassifier("han", embeddings="none", min_count=1, **TINY_OPTIONS["han"])
    clf.fit(texts[:96], labels[:96], validation_split=0.25, epochs=1, verbose=0)
    probe = clf.preprocessor(texts[96:])
    probabilities, kernel, report = clf.predict_ids(probe), np.asarray(clf.ngram_logits.kernel), clf.ngram_report
    # Undo the n-gram part, then take fit's steps by hand on the texts fit split off: the same part, weights, report.
    clf.combination.mixing.assign([1.0, 1.0])
    clf.ngram_logits.set_tables([], [], np.zeros((0, 2)), np.zeros(2), 1.0)
    (fit_texts, fit_labels), validation = split_validation(texts[:96], labels[:96], 0.25, clf.seed)
    assert clf.fit_ngrams(fit_texts, fit_labels, validation_data=validation) is clf
    assert clf.tune(validation).weights == pytest.approx((report["network_weight"], report["ngram_weight"]))
    np.testing.assert_array_equal(np.asarray(clf.ngram_logits.kernel), kernel)
    np.testing.assert_array_equal(clf.predict_ids(probe), probabilities)

    def without_times(report):
        candidates = [dict(row, fit_seconds=None) for row in report["candidates"]]
        return dict(report, training_seconds=None, candidates=candidates)

    assert without_times(clf.ngram_report) == without_times(report)
    assert report["train_documents"] == len(fit_texts) == 72
    assert set(report["validation_accuracy"]) == {"network", "ngrams", "combined"}


def test_fit_ngrams_and_tune_alone(reviews):
    from hierattn.defaults import NGRAMS
    from hierattn.ngrams.mixing import combine, ngram_logits

    texts, labels = reviews
    clf = hierattn.TextClassifier("han", embeddings="none", min_count=1, **TINY_OPTIONS["han"])
    with pytest.raises(ValueError, match=r"no n-gram part \(fit or adapt it first\)"):
        clf.fit_ngrams(texts, labels)
    clf.adapt(texts[:100], labels[:100], verbose=0)
    from hierattn.data.ids import take_documents

    ids = clf.preprocessor(texts)
    x, rest = take_documents(ids, slice(0, 100)), take_documents(ids, slice(100, None))
    network = clf.predict_ids(rest, part="network")
    clf.combination.mixing.assign([1.0, 1.0])
    before = clf.predict(texts[100:])  # traced with the empty part: refitting it must not leave that trace in use
    np.testing.assert_allclose(before, network, atol=1e-5)
    clf.fit_ngrams(x, np.eye(2)[clf.label_ids(labels[:100])])  # ids and one-hot labels
    assert set(clf.ngram_report) == {"recipe", "candidates", "train_documents", "training_seconds"}
    np.testing.assert_allclose(np.asarray(clf.combination.mixing), [1.0, 1.0])  # left to tune
    expected = combine(network, ngram_logits(clf.ngram_logits, rest["ngram_ids"]), 1.0, 1.0)
    assert np.abs(expected - network).max() > 0.1
    np.testing.assert_allclose(clf.predict(texts[100:]), expected, atol=1e-5)
    clf.combination.mixing.assign([1.0, 0.0])  # as made: none chosen yet
    assert clf.tune().weights == pytest.approx(NGRAMS["weights"])  # no validation texts: the defaults
    assert clf.ngram_report["network_share"] == pytest.approx(0.35) and "shares" not in clf.ngram_report
    clf.combination.mixing.assign([1.0, 1.0])
    assert clf.tune().weights == (1.0, 1.0)  # no validation texts: the weights chosen before (set by hand) kept

    import tensorflow as tf

    weights = clf.tune(tf.data.Dataset.from_tensor_slices((texts[100:], labels[100:]))).weights
    assert weights == clf.tune((rest, labels[100:])).weights == clf.tune((texts[100:], labels[100:])).weights
    assert clf.ngram_report["network_weight"] == pytest.approx(weights[0]) and len(clf.ngram_report["shares"]) == 21
    np.testing.assert_allclose(np.asarray(clf.combination.mixing), weights)
    assert clf.ngram_report["train_documents"] == 100  # kept from fit_ngrams
    assert clf.tune(([], [])).weights == weights and "shares" not in clf.ngram_report  # kept, none measured

    with pytest.raises(DataError, match="fit_ngrams needs the texts' labels"):
        clf.fit_ngrams(texts[:4], None)
    with pytest.raises(DataError, match=r"fit_ngrams takes texts, or their ids .*\(3-dimensional integers\)"):
        clf.fit_ngrams(x["token_ids"][:4, 0], labels[:4])
    with pytest.raises(DataError, match="fit_ngrams takes the preprocessor's dict of token_ids and ngram_ids"):
        clf.fit_ngrams(x["token_ids"][:4], labels[:4])
    with pytest.raises(DataError, match="4 documents but 3 labels"):
        clf.fit_ngrams(take_documents(x, slice(0, 4)), labels[:3])
    with pytest.raises(DataError, match="labels not seen in training: meh"):
        clf.tune((take_documents(x, slice(0, 2)), ["pos", "meh"]))
    plain = hierattn.TextClassifier("han", embeddings="none", min_count=1, ngrams=False, **TINY_OPTIONS["han"])
    with pytest.raises(ValueError, match="fit or adapt it first"):
        plain.tune()


def test_each_argument_is_refused_when_the_classifier_is_constructed():
    # Before any data is read or any network built: the classifier's own arguments, its preprocessor's and its
    # backbone's (hierattn.models.arguments).
    for arguments, message in [
        ({"embedding_dim": 0}, "embedding_dim must be a whole number of at least 1, not 0"),
        ({"max_words": 0}, "max_words must be a whole number of at least 1, or None, not 0"),
        ({"sequence_length": 40}, "sequence_length applies to the transformer and rnn model(s), not to han"),
        ({"pretrain_epochs": 0}, "pretrain_epochs must be a whole number of at least 1, not 0"),
        ({"ngrams": "yes"}, "ngrams must be True or False, not 'yes'"),
        ({"seed": 1.5}, "seed must be a whole number of at least 0, not 1.5"),
        ({"embeddings": "glove.txt"}, "embeddings must be 'word2vec', 'none' or the path of a word-vector file"),
    ]:
        with pytest.raises(ValueError, match=re.escape(message)):
            hierattn.TextClassifier("han", **arguments)


@pytest.mark.usefixtures("eager")
def test_integer_labels_are_class_ids_or_the_integer_class_names(fitted, reviews):
    texts, labels = reviews
    by_name = fitted.evaluate(texts[:40], labels[:40], verbose=0, return_dict=True)
    ids = [fitted.label_names.index(label) for label in labels[:40]]  # Keras's labels: class indices
    assert fitted.evaluate(texts[:40], ids, verbose=0, return_dict=True) == pytest.approx(by_name)
    assert fitted.evaluate(texts[:40], np.array(ids), verbose=0, return_dict=True) == pytest.approx(by_name)
    with pytest.raises(DataError, match=r"integer labels are class ids, 0 to 1 for the classes neg, pos; got 2"):
        fitted.evaluate(texts[:3], [0, 1, 2], verbose=0)

    stars = [5 if label == "pos" else (2 if i % 5 == 0 else 1) for i, label in enumerate(labels)]
    clf = hierattn.TextClassifier("han", embeddings="none", min_count=1, **TINY_OPTIONS["han"])
    clf.fit(texts[:96], stars[:96], validation_data=(texts[96:], stars[96:]), epochs=1, verbose=0)
    assert clf.label_names == [1, 2, 5]  # fitted on integers: integers are the class names
    by_star = clf.evaluate(texts[:40], stars[:40], verbose=0, return_dict=True)
    one_hot = np.eye(3)[[clf.label_names.index(star) for star in stars[:40]]]
    assert clf.evaluate(texts[:40], one_hot, verbose=0, return_dict=True) == pytest.approx(by_star)
    assert clf.evaluate(texts[:40], pd.Series(stars[:40]), verbose=0, return_dict=True) == pytest.approx(by_star)
    assert clf.tune((texts[96:], stars[96:])) == clf.tune((texts[96:], np.eye(3)[clf.label_ids(stars[96:])]))
    with pytest.raises(DataError, match=r"labels not seen in training: 0 \(known: 1, 2, 5\)"):
        clf.evaluate(texts[:2], [0, 5], verbose=0)


@pytest.mark.usefixtures("eager")
def test_a_further_fit_keeps_the_recipe_and_weights_chosen_unless_it_has_validation_data(
    reviews, tmp_path, capsys, caplog
):
    import logging

    from hierattn.defaults import NGRAMS

    texts, labels = reviews
    clf = hierattn.TextClassifier("han", embeddings="none", min_count=1, **TINY_OPTIONS["han"])
    clf.fit(texts[:96], labels[:96], validation_split=0.25, epochs=1, verbose=0)
    weights, recipe = np.asarray(clf.combination.mixing).tolist(), clf.ngram_report["recipe"]
    assert weights != pytest.approx(NGRAMS["weights"])  # chosen, not the defaults a fit without validation takes
    kernel = np.asarray(clf.ngram_logits.kernel)

    clf.fit(texts[96:], labels[96:], epochs=1, verbose=0)
    assert np.asarray(clf.combination.mixing).tolist() == weights
    assert clf.ngram_report["recipe"] == recipe and clf.ngram_report["train_documents"] == len(texts[96:])
    assert clf.ngram_report["network_weight"] == pytest.approx(weights[0]) and "shares" not in clf.ngram_report
    assert np.asarray(clf.ngram_logits.kernel).shape != kernel.shape or not np.array_equal(
        np.asarray(clf.ngram_logits.kernel), kernel
    )  # the part is fitted again, to the new texts

    clf.save(tmp_path / "c.keras")
    loaded = keras.saving.load_model(tmp_path / "c.keras")  # the choice is saved with the classifier
    assert loaded.ngram_report["recipe"] == recipe
    loaded.fit(texts[:64], labels[:64], epochs=1, verbose=0)
    assert np.asarray(loaded.combination.mixing).tolist() == weights and loaded.ngram_report["recipe"] == recipe

    nb = {"weighting": "nb", "ngram_max": 3, "C": 1.0, "class_weight": None}
    loaded.ngram_report["recipe"] = nb  # whatever was chosen before is fitted again, not the fallback
    loaded.fit_ngrams(texts[:64], labels[:64])
    assert loaded.ngram_report["recipe"] == nb and (loaded.ngram_logits.tf, loaded.ngram_logits.ngram_max) == (
        "binary",
        3,
    )
    capsys.readouterr()
    caplog.set_level(logging.DEBUG, logger="hierattn")
    loaded.fit(texts[:96], labels[:96], validation_split=0.25, epochs=1, verbose=1)  # with validation: chosen again
    candidates = loaded.ngram_report["candidates"]
    assert len(loaded.ngram_report["shares"]) == 21 and len(candidates) >= 5
    output = capsys.readouterr()
    printed = [line for line in output.out.splitlines() if "gram" in line]
    assert len(printed) == 1 and printed[0].startswith("n-gram part: "), printed  # one line, recipe and weights
    assert any(line.startswith("cascade: the network reads ") for line in output.out.splitlines())  # one on the cut
    assert "chosen on validation" in printed[0] and "(network) / " in printed[0]
    assert all("|" in line for line in output.err.splitlines() if "gram" in line)  # only its progress bar
    records = [r for r in caplog.records if r.name.startswith("hierattn")]
    logged = [r.getMessage() for r in records if r.levelno == logging.DEBUG and r.name == "hierattn.ngrams.recipes"]
    assert len(logged) == len(records) == len(candidates)
    assert logged[0].startswith(f"n-gram recipe {candidates[0]['weighting']} 1-{candidates[0]['ngram_max']} C=")


def test_save_refuses_a_path_keras_cannot_load_back_from_before_writing(fitted, tmp_path):
    for name in ("model.h5", "model.HDF5"):
        with pytest.raises(ValueError, match=rf"use a path ending in \.keras\. Received: filepath=.*{name}$"):
            fitted.save(tmp_path / name)
    with pytest.raises(ValueError, match="Invalid filepath extension for saving"):  # Keras's own refusal
        fitted.save(tmp_path / "model.txt")
    assert list(tmp_path.iterdir()) == []


# Multi-label ---------------------------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def topics():
    from conftest import make_topics

    return make_topics(160)


@pytest.mark.parametrize("model", ["han", "transformer", "rnn"])
@pytest.mark.usefixtures("eager")
def test_multilabel_classifiers_of_every_backbone_fit_predict_save_and_load(tmp_path, topics, model):
    texts, labels = topics
    clf = hierattn.TextClassifier(model, multi_label=True, embeddings="none", min_count=1, **TINY_OPTIONS[model])
    clf.fit(texts[:140], labels[:140], validation_split=0.2, epochs=2, verbose=0)
    assert clf.label_names == ["food", "money", "sport"]
    assert clf.backbone.get_layer("probabilities").activation.__name__ == "sigmoid"
    assert clf.combination.activation == "sigmoid" and len(clf.thresholds) == 3
    probabilities = clf.predict(texts[140:], verbose=0)
    assert probabilities.shape == (20, 3) and np.all((probabilities >= 0) & (probabilities <= 1))
    predicted = clf.predict_labels(texts[140:])
    expected = [[n for n, p, t in zip(clf.label_names, row, clf.thresholds) if p > t] for row in probabilities]
    assert predicted == expected
    # the n-gram part reads the topic words: most label sets come out right after two epochs
    assert np.mean([set(p) == set(t) for p, t in zip(predicted, labels[140:])]) >= 0.8
    clf.save(tmp_path / "m.keras")
    loaded = keras.saving.load_model(tmp_path / "m.keras")
    assert loaded.multi_label and loaded.thresholds == clf.thresholds
    np.testing.assert_allclose(loaded.predict(texts[140:], verbose=0), probabilities, atol=1e-6)


@pytest.mark.usefixtures("eager")
def test_multilabel_labels_as_multi_hot_rows_train_the_same_classifier(topics):
    texts, labels = topics
    names = ["food", "money", "sport"]
    rows = np.array([[int(n in chosen) for n in names] for chosen in labels])
    made = []
    for y in (labels, rows):
        clf = hierattn.TextClassifier("han", multi_label=True, label_names=names, embeddings="none", min_count=1)
        clf.fit(texts[:120], y[:120], validation_split=0.2, epochs=1, verbose=0, batch_size=16)
        made.append(clf.predict(texts[120:], verbose=0))
        result = clf.evaluate(texts[120:], y[120:], verbose=0, return_dict=True)
        assert set(result) >= {"loss", "micro_f1"}
    np.testing.assert_allclose(made[0], made[1], atol=1e-6)


def test_multilabel_refuses_joined_label_strings_and_mismatched_backbones(topics):
    texts, _ = topics
    clf = hierattn.TextClassifier("han", multi_label=True, embeddings="none", min_count=1)
    with pytest.raises(DataError, match=r"labels as a list.*split joined label names"):
        clf.fit(texts[:4], ["sport|food", "money", "", "food"], epochs=1, verbose=0)
    backbone = hierattn.models.HANBackbone(50, 3, embedding_dim=8, activation="sigmoid")
    with pytest.raises(ValueError, match="give multi_label=True"):
        hierattn.TextClassifier(backbone)
    with pytest.raises(ValueError, match="activation must be one of"):
        hierattn.models.HANBackbone(50, 3, activation="relu")
    with pytest.raises(ValueError, match="multi_label must be True or False"):
        hierattn.TextClassifier("han", multi_label="yes")


@pytest.mark.usefixtures("eager")
def test_multilabel_thresholds_without_validation_texts(topics):
    texts, labels = topics
    clf = hierattn.TextClassifier("han", multi_label=True, embeddings="none", min_count=1, **TINY_OPTIONS["han"])
    clf.fit(texts[:100], labels[:100], epochs=1, verbose=0)
    assert clf.thresholds == [0.5, 0.5, 0.5] and "default" in clf.threshold_report["how"]
    chosen = list(clf.tune((texts[100:], labels[100:])).thresholds)
    assert chosen == clf.thresholds and "chosen on 60 validation documents" in clf.threshold_report["how"]
    clf.fit(texts[:100], labels[:100], epochs=1, verbose=0)  # no validation texts: the chosen ones are kept
    assert clf.thresholds == chosen and "kept" in clf.threshold_report["how"]


def test_single_label_classifiers_have_no_thresholds_and_rank_the_top_k(fitted, reviews):
    texts, _ = reviews
    assert not fitted.multi_label and fitted.thresholds is None
    assert "multi_label" not in fitted.get_config() and "thresholds" not in fitted.get_config()["policy"]
    top = fitted.predict_top_k(texts[:3], 2)
    probabilities = fitted.predict(texts[:3], verbose=0)
    for row, p in zip(top, probabilities):
        assert [name for name, _ in row] == [fitted.label_names[i] for i in np.argsort(-p)]
        np.testing.assert_allclose([q for _, q in row], np.sort(p)[::-1], rtol=1e-6)
    assert len(fitted.predict_top_k(texts[:1], 5)[0]) == 2
    with pytest.raises(ValueError, match="k must be"):
        fitted.predict_top_k(texts[:1], 0)
