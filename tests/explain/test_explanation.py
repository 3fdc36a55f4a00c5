"""Tests for hierattn.explain.explanation: the top words and n-grams, and the plain-value form."""

import json

from hierattn.explain.explanation import Explanation, Explanations, NgramContribution, WordWeight
from hierattn.explain.picture import to_html
from hierattn.explain.report import to_text

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
    nothing = NgramContribution("end", 0, 15, 18, 0.0)
    assert [g.text for g in sample(ngrams=[*ngrams, nothing]).top_ngrams()] == ["bad", "Good", "film"]  # no zeros


def test_to_dict_is_plain_values_and_holds_the_decision_only_when_there_is_one():
    plain = sample().to_dict(top_k=2)
    assert [w["text"] for w in plain["top_words"]] == ["bad", "Good"] and len(plain["words"]) == 4
    assert "decision" not in plain and "top_ngrams" not in plain
    decision = {"versus": "neg", "margin": 0.4}
    accounted = sample(decision, [NgramContribution("bad", 0, 11, 14, -0.5)]).to_dict()
    assert accounted["decision"] == decision and accounted["top_ngrams"][0]["text"] == "bad"
    assert "network_probabilities" in accounted
    json.dumps(accounted)


def with_evidence():
    e = sample({"versus": "neg", "margin": -0.1, "network_weight": 1.0, "ngram_weight": 0.0})
    for w, value in zip(e.words, [0.3, 0.0, -0.5, 0.1]):
        w.evidence = value
    return e


def test_top_is_the_words_with_most_evidence_for_or_against():
    e = with_evidence()
    assert [w.text for w in e.top(2)] == ["bad", "Good"] and [w.text for w in e.top()] == ["bad", "Good", "end"]
    assert sample().top() == []  # no word has evidence


def test_the_notebook_view_is_a_scoped_fragment_and_the_page_a_whole_page():
    e = with_evidence()
    assert e._repr_html_() == to_html([e], page=False) and e._repr_html_().startswith('<div class="hierattn-x">')
    assert e.to_html() == to_html([e]) and e.to_html().startswith("<!DOCTYPE html>")
    assert json.loads(e.to_json(top_k=1)) == json.loads(json.dumps(e.to_dict(top_k=1)))


def test_repr_is_one_short_line_and_print_the_text_view():
    e = with_evidence()
    assert repr(e) == "<Explanation pos 0.60: -bad +Good +end ...>"
    assert repr(sample()) == "<Explanation pos 0.60>"
    assert str(e) == to_text(e) and str(e).startswith("predicted: pos, probability 0.60")


def test_explanations_are_a_list_with_the_same_views():
    many = Explanations([with_evidence(), sample()])
    assert isinstance(many, list) and many[0].label == "pos" and len(many) == 2
    assert many.top(1) == [[many[0].words[2]], []]
    assert many._repr_html_() == to_html(many, page=False) and many.to_html() == to_html(many)
    assert [item["label"] for item in json.loads(many.to_json())] == ["pos", "pos"]
    assert repr(many) == "[<Explanation pos 0.60: -bad +Good +end ...>, <Explanation pos 0.60>]"
    assert str(many) == to_text(many[0]) + "\n\n" + to_text(many[1])
