"""Tests for hierattn.layers.NgramLogits."""

import keras
import numpy as np
import pytest
from keras.src import testing

from hierattn.layers import NgramLogits
from layer_checks import assert_keras_round_trip


def reference_features(ids, vocabulary_size, num_buckets, ngram_max):
    """The distinct n-grams of each document, hashed in plain Python (same formula as the layer)."""
    documents = []
    for doc in np.asarray(ids).reshape(len(ids), -1, np.shape(ids)[-1]):
        features = set()
        for row in doc:
            for n in range(1, ngram_max + 1):
                for t in range(len(row) - n + 1):
                    gram = row[t:t + n]
                    if np.all(gram > 0):
                        if n == 1:
                            features.add(int(gram[0]))
                        else:
                            key = 0
                            for token in gram:
                                key = key * vocabulary_size + int(token)
                            hashed = ((key % (2**31 - 1)) * 1_140_671_485) % (2**31 - 1)
                            features.add(hashed % (num_buckets - vocabulary_size) + vocabulary_size)
        documents.append(features)
    return documents


class NgramLogitsLayerTest(testing.TestCase):
    def test_keras_layer_harness(self):
        self.run_layer_test(
            NgramLogits,
            init_kwargs={"vocabulary_size": 20, "num_classes": 3, "ngram_max": 2, "num_buckets": 64},
            input_data=np.array([[1, 2, 3, 0], [4, 5, 0, 0]], "int32"),
            expected_output_shape=(2, 3),
            expected_num_trainable_weights=0,
            expected_num_non_trainable_weights=3,
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


def test_logits_are_the_tfidf_linear_model(rng):
    layer = NgramLogits(12, 3, ngram_max=2, num_buckets=80)
    layer.build(None)
    idf, kernel, bias = rng.uniform(1, 3, 80), rng.normal(size=(80, 3)), rng.normal(size=3)
    layer.set_weights([idf.astype("float32"), kernel.astype("float32"), bias.astype("float32")])
    ids = rng.integers(1, 12, size=(4, 6))
    ids[0, 3:] = 0
    logits, feature_ids, contributions = (np.asarray(v) for v in layer(ids, return_contributions=True))
    for i, features in enumerate(reference_features(ids, 12, 80, 2)):
        f = np.array(sorted(features))
        x = idf[f] / np.linalg.norm(idf[f])
        np.testing.assert_allclose(logits[i], bias + x @ kernel[f], rtol=1e-5, atol=1e-5)
        np.testing.assert_allclose(contributions[i].sum(axis=0) + bias, logits[i], rtol=1e-5, atol=1e-5)
        assert np.all(contributions[i][feature_ids[i] < 0] == 0)


def test_empty_document_gives_the_bias():
    layer = NgramLogits(5, 2, num_buckets=10)
    layer.build(None)
    layer.bias.assign([0.5, -0.5])
    np.testing.assert_allclose(np.asarray(layer(np.zeros((1, 4), "int32"))), [[0.5, -0.5]])


def test_refuses_bad_sizes():
    with pytest.raises(ValueError, match="num_buckets must exceed"):
        NgramLogits(100, 2, num_buckets=100)
    with pytest.raises(ValueError, match="63 bits"):
        NgramLogits(2**22, 2, ngram_max=3, num_buckets=2**23)


def test_saves_and_loads(tmp_path, rng):
    ids = keras.Input((None,), dtype="int32")
    layer = NgramLogits(9, 2, num_buckets=40)
    model = keras.Model(ids, layer(ids))
    layer.kernel.assign(rng.normal(size=(40, 2)).astype("float32"))
    assert_keras_round_trip(model, rng.integers(0, 9, size=(3, 5)).astype("int32"), tmp_path)


def test_docstring_example_runs():
    import doctest

    import hierattn.layers.ngram_logits as module

    result = doctest.testmod(module)
    assert result.attempted >= 4 and result.failed == 0
