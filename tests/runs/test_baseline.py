"""Tests for hierattn.runs.baseline: the TF-IDF + logistic regression reference of every run."""

import numpy as np

from hierattn.defaults import BASELINE
from hierattn.runs.baseline import make_baseline, run_baseline

from conftest import make_reviews


def test_the_baseline_is_the_devsuite_reference():
    tfidf, regression = (step for _, step in make_baseline().steps)
    assert (tfidf.ngram_range, tfidf.min_df, tfidf.sublinear_tf) == (BASELINE["ngram_range"], BASELINE["min_df"], True)
    assert (regression.C, regression.max_iter) == (BASELINE["C"], BASELINE["max_iter"])


def test_run_baseline_fits_on_the_given_texts_and_scores_each_split():
    texts, labels = make_reviews(200)
    ids = np.array([["neg", "pos"].index(label) for label in labels])
    result = run_baseline(
        texts[:150],
        ids[:150],
        ["neg", "pos"],
        {"validation": (texts[150:170], ids[150:170]), "test": (texts[170:], ids[170:])},
    )
    assert result["train_documents"] == 150 and result["model"].startswith("TF-IDF+LR")
    assert result["validation"]["documents"] == 20 and result["test"]["documents"] == 30
    assert result["test"]["accuracy"] >= 0.9  # the generated corpus is separable by its sentiment words


def test_a_corpus_too_small_for_the_baseline_is_reported_not_raised():
    result = run_baseline(
        ["alpha", "beta", "gamma", "delta"], [0, 1, 0, 1], ["a", "b"], {"validation": (["alpha"], [0])}
    )
    assert "skipped" in result and "validation" not in result
