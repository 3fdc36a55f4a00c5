"""Tests for hierattn.report: text, CSV rows, JSON and HTML renderings."""

import html
import json
import re

from hierattn.explain import Explanation, WordWeight
from hierattn.report import CSV_COLUMNS, to_html, to_json, to_rows, to_text

TEXT = 'Great <film> & "cast". Bad zzyzx end!'


def sample():
    def word(text, sentence, index, weight, oov=False, used=True):
        start = TEXT.index(text)
        return WordWeight(text, text.lower(), sentence, index, start, start + len(text), weight, weight, 1.0, oov, used)

    words = [word("Great", 0, 0, 0.5), word("film", 0, 1, 0.2), word("cast", 0, 2, 0.1),
             word("Bad", 1, 0, 0.15), word("zzyzx", 1, 1, 0.05, oov=True), word("end", 1, 2, 0.0, used=False)]
    cut = TEXT.index(".") + 1
    sentences = [{"index": 0, "start": 0, "end": cut, "text": TEXT[:cut], "weight": 0.8, "used": True},
                 {"index": 1, "start": cut + 1, "end": len(TEXT), "text": TEXT[cut + 1 :], "weight": 0.2, "used": True}]
    return Explanation(TEXT, "pos", {"neg": 0.1, "pos": 0.9}, words, sentences, 1, ["1 of 6 words were cut"])


def test_text_output_lists_top_words_and_sentences():
    out = to_text(sample(), top_k=2)
    assert out.splitlines()[0] == "predicted: pos"
    assert "0.5000  Great  s0:w0  [0:5]" in out and "film" in out and "cast" not in out.split("sentences")[0]
    assert "note: 1 of 6 words were cut" in out


def test_rows_and_json_hold_every_word():
    rows = list(to_rows([sample(), sample()]))
    assert len(rows) == 12 and list(rows[0]) == CSV_COLUMNS and rows[6]["document"] == 1
    data = json.loads(to_json([sample()], top_k=1))
    assert len(data[0]["words"]) == 6 and [w["text"] for w in data[0]["top_words"]] == ["Great"]
    assert set(data[0]) == {"label", "probabilities", "top_words", "sentences", "words", "cut_words", "warnings"}


def test_html_is_self_contained_and_shows_every_word():
    page = to_html([sample(), sample()])
    assert page.startswith("<!DOCTYPE html>") and page.count('class="doc"') == 2
    assert not re.search(r"<script|<link|src=|url\(|https?://", page)
    for w in sample().words:
        assert f">{html.escape(w.text)}</span>" in page
    assert "&lt;film&gt;" in page or "&lt;" in page  # the user's text is escaped, not interpreted
    assert "<film>" not in page
    assert 'class="w oov"' in page and 'class="w cut"' in page
