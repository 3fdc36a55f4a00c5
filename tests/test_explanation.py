"""Tests for hierattn.explain.explanation: the top words and n-grams, and the plain-value form."""

import json

from hierattn.explain.explanation import Explanation, NgramContribution, WordWeight
from hierattn.explain.report import to_html

TEXT = "Good film, bad end"


def sample(decision=None, ngrams=None):
    weights = {"Good": 0.3, "film": 0.3, "bad": 0.4, "end": 0.9}
    words = [
        WordWeight(
            text,
            text.lower(),
            0,
            index,
            TEXT.index(text),
            TEXT.index(text) + len(text),
            weight,
            weight,
            1.0,
            False,
            text != "end",
        )
        for index, (text, weight) in enumerate(weights.items())
    ]
    return Explanation(
        TEXT,
        "pos",
        {"pos": 0.6, "neg": 0.4},
        words,
        [{"index": 0, "start": 0, "end": len(TEXT), "text": TEXT, "weight": 1.0, "used": True}],
        cut_words=1,
        warnings=[],
        decision=decision,
        ngrams=ngrams,
    )


def test_top_words_are_the_read_words_by_weight_then_position():
    e = sample()
    assert [w.text for w in e.top_words()] == ["bad", "Good", "film"]  # "end" weighs most but was not read
    assert [w.text for w in e.top_words(2)] == ["bad", "Good"]


def test_top_ngrams_rank_contributions_for_and_against_by_size():
    ngrams = [
        NgramContribution("Good", 0, 0, 4, 0.2),
        NgramContribution("bad", 0, 11, 14, -0.5),
        NgramContribution("film", 0, 5, 9, 0.2),
    ]
    assert [g.text for g in sample(ngrams=ngrams).top_ngrams(2)] == ["bad", "Good"]
    assert sample().top_ngrams() == []


def test_to_dict_is_plain_values_and_holds_the_decision_only_when_there_is_one():
    plain = sample().to_dict(top_k=2)
    assert [w["text"] for w in plain["top_words"]] == ["bad", "Good"] and len(plain["words"]) == 4
    assert "decision" not in plain and "top_ngrams" not in plain
    decision = {"versus": "neg", "margin": 0.4}
    accounted = sample(decision, [NgramContribution("bad", 0, 11, 14, -0.5)]).to_dict()
    assert accounted["decision"] == decision and accounted["top_ngrams"][0]["text"] == "bad"
    assert "network_probabilities" in accounted
    json.dumps(accounted)


def test_the_notebook_view_is_the_html_page():
    e = sample()
    assert e._repr_html_() == to_html([e])
