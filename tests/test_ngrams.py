"""Tests for hierattn.ngrams: the n-gram part fitted with scikit-learn, and the combination's weights."""

import numpy as np
import pytest

from hierattn.layers import NgramLogits
from hierattn.ngrams import (
    SCALES,
    SHARES,
    choose_mixing,
    combine,
    feature_matrix,
    fit_ngram_logits,
    mixing_on_validation,
    ngram_logits,
    ngram_probabilities,
)

from layer_checks import full_table_outputs


def corpus(rng, n=120, classes=2):
    """Id documents whose class shows in which ids they use (plus noise)."""
    labels = rng.integers(0, classes, size=n)
    ids = rng.integers(1, 30, size=(n, 12))
    ids[:, :3] = 30 + labels[:, None] * 3 + rng.integers(0, 3, size=(n, 3))
    ids[:, 10:] = 0
    return ids, labels


@pytest.mark.parametrize("classes", [2, 3])
def test_layer_gives_sklearns_probabilities(rng, classes):
    from sklearn.feature_extraction.text import TfidfTransformer
    from sklearn.linear_model import LogisticRegression

    ids, labels = corpus(rng, classes=classes)
    layer = fit_ngram_logits(NgramLogits(40, classes, ngram_max=2, num_buckets=400), ids, labels, c=3.0)
    features = feature_matrix(layer, ids)
    tfidf = TfidfTransformer().fit(features)
    seen = np.unique(features.indices)
    model = LogisticRegression(C=3.0, max_iter=2000).fit(tfidf.transform(features)[:, seen], labels)
    expected = model.predict_proba(tfidf.transform(features)[:, seen])
    got = combine(np.full((len(ids), classes), 1.0 / classes), ngram_logits(layer, ids), 0.0, 1.0)
    np.testing.assert_allclose(got, expected, atol=1e-4)
    if classes == 2:  # the binary weight vector split symmetrically between the two classes
        np.testing.assert_allclose(np.asarray(layer.kernel)[:, 0], -np.asarray(layer.kernel)[:, 1])


@pytest.mark.parametrize("classes", [2, 3])
def test_layer_keeps_the_training_features_and_gives_the_full_tables_outputs(rng, classes):
    from sklearn.feature_extraction.text import TfidfTransformer
    from sklearn.linear_model import LogisticRegression

    ids, labels = corpus(rng, classes=classes)
    layer = fit_ngram_logits(NgramLogits(40, classes, ngram_max=2, num_buckets=400), ids, labels, c=3.0)
    features = feature_matrix(layer, ids)
    seen = np.unique(features.indices)
    assert layer.num_kept == len(seen) < 400
    np.testing.assert_array_equal(np.asarray(layer.kept_ids), seen)
    # The same scikit-learn fit into tables of every bucket, as the layer held them before.
    tfidf = TfidfTransformer().fit(features)
    model = LogisticRegression(C=3.0, max_iter=2000).fit(tfidf.transform(features)[:, seen], labels)
    coefficients = np.stack([-model.coef_[0] / 2, model.coef_[0] / 2]) if classes == 2 else model.coef_
    intercepts = np.array([-model.intercept_[0] / 2, model.intercept_[0] / 2]) if classes == 2 else model.intercept_
    kernel = np.zeros((400, classes), np.float32)
    kernel[seen] = coefficients.T
    full = (tfidf.idf_.astype(np.float32), kernel, intercepts.astype(np.float32))
    texts = rng.integers(1, 40, size=(30, 12))  # id 39 and most word pairs are in no training document
    texts[:5, 8:] = 0
    _, feature_ids, contributions = (np.asarray(v) for v in layer(texts, return_contributions=True))
    assert np.any(~np.isin(feature_ids, seen) & (feature_ids >= 0))
    expected_logits, expected_contributions = full_table_outputs(layer, texts, *full)
    np.testing.assert_array_equal(ngram_logits(layer, texts), expected_logits)
    np.testing.assert_array_equal(contributions, expected_contributions)


def test_refuses_one_class(rng):
    ids, _ = corpus(rng)
    with pytest.raises(ValueError, match="two or more classes"):
        fit_ngram_logits(NgramLogits(40, 2, num_buckets=400), ids, np.zeros(len(ids), int))


def test_choose_mixing_picks_the_smallest_log_loss(rng):
    labels = rng.integers(0, 2, size=200)
    good = np.where(labels[:, None] == np.arange(2), 0.9, 0.1)  # a confident, right network
    noise = rng.normal(size=(200, 2))  # a useless n-gram part
    (a, b), table = choose_mixing(good, noise, labels)
    assert (a, b) == (max(SCALES), 0.0)  # the noise gets no weight; an always-right network is sharpened
    assert [row["share"] for row in table] == list(SHARES)
    (a, b), _ = choose_mixing(np.full((200, 2), 0.5), 4.0 * (good - 0.5), labels)
    assert a < 0.5 * (a + b)


def test_choose_mixing_finds_the_scale_of_under_confident_parts(rng):
    # Two parts that are right 80% of the time each, independently, with
    # small scores: the best log-loss needs a + b > 1, which a + b = 1 missed.
    labels = rng.integers(0, 3, size=600)
    onehot = labels[:, None] == np.arange(3)

    def part(seed):
        right = np.random.default_rng(seed).random(600) < 0.8
        wrong = np.eye(3, dtype=bool)[(labels + 1) % 3]
        return 0.5 * np.where(right[:, None], onehot, wrong)

    network = np.exp(part(1)) / np.exp(part(1)).sum(axis=1, keepdims=True)
    (a, b), table = choose_mixing(network, part(2), labels)
    assert a + b > 1.0 and a > 0.0 and b > 0.0  # both parts used, at a larger scale
    assert all(row["scale"] in SCALES for row in table)
    best = min(table, key=lambda row: row["log_loss"])
    at_one = combine(network, part(2), best["share"], 1 - best["share"])
    at_one_loss = -np.log(at_one[np.arange(600), labels]).mean()
    assert best["log_loss"] < at_one_loss


def test_mixing_on_validation_reports_the_choice_and_each_parts_accuracy(rng):
    ids, labels = corpus(rng)
    layer = fit_ngram_logits(NgramLogits(40, 2, ngram_max=2, num_buckets=400), ids[:80], labels[:80], c=3.0)
    probabilities = ngram_probabilities(layer, ids[80:])
    logits = ngram_logits(layer, ids[80:])
    np.testing.assert_allclose(probabilities, np.exp(logits) / np.exp(logits).sum(1, keepdims=True), rtol=1e-6)
    network = np.where(labels[80:, None] == np.arange(2), 0.3, 0.7)  # always wrong
    (a, b), report = mixing_on_validation(network, logits, labels[80:])
    assert (a, b) == choose_mixing(network, logits, labels[80:])[0] and a < b
    assert report["shares"] == choose_mixing(network, logits, labels[80:])[1]
    assert report["validation_accuracy"]["network"] == 0.0
    assert report["validation_accuracy"]["ngrams"] == float((probabilities.argmax(1) == labels[80:]).mean()) > 0.9
    combined = combine(network, logits, a, b).argmax(1) == labels[80:]
    assert report["validation_accuracy"]["combined"] == float(combined.mean())
