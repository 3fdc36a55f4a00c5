"""`hierattn.ngrams.twin`: the n-gram layer's numbers in NumPy, equal to the layer's own."""

import numpy as np
import pytest

from hierattn.ngrams.logits import NgramLogits
from hierattn.ngrams.twin import SETTINGS, KeptRows, NgramTables, contributions, logits, ngram_features


@pytest.mark.parametrize(
    ("ngram_max", "tf", "normalize"),
    [(1, "binary", True), (2, "binary", True), (3, "sublinear", True), (3, "binary", False)],
)
def test_the_twin_gives_the_layers_features_logits_and_contributions(rng, ngram_max, tf, normalize):
    layer = NgramLogits(40, 3, ngram_max=ngram_max, num_buckets=4096, tf=tf, normalize=normalize)
    ids = rng.integers(0, 40, (5, 4, 9))
    ids[:, :, 6:] = 0  # padding at the ends of rows
    ids[1] = 0  # a document without words
    ids[2, 0, :4] = [7, 7, 7, 7]  # repeats: counted, not listed twice
    features = np.unique(np.concatenate([np.ravel(f) for f in layer.ngram_features(ids)]))
    kept = features[(features > 0) & (rng.random(len(features)) < 0.7)]  # some features unseen in training
    layer.set_tables(kept, rng.random(len(kept)) + 0.5, rng.normal(size=(len(kept), 3)), rng.normal(size=3), 2.5)
    for mine, theirs in zip(ngram_features(layer, ids), layer.ngram_features(ids)):
        np.testing.assert_array_equal(mine, np.asarray(theirs))
    mine, feature_ids, found = contributions(layer, ids)
    expected = [np.asarray(v) for v in layer(ids, return_contributions=True)]
    np.testing.assert_array_equal(feature_ids, expected[1])
    np.testing.assert_allclose(mine, expected[0], rtol=0, atol=1e-5)
    np.testing.assert_allclose(found, expected[2], rtol=0, atol=1e-6)
    assert mine.dtype == found.dtype == np.float32 and not found[1].any()
    np.testing.assert_allclose(logits(layer, ids, batch_size=2), expected[0], rtol=0, atol=1e-5)  # many at once


def test_the_tables_as_exported_give_the_layers_logits(rng):
    layer = NgramLogits(30, 2, ngram_max=2, num_buckets=1024)
    ids = rng.integers(0, 30, (70, 12))
    ids[::3, 8:] = 0  # documents of several lengths: batched by length
    features = np.unique(np.concatenate([np.ravel(f) for f in layer.ngram_features(ids)]))
    kept = features[features > 0]
    layer.set_tables(kept, rng.random(len(kept)) + 0.5, rng.normal(size=(len(kept), 2)), rng.normal(size=2), 1.5)
    tables = NgramTables({name: getattr(layer, name) for name in SETTINGS}, *layer.exported_tables())
    np.testing.assert_allclose(logits(tables, ids, batch_size=16), np.asarray(layer(ids)), rtol=0, atol=1e-5)
    assert logits(tables, ids[:0]).shape == (0, 2)


def test_kept_rows_are_the_binary_searchs_rows(rng):
    kept = np.unique(rng.integers(1, 5000, 900))
    rows_of = KeptRows(kept, num_buckets=5000)
    queries = np.concatenate([kept, rng.integers(0, 5000, 2000), [0, 4999]])
    rows = np.searchsorted(kept, queries)
    expected = np.where(kept[np.minimum(rows, len(kept) - 1)] == queries, rows, len(kept))
    np.testing.assert_array_equal(rows_of(queries), expected)
    np.testing.assert_array_equal(KeptRows([], num_buckets=64)(np.arange(64)), np.zeros(64, int))
