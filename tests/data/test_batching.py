"""Tests for hierattn.data.batching."""

import numpy as np

from hierattn.data.batching import bucket_batches, document_lengths, trim_padding


def test_bucket_batches_cover_everything_and_cut_padding():
    rng = np.random.default_rng(0)
    lengths = rng.integers(1, 500, size=1000)
    batches = bucket_batches(lengths, batch_size=32, seed=1, chunk_batches=10)
    flat = np.concatenate(batches)
    assert sorted(flat.tolist()) == list(range(1000))
    padded = sum(len(b) * lengths[b].max() for b in batches)
    naive = sum(len(b) * lengths[b].max() for b in np.array_split(rng.permutation(1000), len(batches)))
    assert padded < 0.7 * naive
    assert [b.tolist() for b in bucket_batches(lengths, 32, seed=1)] == [
        b.tolist() for b in bucket_batches(lengths, 32, seed=1)
    ]


def test_document_lengths_rank_sentences_first():
    x = np.zeros((3, 4, 5), np.int32)
    x[0, :3, :1] = 1  # 3 short sentences
    x[1, :1, :5] = 1  # 1 long sentence (more tokens)
    x[2, :2, :2] = 1
    assert np.argsort(document_lengths(x)).tolist() == [1, 2, 0]
    assert document_lengths(np.array([[1, 2, 0], [3, 0, 0]])).tolist() == [2, 1]


def test_trim_padding():
    batch = np.zeros((2, 4, 5), np.int32)
    batch[0, 1, 2] = 7
    assert trim_padding(batch).shape == (2, 2, 3)
    assert trim_padding(np.zeros((3, 6), np.int32)).shape == (3, 1)
