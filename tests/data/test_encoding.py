"""Tests for hierattn.data.encoding."""

import numpy as np
import pytest

from hierattn.data import encoding
from hierattn.data.encoding import (
    TextEncoder,
    encode_flat,
    encode_hierarchical,
    kept_positions,
    suggest_lengths,
    tokenize_corpus,
    within_document_ids,
)
from hierattn.data.vocabulary import OOV, Vocabulary
from hierattn.defaults import MAX_DOCUMENT_IDS

CORPUS = [
    "A good film. I loved it!",
    "Bad. Very bad. Awful acting. Terrible plot. The end.",
    "",
    "   ",
    "Unknownword here.",
]


@pytest.fixture
def vocabulary():
    return Vocabulary(["a", "good", "film", "i", "loved", "it", "!", "bad", "very", "here"])


def test_hierarchical_padding_and_truncation(vocabulary):
    documents = tokenize_corpus(CORPUS, progress=False)
    ids = encode_hierarchical(documents, vocabulary, max_sentences=3, max_words=2)
    assert ids.shape == (5, 3, 2) and ids.dtype == np.int32
    v = vocabulary.lookup
    np.testing.assert_array_equal(ids[0], [[v("a"), v("good")], [v("i"), v("loved")], [0, 0]])
    np.testing.assert_array_equal(ids[1], [[v("bad"), 0], [v("very"), v("bad")], [OOV, OOV]])  # 3 of 5 sentences
    assert not ids[2].any() and not ids[3].any()  # empty / whitespace documents
    np.testing.assert_array_equal(ids[4], [[OOV, v("here")], [0, 0], [0, 0]])


def test_flat_padding_and_truncation(vocabulary):
    documents = tokenize_corpus(CORPUS, progress=False)
    v = vocabulary.lookup
    ids = encode_flat(documents, vocabulary, sequence_length=4)
    np.testing.assert_array_equal(ids[0], [v("a"), v("good"), v("film"), v("i")])  # the first 4 of 7 tokens
    np.testing.assert_array_equal(ids[4], [OOV, v("here"), 0, 0])


def test_kept_positions_are_the_first_ones():
    assert list(kept_positions(10, 8)) == [0, 1, 2, 3, 4, 5, 6, 7]
    assert list(kept_positions(5, 8)) == [0, 1, 2, 3, 4]


def test_suggest_lengths_uses_percentiles():
    documents = [[["w"] * n] * s for n, s in [(1, 1), (2, 2), (3, 3), (4, 4), (100, 10)]]
    # sentences per doc 1,2,3,4,10 -> median 3; the 20 sentence lengths are
    # 1,2,2,3,3,3,4,4,4,4 and ten 100s -> median (4+100)/2 = 52; words per doc
    # 1,4,9,16,1000 -> median 9.
    assert suggest_lengths(documents, percentile=50) == {"max_sentences": 3, "max_words": 52, "sequence_length": 9}
    assert suggest_lengths([], 95) == {"max_sentences": 1, "max_words": 1, "sequence_length": 1}


def test_percentile_sizes_stay_within_the_ids_a_saved_classifier_may_have():
    # A saved classifier's limits above MAX_DOCUMENT_IDS are refused at load (#67): fit cuts a percentile's to it,
    # sentences first, and keeps sizes given (checked when the preprocessor was made).
    encoder = TextEncoder.fit(["word " * 140_000] * 2, min_count=1, workers=1, progress=False)  # 1 x 140,000
    assert encoder.max_words == encoder.sequence_length == MAX_DOCUMENT_IDS and encoder.max_sentences == 1
    encoder = TextEncoder.fit(["Good film. " * 70_000] * 2, min_count=1, workers=1, progress=False)  # 70,000 x 2
    assert (encoder.max_sentences, encoder.max_words) == (MAX_DOCUMENT_IDS // 2, 2)
    sizes = {"max_sentences": 3000, "max_words": 70, "sequence_length": 9}
    assert within_document_ids(sizes) == {"max_sentences": 1872, "max_words": 70, "sequence_length": 9}
    sizes = {"max_sentences": 100, "max_words": 2000, "sequence_length": 9}
    assert within_document_ids(sizes, given={"max_sentences": 100})["max_words"] == 1310
    assert within_document_ids({**sizes, "max_words": 20}) == {**sizes, "max_words": 20}
    with pytest.raises(
        ValueError, match="^max_sentences x max_words must be at most 131,072 ids a document, not 1,000"
    ):
        TextEncoder.fit(["a b. c d."] * 2, max_sentences=1000, max_words=1000, progress=False)


def test_text_encoder_fit_and_encode():
    train = ["Good movie. Great acting!", "Bad movie. Awful plot?", "Good plot and good acting."] * 4
    encoder = TextEncoder.fit(train, min_count=2, progress=False)
    assert "good" in encoder.vocabulary and "and" in encoder.vocabulary
    assert encoder.max_sentences == 2 and encoder.max_words == 5
    hierarchical, flat = encoder.encode(train[:3], mode=("hierarchical", "flat"))
    assert hierarchical.shape == (3, 2, 5) and flat.shape == (3, encoder.sequence_length)
    np.testing.assert_array_equal(encoder.encode(train[:3]), hierarchical)  # one mode = the same as both at once
    np.testing.assert_array_equal(encoder.encode(train[:3], mode="flat"), flat)
    fixed = TextEncoder.fit(train, max_sentences=7, sequence_length=3, progress=False)
    assert (fixed.max_sentences, fixed.sequence_length) == (7, 3)
    with pytest.raises(ValueError, match="mode"):
        encoder.encode(["x"], mode="matrix")
    assert encoder.encode([], mode="flat").shape == (0, encoder.sequence_length)


def test_worker_processes_give_the_same_arrays_as_one_process(monkeypatch):
    texts = [f"Review {i}. It was {'good' if i % 2 else 'bad'}! Really?" * (i % 5 + 1) for i in range(2500)]
    serial = TextEncoder.fit(texts, workers=1, progress=False)
    monkeypatch.setattr(encoding, "PARALLEL_THRESHOLD", 100)
    parallel = TextEncoder.fit(texts, workers=2, progress=False)
    assert parallel.vocabulary.tokens == serial.vocabulary.tokens
    np.testing.assert_array_equal(parallel.encode(texts, workers=2), serial.encode(texts, workers=1))
    assert tokenize_corpus(texts[:300], workers=2, progress=False) == tokenize_corpus(
        texts[:300], workers=1, progress=False
    )


def test_awkward_documents_encode_without_error():
    texts = ["", "   \n ", "word " * 10000, b"bad \xff\xfe bytes", "emoji \U0001f600\U0001f44d!", "\x00\x01"]
    encoder = TextEncoder.fit(
        texts + ["word emoji"] * 2, min_count=1, max_sentences=4, max_words=6, sequence_length=8, progress=False
    )
    hierarchical, flat = encoder.encode(texts, mode=("hierarchical", "flat"))
    assert hierarchical.shape == (6, 4, 6) and flat.shape == (6, 8)
    assert not hierarchical[0].any() and not hierarchical[1].any() and not hierarchical[5].any()
    assert np.all(flat[2] == encoder.vocabulary.lookup("word"))  # long document cut to sequence_length
    assert encoder.vocabulary.lookup("\U0001f600") > 1


def test_real_imdb_sample_encodes(imdb_sample):
    encoder = TextEncoder.fit(imdb_sample.texts, progress=False)
    hierarchical, flat = encoder.encode(imdb_sample.texts, mode=("hierarchical", "flat"))
    assert hierarchical.shape[0] == flat.shape[0] == 300
    # The suggested sizes cover most documents whole (95th percentile).
    covered = np.mean(
        [len(d) <= encoder.max_sentences for d in tokenize_corpus(imdb_sample.texts, encoder.tokenizer, progress=False)]
    )
    assert covered >= 0.9
    assert (flat > 1).mean(axis=1).min() > 0  # every review has known words


def test_whole_ids_alone_are_those_made_beside_the_networks(imdb_sample):
    # Alone, "whole" tokenizes without splitting sentences (`Tokenizer.words`): the same ids, faster.
    texts = list(imdb_sample.texts) + ["", "<br />", "Short. Then more."]
    encoder = TextEncoder.fit(imdb_sample.texts, progress=False)
    for length in (40, 5000):
        _, beside = encoder.encode(texts, mode=("hierarchical", "whole"), whole_length=length)
        np.testing.assert_array_equal(encoder.encode(texts, mode="whole", whole_length=length), beside)
