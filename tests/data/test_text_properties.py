"""Properties of tokenizing any text (Hypothesis, `tests/hostile.py`): whatever the string, in any script, with any units.

Any Unicode string (controls, NUL, combining marks without a base, direction marks, emoji sequences, lone
surrogates, 1 MB strings) tokenizes without an exception; every unit's span lies inside the text and is the unit's
text there; the three ways to tokenize (`tokenize`, `sentences`, `words`) give the same units; the limits hold.
"""

import pytest
from hypothesis import example, given
from hypothesis import strategies as st

from hierattn.data.text import Tokenizer

from hostile import HUGE_TEXTS, budget, hostile_texts

TRAINING = ["送餐很快，味道不错。", "等了两个小时，饭都凉了。", "A great film, well acted.", "สนุกมาก ชอบที่สุด"] * 30


@pytest.fixture(scope="module")
def tokenizers():
    """A tokenizer of each kind of unit: words, characters, and subwords learned from a few texts in three scripts."""
    words = Tokenizer()
    return {
        "words": words,
        "characters": words.with_units("characters"),
        "subwords": words.with_units("subwords", learn_from=TRAINING),
        "words, as written": Tokenizer(lower=False, unescape_html=False),
    }


UNITS = ("words", "characters", "subwords", "words, as written")


@pytest.mark.parametrize("units", UNITS)
@given(text=hostile_texts(huge=False))
@budget(25)
@example(text="\ud800 good \udfff film")
@example(text="&#x110000; &amp;&amp; &#0;")
@example(text="ß İ ﬃ Ǆ \u0301\u0301")
def test_every_unit_lies_inside_the_text_and_is_its_text_there(tokenizers, units, text):
    sentences, spans = tokenizers[units].tokenize(text, return_spans=True)
    assert len(sentences) == len(spans)
    before = 0
    for number, (tokens, (start, end)) in enumerate(zip(sentences, spans)):
        assert tokens, "a sentence without units is dropped"
        assert before <= start <= end <= len(text)
        before = end
        for index, token in enumerate(tokens):
            assert (token.sentence, token.index) == (number, index)
            assert start <= token.start <= token.end <= end
            assert text[token.start : token.end] == token.text
            assert isinstance(token.form, str) and token.form


@pytest.mark.parametrize("text", HUGE_TEXTS, ids=["words", "one word", "sentence ends", "combining marks"])
def test_a_million_characters_tokenize_with_every_unit(tokenizers, text):
    """What the encoder and the n-gram part read of a text, at their limits, costs no more than a short text's."""
    for tokenizer in tokenizers.values():
        assert len(tokenizer.words(text, max_tokens=400)) <= 400
        cut = tokenizer.tokenize(text, max_sentences=15, max_words=40)
        assert all(text[t.start : t.end] == t.text for sentence in cut for t in sentence)


@pytest.mark.parametrize("units", UNITS)
@given(text=hostile_texts(huge=False))
@budget(25)
def test_the_three_ways_to_tokenize_give_the_same_units(tokenizers, units, text):
    tokenizer = tokenizers[units]
    with_spans = [[token.form for token in sentence] for sentence in tokenizer.tokenize(text)]
    assert with_spans == tokenizer.sentences(text)
    assert [form for sentence in with_spans for form in sentence] == tokenizer.words(text)
    assert tokenizer.has_words(text) == bool(with_spans)


@pytest.mark.parametrize("units", ["characters", "subwords"])
@given(
    text=hostile_texts(huge=False),
    max_sentences=st.integers(0, 5),
    max_words=st.integers(0, 5),
    max_tokens=st.none() | st.integers(0, 12),
)
@budget(25)
# Found in review (issue #67): a long word was cut in its raw letters, so an entity (`&eacute;`) or letters that
# normalising joins (NFD Hangul) gave other first units than the whole word's.
@example(text="d&eacute;j&agrave;vu" + "x" * 10, max_sentences=1, max_words=3, max_tokens=None)
@example(text="\u1112\u1161\u11ab\u1100\u116e\u11a8" * 10, max_sentences=1, max_words=4, max_tokens=None)
def test_the_limits_hold_and_keep_the_first_units(tokenizers, units, text, max_sentences, max_words, max_tokens):
    tokenizer = tokenizers[units]
    cut = tokenizer.tokenize(text, max_sentences=max_sentences, max_words=max_words, max_tokens=max_tokens)
    assert len(cut) <= max_sentences
    assert all(len(sentence) <= max_words for sentence in cut)
    if max_tokens is not None:
        assert sum(map(len, cut)) <= max_tokens
    whole = tokenizer.tokenize(text)
    for sentence in cut:
        assert [t.form for t in sentence] == [t.form for t in whole[sentence[0].sentence]][: len(sentence)]
    if max_tokens is not None:
        assert tokenizer.words(text, max_tokens) == tokenizer.words(text)[:max_tokens]


@given(data=st.binary(max_size=300))
@budget(25)
@example(data="\ud800".encode("utf-8", "surrogatepass"))
def test_bytes_are_read_as_utf_8_with_undecodable_bytes_replaced(tokenizers, data):
    text = data.decode("utf-8", errors="replace")
    for tokenizer in tokenizers.values():
        assert tokenizer.words(data) == tokenizer.words(text)
