"""Tests for hierattn.explain.summaries: the few summaries of an explanation that every view reads."""

import doctest

import pytest

import hierattn.explain.summaries
from hierattn.defaults import MARGIN_SHARES_UP_TO
from hierattn.explain import NgramContribution
from hierattn.explain.summaries import (
    margin_parts,
    margin_sentence,
    margin_shares,
    parts_words,
    prediction_words,
    runner_up,
    shown,
    shows_attention,
    signed,
    top_evidence,
    top_ngrams,
)

from conftest import sample_explanation


def sample(network_weight=0.4):
    """Six words in two sentences, each with evidence, and a decision whose terms add up to its margin."""
    return sample_explanation(network_weight=network_weight)


def test_the_summaries_every_view_shares():
    e = sample()
    assert prediction_words(e) == "pos, probability 0.90 (runner-up: neg, 0.10)"
    assert [w.text for w in top_evidence(e, 3)] == ["Great", "Bad", "film"]  # by |evidence|
    assert [w.text for w in top_evidence(e)] == ["Great", "Bad", "film", "cast", "end"]  # none without evidence
    parts = margin_parts(e)
    assert parts["network"] + parts["ngrams"] + parts["constant"] == pytest.approx(parts["margin"])
    assert parts["constant"] == pytest.approx(0.17) and parts["versus"] == "neg"
    assert parts_words(parts, 2) == "network's words +0.35 (41%), n-gram words +0.33 (38%), constant terms +0.17 (20%)"
    assert shows_attention(e) and not shows_attention(sample(network_weight=0.0))
    bare = sample()
    bare.decision = None
    assert margin_parts(bare) is None and shows_attention(bare)


def test_the_runner_up_is_the_decision_s_else_the_second_most_probable_class():
    e = sample()
    assert runner_up(e) == "neg"
    e.decision = None
    e.probabilities = {"neg": 0.1, "pos": 0.6, "neutral": 0.3}
    assert runner_up(e) == "neutral" and prediction_words(e) == "pos, probability 0.60 (runner-up: neutral, 0.30)"


def test_percentages_of_the_margin_only_where_they_mean_something():
    limit = MARGIN_SHARES_UP_TO
    assert limit == 2.0  # every share then lies between -50% and 150%
    at = {"margin": 1.0, "network": 1.5, "ngrams": -0.5, "constant": 0.0}  # sizes 2.0: at the limit
    assert margin_shares(at) == {"network": 150, "ngrams": -50, "constant": 0}
    beyond = {"margin": 1.0, "network": 1.51, "ngrams": -0.51, "constant": 0.0}
    assert margin_shares(beyond) is None and margin_shares({**at, "margin": 0.0}) is None  # a tie: none
    assert parts_words(beyond, 2) == "network's words +1.51, n-gram words -0.51, constant terms +0.00"
    # the cases: "-1280%" and "+1320%", "-151% / 204%"
    assert margin_shares({"margin": 0.05, "network": -0.64, "ngrams": 0.66, "constant": 0.03}) is None
    assert margin_shares({"margin": 1.0, "network": -1.51, "ngrams": 2.04, "constant": 0.47}) is None
    fine = {"margin": 1.0, "network": 0.8, "ngrams": 0.3, "constant": -0.1}  # -10% constant: within the limit
    assert margin_shares(fine) == {"network": 80, "ngrams": 30, "constant": -10}


def test_lists_leave_out_entries_that_would_show_as_zero():
    e = sample()
    e.ngrams += [NgramContribution("film", 0, 7, 11, 0.004), NgramContribution("cast", 0, 16, 20, -0.00004)]
    e.ngrams.append(NgramContribution("end", 1, 33, 36, 0.0))
    assert [g.text for g in top_ngrams(e, digits=4)] == ["Great", "Bad", "film"]  # "cast" would read -0.0000
    assert [g.text for g in top_ngrams(e, 3, digits=2)] == ["Great", "Bad"]  # "film" would read +0.00
    assert not shown(-0.00004, 4) and shown(0.004, 4) and not shown(0.004, 2)
    assert signed(-0.00004, 4) == "+0.0000" and signed(-0.006, 2) == "-0.01"  # never "-0.0000"


def test_one_plain_sentence_says_what_the_margin_and_the_constant_terms_are():
    sentence = margin_sentence(sample())
    assert sentence.startswith("The margin is how far pos is ahead of neg, in log-odds: 0 is a tie, +0.69 means pos")
    assert "(here pos is 2.3 times as likely as neg)" in sentence  # e**0.845
    assert "the constant terms are the part no word owns" in sentence
    flipped = sample()
    flipped.label, flipped.probabilities = "neg", {"neg": 0.9, "pos": 0.1}
    flipped.decision.update(versus="pos")
    assert margin_sentence(flipped).startswith("The margin is how far neg is ahead of pos")
    bare = sample()
    bare.decision = None
    assert margin_sentence(bare) is None
    huge = sample()
    huge.decision["margin"] = 40.0
    assert "(here pos is more than a million times as likely as neg)" in margin_sentence(huge)
    tie = sample()
    tie.decision["margin"] = 0.01
    assert "(here pos is about as likely as neg)" in margin_sentence(tie)


def test_the_examples_run():
    assert doctest.testmod(hierattn.explain.summaries).failed == 0


def test_subword_pieces_are_joined_into_the_words_the_user_wrote():
    from hierattn.data.text import Tokenizer
    from hierattn.explain.explanation import WordWeight
    from hierattn.explain.summaries import whole_words

    text = "Unwatchable. Wonderfully unwatchable"
    learned = ["unwatchable wonderfully watch wonder able un fully"] * 50
    tokenizer = Tokenizer().with_units("subwords", learn_from=learned)
    tokens = [t for sentence in tokenizer.tokenize(text) for t in sentence]
    assert len(tokens) > 3  # the words are in pieces
    words = [WordWeight.of_token(t, 0.1, 0.1, 1.0, False, True, 0.5 + i) for i, t in enumerate(tokens)]
    joined = whole_words(words)
    assert [w.text for w in joined] == ["Unwatchable", "Wonderfully", "unwatchable"]
    assert [(w.start, w.end, w.sentence) for w in joined] == [(0, 11, 0), (13, 24, 1), (25, 36, 1)]
    assert sum(w.evidence for w in joined) == pytest.approx(sum(w.evidence for w in words))
    assert all(text[w.start : w.end] == w.text for w in joined)
    characters = [
        WordWeight.of_token(t, 0.1, 0.1, 1.0, False, True, 1.0)
        for t in Tokenizer().with_units("characters").tokenize("很好")[0]
    ]
    assert whole_words(characters) == characters  # characters of a script without words stay apart


def test_each_kind_of_explanation_has_its_own_wording():
    """A class against the runner-up, or one label of a multi-label classifier against its threshold: asked, not tested."""
    from hierattn.explain.summaries import WORDINGS, kind, multi_label, wording
    from hierattn.kinds import MULTI, SINGLE

    e = sample()
    assert kind(e) is SINGLE and e.kind is SINGLE and not multi_label(e) and wording(e) is WORDINGS[SINGLE]
    assert wording(e).over.format(versus="neg") == "neg" and prediction_words(e).endswith("(runner-up: neg, 0.10)")
    label = sample()
    label.threshold, label.predicted_labels, label.document = 0.4, ["pos"], 0
    label.decision.update(versus=None, threshold=0.4, threshold_term=0.405)
    assert kind(label) is MULTI and label.kind is MULTI and multi_label(label) and runner_up(label) is None
    assert wording(label).over == "its threshold" and wording(label).kind is MULTI
    assert (
        prediction_words(label) == "pos, probability 0.90, over its threshold 0.40: predicted (the text's labels: pos)"
    )
    assert margin_sentence(label).startswith("The margin is how far pos's log-odds are above those of its threshold")
    for e in (sample(), label):  # every kind says each thing the views ask for
        words = wording(e)
        assert len(words.evidence_headings) == len(words.sides) == len(words.legend) == 2
        assert all(isinstance(getattr(words, name), str) for name in ("heading", "true_heading", "title", "grey"))
