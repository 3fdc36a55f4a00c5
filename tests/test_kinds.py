"""`hierattn.kinds`: a classifier's kind is a value that code asks, not a flag it tests."""

import dataclasses

import pytest

from hierattn.kinds import KINDS, MULTI, SINGLE, Kind, kind_of
from hierattn.policy import DecisionPolicy


def test_each_kind_names_what_differs_between_them():
    assert (SINGLE.multi_label, MULTI.multi_label) == (False, True)
    assert (SINGLE.activation, MULTI.activation) == ("softmax", "sigmoid")
    assert (SINGLE.answer_key, MULTI.answer_key) == ("label", "labels")
    assert (SINGLE.metric, MULTI.metric) == ("accuracy", "micro_f1")
    assert (SINGLE.fewest_classes, MULTI.fewest_classes) == (2, 1)
    for field in dataclasses.fields(Kind):  # every attribute tells the two apart
        assert getattr(SINGLE, field.name) != getattr(MULTI, field.name), field.name


@pytest.mark.parametrize("kind", KINDS)
def test_kind_of_reads_a_flag_a_name_a_kind_or_an_object_that_has_one(kind):
    class Flagged:
        multi_label = kind.multi_label

    assert kind_of(kind.multi_label) is kind and kind_of(kind.name) is kind and kind_of(kind) is kind
    assert kind_of(Flagged()) is kind
    assert kind_of(DecisionPolicy(["a", "b"], kind)) is kind
    assert str(kind) == kind.name and repr(kind) == f"<Kind {kind.name}>"


def test_a_name_of_no_kind_is_refused_by_name():
    with pytest.raises(ValueError, match="kind must be one of single-label, multi-label, not 'multilabel'"):
        kind_of("multilabel")
    with pytest.raises(ValueError, match="multilabel"):
        DecisionPolicy(["a", "b"], "multilabel")


def test_kinds_are_frozen_and_a_policy_given_a_name_holds_the_kind():
    with pytest.raises(dataclasses.FrozenInstanceError):
        SINGLE.noun = "label"
    policy = DecisionPolicy(["a", "b"], "multi-label", thresholds=(0.5, 0.4))
    assert policy.kind is MULTI and policy.multi_label and DecisionPolicy.from_dict(policy.to_dict()) == policy
