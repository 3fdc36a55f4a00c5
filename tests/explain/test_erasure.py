"""Tests for hierattn.explain.erasure: erasing an explanation's words from its text, and the drop it causes."""

import doctest

import numpy as np
import pytest

import hierattn.explain.erasure
from hierattn.explain.erasure import Document, bin_sizes, erasure_scores


def test_bin_sizes_are_ceilings_of_at_least_one_word_capped_at_the_length():
    assert bin_sizes(3) == [1, 1, 1, 1, 2]  # a short text repeats k's: each bin still counts
    assert bin_sizes(1) == [1, 1, 1, 1, 1]
    assert bin_sizes(30) == [1, 2, 3, 6, 15]  # 0.1 * 30 is 3.0000000000000004 in floating point: still 3
    assert bin_sizes(1000) == [10, 50, 100, 200, 500]
    assert bin_sizes(7, (0.99, 1.0)) == [7, 7]


def test_document_erases_the_shown_words_keeping_sentences_and_order():
    # "more" is beyond what the explanation shows: never ranked, kept by erasing, gone when only the top words stay.
    document = Document([["a", "great", "film"], ["loved", "it"], ["more"]], [(0, 0), (0, 1), (0, 2), (1, 0), (1, 1)])
    assert document.erase([]) == [["a", "great", "film"], ["loved", "it"], ["more"]]
    assert document.erase([3, 4, 0]) == [["great", "film"], ["more"]]  # a sentence left empty is dropped
    assert document.erase([4, 1], keep=True) == [["great"], ["it"]]  # in text order, whatever the rank order
    assert document.erase(range(5), keep=True) == [["a", "great", "film"], ["loved", "it"]]


def decisive(documents):
    """A hand-made classifier: P(pos) = 0.9 when the document holds "great", else 0.3."""
    p = np.array([0.9 if any("great" in sentence for sentence in d) else 0.3 for d in documents])
    return np.stack([1 - p, p], 1)


def four_word_documents():
    forms = [["great", "b", "c", "d"], ["b", "great", "c", "d"], ["b", "c", "d", "great"]]
    documents = [Document([f], [(0, t) for t in range(4)]) for f in forms]
    at = [f.index("great") for f in forms]
    oracle = [[[a] + [t for t in range(4) if t != a]] for a in at]  # the decisive word first
    wrong = [[[t for t in range(4) if t != a] + [a]] for a in at]  # the decisive word last
    return documents, oracle, wrong


def test_erasure_scores_known_answer_of_a_one_word_classifier():
    documents, oracle, wrong = four_word_documents()
    scores, base = erasure_scores(decisive, documents, {"oracle": oracle, "wrong": wrong}, bins=(0.25, 0.5, 1.0))
    np.testing.assert_allclose(base[:, 1], 0.9)  # k = 1, 2, 4 below
    np.testing.assert_allclose(scores["oracle"]["comprehensiveness"], 0.6)  # without "great": 0.3
    np.testing.assert_allclose(scores["oracle"]["sufficiency"], 0.0)  # "great" alone keeps 0.9
    np.testing.assert_allclose(scores["wrong"]["comprehensiveness"], [[0.0, 0.0, 0.6]] * 3)
    np.testing.assert_allclose(scores["wrong"]["sufficiency"], [[0.6, 0.6, 0.0]] * 3)  # all the words: no drop


def test_erasure_scores_averages_random_draws_and_predicts_each_erasure_once():
    # One random word of four deleted hits "great" with probability 1/4: the mean drop tends to 0.6 / 4.
    rng = np.random.default_rng(0)
    document = Document([["b", "great", "c", "d"]], [(0, t) for t in range(4)])
    draws = [[rng.permutation(4) for _ in range(5)] for _ in range(300)]
    scores, _ = erasure_scores(decisive, [document] * 300, {"random": draws}, bins=(0.25,))
    assert scores["random"]["comprehensiveness"].mean() == pytest.approx(0.15, abs=0.03)
    rows = []
    three = Document([["a", "great", "film"]], [(0, 0), (0, 1), (0, 2)])
    erasure_scores(lambda d: rows.extend(d) or decisive(d), [three], {"x": [[[1, 0, 2]]], "y": [[[1, 2, 0]]]})
    # base, then k = 1 and 2 (BINS give 1, 1, 1, 1, 2) erased and kept; y's top 1 is x's: predicted once.
    assert len(rows) == 1 + 2 + 2 + 1 + 1


def test_the_examples_run():
    assert doctest.testmod(hierattn.explain.erasure).failed == 0
