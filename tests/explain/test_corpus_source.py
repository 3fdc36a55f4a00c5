"""Tests for hierattn.explain.corpus_source: the documents explain --dataset reads."""

import os

import pytest

from hierattn.errors import ArgumentError, HierattnError
from hierattn.explain.corpus_source import open_corpus

from conftest import IMDB_ARCHIVE


def test_open_corpus_file_limit_and_errors(tmp_path):
    (tmp_path / "t.txt").write_text("one\ntwo\nthree\n")
    source = open_corpus(str(tmp_path / "t.txt"), limit=2)
    assert list(source.texts) == ["one", "two"] and source.labels is None and source.total == 2
    with pytest.raises(HierattnError, match="no such dataset"):
        open_corpus(str(tmp_path / "missing.csv"))
    with pytest.raises(ArgumentError, match="^limit must be at least 1$"):
        open_corpus(str(tmp_path / "t.txt"), limit=0)


@pytest.mark.skipif(not os.path.exists(IMDB_ARCHIVE), reason=f"real IMDB archive not found at {IMDB_ARCHIVE}")
def test_open_corpus_imdb_sample_is_seeded_and_has_both_classes():
    first = open_corpus("imdb", data=IMDB_ARCHIVE, limit=50, progress=False)
    second = open_corpus("imdb", data=IMDB_ARCHIVE, limit=50, progress=False)
    assert first.ids == second.ids and len(first.texts) == 50 == first.total
    assert set(first.labels) == {"neg", "pos"}
    assert all(i.startswith("test/") for i in first.ids)
