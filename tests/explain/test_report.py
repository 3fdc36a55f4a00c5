"""Tests for hierattn.explain.report: text, CSV rows, JSON and HTML renderings."""

import doctest
import json

import pytest

import hierattn.explain.report
from hierattn.explain import NgramContribution
from hierattn.explain.report import (
    CSV_COLUMNS,
    render,
    to_csv,
    to_html,
    to_json,
    to_rows,
    to_text,
)

from conftest import SAMPLE_TEXT, sample_explanation

TEXT = SAMPLE_TEXT


def sample():
    """Six words in two sentences, without evidence or a decision."""
    return sample_explanation(evidence=False)


def test_text_output_lists_top_words_and_sentences():
    out = to_text(sample(), top_k=2)
    assert out.splitlines()[0] == "predicted: pos, probability 0.90 (runner-up: neg, 0.10)"
    assert "where the network read (attention, not evidence" in out and "evidence for" not in out  # no evidence
    assert "    0.5000  Great  s0:w0  [0:5]" in out and "film" in out and "cast" not in out.split("sentences")[0]
    assert "note: 1 of 6 words were cut" in out


def with_ngram_account(network_weight=0.4):
    e = sample()
    for w, value in zip(e.words, [0.4, -0.2, 0.1, -0.05, 0.0, 0.0]):
        w.evidence, w.network_evidence, w.ngram_evidence = value, value / 2, value / 2
    e.network_probabilities = {"neg": 0.3, "pos": 0.7}
    e.ngrams = [
        NgramContribution("Great", 0, 0, 5, 0.8),
        NgramContribution("Bad", 1, 23, 26, -0.5),
        NgramContribution("Great <film", 0, 0, 11, 0.1),
    ]
    e.decision = {
        "versus": "neg",
        "margin": 1.2,
        "network": 0.75,
        "ngram_bias": 0.05,
        "ngrams": 0.4,
        "network_weight": network_weight,
        "ngram_weight": 1.6,
        "network_baseline": 0.6,
        "integration_error": 0.075,
        "not_shown": 0.225,
    }
    return e


def test_the_text_leads_with_the_prediction_then_evidence_then_the_margin_s_parts():
    out = to_text(with_ngram_account(), top_k=2)
    assert out.splitlines()[:15] == [
        "predicted: pos, probability 0.90 (runner-up: neg, 0.10)",
        "evidence for pos, the prediction (each word's part of the margin; * = not in the vocabulary):",
        "   +0.4000  Great  s0:w0  [0:5]",
        "   +0.1000  cast  s0:w2  [16:20]",
        "evidence for neg, the runner-up (negative: it lowers the margin):",
        "   -0.2000  film  s0:w1  [7:11]",
        "   -0.0500  Bad  s1:w0  [23:26]",
        (
            "margin of pos over neg: +1.2000 = network's words +0.1250 (10%), n-gram words +0.1250 (10%), constant "
            "terms +0.9500 (79%)"
        ),
        "  The margin is how far pos is ahead of neg, in log-odds: 0 is a tie, +0.69 means pos is twice as",
        "  likely as neg, +2.30 ten times as likely (here pos is 3.3 times as likely as neg). Each word's",
        "  evidence is its part of the margin (+ towards pos, - towards neg); the constant terms are the part",
        "  no word owns: what the classifier gives a text without words, and its bias (with the calculation's",
        "  small error and any words not shown).",
        (
            "  constant terms: network baseline +0.6000, integration error +0.0750, n-gram bias +0.0500, words not "
            "shown +0.2250; weights 0.40 (network) / 1.60 (n-grams)"
        ),
        "where the network read (attention, not evidence; sentence:word, characters):",
    ]
    assert out.count("log-odds") == 1  # said once, in plain words
    assert (
        "\nn-grams (exact contribution to the margin: + towards pos, - towards neg):\n   +0.8000  Great  [0:5]\n"
        "   -0.5000  Bad  [23:26]\nnote:" in out
    )  # the top 2 n-grams, last
    silent = to_text(with_ngram_account(network_weight=0.0))
    assert "where the network read" not in silent and "sentences (weight)" not in silent
    assert "margin" not in to_text(sample())


def test_the_text_names_the_class_each_list_of_evidence_is_for():
    e = with_ngram_account()
    e.label, e.probabilities, e.decision["versus"] = "neg", {"neg": 0.9, "pos": 0.1}, "pos"
    out = to_text(e)
    assert "evidence for neg, the prediction (each word's part" in out and "evidence for pos, the runner-up" in out
    assert "(+ towards neg, - towards pos)" in " ".join(out.split())
    assert "n-grams (exact contribution to the margin: + towards neg, - towards pos):" in out
    assert "against" not in out and "evidence for neg, the runner-up" not in out


def test_json_holds_the_evidence_and_the_decision_s_terms():
    e = with_ngram_account()
    data = json.loads(to_json([e], top_k=2))[0]
    assert data["decision"] == e.decision and data["network_probabilities"] == {"neg": 0.3, "pos": 0.7}
    assert [g["text"] for g in data["top_ngrams"]] == ["Great", "Bad"]
    assert [w["text"] for w in data["top_evidence"]] == ["Great", "film"]
    assert {"evidence", "network_evidence", "ngram_evidence"} <= set(data["words"][0])
    parts = data["margin_parts"]
    assert parts["network"] + parts["ngrams"] + parts["constant"] == pytest.approx(parts["margin"])


def test_csv_rows_add_up_to_each_document_s_margin():
    rows = list(to_rows([with_ngram_account()]))
    assert [r["evidence"] for r in rows][:2] == [0.4, -0.2] and rows[1]["network_evidence"] == -0.1
    assert rows[0]["versus"] == "neg" and rows[0]["margin"] == 1.2
    assert sum(r["evidence"] for r in rows) + rows[0]["constant_terms"] == pytest.approx(rows[0]["margin"])
    assert list(to_rows([sample()]))[0]["margin"] is None  # no decision


def test_rows_and_json_hold_every_word():
    rows = list(to_rows([sample(), sample()]))
    assert len(rows) == 12 and list(rows[0]) == CSV_COLUMNS and rows[6]["document"] == 1
    data = json.loads(to_json([sample()], top_k=1))
    assert len(data[0]["words"]) == 6 and [w["text"] for w in data[0]["top_words"]] == ["Great"]
    assert set(data[0]) == {
        "id",
        "true_label",
        "label",
        "probabilities",
        "top_evidence",
        "top_words",
        "sentences",
        "words",
        "cut_words",
        "unshown_characters",
        "warnings",
    }


def test_the_examples_run():
    assert doctest.testmod(hierattn.explain.report).failed == 0


# The results of commands, as text ---------------------------------------------------------------------------------


def test_render_is_each_format_s_own_function():
    explanations = [sample(), sample()]
    texts = [to_text(e, 3) for e in explanations]
    assert render(explanations, "text", 3) == texts[0] + "\n\n" + texts[1] + "\n"
    assert render(explanations, "json", 3) == to_json(explanations, 3) + "\n"
    assert render(explanations, "html") == to_html(explanations)
    table = render(explanations, "csv")
    assert table == to_csv(explanations) and table.splitlines()[0] == ",".join(CSV_COLUMNS)
    assert len(table.splitlines()) == 1 + 2 * 6 and table.splitlines()[1].startswith(
        "0,,,pos,0,0,0,5,Great,0.0,0.0,0.0,0.5,"
    )
    with pytest.raises(ValueError, match="unknown format 'pdf': choose one of text, json, csv, html"):
        render(explanations, "pdf")
