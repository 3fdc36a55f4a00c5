"""`hierattn.policy`: one frozen value says how part outputs become probabilities and answers, on every path."""

import dataclasses
import pathlib
import re

import numpy as np
import pytest

from hierattn.calibration import calibrated
from hierattn.errors import ArgumentError
from hierattn.policy import MULTI, DecisionPolicy

PACKAGE = pathlib.Path(__file__).resolve().parents[1] / "hierattn"


def _policy(**changes):
    settings = {"weights": (0.6, 0.8), "cut": 0.5, "ngram_scale": 1.7, "temperature": 1.4, "temperature_always": 0.7}
    return DecisionPolicy(["neg", "pos", "mixed"], **dict(settings, **changes))


def test_the_policy_gives_the_whole_combination_where_the_network_reads_and_the_ngram_part_elsewhere(rng):
    policy = _policy()
    logits, network = rng.normal(size=(200, 3)), rng.dirichlet(np.ones(3), size=200)
    whole = policy.combine(network, logits)
    read = policy.cascade.needs_network(logits)
    assert 0 < read.sum() < len(read)
    asked = []
    found = policy.probabilities(logits, lambda index: asked.append(index) or whole[index])
    np.testing.assert_array_equal(asked[0], np.flatnonzero(read))  # the network is asked for those it reads, once
    np.testing.assert_allclose(found[read], calibrated(whole[read], 1.4), atol=1e-6)
    scaled = 1.7 * logits[~read]
    np.testing.assert_allclose(found[~read], np.exp(scaled) / np.exp(scaled).sum(1, keepdims=True), atol=1e-6)
    np.testing.assert_array_equal(found, policy.probabilities(logits, whole))  # an array does as well


def test_for_network_gives_a_new_policy_and_leaves_this_one():
    policy = _policy()
    always = policy.for_network("always")
    assert always is not policy and always.network == "always" and policy.network == "auto"
    assert always.reads_all and not policy.reads_all and always.cascade.temperature == 0.7
    assert policy.for_network(None) is policy and policy.for_network("auto") is policy
    with pytest.raises(ArgumentError, match="network must be one of auto, always"):
        policy.for_network("sometimes")
    with pytest.raises(dataclasses.FrozenInstanceError):
        policy.cut = 1.0


def test_one_schema_round_trips_and_reads_bundles_from_before_it():
    for policy in (
        _policy(),
        _policy(offsets=(0.0, 0.1, 0.4)),
        DecisionPolicy(
            "abc", MULTI, weights=(1.0, 0.5), cut=0.2, temperature=(0.9, 1.1, 1.0), thresholds=(0.3, 0.5, 0.6)
        ),
        DecisionPolicy(["neg", "pos"]),
    ):
        data = policy.to_dict()
        assert DecisionPolicy.from_dict(data) == policy
        assert "network" not in data  # how it is used, not what was chosen
    # a bundle's metadata before the policy: the same keys, no network weight (its graph combines the parts)
    old = {"label_names": ["neg", "pos"], "offsets": [0.0, 0.3], "cascade": {"cut": 0.4, "ngram_weight": 0.9}}
    policy = DecisionPolicy.from_dict(old, network="always")
    assert policy.weights[1] == 0.9 and policy.cut == 0.4 and policy.network == "always" and policy.reads_all
    assert (
        DecisionPolicy.from_dict({"label_names": ["a", "b"], "multi_label": True, "thresholds": [0.2, 0.7]}).kind
        == MULTI
    )


def test_numbers_a_policy_cannot_decide_with_are_refused():
    with pytest.raises(ValueError, match="offsets must be 3 finite numbers"):
        _policy(offsets=(0.0, float("nan"), 1.0))
    with pytest.raises(ValueError, match="thresholds for 3 labels"):
        DecisionPolicy("abc", MULTI, thresholds=(0.5,))
    with pytest.raises(ValueError, match="temperature must be a positive number"):
        _policy(temperature=-1.0)
    with pytest.raises(ValueError, match="kind must be"):
        DecisionPolicy("ab", kind="several")


def test_the_policy_says_what_an_explanation_needs_of_its_temperature_cut_and_offsets():
    """Explanations ask the policy for these numbers rather than reading them (issue #66)."""
    policy = _policy()
    assert policy.weights_at_temperature == (0.6 / 1.4, 0.8 / 1.4)  # one temperature divides every class's score
    assert policy.label_scales.tolist() == [1.0, 1.0, 1.0]  # ... so nothing more is divided per class
    assert (
        policy.temperature_entries() == {"temperature": 1.4} and _policy(temperature=None).temperature_entries() == {}
    )
    assert policy.for_network("always").weights_at_temperature == (0.6 / 0.7, 0.8 / 0.7)
    labels = DecisionPolicy("abc", MULTI, weights=(1.0, 0.5), cut=0.2, temperature=(0.5, 2.0, 1.0))
    assert labels.weights_at_temperature == (1.0, 0.5) and labels.temperature_entries() == {}
    np.testing.assert_allclose(labels.label_scales, [2.0, 0.5, 1.0])  # each label's own temperature
    assert DecisionPolicy("ab").label_scales.tolist() == [1.0, 1.0] and DecisionPolicy("ab").temperature_entries() == {}
    assert policy.cut_text() == "the cut chosen on the texts held out in training (0.5)"
    logits = np.array([[0.0, 4.0, 0.0], [0.1, 0.0, 0.0]])
    assert policy.needs_network(logits).tolist() == [False, True]
    assert policy.for_network("always").needs_network(logits).tolist() == [True, True]


def test_the_decided_order_puts_the_class_decided_first_and_the_offsets_in_the_margin():
    p = np.array([[0.5, 0.3, 0.2], [0.2, 0.2, 0.6]])
    plain = DecisionPolicy("abc")
    assert plain.decided_order(p).tolist() == [[0, 1, 2], [2, 0, 1]] and plain.offset_term(0, 1) is None
    ruled = DecisionPolicy("abc", offsets=(0.0, 0.0, 1.0))
    order = ruled.decided_order(p)
    assert order[:, 0].tolist() == ruled.ids(p).tolist() == [2, 2]  # the decided class, as the answer is
    assert order.tolist() == [[2, 0, 1], [2, 0, 1]] and ruled.offset_term(2, 0) == 1.0


def test_answers_follow_the_offsets_and_the_thresholds():
    p = np.array([[0.55, 0.45], [0.05, 0.95]])
    policy = DecisionPolicy(["neg", "pos"], offsets=(0.0, 0.5))
    assert policy.labels(p) == ["pos", "pos"] and policy.argmax_ids(p).tolist() == [0, 1]
    assert policy.labels(p, min_confidence=0.9) == [None, "pos"]
    topics = DecisionPolicy(["sport", "money"], MULTI, thresholds=(0.5, 0.3))
    assert topics.labels(np.array([[0.9, 0.4], [0.1, 0.1]])) == [["sport", "money"], []]
    assert DecisionPolicy("ab", MULTI).default_thresholds == [0.5, 0.5]


def _construction_sites(name):
    pattern = re.compile(rf"(?<![\w.]){name}\(")
    found = []
    for path in sorted(PACKAGE.rglob("*.py")):
        for number, line in enumerate(path.read_text().splitlines(), 1):
            code = line.split("#")[0]
            if pattern.search(code) and not code.lstrip().startswith((">>>", "...", "class ")):
                found.append(f"{path.relative_to(PACKAGE.parent)}:{number}")
    return found


def test_the_cascade_and_the_decision_are_made_in_the_policy_only():
    """Every path asks a `DecisionPolicy`; the arithmetic it holds is made in one place."""
    for name in ("Cascade", "Decision"):
        assert [site.split(":")[0] for site in _construction_sites(name)] == ["hierattn/policy.py"], name


def test_predict_options_are_checked_once_where_they_enter():
    from hierattn.policy import PredictOptions

    options = PredictOptions(top_k=3, min_confidence=0.8, network="always")
    assert options.policy_of(_policy()).network == "always" and options.policy_of(_policy()).cut == 0.5
    assert PredictOptions().policy_of(_policy()) == _policy()  # the model's own setting
    for arguments, message in [
        ({"top_k": 0}, "top_k must be a whole number of at least 1"),
        ({"top_k": True}, "top_k must be a whole number of at least 1"),
        ({"min_confidence": 1.5}, "min_confidence must be a probability between 0 and 1"),
        ({"network": "never"}, "network must be one of auto, always"),
    ]:
        with pytest.raises(ArgumentError, match=message):
            PredictOptions(**arguments)


def test_a_policy_says_what_it_holds_and_refuses_a_kind_that_is_no_kind():
    policy = _policy(offsets=(0.0, 0.1, -0.1))
    assert repr(policy) == (
        "<DecisionPolicy 3 classes, single-label, weights 0.6/0.8, cut 0.5, network auto, offsets [0.0, 0.1, -0.1]>"
    )
    labels = DecisionPolicy(["sport", "money"], MULTI, thresholds=(0.5, 0.3))
    assert repr(labels) == "<DecisionPolicy 2 labels, multi-label, thresholds [0.5, 0.3]>"
    assert labels.decision.multi_label and labels.weights_at_temperature is None
    logits = np.zeros((3, 2))
    probabilities, read = labels.split(logits)  # no n-gram part: the network reads every document
    assert probabilities is None and read.tolist() == [0, 1, 2]
    with pytest.raises(ValueError, match="kind must be 'single-label' or 'multi-label', not 3"):
        DecisionPolicy(["a", "b"], 3)
