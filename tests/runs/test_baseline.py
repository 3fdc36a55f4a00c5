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
    result = run_baseline(["ab", "cd", "ef", "gh"], [0, 1, 0, 1], ["a", "b"], {"validation": (["ab"], [0])})
    assert "skipped" in result and "validation" not in result


def test_the_better_of_word_and_character_ngrams_on_validation_is_reported():
    # Chinese reviews: a "word" is a whole clause, so only characters tell the classes apart.
    good, bad = (
        ["送餐很快味道不错", "很好吃下次再来", "味道很好服务热情"],
        ["等了两个小时饭都凉了", "太难吃了再也不来", "送餐太慢味道一般"],
    )
    texts = [good[i % 3] + good[(i + 1) % 3] + f"{i}号" for i in range(40)]  # one unique "word" each
    texts += [bad[i % 3] + bad[(i + 1) % 3] + f"{i}号" for i in range(40)]
    ids = np.array([1] * 40 + [0] * 40)
    order = np.random.default_rng(0).permutation(80)
    texts, ids = [texts[i] for i in order], ids[order]
    result = run_baseline(texts[:60], ids[:60], ["neg", "pos"], {"validation": (texts[60:], ids[60:])})
    assert result["features"] == "characters" and result["model"].startswith("TF-IDF+LR: TF-IDF of character 1-3")
    assert result["validation"]["accuracy"] == 1.0 and set(result["candidates"]) == {"words", "characters"}
    english = run_baseline(*_english(), ["neg", "pos"], {"validation": _english(150, 200)})
    assert set(english["candidates"]) == {"words", "characters"} and english["validation"]["accuracy"] >= 0.9


def _english(start=0, stop=150):
    texts, labels = make_reviews(200)
    return texts[start:stop], np.array([["neg", "pos"].index(label) for label in labels[start:stop]])
