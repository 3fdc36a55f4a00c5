"""Tests for hierattn.data.text: cleaning, sentence splitting, tokens with offsets."""

import functools
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


# Real sentences in scripts other than Latin: each language's own sentence ends, and its words whole
# (Thai vowel signs, Devanagari matras and viramas, Arabic harakat are marks, not letters, and stay in their word).
SCRIPTS = [
    (
        "这家店送餐很快。味道也不错！下次还会再点吗？会的",
        ["这家店送餐很快。", "味道也不错！", "下次还会再点吗？", "会的"],
    ),
    ("配達がとても早かったです。また注文します！", ["配達がとても早かったです。", "また注文します！"]),
    ("อาหารอร่อยมาก\nส่งเร็วด้วย", ["อาหารอร่อยมาก", "ส่งเร็วด้วย"]),
    ("الطعام لذيذ جداً؟ نعم، والتوصيل سريع.", ["الطعام لذيذ جداً؟", "نعم، والتوصيل سريع."]),
    ("खाना बहुत अच्छा था। डिलीवरी जल्दी हुई॥ धन्यवाद", ["खाना बहुत अच्छा था।", "डिलीवरी जल्दी हुई॥", "धन्यवाद"]),
    ("ဒီဆိုင်ကောင်းတယ်။ ထပ်လာမယ်။", ["ဒီဆိုင်ကောင်းတယ်။", "ထပ်လာမယ်။"]),
    ("「很好吃。」我还会来．", ["「很好吃。」", "我还会来．"]),
]


@pytest.mark.parametrize("text, expected", SCRIPTS)
def test_sentences_end_where_each_script_ends_them(text, expected):
    assert sentences(text) == expected


def test_words_keep_their_combining_marks():
    tokenizer = Tokenizer()
    assert tokenizer.words("खाना बहुत अच्छा था। हिन्दी") == ["खाना", "बहुत", "अच्छा", "था", "हिन्दी"]
    assert tokenizer.words("อาหารอร่อยมาก ส่งเร็ว") == ["อาหารอร่อยมาก", "ส่งเร็ว"]
    assert tokenizer.words("الطعامُ لذيذٌ") == ["الطعامُ", "لذيذٌ"]


def test_forms_are_nfkc_and_case_folded():
    # Full-width Latin and digits in CJK text read as ASCII; case folding maps the German sharp s as lower() does not.
    assert Tokenizer().words("ＧＯＯＤ１２３ 很好 Straße ΣΟΦΟΣ") == ["good123", "很好", "strasse", "σοφοσ"]


@functools.cache
def _learned():
    return Tokenizer().with_units("subwords", learn_from=[s[0] for s in SCRIPTS] * 20 + TRICKY[:3] * 20)


@pytest.mark.parametrize("units", ["characters", "subwords"])
@pytest.mark.parametrize("text", [s[0] for s in SCRIPTS] + TRICKY)
def test_units_map_back_to_the_original_text(units, text):
    tokenizer = _learned() if units == "subwords" else Tokenizer().with_units(units)
    tokenized = tokenizer.tokenize(text)
    previous_end = 0
    for s, sentence in enumerate(tokenized):
        for i, token in enumerate(sentence):
            assert text[token.start : token.end] == token.text and token.start >= previous_end
            assert (token.sentence, token.index) == (s, i)
            previous_end = token.end
    assert [[t.form for t in s] for s in tokenized] == tokenizer.sentences(text)
    assert [t.form for s in tokenized for t in s] == tokenizer.words(text)
    assert tokenizer.words(text, max_tokens=5) == tokenizer.words(text)[:5]
    again = Tokenizer.from_config(json.loads(json.dumps(tokenizer.get_config())))
    assert again.sentences(text) == tokenizer.sentences(text)


def test_character_units_are_the_characters_of_words():
    tokenizer = Tokenizer().with_units("characters")
    assert tokenizer.sentences("送餐很快。味道ＯＫ！") == [["送", "餐", "很", "快"], ["味", "道", "o", "k"]]
    (sentence,) = tokenizer.tokenize("很快 ok", max_words=3)
    assert [(t.text, t.start, t.end) for t in sentence] == [("很", 0, 1), ("快", 1, 2), ("o", 3, 4)]


def test_units_must_be_known_and_auto_must_be_chosen_first():
    with pytest.raises(ValueError, match="units must be one of"):
        Tokenizer(units="letters")
    with pytest.raises(ValueError, match="chosen from training texts first"):
        Tokenizer(units="auto").words("很好")
    with pytest.raises(ValueError, match="learn_from"):
        Tokenizer().with_units("subwords")
    with pytest.raises(ValueError, match="learned from training texts first"):
        Tokenizer(units="subwords").tokenize("很好")


def test_units_of_a_letter_that_normalises_to_more_keep_the_spans_of_their_letters():
    tokenizer = Tokenizer().with_units("characters")
    units = [(t.text, t.form, t.start, t.end) for s in tokenizer.tokenize("Straße ﬁne") for t in s]
    assert units[3:7] == [("a", "a", 3, 4), ("ß", "s", 4, 5), ("", "s", 5, 5), ("e", "e", 5, 6)]
    assert units[7:9] == [("ﬁ", "f", 7, 8), ("", "i", 8, 8)] and units[9] == ("n", "n", 8, 9)
    assert [(t.text, t.start) for s in tokenizer.tokenize("e\u0301te") for t in s][0] == ("e\u0301", 0)


def test_a_full_width_decimal_point_ends_no_sentence_and_forms_hold_no_space():
    assert sentences("价格３．５元。好吃．下次再来") == ["价格３．５元。", "好吃．", "下次再来"]
    assert Tokenizer().words("\u037a \ufc5e") == ["ι", "ٌّ"]  # NFKC gives a space before each: left out
    assert Tokenizer().get_config() == {"lower": True, "unescape_html": True}  # as before units (old runtimes)


def test_a_character_unit_is_a_letter_with_its_marks():
    tokenizer = Tokenizer().with_units("characters")
    text = "อร่อย हिन्दी"
    units = [t for s in tokenizer.tokenize(text) for t in s]
    assert [t.text for t in units] == ["อ", "ร่", "อ", "ย", "हि", "न्", "दी"]
    assert all(t.start < t.end and text[t.start : t.end] == t.text for t in units)
    assert tokenizer.words(text) == [t.form for t in units]
