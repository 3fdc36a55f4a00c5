"""Tests for hierattn.ngrams.NgramLogits."""

import collections
import io
import zipfile

import keras
import numpy as np
import pytest
from keras.src import testing

from hierattn.ngrams.logits import NgramLogits

from layer_checks import assert_keras_round_trip, full_table_outputs


def reference_features(ids, vocabulary_size, num_buckets, ngram_max):
    """Each document's n-grams hashed in plain Python (same formula as the layer): feature id -> occurrences."""
    documents = []
    for doc in np.asarray(ids).reshape(len(ids), -1, np.shape(ids)[-1]):
        features = collections.Counter()
        for row in doc:
            for n in range(1, ngram_max + 1):
                for t in range(len(row) - n + 1):
                    gram = row[t : t + n]
                    if np.all(gram > 0):
                        if n == 1:
                            features[int(gram[0])] += 1
                        else:
                            key = 0
                            for token in gram:
                                key = key * vocabulary_size + int(token)
                            hashed = ((key % (2**31 - 1)) * 1_140_671_485) % (2**31 - 1)
                            features[hashed % (num_buckets - vocabulary_size) + vocabulary_size] += 1
        documents.append(features)
    return documents


def random_tables(rng, num_buckets, num_classes, kept_share=0.3, unseen_idf=3.5):
    """Random tables of a fitted layer: compact ones to set, and the same as full tables (every bucket)."""
    kept = np.flatnonzero(rng.random(num_buckets) < kept_share)
    kept = kept[kept > 0]
    idf = rng.uniform(1, 3, len(kept)).astype("float32")
    kernel = rng.normal(size=(len(kept), num_classes)).astype("float32")
    bias = rng.normal(size=num_classes).astype("float32")
    unseen_idf = np.float32(unseen_idf)
    full_idf = np.full(num_buckets, unseen_idf, "float32")
    full_idf[kept] = idf
    full_kernel = np.zeros((num_buckets, num_classes), "float32")
    full_kernel[kept] = kernel
    return (kept, idf, kernel, bias, unseen_idf), (full_idf, full_kernel, bias)


def count_matrix(documents, num_buckets):
    """The document x feature count matrix (SciPy CSR) of `reference_features`' counters."""
    import scipy.sparse as sp

    rows = [i for i, document in enumerate(documents) for _ in document]
    columns = [feature for document in documents for feature in document]
    counts = [count for document in documents for count in document.values()]
    return sp.csr_matrix((np.array(counts, float), (rows, columns)), shape=(len(documents), num_buckets))


class NgramLogitsLayerTest(testing.TestCase):
    def test_keras_layer_harness(self):
        self.run_layer_test(
            NgramLogits,
            init_kwargs={"vocabulary_size": 20, "num_classes": 3, "ngram_max": 2, "num_buckets": 64},
            input_data=np.array([[1, 2, 3, 0], [4, 5, 0, 0]], "int32"),
            expected_output_shape=(2, 3),
            expected_num_trainable_weights=0,
            expected_num_non_trainable_weights=0,  # the tables are not Keras variables
            run_training_check=False,
        )

    def test_keras_layer_harness_sublinear_unnormalized(self):
        self.run_layer_test(
            NgramLogits,
            init_kwargs={
                "vocabulary_size": 20,
                "num_classes": 3,
                "ngram_max": 3,
                "num_buckets": 64,
                "tf": "sublinear",
                "normalize": False,
            },
            input_data=np.array([[[1, 2, 1, 2], [1, 2, 0, 0]], [[4, 5, 0, 0], [0, 0, 0, 0]]], "int32"),
            expected_output_shape=(2, 3),
            expected_num_trainable_weights=0,
            expected_num_non_trainable_weights=0,
            run_training_check=False,
        )


@pytest.mark.parametrize("shape", [(3, 9), (3, 2, 6)])
def test_feature_ids_are_the_distinct_ngrams(rng, shape):
    ids = rng.integers(0, 7, size=shape)
    ids[..., -2:] = 0  # padding at the end of every row
    layer = NgramLogits(7, 2, ngram_max=3, num_buckets=500)
    got = np.asarray(layer.feature_ids(ids))
    for row, expected in zip(got, reference_features(ids, 7, 500, 3)):
        assert sorted(row[row >= 0].tolist()) == sorted(expected)
        assert len(set(row[row >= 0].tolist())) == int((row >= 0).sum())  # each feature once


def test_ngrams_do_not_span_padding_or_sentences():
    layer = NgramLogits(10, 2, ngram_max=2, num_buckets=100)
    across = np.asarray(layer.feature_ids(np.array([[[1, 2], [3, 0]]])))  # two sentences: 1 2 | 3
    together = np.asarray(layer.feature_ids(np.array([[1, 2, 3, 0]])))
    assert (across >= 0).sum() == 4  # 1, 2, 3, "1 2"
    assert (together >= 0).sum() == 5  # and "2 3"


@pytest.mark.parametrize("shape", [(4, 9), (4, 3, 6)])
def test_feature_counts_count_each_ngram_over_the_whole_document(rng, shape):
    ids = rng.integers(0, 4, size=shape)  # three words: n-grams repeat within and across rows
    layer = NgramLogits(4, 2, ngram_max=3, num_buckets=300)
    feature_ids, counts = (np.asarray(v) for v in layer.feature_counts(ids))
    np.testing.assert_array_equal(feature_ids, np.asarray(layer.feature_ids(ids)))
    assert feature_ids.dtype == counts.dtype == np.int32 and counts.shape == feature_ids.shape
    assert np.all(counts[feature_ids < 0] == 0)
    expected = reference_features(ids, 4, 300, 3)
    for row_ids, row_counts, document in zip(feature_ids, counts, expected):
        present = row_ids >= 0
        assert dict(zip(row_ids[present].tolist(), row_counts[present].tolist())) == dict(document)
    assert max(max(document.values()) for document in expected) > 1


def test_feature_counts_add_up_repeats_across_sentences():
    layer = NgramLogits(10, 2, ngram_max=2, num_buckets=100)
    ids = np.array([[[1, 2, 0], [1, 2, 3]], [[0, 0, 0], [0, 0, 0]]])  # "1 2" | "1 2 3", and an empty document
    feature_ids, counts = (np.asarray(v) for v in layer.feature_counts(ids))
    found = dict(zip(feature_ids[0].tolist(), counts[0].tolist()))
    assert {word: found[word] for word in (1, 2, 3)} == {1: 2, 2: 2, 3: 1}
    assert sorted(count for feature, count in found.items() if feature >= 10) == [1, 2]  # "2 3", "1 2"
    assert np.all(feature_ids[1] == -1) and np.all(counts[1] == 0)


@pytest.mark.parametrize("tf", ["binary", "sublinear"])
@pytest.mark.parametrize("normalize", [True, False])
@pytest.mark.parametrize("unseen_idf", [3.5, 0.0])
def test_values_are_scikit_learns_tfidf(rng, tf, normalize, unseen_idf):
    from sklearn.feature_extraction.text import TfidfTransformer

    layer = NgramLogits(6, 3, ngram_max=3, num_buckets=120, tf=tf, normalize=normalize)
    tables, (idf, kernel, bias) = random_tables(rng, 120, 3, unseen_idf=unseen_idf)
    layer.set_tables(*tables)
    ids = rng.integers(0, 6, size=(5, 3, 7))  # five words: n-grams repeat within and across sentences
    ids[-1] = 0  # an empty document
    counts = count_matrix(reference_features(ids, 6, 120, 3), 120)
    assert counts.max() > 1
    transformer = TfidfTransformer(norm="l2" if normalize else None, sublinear_tf=tf == "sublinear")
    transformer.idf_ = idf.astype(float)
    x = transformer.transform(counts if tf == "sublinear" else (counts > 0).astype(float))
    logits, feature_ids, contributions = (np.asarray(v) for v in layer(ids, return_contributions=True))
    np.testing.assert_allclose(logits, x @ kernel + bias, rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(contributions.sum(axis=1) + bias, logits, rtol=1e-6, atol=1e-6)
    values = np.asarray(layer.feature_values(*layer.feature_counts(ids)))
    expected = np.where(feature_ids >= 0, x.toarray()[np.arange(len(ids))[:, None], np.maximum(feature_ids, 0)], 0)
    np.testing.assert_allclose(values, expected, rtol=1e-5, atol=1e-6)
    np.testing.assert_array_equal(logits[-1], bias)


@pytest.mark.parametrize("tf", ["binary", "sublinear"])
@pytest.mark.parametrize("normalize", [True, False])
def test_unseen_idf_zero_ignores_the_features_not_kept(tf, normalize):
    layer = NgramLogits(10, 2, ngram_max=2, num_buckets=100, tf=tf, normalize=normalize)
    layer.set_tables([2], [1.5], [[1.0, -1.0]], [0.5, -0.5], 0.0)
    ids = np.array([[5, 6, 7, 5], [2, 5, 6, 0]])  # no kept feature; word 2 among unkept ones
    logits, _, contributions = (np.asarray(v) for v in layer(ids, return_contributions=True))
    assert np.all(np.isfinite(logits)) and np.all(np.isfinite(contributions))
    np.testing.assert_array_equal(logits[0], [0.5, -0.5])  # the bias
    np.testing.assert_array_equal(contributions[0], 0.0)
    x_2 = 1.0 if normalize else 1.5  # alone in its document's length
    np.testing.assert_allclose(logits[1], [0.5 + x_2, -0.5 - x_2], rtol=1e-6)


def test_feature_values_without_counts_count_each_feature_once():
    layer = NgramLogits(10, 2, ngram_max=1, num_buckets=100, tf="sublinear", normalize=False)
    layer.set_tables([2, 3], [1.5, 2.0], [[1.0, -1.0], [0.0, 0.0]], [0.0, 0.0], 1.0)
    feature_ids, counts = layer.feature_counts(np.array([[2, 2, 2, 3]]))
    np.testing.assert_array_equal(np.asarray(feature_ids), [[2, -1, -1, 3]])
    np.testing.assert_allclose(np.asarray(layer.feature_values(feature_ids)), [[1.5, 0, 0, 2.0]])
    np.testing.assert_allclose(
        np.asarray(layer.feature_values(feature_ids, counts)), [[1.5 * (1 + np.log(3)), 0, 0, 2.0]], rtol=1e-6
    )


def test_logits_are_the_tfidf_linear_model(rng):
    layer = NgramLogits(12, 3, ngram_max=2, num_buckets=80)
    tables, (idf, kernel, bias) = random_tables(rng, 80, 3)
    layer.set_tables(*tables)
    ids = rng.integers(1, 12, size=(4, 6))
    ids[0, 3:] = 0
    logits, feature_ids, contributions = (np.asarray(v) for v in layer(ids, return_contributions=True))
    for i, features in enumerate(reference_features(ids, 12, 80, 2)):
        f = np.array(sorted(features))
        x = idf[f] / np.linalg.norm(idf[f])  # unseen features count in the length, with unseen_idf
        np.testing.assert_allclose(logits[i], bias + x @ kernel[f], rtol=1e-5, atol=1e-5)
        np.testing.assert_allclose(contributions[i].sum(axis=0) + bias, logits[i], rtol=1e-5, atol=1e-5)
        assert np.all(contributions[i][feature_ids[i] < 0] == 0)
        assert np.all(contributions[i][~np.isin(feature_ids[i], tables[0])] == 0)  # no row, no contribution


@pytest.mark.parametrize("shape", [(5, 7), (5, 3, 6)])
def test_compact_tables_give_the_full_table_outputs_exactly(rng, shape):
    layer = NgramLogits(15, 3, ngram_max=2, num_buckets=300)
    tables, full = random_tables(rng, 300, 3)
    layer.set_tables(*tables)
    ids = rng.integers(0, 15, size=shape)
    logits, feature_ids, contributions = (np.asarray(v) for v in layer(ids, return_contributions=True))
    seen = np.isin(feature_ids, tables[0])
    assert np.any(~seen & (feature_ids >= 0))  # the texts hold features without a row
    expected_logits, expected_contributions = full_table_outputs(layer, ids, *full)
    np.testing.assert_array_equal(logits, expected_logits)
    np.testing.assert_array_equal(contributions, expected_contributions)
    np.testing.assert_array_equal(
        np.asarray(layer.feature_values(feature_ids)), np.asarray(layer.feature_values(feature_ids.astype("int64")))
    )


def test_unfitted_layer_gives_zero_logits(rng):
    layer = NgramLogits(9, 4, num_buckets=50)
    logits, _, contributions = layer(rng.integers(0, 9, size=(3, 6)), return_contributions=True)
    assert layer.num_kept == 0 and layer.weights == []
    np.testing.assert_array_equal(np.asarray(logits), np.zeros((3, 4)))
    np.testing.assert_array_equal(np.asarray(contributions), 0.0)


def test_empty_document_gives_the_bias():
    layer = NgramLogits(5, 2, num_buckets=10)
    layer.set_tables([2], [1.5], [[1.0, -1.0]], [0.5, -0.5], 2.0)
    np.testing.assert_allclose(np.asarray(layer(np.zeros((1, 4), "int32"))), [[0.5, -0.5]])


@pytest.mark.parametrize("term_frequency", ["binary", "sublinear"])
def test_works_traced_with_unknown_shapes(rng, term_frequency):
    import tensorflow as tf

    layer = NgramLogits(15, 3, num_buckets=300, tf=term_frequency)
    layer.set_tables(*random_tables(rng, 300, 3)[0])
    for shape in ((4, 9), (4, 2, 5)):
        ids = rng.integers(0, 15, size=shape).astype("int32")
        signature = [tf.TensorSpec((None,) * len(shape), tf.int32)]
        traced = tf.function(lambda x: layer(x, return_contributions=True), input_signature=signature)
        for got, expected in zip(traced(ids), layer(ids, return_contributions=True)):
            np.testing.assert_array_equal(np.asarray(got), np.asarray(expected))
        traced_counts = tf.function(layer.feature_counts, input_signature=signature)
        for got, expected in zip(traced_counts(ids), layer.feature_counts(ids)):
            np.testing.assert_array_equal(np.asarray(got), np.asarray(expected))


def test_output_shape():
    layer = NgramLogits(9, 4, num_buckets=50)
    assert layer.compute_output_shape((2, 3, 5)) == (2, 4)
    assert layer.compute_output_shape(None) == (None, 4)  # as `summary()` asks


@pytest.mark.parametrize(
    "arguments, message",
    [
        ({"tf": "log"}, "tf must be one of binary, sublinear. Received: tf='log'"),
        ({"tf": None}, "tf must be one of"),
        ({"normalize": "l2"}, "normalize must be True or False. Received: normalize='l2'"),
        ({"normalize": 1}, "normalize must be True or False"),
    ],
)
def test_refuses_bad_term_frequency_or_normalize(arguments, message):
    with pytest.raises(ValueError, match=message):
        NgramLogits(10, 2, num_buckets=100, **arguments)


def test_refuses_bad_sizes():
    with pytest.raises(ValueError, match="num_buckets must exceed"):
        NgramLogits(100, 2, num_buckets=100)
    with pytest.raises(ValueError, match="63 bits"):
        NgramLogits(2**22, 2, ngram_max=3, num_buckets=2**23)
    with pytest.raises(ValueError, match="31 bits"):
        NgramLogits(100, 2, num_buckets=2**31)


@pytest.mark.parametrize(
    "tables, message",
    [
        (([3, 2], [1.0, 1.0], [[0.0, 0.0]] * 2, [0.0, 0.0], 2.0), "strictly increasing"),
        (([0, 2], [1.0, 1.0], [[0.0, 0.0]] * 2, [0.0, 0.0], 2.0), "strictly increasing"),
        (([2, 10], [1.0, 1.0], [[0.0, 0.0]] * 2, [0.0, 0.0], 2.0), r"\[1, 10\)"),
        (([2, 3], [1.0], [[0.0, 0.0]] * 2, [0.0, 0.0], 2.0), "idf must have shape"),
        (([2, 3], [1.0, 1.0], [[0.0, 0.0, 0.0]] * 2, [0.0, 0.0], 2.0), "kernel must have shape"),
        (([2, 3], [1.0, 1.0], [[0.0, 0.0]] * 2, [0.0], 2.0), "bias must have shape"),
        (([2, 3], [1.0, 1.0], [[0.0, 0.0]] * 2, [0.0, 0.0], [2.0]), "unseen_idf must have shape"),
    ],
)
def test_set_tables_refuses_bad_tables(tables, message):
    with pytest.raises(ValueError, match=message):
        NgramLogits(5, 2, num_buckets=10).set_tables(*tables)


@pytest.mark.parametrize("term_frequency, normalize", [("binary", True), ("sublinear", False)])
def test_saves_and_loads(tmp_path, rng, term_frequency, normalize):
    import h5py

    ids = keras.Input((None,), dtype="int32")
    layer = NgramLogits(9, 2, num_buckets=40, tf=term_frequency, normalize=normalize)
    model = keras.Model(ids, layer(ids))
    tables, _ = random_tables(rng, 40, 2)
    layer.set_tables(*tables)
    reloaded = assert_keras_round_trip(model, rng.integers(0, 9, size=(3, 12)).astype("int32"), tmp_path)
    loaded = reloaded.get_layer(layer.name)
    assert (loaded.tf, loaded.normalize) == (term_frequency, normalize)
    for name, value in zip(("kept_ids", "idf", "kernel", "bias", "unseen_idf"), tables):
        np.testing.assert_array_equal(np.asarray(getattr(loaded, name)), value)
    with (
        zipfile.ZipFile(tmp_path / "model.keras") as archive,
        h5py.File(io.BytesIO(archive.read("model.weights.h5"))) as weights,
    ):
        stored = {}
        weights.visititems(
            lambda name, item: stored.update({name: item.shape}) if isinstance(item, h5py.Dataset) else None
        )
    assert sorted(stored.values()) == sorted([(len(tables[0]),), (len(tables[0]),), (len(tables[0]), 2), (2,), ()])


def test_config_without_tf_or_normalize_loads_as_before(rng):
    layer = NgramLogits(12, 3, ngram_max=2, num_buckets=80)
    tables, _ = random_tables(rng, 80, 3)
    layer.set_tables(*tables)
    config = layer.get_config()
    assert (config["tf"], config["normalize"]) == ("binary", True)
    older = {key: value for key, value in config.items() if key not in ("tf", "normalize")}
    loaded = NgramLogits.from_config(older)
    assert (loaded.tf, loaded.normalize) == ("binary", True)
    loaded.set_tables(*tables)
    ids = rng.integers(1, 4, size=(4, 8))  # few words: repeats, where the term frequencies differ
    np.testing.assert_array_equal(np.asarray(loaded(ids)), np.asarray(layer(ids)))
    sublinear = NgramLogits.from_config({**older, "tf": "sublinear"})
    sublinear.set_tables(*tables)
    assert not np.allclose(np.asarray(sublinear(ids)), np.asarray(layer(ids)))


def test_loads_the_full_tables_of_older_files(rng):
    tables, full = random_tables(rng, 60, 2)
    older = NgramLogits(8, 2, num_buckets=60)
    older.load_own_variables({"0": full[0], "1": full[1], "2": full[2]})  # idf, kernel, bias of every bucket
    assert older.num_kept == len(tables[0])
    ids = rng.integers(0, 8, size=(6, 7))
    expected = full_table_outputs(older, ids, *full)
    for got, want in zip(older(ids, return_contributions=True)[::2], expected):
        np.testing.assert_array_equal(np.asarray(got), want)
    unfitted = NgramLogits(8, 2, num_buckets=60)
    unfitted.load_own_variables({"0": np.ones(60), "1": np.zeros((60, 2)), "2": np.zeros(2)})
    assert unfitted.num_kept == 0 and float(unfitted.unseen_idf) == 1.0
    with pytest.raises(ValueError, match="expected the tables"):
        unfitted.load_own_variables({"0": np.ones(60)})


def test_docstring_example_runs():
    import doctest

    import hierattn.ngrams.logits as module

    result = doctest.testmod(module)
    assert result.attempted >= 4 and result.failed == 0
