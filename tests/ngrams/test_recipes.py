"""Tests for hierattn.ngrams.recipes: the n-gram part's recipes, fitted with scikit-learn, chosen on validation."""

import logging
import os
import pathlib
import subprocess
import sys

import numpy as np
import pytest

from hierattn.errors import DataError
from hierattn.ngrams.logits import NgramLogits
from hierattn.ngrams.mixing import ngram_logits
from hierattn.ngrams.recipes import count_matrices, fit_recipes

VOCABULARY, BUCKETS = 40, 4000
ROOT = pathlib.Path(__file__).resolve().parents[2]


def make_layer(ngram_max, tf, normalize, classes=2):
    return NgramLogits(VOCABULARY, classes, ngram_max, BUCKETS, tf=tf, normalize=normalize)


def corpus(rng, n=160, classes=2, length=14):
    """Id documents whose class shows in which ids they use (plus noise), with repeated words."""
    labels = rng.integers(0, classes, size=n)
    ids = rng.integers(1, 30, size=(n, length))
    ids[:, :3] = 30 + labels[:, None] * 3 + rng.integers(0, 3, size=(n, 3))
    ids[:, 3] = ids[:, 0]  # a word twice: counts matter for sublinear tf
    ids[:, length - 3 :] = 0
    return ids, labels


def reference_counts(layer, ids, ngram_max):
    """Each document's n-gram counts, from the layer's per-order feature ids, counted in plain Python."""
    ids = np.asarray(ids)
    rows = []
    for doc in ids.reshape(len(ids), -1, ids.shape[-1]):
        counts = {}
        for features in layer.ngram_features(doc)[:ngram_max]:
            for f in np.asarray(features).ravel():
                if f >= 0:
                    counts[int(f)] = counts.get(int(f), 0) + 1
        rows.append(counts)
    return rows


@pytest.mark.parametrize("shape", [(20, 9), (20, 3, 4)])
def test_count_matrices_count_every_ngram_of_each_document(rng, shape):
    ids = rng.integers(0, 8, size=shape)
    layer = make_layer(3, "binary", True)
    matrices = count_matrices(layer, ids, (2, 3), batch_size=7)
    for n in (2, 3):
        expected = reference_counts(layer, ids, n)
        for row, counts in enumerate(expected):
            got = matrices[n][row]
            assert dict(zip(got.indices.tolist(), got.data.astype(int).tolist())) == counts


@pytest.mark.parametrize("classes", [2, 3])
def test_a_tfidf_recipe_gives_scikit_learns_probabilities(rng, classes):
    from sklearn.feature_extraction.text import TfidfTransformer
    from sklearn.linear_model import LogisticRegression

    ids, labels = corpus(rng, classes=classes)
    recipe = {"weighting": "tfidf", "ngram_max": 3, "C": (3.0,), "class_weights": (None,)}
    layer, report = fit_recipes(
        lambda n, tf, norm: make_layer(n, tf, norm, classes),
        ids[:120],
        labels[:120],
        (ids[120:], labels[120:]),
        [recipe],
    )
    assert (layer.ngram_max, layer.tf, layer.normalize) == (3, "sublinear", True)
    counts = count_matrices(layer, ids, (3,))[3]
    df = np.bincount(counts[:120].indices, minlength=BUCKETS)
    kept = np.flatnonzero(df >= 2)
    np.testing.assert_array_equal(np.asarray(layer.kept_ids), kept)
    tfidf = TfidfTransformer(sublinear_tf=True).fit(counts[:120][:, kept])
    model = LogisticRegression(C=3.0, max_iter=2000).fit(tfidf.transform(counts[:120][:, kept]), labels[:120])
    expected = model.predict_proba(tfidf.transform(counts[120:][:, kept]))
    logits = ngram_logits(layer, ids[120:])
    got = np.exp(logits) / np.exp(logits).sum(1, keepdims=True)
    np.testing.assert_allclose(got, expected, atol=1e-4)
    assert report["recipe"] == {"weighting": "tfidf", "ngram_max": 3, "C": 3.0, "class_weight": None}
    assert report["candidates"][0]["val_accuracy"] == float((logits.argmax(1) == labels[120:]).mean())


@pytest.mark.parametrize("classes", [2, 3])
def test_an_nb_recipe_folds_the_ratios_into_the_kernel(rng, classes):
    from sklearn.linear_model import LogisticRegression

    ids, labels = corpus(rng, classes=classes)
    recipe = {"weighting": "nb", "ngram_max": 2, "C": (1.0,), "class_weights": (None,)}
    layer, _ = fit_recipes(
        lambda n, tf, norm: make_layer(n, tf, norm, classes), ids[:120], labels[:120], None, [recipe]
    )
    assert (layer.tf, layer.normalize) == ("binary", False)
    binary = count_matrices(layer, ids, (2,))[2]
    binary.data[:] = 1
    kept = np.asarray(layer.kept_ids)
    train, test = binary[:120][:, kept], binary[120:][:, kept]
    scores = []
    for label in [1] if classes == 2 else range(classes):  # Wang & Manning: LR on x * r, one per class
        positive = labels[:120] == label
        p = 1 + np.asarray(train[positive].sum(0)).ravel()
        q = 1 + np.asarray(train[~positive].sum(0)).ravel()
        r = np.log((p / p.sum()) / (q / q.sum()))
        model = LogisticRegression(C=1.0, solver="liblinear").fit(train.multiply(r).tocsr(), positive)
        scores.append(model.decision_function(test.multiply(r).tocsr()))
    logits = ngram_logits(layer, ids[120:])
    if classes == 2:
        np.testing.assert_allclose(logits[:, 1] - logits[:, 0], scores[0], atol=1e-4)
    else:
        np.testing.assert_allclose(logits, np.stack(scores, axis=1), atol=1e-4)


def test_the_best_candidate_on_validation_is_kept_and_every_one_recorded(rng):
    ids, labels = corpus(rng)
    layer, report = fit_recipes(make_layer, ids[:120], labels[:120], (ids[120:], labels[120:]))
    candidates = report["candidates"]
    assert len(candidates) == 5  # balanced classes: tfidf 1-2 and 1-3 at two C each, nb 1-3 at one
    best = min(candidates, key=lambda row: row["val_log_loss"])
    assert report["recipe"] == {k: best[k] for k in ("weighting", "ngram_max", "C", "class_weight")}
    assert layer.ngram_max == best["ngram_max"]
    assert all(0.0 <= row["val_macro_f1"] <= 1.0 and row["features"] > 0 for row in candidates)


def test_balanced_class_weights_are_tried_for_imbalanced_classes_only(rng):
    ids, _ = corpus(rng)
    labels = (np.arange(len(ids)) % 5 == 0).astype(int)  # 4 to 1
    ids[:, :3] = 30 + labels[:, None] * 3
    recipe = {"weighting": "tfidf", "ngram_max": 2, "C": (10.0,)}
    _, report = fit_recipes(make_layer, ids[:120], labels[:120], (ids[120:], labels[120:]), [recipe])
    assert [row["class_weight"] for row in report["candidates"]] == [None, "balanced"]


def test_without_validation_texts_the_fallback_recipe_is_fitted(rng):
    ids, labels = corpus(rng)
    layer, report = fit_recipes(make_layer, ids, labels)
    assert report["recipe"] == {"weighting": "tfidf", "ngram_max": 2, "C": 30.0, "class_weight": None}
    assert len(report["candidates"]) == 1 and "val_log_loss" not in report["candidates"][0]
    assert layer.num_kept > 0 and float(np.asarray(layer.unseen_idf)) == 0.0


def test_refuses_one_class(rng):
    ids, _ = corpus(rng)
    with pytest.raises(DataError, match="two or more classes"):  # hierattn's error (a ValueError), not a bare one
        fit_recipes(make_layer, ids, np.zeros(len(ids), int))


def test_each_candidate_is_logged_at_debug_level_and_nothing_is_printed(rng, caplog, capsys):
    ids, labels = corpus(rng)
    with caplog.at_level(logging.DEBUG, logger="hierattn"):
        _, report = fit_recipes(make_layer, ids[:120], labels[:120], (ids[120:], labels[120:]))
    records = [r for r in caplog.records if r.name == "hierattn.ngrams.recipes"]
    assert [r.levelno for r in records] == [logging.DEBUG] * len(report["candidates"])
    first = report["candidates"][0]
    assert records[0].getMessage() == (
        f"n-gram recipe tfidf 1-2 C=10: validation accuracy {first['val_accuracy']:.4f}, macro-F1 "
        f"{first['val_macro_f1']:.4f} ({first['features']:,} features, {first['fit_seconds']} s)"
    )
    assert capsys.readouterr() == ("", "")


VERBOSE_PROGRAM = """
import logging, sys
from hierattn.cli import configure_process
configure_process(verbose=sys.argv[1] == "verbose")
logging.getLogger("hierattn.ngrams.recipes").debug("n-gram recipe tfidf 1-2 C=10")
logging.getLogger("hierattn.ngrams.recipes").warning("a warning")
"""


@pytest.mark.parametrize("mode", ["quiet", "verbose"])
def test_the_programs_verbose_flag_shows_the_recipe_lines(mode):
    # `hierattn --verbose` gives the library's logger a handler (configure_process); the library adds none.
    result = subprocess.run(
        [sys.executable, "-c", VERBOSE_PROGRAM, mode],
        capture_output=True,
        text=True,
        timeout=60,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
    )
    assert result.returncode == 0, result.stderr
    assert ("n-gram recipe tfidf 1-2 C=10\n" in result.stderr) == (mode == "verbose"), result.stderr
    assert "a warning" in result.stderr  # Python's own last resort shows warnings either way


def multilabel_corpus(rng, n=160, labels=3, length=14):
    """Id documents whose labels (any subset) show in the ids they use; the last label is never present."""
    y = (rng.random((n, labels)) < 0.4).astype(np.int8)
    y[:, -1] = 0
    ids = rng.integers(1, 30, size=(n, length))
    for label in range(labels):
        ids[:, 3 + label] = np.where(y[:, label] > 0, 30 + label, ids[:, 3 + label])
    ids[:, length - 3 :] = 0
    return ids, y


@pytest.mark.parametrize("weighting", ["tfidf", "nb"])
def test_multilabel_recipes_fit_one_binary_model_per_label(rng, weighting):
    from sklearn.linear_model import LogisticRegression

    ids, y = multilabel_corpus(rng)
    layers = lambda m, tf, normalize: make_layer(m, tf, normalize, classes=3)  # noqa: E731
    recipe = {"weighting": weighting, "ngram_max": 2, "C": (10.0,)}
    layer, report = fit_recipes(layers, ids[:120], y[:120], (ids[120:], y[120:]), [recipe])
    (row,) = report["candidates"]
    assert row["class_weight"] is None and "val_micro_f1" in row and "val_accuracy" not in row
    logits = ngram_logits(layer, ids[120:])
    assert logits.shape == (40, 3)
    # each present label separates its documents; the label no training document has keeps its frequency's log-odds
    assert ((logits[:, :2] > 0) == (y[120:, :2] > 0)).mean() > 0.9
    np.testing.assert_allclose(logits[:, 2], np.log(0.5 / 120.5), rtol=1e-5)
    if weighting == "tfidf":  # a label's column is scikit-learn's binary logistic regression on the same features
        from hierattn.ngrams.recipes import _features

        counts = count_matrices(make_layer(2, "binary", True, 3), ids[:120], (2,))[2]
        df = np.bincount(counts.indices, minlength=counts.shape[1])
        kept = np.flatnonzero(df >= 2)
        idf = (np.log(121.0 / (1.0 + df[kept])) + 1.0).astype(np.float32)
        features = _features(counts[:, kept], recipe, idf)
        model = LogisticRegression(C=10.0, max_iter=2000).fit(features, y[:120, 0])
        test = _features(count_matrices(make_layer(2, "binary", True, 3), ids[120:], (2,))[2][:, kept], recipe, idf)
        np.testing.assert_allclose(logits[:, 0], model.decision_function(test), rtol=1e-3, atol=1e-3)


def test_multilabel_refuses_labels_no_document_has(rng):
    ids, y = multilabel_corpus(rng)
    with pytest.raises(DataError, match="some training documents have and others lack"):
        fit_recipes(make_layer, ids, np.zeros_like(y))


def test_a_multilabel_fit_shows_a_bar_moved_by_each_labels_model(rng, capsys):
    ids, y = multilabel_corpus(rng)
    layers = lambda m, tf, normalize: make_layer(m, tf, normalize, classes=3)  # noqa: E731
    _, report = fit_recipes(layers, ids[:120], y[:120], (ids[120:], y[120:]), progress=True)
    err = capsys.readouterr().err
    # five candidates, two labels fitted each (the third has no training document)
    assert len(report["candidates"]) == 5 and "n-gram part: 100%" in err and "10/10" in err, err
    assert "n-gram part:   0%" in err and "0/10" in err  # shown before the first fit


def test_a_single_label_fit_shows_a_bar_moved_by_each_candidate_and_none_unless_asked(rng, capsys):
    ids, labels = corpus(rng)
    fit_recipes(make_layer, ids[:120], labels[:120], (ids[120:], labels[120:]))
    assert capsys.readouterr().err == ""
    _, report = fit_recipes(make_layer, ids[:120], labels[:120], (ids[120:], labels[120:]), progress=True)
    assert f"{len(report['candidates'])}/{len(report['candidates'])}" in capsys.readouterr().err
