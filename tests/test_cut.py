"""`hierattn.cut`: the cascade's cut, chosen on validation decisions, and what validation can show of it."""

import numpy as np
import pytest
from sklearn.metrics import f1_score

from hierattn.cut import cascade_scores, choose_cut, harm_bound


def test_the_scores_of_every_cascade_are_scikit_learns(rng):
    n = 150
    labels = rng.integers(0, 3, n)
    whole = np.where(rng.random(n) < 0.8, labels, rng.integers(0, 3, n))
    ngrams = np.where(rng.random(n) < 0.6, labels, rng.integers(0, 3, n))
    order = rng.permutation(n)
    scores = cascade_scores(order, whole, ngrams, labels)
    for k in (0, 1, 40, n):
        decided = ngrams.copy()
        decided[order[:k]] = whole[order[:k]]
        assert scores["accuracy"][k] == pytest.approx((decided == labels).mean())
        assert scores["macro_f1"][k] == pytest.approx(f1_score(labels, decided, average="macro", zero_division=0))
    rows = (rng.random((n, 4)) < 0.3).astype(int)
    whole_rows, ngram_rows = (np.where(rng.random((n, 4)) < p, rows, 1 - rows) for p in (0.9, 0.7))
    scores = cascade_scores(order, whole_rows, ngram_rows, rows)
    for k in (0, 77, n):
        decided = ngram_rows.copy()
        decided[order[:k]] = whole_rows[order[:k]]
        assert scores["micro_f1"][k] == pytest.approx(f1_score(rows, decided, average="micro"))


def test_the_cut_is_the_cheapest_from_which_every_costlier_cascade_keeps_the_scores():
    # The n-gram part is wrong on the four least sure documents (margins 0.1 .. 0.4), right on the rest.
    # (z=0: the scores as measured; eight documents could show nothing beyond them: see the next test.)
    margins = np.array([0.1, 0.2, 0.3, 0.4, 1.0, 2.0, 3.0, 4.0])
    labels = np.array([0, 1, 0, 1, 0, 1, 0, 1])
    ngrams = np.where(np.arange(8) < 4, 1 - labels, labels)
    assert choose_cut(margins, labels, ngrams, labels)[0] is None
    cut, report = choose_cut(margins, labels, ngrams, labels, z=0.0)
    assert cut == pytest.approx(0.7)  # between 0.4 and 1.0: the network reads the first four
    assert report["validation_share"] == 0.5
    assert report["validation"]["cascade"] == report["validation"]["whole"] == {"accuracy": 1.0, "macro_f1": 1.0}
    assert report["validation"]["ngrams"]["accuracy"] == 0.5
    # The network on none is as good as on all (each is wrong once), on 2 to 5 worse: that cheap one does not count.
    whole, ngrams = labels.copy(), labels.copy()
    whole[1], ngrams[5] = 1 - labels[1], 1 - labels[5]
    assert choose_cut(margins, whole, ngrams, labels, z=0.0)[0] == pytest.approx(2.5)


def test_the_cut_skips_the_network_only_where_enough_documents_show_it_costs_nothing(rng):
    def case(n):  # the n-gram part and the whole agree beyond the least sure 10%, where the whole is right
        margins = np.arange(n, dtype=float)
        labels = rng.integers(0, 2, n)
        whole, ngrams = labels.copy(), labels.copy()
        ngrams[: n // 10] = 1 - labels[: n // 10]
        return margins, whole, ngrams, labels

    # 500 documents: as measured, a cut after the first 10%; but under 1.645 / 500 cannot be shown: all read
    cut, report = choose_cut(*case(500))
    assert cut is None and report["validation_share"] == 1.0 and report["measured_share"] == 0.1
    # 10,000 documents: 0.05 points is 5 of them. As measured, the n-gram part may decide from the 996th on (4
    # wrong; accuracy and macro-F1 within 0.05 points); bounded, from the 998th (2 wrong: 2 + 1.645 sqrt(3) = 4.85
    # of 5; 3 wrong: 6.29)
    cut, report = choose_cut(*case(10_000))
    assert cut == pytest.approx(997.5) and report["validation_share"] == 0.0998 and report["measured_share"] == 0.0996
    # the bound, by hand: h right with the whole alone, g with the n-gram part alone, from k on
    margins, whole, ngrams, labels = case(100)
    ngrams[50] = 1 - labels[50]  # one more the n-gram part gets wrong
    whole[70] = 1 - labels[70]  # and one the whole gets wrong
    bound = harm_bound(np.arange(100), whole, ngrams, labels, z=2.0)
    assert bound[100] == 0.0 and bound[71] == pytest.approx(2.0 / 100)
    assert bound[60] == pytest.approx((0 - 1 + 2.0 * np.sqrt(2)) / 100)
    assert bound[0] == pytest.approx((11 - 1 + 2.0 * np.sqrt(12 + 1)) / 100)


def test_a_cut_never_splits_documents_of_equal_margins_and_may_be_none_or_zero():
    labels = np.array([0, 1, 0, 1])
    assert choose_cut([0.5, 0.5, 0.5, 0.5], labels, 1 - labels, labels)[0] is None  # the network reads all
    assert choose_cut([0.5, 0.5, 0.5, 0.5], labels, labels, labels, z=0.0)[0] == 0.0  # it reads none
    cut, report = choose_cut([], np.array([], int), np.array([], int), np.array([], int))
    assert cut is None and report["validation_documents"] == 0
