"""Tests for hierattn.models.embeddings."""

import os
import re
import subprocess
import sys

import numpy as np
import pytest

from hierattn.data.vocabulary import Vocabulary
from hierattn.errors import DataError
from hierattn.models.embeddings import embedding_matrix, initial_vectors, load_vectors, train_word2vec

from conftest import interrupt_once


def test_word2vec_learns_vectors_for_frequent_words():
    sentences = [["good", "film", "great", "acting"], ["bad", "film", "awful", "acting"]] * 200
    vectors = train_word2vec(sentences, dim=12, epochs=3, min_count=2, seed=1)
    assert set(vectors) == {"good", "film", "great", "acting", "bad", "awful"}
    assert vectors["film"].shape == (12,) and vectors["film"].dtype == np.float32


WORD2VEC_IN_A_FRESH_PROCESS = """
import random
from hierattn.models.embeddings import train_word2vec
rng = random.Random(0)
words = [f"w{i}" for i in range(200)]
vectors = train_word2vec([[rng.choice(words) for _ in range(15)] for _ in range(2000)], dim=8, epochs=2)
print(repr(sorted((w, v.tobytes().hex()) for w, v in vectors.items())[:50]))
"""


def test_word2vec_is_reproducible_across_processes_by_default():
    def run(hash_seed):  # a different string-hash seed, as in two separate `train` runs
        env = {**os.environ, "PYTHONHASHSEED": hash_seed}
        return subprocess.run(
            [sys.executable, "-c", WORD2VEC_IN_A_FRESH_PROCESS], env=env, check=True, capture_output=True, text=True
        ).stdout

    first = run("1")
    assert first and first == run("2")


@pytest.mark.parametrize("header", [True, False])
def test_load_word2vec_and_glove_text(tmp_path, header):
    lines = ["film 0.1 0.2 0.3", "good -1 0 1", "rare 5 5 5"]
    path = tmp_path / "vectors.txt"
    path.write_text(("3 3\n" if header else "") + "\n".join(lines) + "\n")
    vectors = load_vectors(path, Vocabulary(["film", "good"]), progress=False)
    assert set(vectors) == {"film", "good"}
    np.testing.assert_allclose(vectors["good"], [-1, 0, 1])


def test_load_vectors_errors(tmp_path):
    with pytest.raises(DataError, match="no such vectors file"):
        load_vectors(tmp_path / "none.txt")
    (tmp_path / "ragged.txt").write_text("a 1 2\nb 1 2 3\n")
    with pytest.raises(
        DataError,
        match=r"is not a word2vec or GloVe text file \(.*\): line 2 has 3 numbers where "
        "the lines before have 2",
    ):
        load_vectors(tmp_path / "ragged.txt", progress=False)
    (tmp_path / "words.txt").write_text("a b c\n")
    with pytest.raises(DataError, match="is not a word2vec or GloVe text file"):
        load_vectors(tmp_path / "words.txt", progress=False)


def test_embedding_matrix_rows():
    vocabulary = Vocabulary(["film", "good", "unseen"])
    vectors = {"film": np.array([1.0, 2.0], np.float32), "good": np.array([3.0, 4.0], np.float32)}
    matrix, coverage = embedding_matrix(vocabulary, vectors, 2)
    assert matrix.shape == (5, 2) and coverage == pytest.approx(2 / 3)
    np.testing.assert_array_equal(matrix[0], 0.0)
    np.testing.assert_array_equal(matrix[vocabulary.lookup("good")], [3.0, 4.0])
    assert np.any(matrix[vocabulary.lookup("unseen")] != 0)
    with pytest.raises(DataError, match="dimensions"):
        embedding_matrix(vocabulary, vectors, 3)


def test_initial_vectors_from_word2vec_a_file_or_none(tmp_path):
    import types

    from hierattn.data.text import Tokenizer

    texts = ["The film was great. I loved it.", "The film was awful. I hated it."] * 30
    vocabulary = Vocabulary(["the", "film", "was", "great", "awful", "i", "loved", "hated", "it", "unseen"])
    preprocessor = types.SimpleNamespace(vocabulary=vocabulary, tokenizer=Tokenizer(), min_count=2)
    assert initial_vectors("none", preprocessor, 4, texts, verbose=False) == (None, None)

    path = tmp_path / "vectors.txt"
    path.write_text("film 1 2 3 4\ngreat 0 1 0 1\nnowhere 1 1 1 1\n")
    matrix, source = initial_vectors(str(path), preprocessor, 4, texts, verbose=False)
    assert matrix.shape == (len(vocabulary), 4) and matrix.dtype == np.float32
    np.testing.assert_array_equal(matrix[vocabulary.lookup("film")], [1, 2, 3, 4])
    assert source == {"source": str(path), "coverage": pytest.approx(2 / 10)}

    def word2vec(seed):
        return initial_vectors("word2vec", preprocessor, 4, texts, ["A dull film."], epochs=2, seed=seed, verbose=False)

    (first, source), (again, _), (other, _) = word2vec(3), word2vec(3), word2vec(4)
    assert source == {"source": "word2vec on the training texts and unlabelled texts", "coverage": pytest.approx(0.9)}
    np.testing.assert_array_equal(first, again)  # seeded
    assert not np.array_equal(first, other)


def _corpus(sentences=3000, seed=0):
    rng = np.random.default_rng(seed)
    words = [f"w{i}" for i in range(300)]
    return [[words[i] for i in rng.integers(0, len(words), 20)] for _ in range(sentences)]


def test_word2vec_an_epoch_at_a_time_gives_gensims_vectors():
    from gensim.models import Word2Vec

    sentences = _corpus()
    vectors = train_word2vec(sentences, dim=16, epochs=3, min_count=2, seed=3, progress=False)
    gensim = Word2Vec(sentences=sentences, vector_size=16, epochs=3, min_count=2, seed=3, workers=1, window=5, sg=0)
    assert sorted(vectors) == sorted(gensim.wv.index_to_key)
    assert all(np.array_equal(vectors[word], gensim.wv[word]) for word in vectors)


def test_word2vec_interrupted_resumes_from_its_checkpoint_to_the_same_vectors(tmp_path):
    sentences, checkpoint = _corpus(), tmp_path / "word2vec.npz"
    settings = {"dim": 16, "epochs": 6, "min_count": 2, "seed": 3, "progress": False}
    whole = train_word2vec(sentences, **settings)

    watcher = interrupt_once(checkpoint)  # Ctrl-C as the first epoch's checkpoint is moved into place
    with pytest.raises(KeyboardInterrupt):
        train_word2vec(sentences, checkpoint=checkpoint, **settings)
    watcher.join()
    with np.load(checkpoint) as saved:
        assert int(saved["epochs"][0]) == 1  # interrupted after its first epoch, five to go
    resumed = train_word2vec(sentences, checkpoint=checkpoint, **settings)
    assert all(np.array_equal(resumed[word], whole[word]) for word in whole) and sorted(resumed) == sorted(whole)

    for other in ({"epochs": 4}, {"seed": 4}):  # another schedule, another seed: not continued, in one line
        with pytest.raises(
            DataError,
            match=rf"^{re.escape(str(checkpoint))} holds the word2vec of another training \(other texts or settings\): it cannot be continued$",
        ):
            train_word2vec(sentences, checkpoint=checkpoint, **{**settings, **other})
    with pytest.raises(DataError, match=rf"^{re.escape(str(checkpoint))} holds the word2vec of another training"):
        train_word2vec(sentences[:-1], checkpoint=checkpoint, **settings)  # other texts
    checkpoint.write_bytes(b"not a checkpoint")
    with pytest.raises(
        DataError, match=rf"^{re.escape(str(checkpoint))} is not a word2vec checkpoint hierattn can read \("
    ):
        train_word2vec(sentences, checkpoint=checkpoint, **settings)
