"""Tests for hierattn.models.arguments: the checks of a classifier's arguments, one place for each."""

import types

import pytest

from hierattn.defaults import BACKBONES, MAX_DOCUMENT_IDS
from hierattn.kinds import MULTI, SINGLE
from hierattn.models.arguments import (
    check_backbone_arguments,
    check_classifier_arguments,
    check_decision_metric,
    check_fraction,
    check_multi_label,
    check_preprocessor_arguments,
    check_whole,
)


@pytest.mark.parametrize("value", [0, -3, 2.0, "3", True, None])
def test_a_whole_number_is_an_int_and_not_a_bool(value):
    with pytest.raises(ValueError, match=f"^units must be a whole number of at least 1, not {value!r}$"):
        check_whole("units", value)


def test_limits_and_fractions():
    check_whole("window", 0, minimum=0)
    check_whole("max_words", None, allow_none=True)
    check_fraction("dropout", 0)
    check_fraction("split", 0.5, min_open=True)
    for value in (1, 1.0, -0.1, float("nan"), "0.1", False):
        with pytest.raises(ValueError, match="^dropout must be a fraction from 0 \\(included\\) up to 1"):
            check_fraction("dropout", value)
    with pytest.raises(ValueError, match="^split must be a fraction from 0 \\(excluded\\)"):
        check_fraction("split", 0, min_open=True)


@pytest.mark.parametrize("architecture", list(BACKBONES))
def test_the_tuned_defaults_pass_their_own_checks(architecture):
    check_backbone_arguments(architecture, {})
    check_backbone_arguments(architecture, BACKBONES[architecture])
    check_classifier_arguments(architecture, **BACKBONES[architecture])


def test_preprocessor_and_classifier_arguments():
    check_preprocessor_arguments(max_sentences=3, max_words=4, min_count=1, max_vocab=None)
    with pytest.raises(ValueError, match="^max_vocab must be a whole number of at least 3, or None, not 0$"):
        check_preprocessor_arguments(max_vocab=0)
    # A saved classifier's limits above MAX_DOCUMENT_IDS ids a document are refused at load (#67): so at once here.
    check_preprocessor_arguments(max_sentences=2, max_words=MAX_DOCUMENT_IDS // 2, ngram_length=MAX_DOCUMENT_IDS)
    with pytest.raises(ValueError, match="^sequence_length must be at most 131,072 ids a document, not 131,073$"):
        check_preprocessor_arguments(sequence_length=MAX_DOCUMENT_IDS + 1)
    with pytest.raises(
        ValueError, match="^max_sentences x max_words must be at most 131,072 ids a document, not 1,000 x"
    ):
        check_classifier_arguments("han", max_sentences=1000, max_words=1000)
    with pytest.raises(ValueError, match="^max_sentences applies to the han model"):  # what applies, first
        check_classifier_arguments("transformer", max_sentences=MAX_DOCUMENT_IDS + 1)
    backbone = types.SimpleNamespace(kind=SINGLE)  # a Backbone object: the preprocessor's limits checked the same
    with pytest.raises(ValueError, match="^sequence_length must be at most 131,072"):
        check_classifier_arguments(backbone, sequence_length=MAX_DOCUMENT_IDS + 1)
    with pytest.raises(ValueError, match="^backbone must be one of han, transformer, rnn or a Backbone, not 'bert'$"):
        check_classifier_arguments("bert")
    with pytest.raises(ValueError, match="^unknown transformer argument\\(s\\) units: choose from dropout"):
        check_classifier_arguments("transformer", units=3)
    check_classifier_arguments("han", backbone_options={"word_units": 3}, min_count=2, name="clf", dtype="float32")
    with pytest.raises(ValueError, match="^word_units must be a whole number"):
        check_classifier_arguments("han", backbone_options={"word_units": 0})


def test_a_backbone_of_the_other_kind_is_refused_with_what_to_give_instead():
    sigmoids, softmax = types.SimpleNamespace(kind=MULTI), types.SimpleNamespace(kind=SINGLE)  # what a Backbone says
    check_multi_label(sigmoids, True)
    check_multi_label(softmax, False)
    check_multi_label("han", True)  # a name says nothing yet
    message = r"^the backbone's output is a sigmoid: give multi_label=True with it \(or a backbone made with "
    message += r"activation='softmax'\)$"
    with pytest.raises(ValueError, match=message):
        check_multi_label(sigmoids, False)
    with pytest.raises(ValueError, match="^the backbone's output is a softmax: give multi_label=False with it"):
        check_multi_label(softmax, True)
    with pytest.raises(ValueError, match="^multi_label must be True or False"):
        check_multi_label("han", 1)


def test_the_decision_metric_applies_to_a_single_label_classifier():
    assert check_decision_metric("macro_f1") == "macro_f1" and check_decision_metric("accuracy", True) == "accuracy"
    with pytest.raises(ValueError, match="^decision_metric applies to a single-label classifier"):
        check_decision_metric("macro_f1", multi_label=True)
