"""Tests for hierattn.classifier.TextClassifier: raw strings in, one .keras file out."""

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
from conftest import TINY_OPTIONS, make_reviews
from hierattn.errors import DataError

ROOT = pathlib.Path(__file__).resolve().parents[1]


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
    assert clf.predict(["The film was great."])[0] in ("neg", "pos")


LOAD_AND_PREDICT = """
import json, sys
import hierattn
classifier = hierattn.load_classifier(sys.argv[1])  # registers hierattn's Keras objects; safe mode on
print(json.dumps(classifier.predict_proba(json.loads(sys.argv[2])).tolist()))
"""


def test_one_file_loads_in_a_fresh_process_with_hierattn_load_classifier(fitted, tmp_path):
    path = tmp_path / "reviews.keras"
    fitted.save(path)
    assert sorted(os.listdir(tmp_path)) == ["reviews.keras"]
    texts = ["The film was great. I found the acting superb!", "awful and boring", "Mr. Smith directed it.", "zzz"]
    result = subprocess.run([sys.executable, "-c", LOAD_AND_PREDICT, str(path), json.dumps(texts)],
                            capture_output=True, text=True, timeout=180, env={**os.environ, "PYTHONPATH": str(ROOT)})
    assert result.returncode == 0, result.stderr[-3000:]
    probabilities = np.array(json.loads(result.stdout.strip().splitlines()[-1]))
    np.testing.assert_allclose(probabilities, fitted.predict_proba(texts), rtol=1e-6, atol=1e-6)


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
    assert fitted.predict(texts[:3]) == [fitted.label_names[i] for i in fitted.predict_proba(texts[:3]).argmax(1)]
    np.testing.assert_allclose(fitted.predict_proba(np.array(texts[:3])), fitted.predict_proba(texts[:3]), atol=1e-6)
    (explanation,) = fitted.explain(["The plot was thin. The acting was superb."])
    assert sum(w.weight for w in explanation.words) == pytest.approx(1.0, abs=1e-5)
    assert explanation.label in ("neg", "pos") and "<!DOCTYPE html>" in explanation._repr_html_()
    metrics = fitted.evaluate(texts[:40], labels[:40], verbose=0)
    assert set(metrics) >= {"loss", "accuracy"} and 0.0 <= metrics["accuracy"] <= 1.0
    with pytest.raises(DataError, match="not a single string"):
        fitted.predict("one text")


@pytest.mark.parametrize("model", ["transformer", "rnn"])
def test_flat_backbones(model, reviews, tmp_path):
    texts, labels = reviews
    clf = hierattn.TextClassifier(model, embeddings="none", min_count=1, sequence_length=12, **TINY_OPTIONS[model])
    history = clf.fit(texts, labels, validation_data=(texts[:20], labels[:20]), epochs=1, batch_size=32, verbose=0)
    assert "val_loss" in history.history
    assert clf.preprocessor.mode == "flat" and clf.preprocessor(texts[:2]).shape == (2, 12)
    clf.save(tmp_path / "m.keras")
    np.testing.assert_allclose(keras.saving.load_model(tmp_path / "m.keras").predict_proba(texts[:4]),
                               clf.predict_proba(texts[:4]), atol=1e-6)


def test_defaults_come_from_one_place_and_wrong_arguments_are_refused():
    from hierattn.defaults import BACKBONES

    clf = hierattn.TextClassifier("transformer")
    assert clf.backbone is None and clf.backbone_options == {} and not clf.adapted
    assert set(BACKBONES["transformer"]) >= {"num_layers", "intermediate_dim", "normalize_first"}
    with pytest.raises(ValueError, match="unknown han argument.*ff_dim"):
        hierattn.TextClassifier("han", ff_dim=8)
    with pytest.raises(ValueError, match="backbone must be one of"):
        hierattn.TextClassifier("bert")
    with pytest.raises(DataError, match="fit takes texts and their labels"):
        hierattn.TextClassifier("han").fit(["a text"])


def test_a_backbone_built_by_hand(reviews):
    texts, labels = reviews
    backbone = hierattn.build_rnn(50, 2, embedding_dim=8, units=4)
    preprocessor = hierattn.TextPreprocessor("flat", min_count=1, max_vocab=48, sequence_length=10)
    clf = hierattn.TextClassifier(backbone, preprocessor=preprocessor, embeddings="none")
    clf.fit(texts, labels, epochs=1, verbose=0)
    assert clf.backbone is backbone and clf.label_names == ["neg", "pos"]


@pytest.mark.parametrize("model", ["han", "transformer", "rnn"])
def test_mixed_precision_is_correct_on_cpu(reviews, tmp_path, model):
    from hierattn.models import attention_outputs

    texts, labels = reviews
    before = keras.config.dtype_policy().name
    clf = hierattn.TextClassifier(model, embeddings="none", min_count=1, dtype="mixed_float16", **TINY_OPTIONS[model])
    history = clf.fit(texts, labels, epochs=2, batch_size=16, validation_split=0.2, verbose=0)
    assert keras.config.dtype_policy().name == before  # the process-wide policy is untouched
    assert isinstance(clf.optimizer, keras.optimizers.LossScaleOptimizer)
    assert np.all(np.isfinite(history.history["loss"] + history.history["val_loss"]))
    probabilities = clf.predict_proba(texts[:8] + ["Dull."])
    assert probabilities.dtype == np.float32
    np.testing.assert_allclose(probabilities.sum(axis=1), 1.0, atol=1e-6)

    ids = clf.preprocessor(["The film was great. I found the acting superb! Mr. Smith directed it.", "Dull."])
    outputs = attention_outputs(clf.backbone)(ids)
    weights = [np.asarray(outputs[name]) for name in outputs if name != "probabilities"]
    assert weights and all(w.dtype == np.float16 for w in weights)
    word_mask = ids != 0
    for w in weights:
        mask = word_mask if w.shape == word_mask.shape else word_mask.any(axis=-1)
        assert np.all(w[~mask] == 0)  # exactly zero on padding
        np.testing.assert_allclose(w.astype(np.float32).sum(axis=-1)[mask.any(axis=-1)], 1.0, atol=2e-3)

    clf.save(tmp_path / "mixed.keras")
    loaded = keras.saving.load_model(tmp_path / "mixed.keras")
    assert loaded.backbone.get_layer("embedding").dtype_policy.name == "mixed_float16"
    assert loaded.backbone.get_layer("probabilities").dtype_policy.name == "float32"
    np.testing.assert_allclose(loaded.predict_proba(texts[:8]), probabilities[:8], atol=1e-6)


def test_the_ngram_part_is_fitted_after_the_network_and_saved_with_it(fitted, reviews, tmp_path):
    texts, labels = reviews
    report = fitted.ngram_report
    a, b = (float(v) for v in np.asarray(fitted.combination.mixing))
    assert (a, b) == pytest.approx((report["network_weight"], report["ngram_weight"]))
    assert report["network_share"] == pytest.approx(a / (a + b)) and len(report["shares"]) == 21
    assert set(report["validation_accuracy"]) == {"network", "ngrams", "combined"}
    assert np.abs(np.asarray(fitted.ngram_logits.kernel)).sum() > 0
    x = fitted.preprocessor(texts[:20])
    from hierattn.ngrams import combine, ngram_logits

    expected = combine(fitted.predict_ids(x, part="network"), ngram_logits(fitted.ngram_logits, x), a, b)
    np.testing.assert_allclose(fitted.predict_ids(x), expected, atol=1e-5)
    fitted.save(tmp_path / "c.keras")
    loaded = keras.saving.load_model(tmp_path / "c.keras")
    np.testing.assert_allclose(np.asarray(loaded.combination.mixing), [a, b])
    np.testing.assert_array_equal(np.asarray(loaded.ngram_logits.kernel), np.asarray(fitted.ngram_logits.kernel))


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
    np.testing.assert_allclose(clf.predict_proba(texts[:5]), clf.predict_ids(x, part="network"))
    with pytest.raises(ValueError, match="no n-gram part"):
        clf.predict_ids(x, part="ngrams")
    with pytest.raises(ValueError, match="part must be None, 'network' or 'ngrams'"):
        clf.predict_ids(x, part="attention")
