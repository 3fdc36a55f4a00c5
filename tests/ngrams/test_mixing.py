"""Tests for hierattn.ngrams.mixing: the n-gram part fitted with scikit-learn, and the combination's weights."""

import numpy as np

from hierattn.ngrams.logits import NgramLogits
from hierattn.ngrams.mixing import (
    SCALES,
    SHARES,
    choose_mixing,
    combine,
    log_loss,
    mixing_on_validation,
    ngram_logits,
    ngram_probabilities,
    scored_at_best_scale,
)
from hierattn.ngrams.recipes import fit_recipes


def corpus(rng, n=120, classes=2):
    """Id documents whose class shows in which ids they use (plus noise)."""
    labels = rng.integers(0, classes, size=n)
    ids = rng.integers(1, 30, size=(n, 12))
    ids[:, :3] = 30 + labels[:, None] * 3 + rng.integers(0, 3, size=(n, 3))
    ids[:, 10:] = 0
    return ids, labels


def test_scored_at_best_scale_is_the_best_log_loss_over_the_scales(rng):
    labels = rng.integers(0, 3, size=90)
    logits = 0.3 * (labels[:, None] == np.arange(3)) + 0.1 * rng.normal(size=(90, 3))
    uniform = np.ones_like(logits)
    scores = [log_loss(combine(uniform, logits, 0.0, s), labels) for s in SCALES]
    assert scored_at_best_scale(logits, labels) == min(scores) < scores[0]
    accuracy = lambda p, y: -float((p.argmax(1) == y).mean())  # noqa: E731  any score, lower is better
    assert scored_at_best_scale(logits, labels, accuracy) == accuracy(logits, labels)


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
    layer, _ = fit_recipes(lambda n, tf, norm: NgramLogits(40, 2, n, 400, tf=tf, normalize=norm), ids[:80], labels[:80])
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
