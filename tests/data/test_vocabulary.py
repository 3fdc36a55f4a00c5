"""Tests for hierattn.data.vocabulary."""

import collections
import json

import pytest

from hierattn.data.vocabulary import OOV, PAD, Vocabulary

DOCS = [[["the", "film", "was", "good"], ["the", "end"]], [["the", "film", "was", "bad", "!"]]]


def test_build_counts_cutoff_and_order():
    vocabulary = Vocabulary.build(DOCS, min_count=2)
    assert vocabulary.tokens == ["<pad>", "<oov>", "the", "film", "was"]
    assert vocabulary.lookup("the") == 2 and vocabulary.lookup("good") == OOV
    assert vocabulary.lookup("film") == 3 and vocabulary.lookup("zzz") == OOV
    assert PAD == 0 and "film" in vocabulary and "good" not in vocabulary


def test_max_size_and_ties_are_deterministic():
    vocabulary = Vocabulary.build(DOCS, min_count=1, max_size=5)
    assert len(vocabulary) == 5
    # Ties are broken alphabetically, so document order does not matter.
    assert Vocabulary.build(DOCS[::-1], min_count=1).tokens == Vocabulary.build(DOCS, min_count=1).tokens
    assert Vocabulary.build(collections.Counter({"a": 3, "b": 1}), min_count=1).tokens[2:] == ["a", "b"]


def test_json_round_trip(tmp_path):
    vocabulary = Vocabulary.build(DOCS, min_count=1, max_size=6)
    path = tmp_path / "vocabulary.json"
    vocabulary.save(path)
    loaded = Vocabulary.load(path)
    assert loaded.tokens == vocabulary.tokens and loaded.max_size == 6 and loaded.min_count == 1
    assert json.loads(path.read_text())["format"] == "hierattn.vocabulary/1"


def test_bad_arguments_and_files(tmp_path):
    with pytest.raises(ValueError, match="min_count"):
        Vocabulary.build(DOCS, min_count=0)
    with pytest.raises(ValueError, match="max_size"):
        Vocabulary.build(DOCS, max_size=2)
    bogus = tmp_path / "other.json"
    bogus.write_text('{"tokens": []}')
    with pytest.raises(ValueError, match="is not a hierattn.vocabulary/1 file"):
        Vocabulary.load(bogus)
