"""Tests for hierattn.data.text: cleaning, sentence splitting, tokens with offsets."""

import json
import pathlib

import pytest

from hierattn.data.text import Tokenizer, clean, sentence_spans


def sentences(text):
    return [text[a:b] for a, b in sentence_spans(clean(text))]


CASES_FILE = pathlib.Path(__file__).resolve().parents[2] / "data" / "sample" / "sentence_cases.jsonl"
CASES = [json.loads(line) for line in CASES_FILE.read_text().splitlines()]


@pytest.mark.parametrize(
    "text, expected",
    [(c["text"], c["sentences"]) for c in CASES]
    + [
        ("First part<br /><br />Second part", ["First part", "Second part"]),
        ('He said "Wow." Then left.', ['He said "Wow."', "Then left."]),
        ("", []),
        ("   \n\t ", []),
    ],
)
def test_sentence_splitting(text, expected):
    assert sentences(text) == expected


def test_clean_preserves_length_and_positions():
    raw = "A<br />B<i>c</i>\x07d"
    cleaned = clean(raw)
    assert len(cleaned) == len(raw)
    assert cleaned.index("B") == raw.index("B") and cleaned.index("d") == raw.index("d")
    assert "<" not in cleaned and "\x07" not in cleaned and "\n" in cleaned


def test_tokens_keep_contractions_negations_and_punctuation():
    tokenizer = Tokenizer()
    assert tokenizer.sentences("I didn't like it! Isn't it odd? A well-made film.") == [
        ["i", "didn't", "like", "it", "!"],
        ["isn't", "it", "odd", "?"],
        ["a", "well-made", "film"],
    ]
    assert Tokenizer(lower=False).sentences("Great FILM") == [["Great", "FILM"]]


TRICKY = [
    "Mr. Brown's <b>film</b> &amp; its sequel... didn't WORK!!! 😀 Really?",
    "Tom &amp; Jerry &#39;rock&#39;. Caf\u00e9 na\u00efve r\u00e9sum\u00e9 \uff26\uff49\uff4c\uff4d.",
    "Curly \u2019quotes\u2019 don\u2019t break\u2014things. \x00 Control\x1f chars.",
    "",
    "   ",
    "word " * 3000,
]


@pytest.mark.parametrize("text", TRICKY)
def test_offsets_map_back_to_the_original_text(text):
    tokenizer = Tokenizer()
    tokenized = tokenizer.tokenize(text)
    for s, sentence in enumerate(tokenized):
        for i, token in enumerate(sentence):
            assert text[token.start : token.end] == token.text
            assert (token.sentence, token.index) == (s, i)
    # The offset path and the fast path agree on sentences and forms.
    assert [[t.form for t in s] for s in tokenized] == tokenizer.sentences(text)


def test_sentence_spans_include_punctuation():
    text = 'Great film. <br />"Really?" Yes!'
    sentences, spans = Tokenizer().tokenize(text, return_spans=True)
    assert [text[a:b] for a, b in spans] == ["Great film.", '"Really?"', "Yes!"]
    assert len(sentences) == len(spans)
    assert all(a <= s[0].start and s[-1].end <= b for s, (a, b) in zip(sentences, spans))


def test_entities_and_unicode_forms():
    tokenizer = Tokenizer()
    (sentence,) = tokenizer.tokenize("Tom &amp; Jerry don\u2019t \uff26\uff49\uff4c\uff4d")
    assert [t.text for t in sentence] == ["Tom", "Jerry", "don\u2019t", "\uff26\uff49\uff4c\uff4d"]
    assert [t.form for t in sentence] == ["tom", "jerry", "don't", "film"]
    (sentence,) = tokenizer.tokenize("It&#39;s fine")
    assert [(t.text, t.form) for t in sentence] == [("It&#39;s", "it's"), ("fine", "fine")]


def test_bytes_emoji_and_empty_input():
    tokenizer = Tokenizer()
    # Undecodable bytes become U+FFFD (not a word character), emoji are tokens.
    assert tokenizer.sentences(b"caf\xe9 ok \xf0\x9f\x98\x80") == [["caf", "ok", "\U0001f600"]]
    assert tokenizer.sentences(None) == [] and tokenizer.tokenize("  ") == []


def test_real_imdb_reviews_tokenize_consistently(imdb_sample):
    tokenizer = Tokenizer()
    for text in imdb_sample.texts:
        tokenized = tokenizer.tokenize(text)
        assert tokenized, "a real review produced no tokens"
        assert all(text[t.start : t.end] == t.text for s in tokenized for t in s)
        assert [[t.form for t in s] for s in tokenized] == tokenizer.sentences(text)
        assert not any("<br" in t.text for s in tokenized for t in s)


def test_tokenize_stops_at_its_limits_and_cuts_the_last_span_at_its_last_token():
    tokenizer = Tokenizer()
    text = "One two three four. Five six. Seven eight nine. " * 1000
    sentences, spans = tokenizer.tokenize(text, return_spans=True, max_sentences=2, max_words=3)
    assert [[t.text for t in s] for s in sentences] == [["One", "two", "three"], ["Five", "six"]]
    assert [text[a:b] for a, b in spans] == ["One two three", "Five six."]
    sentences = tokenizer.tokenize(text, max_tokens=5)
    assert [[t.text for t in s] for s in sentences] == [["One", "two", "three", "four"], ["Five"]]
    whole = tokenizer.tokenize(text)
    assert len(whole) == 3000
    assert [t.form for s in whole[:2] for t in s] == [
        t.form for s in tokenizer.tokenize(text, max_sentences=2) for t in s
    ]


DEVSUITE = pathlib.Path(__file__).resolve().parents[3] / "shared" / "datasets"


def _devsuite_texts(rows=300):
    """The first `rows` texts of each devsuite training set and Reuters (none where ../shared is absent)."""
    import pandas as pd

    texts = []
    for path in sorted(DEVSUITE.glob("devsuite/*/train.csv")) + sorted(DEVSUITE.glob("multilabel/*/train.csv")):
        texts += pd.read_csv(path, nrows=rows)["text"].astype(str).tolist()
    return texts


def test_words_are_the_sentences_tokens_run_together(imdb_sample):
    texts = list(imdb_sample.texts) + _devsuite_texts() + [c["text"] for c in CASES]
    texts += [
        "",
        "<br />",
        "It ends.Then it starts",
        "U.S.A. and e.g. this",
        "caf\u00e9 &amp; d\u2019or\u2026 \U0001f600!",
    ]
    assert len(texts) > 300 + 1000 or not DEVSUITE.exists()
    tokenizer = Tokenizer()
    for text in texts:
        assert tokenizer.words(text) == [t for sentence in tokenizer.sentences(text) for t in sentence], text
    assert tokenizer.words("One two. Three four.", max_tokens=3) == ["one", "two", "three"]
    assert Tokenizer(lower=False, unescape_html=False).words("A &amp; B") == ["A", "amp", "B"]


def test_ascii_text_gives_the_tokens_of_the_general_path(imdb_sample):
    # ASCII text takes a faster path; a non-ASCII character at the end sends the same text down the general one.
    texts = list(imdb_sample.texts[:300]) + [c["text"] for c in CASES]
    texts += [
        "U.S. e.g., a. 1a 1,000. 3.50 don't well-made -- 'quoted' end... !? why?! x_y #tag @user 10:30pm A.B",
        "it's--really good, isn't it?? (yes) [no] {maybe} 'tis the-end. ...and so-so!",
    ]
    tokenizer = Tokenizer()
    for text in texts:
        general = tokenizer.words(text + " \u00e9")
        assert general[-1] == "\u00e9" and tokenizer.words(text) == general[:-1], text
        general = tokenizer.sentences(text + " \u00e9")
        assert tokenizer.sentences(text) == general[:-1] + ([general[-1][:-1]] if general[-1][:-1] else []), text
