"""Properties of the decision core (Hypothesis, `tests/hostile.py`): any policy, any part outputs, any data.

Calibration keeps each decision, probabilities are probabilities, the cascade's split is one split, tuned
thresholds stay inside (0, 1), a policy's data round-trips through JSON, and the checks the runtime makes of a
bundle's policy (`rule_problem`, `cascade_problem`) say whether `from_dict` can make a policy that answers.
"""

import json

import numpy as np
import pytest
from hypothesis import example, given
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

from hierattn.calibration import calibrated
from hierattn.decision import cascade_problem, rule_problem
from hierattn.kinds import MULTI, SINGLE
from hierattn.policy import DecisionPolicy
from hierattn.tuning import choose_offsets, choose_thresholds

from hostile import budget

# A numeric warning (an overflow, a division by zero) is a failure: the core says nothing on any numbers it takes.
pytestmark = pytest.mark.filterwarnings("error::RuntimeWarning")

FINITE = st.floats(-50, 50, allow_nan=False, width=32)
POSITIVE = st.floats(0.05, 20, allow_nan=False)
TEMPERATURES = st.none() | POSITIVE


def _probabilities(rows, classes, multi_label):
    """Rows of probabilities: a softmax's (single-label) or independent ones, from float32 scores."""
    scores = hnp.arrays(np.float32, (rows, classes), elements=FINITE)
    if multi_label:
        return scores.map(lambda s: (1 / (1 + np.exp(-s.astype(np.float64)))).astype(np.float32))
    return scores.map(_softmax)


def _softmax(scores):
    e = np.exp(scores.astype(np.float64) - scores.max(axis=1, keepdims=True))
    return (e / e.sum(axis=1, keepdims=True)).astype(np.float32)


@st.composite
def policies(draw, kind=None):
    """Any policy the core accepts: a kind, 2-5 classes, maybe an n-gram part with its cascade numbers."""
    kind = draw(st.sampled_from([SINGLE, MULTI])) if kind is None else kind
    count = draw(st.integers(2, 5))
    names = draw(st.lists(st.text(min_size=1, max_size=8), min_size=count, max_size=count, unique=True))
    settings = {}
    if draw(st.booleans()):
        settings.update(
            weights=(draw(st.floats(0.1, 3)), draw(st.floats(0.01, 3))),
            cut=draw(st.none() | st.floats(0, 20)),
            ngram_scale=None if kind == MULTI else draw(st.none() | st.floats(0.01, 3)),
        )
        per_label = st.tuples(*[POSITIVE] * count) if kind == MULTI else st.nothing()
        settings.update(temperature=draw(TEMPERATURES | per_label), temperature_always=draw(TEMPERATURES | per_label))
    if kind == MULTI:
        settings["thresholds"] = draw(st.none() | st.tuples(*[st.floats(0.01, 0.99)] * count))
    else:
        settings["offsets"] = draw(st.none() | st.tuples(*[st.floats(-5, 5)] * count))
    return DecisionPolicy(names, kind, network=draw(st.sampled_from(["auto", "always"])), **settings)


@st.composite
def cases(draw):
    """A policy, and part outputs of 1-12 documents for it: the network's probabilities and the n-gram logits."""
    policy = draw(policies())
    rows, classes = draw(st.integers(1, 12)), len(policy.label_names)
    network = draw(_probabilities(rows, classes, policy.multi_label))
    logits = None if policy.weights is None else draw(hnp.arrays(np.float32, (rows, classes), elements=FINITE))
    return policy, network, logits


@given(case=cases())
@budget(60)
def test_a_policys_probabilities_are_probabilities_and_its_split_is_one_split(case):
    policy, network, logits = case
    whole = policy.combine(network, logits)
    found = policy.probabilities(logits, whole)
    assert found.shape == network.shape and found.dtype == np.float32
    assert np.isfinite(found).all() and (found >= 0).all() and (found <= 1).all()
    if not policy.multi_label:
        np.testing.assert_allclose(found.sum(axis=1), 1, atol=1e-5)
    if logits is None:
        return
    decided, read = policy.split(logits)
    assert list(read) == sorted(set(read)) and set(read) <= set(range(len(logits)))
    assert (policy.needs_network(logits) == np.isin(np.arange(len(logits)), read)).all()
    np.testing.assert_allclose(found[read], policy.calibrate(whole)[read], atol=1e-6)
    others = np.setdiff1d(np.arange(len(logits)), read)
    if len(others):
        np.testing.assert_allclose(found[others], decided[others], atol=1e-6)


@given(case=cases(), min_confidence=st.floats(0, 1))
@budget(60)
def test_a_policys_answers_agree_with_each_other(case, min_confidence):
    policy, network, _ = case
    ids, labels = policy.ids(network), policy.labels(network)
    confidence, answered = policy.confidence(network), policy.answered(network, min_confidence)
    assert ((0 <= confidence) & (confidence <= 1)).all()
    assert (answered == (confidence >= min_confidence)).all()
    unsure = policy.labels(network, min_confidence)
    assert [label if sure else None for label, sure in zip(labels, answered)] == unsure
    if policy.multi_label:
        over = policy.over_thresholds(network)
        assert (np.asarray(ids) == over).all()
        assert labels == [[n for n, on in zip(policy.label_names, row) if on] for row in over]
    else:
        assert labels == [policy.label_names[i] for i in ids]
        if policy.offsets is None:
            assert (ids == network.argmax(axis=1)).all()
        top = policy.top_k(network, 2)
        assert [row[0][1] for row in top] == [float(p) for p in network.max(axis=1)]


@given(case=cases(), temperature=POSITIVE)
@budget(60)
def test_a_temperature_keeps_each_decision(case, temperature):
    policy, network, _ = case
    warmer = calibrated(network, temperature, policy.multi_label)
    assert np.isfinite(warmer).all()
    if policy.multi_label:  # each label stays on its side of 1/2
        assert ((warmer > 0.5) == (network > 0.5))[np.abs(network - 0.5) > 1e-6].all()
    else:
        np.testing.assert_allclose(warmer.sum(axis=1), 1, atol=1e-5)
        chosen = warmer[np.arange(len(warmer)), network.argmax(axis=1)]
        assert (chosen >= warmer.max(axis=1) - 1e-6).all()


@given(policy=policies())
@budget(60)
@example(policy=DecisionPolicy(["a", "b"], MULTI, weights=(1.0, 0.5), cut=0.0, temperature=(0.5, 2.0)))
def test_a_policys_data_round_trips_through_json(policy):
    data = json.loads(json.dumps(policy.to_dict()))
    assert rule_problem(data) is None
    assert "cascade" not in data or cascade_problem(data["cascade"]) is None
    again = DecisionPolicy.from_dict(data, network=policy.network)
    assert again.to_dict() == data
    expected = policy.replace(ngram_scale=None) if policy.weights is None else policy
    if policy.multi_label:
        expected = expected.replace(thresholds=tuple(policy.default_thresholds))
    assert again == expected


JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=5),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=5), inner, max_size=4),
    max_leaves=8,
)


@given(
    data=st.fixed_dictionaries(
        {"label_names": st.just(["a", "b", "c"]), "multi_label": st.booleans()},
        optional={"thresholds": JSON, "offsets": JSON},
    ),
    cascade=st.none()
    | st.dictionaries(st.sampled_from(["cut", "network_weight", "ngram_weight", "ngram_scale"]), JSON),
)
@budget(80)
@example(data={"label_names": ["a", "b", "c"], "multi_label": True, "thresholds": [0.5, 0.5, 1e-320]}, cascade=None)
def test_what_the_checks_pass_makes_a_policy_that_answers(data, cascade):
    """Any data a bundle could hold: the checks refuse it in one line, or `from_dict` makes a policy that answers."""
    problems = [rule_problem(data), None if cascade is None else cascade_problem(cascade)]
    for problem in problems:
        assert problem is None or (isinstance(problem, str) and "\n" not in problem)
    if any(problems):
        return
    policy = DecisionPolicy.from_dict({**data, **({} if cascade is None else {"cascade": cascade})})
    probabilities = np.array([[0.2, 0.3, 0.5], [0.6, 0.3, 0.1]], np.float32)
    logits = None if cascade is None else np.zeros((2, 3), np.float32)
    found = policy.probabilities(logits, probabilities)
    assert np.isfinite(found).all()
    assert len(policy.labels(found)) == 2


@given(
    probabilities=st.integers(1, 30).flatmap(lambda n: _probabilities(n, 3, True)),
    seed=st.integers(0, 2**16),
)
@budget(30)
def test_tuned_thresholds_stay_inside_0_and_1(probabilities, seed):
    labels = np.random.default_rng(seed).integers(0, 2, probabilities.shape)
    thresholds, _ = choose_thresholds(probabilities, labels)
    assert len(thresholds) == 3 and all(0 < t < 1 for t in thresholds)


@given(
    probabilities=st.integers(1, 30).flatmap(lambda n: _probabilities(n, 3, False)),
    seed=st.integers(0, 2**16),
)
@budget(30)
def test_tuned_offsets_are_finite(probabilities, seed):
    labels = np.random.default_rng(seed).integers(0, 3, len(probabilities))
    offsets, _ = choose_offsets(probabilities, labels)
    assert len(offsets) == 3 and np.isfinite(offsets).all()
