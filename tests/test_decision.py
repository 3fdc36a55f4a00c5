"""`hierattn.decision`: one decision step, the same for the Keras classifier, the runtime and the application."""

import pathlib
import re

import numpy as np
import pytest

from hierattn.calibration import calibrated
from hierattn.decision import (
    Cascade,
    Decision,
    activation_of,
    cascade_problem,
    check_k,
    check_min_confidence,
    check_network,
    over_thresholds,
    rule_problem,
    thresholds_at,
    top_k,
)
from hierattn.errors import ArgumentError

PACKAGE = pathlib.Path(__file__).resolve().parents[1] / "hierattn"


def test_a_single_label_decision_is_the_most_probable_class():
    decision = Decision(["neg", "pos", "mixed"])
    probabilities = np.array([[0.2, 0.5, 0.3], [0.6, 0.1, 0.3]])
    assert decision.activation == "softmax"
    assert decision.ids(probabilities).tolist() == [1, 0]
    assert decision.labels(probabilities) == ["pos", "neg"]


def test_a_multi_label_decision_is_the_labels_over_their_thresholds():
    decision = Decision(["sport", "money"], multi_label=True, thresholds=[0.5, 0.2])
    probabilities = np.array([[0.6, 0.1], [0.5, 0.3], [0.0, 0.0]])
    assert decision.activation == "sigmoid"
    assert decision.ids(probabilities).tolist() == [[1, 0], [0, 1], [0, 0]]
    assert decision.labels(probabilities) == [["sport"], ["money"], []]
    assert decision.ids(probabilities, thresholds=[0.0, 0.0]).tolist() == [[1, 1], [1, 1], [0, 0]]


def test_a_row_without_words_has_no_answer():
    nan = np.full((1, 2), np.nan)
    assert Decision(["a", "b"]).labels(np.vstack([[0.9, 0.1], nan])) == ["a", None]
    assert Decision(["a", "b"], True, [0.5, 0.5]).labels(nan) == [None]
    assert Decision(["a", "b"]).labels(np.zeros((0, 2))) == []


def test_thresholds_not_chosen_yet_are_the_default_as_in_a_bundle():
    assert Decision(["a", "b"], multi_label=True).labels(np.array([[0.6, 0.4]])) == [["a"]]


def test_class_names_keep_their_type():
    assert Decision([1, 2, 5]).labels(np.array([[0.1, 0.2, 0.7]])) == [5]


def test_thresholds_are_refused_where_they_do_not_apply():
    with pytest.raises(ValueError, match="multi-label"):
        Decision(["a", "b"]).over_thresholds(np.ones((1, 2)))
    with pytest.raises(ValueError, match="1 thresholds for 2 labels"):
        Decision(["a", "b"], multi_label=True, thresholds=[0.5])


@pytest.mark.parametrize("k", [0, -1, 1.5, True, "2", None])
def test_k_is_a_whole_number_of_at_least_one(k):
    with pytest.raises(ArgumentError, match="^k must be a whole number of at least 1, not"):
        Decision(["a", "b"]).top_k(np.ones((1, 2)), k)
    with pytest.raises(ValueError):  # an ArgumentError is a ValueError, as Keras's own checks raise
        check_k(k)


def test_top_k_ranks_ties_in_label_order():
    assert top_k(np.array([[0.3, 0.4, 0.3]]), ["a", "b", "c"], 3) == [[("b", 0.4), ("a", 0.3), ("c", 0.3)]]
    assert Decision(["a", "b"]).top_k(np.array([[0.3, 0.7]]), 5) == [[("b", 0.7), ("a", 0.3)]]


def test_functions_match_the_decision():
    p = np.array([[0.9, 0.2, 0.5]])
    assert over_thresholds(p, [0.5, 0.1, 0.5]).tolist() == Decision("abc", True, [0.5, 0.1, 0.5]).ids(p).tolist()
    assert activation_of(True) == "sigmoid" and activation_of(False) == "softmax"


def _code_lines(pattern):
    found = []
    for path in sorted(PACKAGE.rglob("*.py")):
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
            code = line.split("#", 1)[0]
            if re.search(pattern, code):
                found.append(f"{path.relative_to(PACKAGE.parent)}:{number}: {line.strip()}")
    return found


def test_the_decision_and_the_activation_are_written_once():
    """The label decision (argmax over classes, thresholds over labels) and the activation choice live here only."""
    activation = _code_lines(r'"sigmoid" if .*multi_label|"softmax" if .*multi_label')
    assert [line.split(":")[0] for line in activation] == ["hierattn/decision.py"], activation
    thresholds = _code_lines(r"np\.asarray\(thresholds|[\w)\]] > np\.asarray\(|[\w)\]] > thresholds")
    assert [line.split(":")[0] for line in thresholds] == ["hierattn/decision.py"], thresholds
    label_argmax = _code_lines(r"label_names\[i\] for i in .*argmax|argmax\(axis=1\)")
    assert [line.split(":")[0] for line in label_argmax] == ["hierattn/decision.py"], label_argmax


def test_a_policys_numbers_as_its_data_holds_them_are_checked_here():
    """What the runtime's checks of a bundle ask of its metadata's decision rule and cascade (the core knows them)."""
    topics = {"label_names": ["sport", "money"], "multi_label": True}
    assert rule_problem(dict(topics, thresholds=[0.5, 0.3])) is None
    for thresholds in (None, [0.5], [0.5, 1.0], [0.0, 0.5], [0.5, "0.5"], [0.5, float("nan")], (0.5, 0.5)):
        found = rule_problem(dict(topics, thresholds=thresholds))
        assert found == f"thresholds must be 2 numbers between 0 and 1, one per label, not {thresholds!r}", found
    reviews = {"label_names": ["neg", "pos"]}
    assert rule_problem(reviews) is None and rule_problem(dict(reviews, offsets=[0.0, -0.4])) is None
    assert (
        rule_problem(dict(reviews, offsets=[0.0, float("inf")])) == "offsets must be 2 finite numbers, not [0.0, inf]"
    )
    assert rule_problem(dict(topics, thresholds=[0.5, 0.5], offsets=[0.0])) is None  # a multi-label rule has none
    assert cascade_problem({"ngram_weight": 4.0}) is None  # the others may be null (network_weight: before the policy)
    assert cascade_problem({"cut": 0.5, "network_weight": 1, "ngram_weight": 4.0, "ngram_scale": 11.2}) is None
    assert cascade_problem({"cut": 0.5}) == "the cascade's ngram_weight must be a finite number, not None"
    assert cascade_problem({"cut": True, "ngram_weight": 1.0}) == "the cascade's cut must be a finite number, not True"
    assert cascade_problem({"ngram_weight": 1.0, "ngram_scale": "11"}).startswith("the cascade's ngram_scale must")


def test_a_cascade_margin_is_the_gap_of_the_ngram_scores_or_the_nearest_threshold():
    single = Cascade(cut=1.0, ngram_weight=2.0)
    np.testing.assert_allclose(single.margins(np.array([[0.0, 1.0, 0.25], [3.0, -1.0, 2.5]])), [1.5, 1.0])
    multi = Cascade(cut=1.0, ngram_weight=2.0, multi_label=True, thresholds=[0.5, 0.2])
    # 2 * 1.0 - logit(0.5) = 2; 2 * 0.0 - logit(0.2) = 1.386...: the nearest threshold counts
    np.testing.assert_allclose(multi.margins(np.array([[1.0, 0.0]])), [np.log(4.0)])
    assert multi.needs_network(np.array([[1.0, 0.0], [1.0, -0.5]])).tolist() == [False, True]


def test_a_cascade_without_a_cut_sends_every_document_to_the_network():
    logits = np.array([[0.0, 9.0], [9.0, 0.0]])
    assert Cascade(None, 1.0).needs_network(logits).all()
    assert not Cascade(0.0, 1.0).needs_network(logits).any()


def test_a_documents_the_ngram_part_decides_get_its_scores_with_the_network_term_neutral():
    cascade = Cascade(cut=5.0, ngram_weight=0.5)
    logits = np.array([[0.0, 20.0], [1.0, 0.0]])
    calls = []
    found = cascade.predict(logits, lambda index: calls.append(index.tolist()) or np.array([[0.25, 0.75]]))
    assert calls == [[1]]  # once, with the unsure document only
    expected = np.exp([0.0, 10.0]) / np.exp([0.0, 10.0]).sum()
    np.testing.assert_allclose(found, [expected, [0.25, 0.75]], rtol=1e-6)
    assert found.dtype == np.float32
    sigmoid = Cascade(cut=0.0, ngram_weight=2.0, multi_label=True).ngram_probabilities(np.array([[0.5, -1.0]]))
    np.testing.assert_allclose(sigmoid, 1 / (1 + np.exp([[-1.0, 2.0]])), rtol=1e-6)


def test_the_network_setting_is_auto_or_always():
    assert check_network("auto") == "auto" and check_network("always") == "always"
    with pytest.raises(ArgumentError, match="network must be one of auto, always, not 'never'"):
        check_network("never")


def test_offsets_move_the_decision_and_confidence_follows_it():
    probabilities = np.array([[0.6, 0.4], [0.9, 0.1], [np.nan, np.nan]])
    plain, offset = Decision(["neg", "pos"]), Decision(["neg", "pos"], offsets=[0.0, np.log(2.0)])
    assert plain.labels(probabilities) == ["neg", "neg", None]
    assert offset.labels(probabilities) == ["pos", "neg", None]  # 0.4 x 2 > 0.6; 0.1 x 2 < 0.9
    np.testing.assert_allclose(offset.confidence(probabilities)[:2], [0.4, 0.9])  # the decided class's probability
    assert np.isnan(offset.confidence(probabilities)[2])
    assert Decision(["a", "b"], multi_label=True, offsets=[1.0, 2.0]).offsets is None  # thresholds decide there
    for bad in ([0.0], [0.0, np.inf]):
        with pytest.raises(ValueError, match="offsets must be 2 finite numbers"):
            Decision(["neg", "pos"], offsets=bad)


def test_a_decision_under_the_minimum_confidence_is_no_answer():
    decision = Decision(["neg", "pos"])
    probabilities = np.array([[0.55, 0.45], [0.05, 0.95], [np.nan, np.nan], [0.1, 0.9]])
    assert decision.answered(probabilities).tolist() == [True, True, False, True]  # no minimum: every row with words
    assert decision.answered(probabilities, 0.9).tolist() == [False, True, False, True]  # at the minimum: answered
    assert decision.answered(probabilities, 0.0).tolist() == [True, True, False, True]
    topics = Decision(["sport", "food"], multi_label=True, thresholds=[0.5, 0.3])
    rows = np.array([[0.95, 0.05], [0.95, 0.35]])  # the second's food is on, at 0.35: its least sure label
    np.testing.assert_allclose(topics.confidence(rows), [0.95, 0.35])
    assert topics.answered(rows, 0.5).tolist() == [True, False]
    for bad in (-0.1, 1.5, float("nan"), True, "0.9"):
        with pytest.raises(ArgumentError, match="min_confidence must be a probability between 0 and 1"):
            decision.answered(probabilities, bad)
    assert check_min_confidence(None) is None and check_min_confidence(1) == 1.0


def test_a_multi_label_cascade_calibrates_each_label_and_moves_its_thresholds_with_it(rng):
    raw = Cascade(0.8, 0.5, multi_label=True, thresholds=[0.3, 0.6, 0.5])
    temperatures = [2.0, 0.5, 1.0]
    moved = thresholds_at(raw.thresholds, temperatures)
    cascade = Cascade(0.8, 0.5, multi_label=True, thresholds=moved, temperature=temperatures)
    assert cascade.raw_thresholds() == pytest.approx(raw.thresholds)
    z = rng.normal(scale=3.0, size=(200, 3))
    whole = 1.0 / (1.0 + np.exp(-rng.normal(scale=2.0, size=(200, 3))))
    np.testing.assert_allclose(cascade.margins(z), raw.margins(z))  # the cut reads the same margins
    before, after = (c.predict(z, lambda index: whole[index]) for c in (raw, cascade))
    np.testing.assert_allclose(after, calibrated(before, temperatures, multi_label=True), atol=1e-6)
    decide = [Decision(["a", "b", "c"], True, c.thresholds).ids for c in (raw, cascade)]
    np.testing.assert_array_equal(decide[0](before), decide[1](after))  # no decision changes
    with pytest.raises(ValueError, match="one per label"):
        Cascade(0.8, 0.5, multi_label=True, thresholds=moved, temperature=[1.0, 2.0])
