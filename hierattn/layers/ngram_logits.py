"""A linear classifier over a hashed bag of word n-grams, computed from token ids."""

import keras
from keras import ops

from hierattn.defaults import NGRAMS
from hierattn.layers._attention_utils import check_positive_int

# The hash of an n-gram of order 2 or more: its ids as one integer in base
# `vocabulary_size`, reduced modulo a Mersenne prime and multiplied by a fixed
# odd constant modulo the same prime (products stay below 2**62).
_PRIME = 2**31 - 1
_MULTIPLIER = 1_140_671_485


@keras.saving.register_keras_serializable(package="hierattn")
class NgramLogits(keras.layers.Layer):
    """Class logits of a linear model over the word 1..n-grams of a document.

    The document's n-grams (within each row of ids: a sentence, or the whole
    document) are mapped to `num_buckets` feature ids: a unigram to its own
    word id (no collisions), a longer n-gram to a hashed bucket above the
    vocabulary, as fastText does. Each distinct feature of a document counts
    once (binary term frequency), is weighted by its inverse document
    frequency `idf` and the document's weights are scaled to unit length, as
    scikit-learn's `TfidfTransformer(norm="l2")` does on binary counts. The
    logits are

        z = bias + sum_f x_f kernel[f]

    so each n-gram's contribution `x_f kernel[f, c]` to class `c` is exact.
    The weights are not trained by gradient descent: `hierattn.ngrams` fits
    them with scikit-learn's logistic regression on the features this layer
    computes (`features`), and sets them. Freshly built, the layer outputs
    zero logits.

    Args:
        vocabulary_size: Number of word ids (padding id 0 included).
        num_classes: Number of output logits.
        ngram_max: Longest n-gram (1 for a bag of words; default 2, from
            `hierattn.defaults.NGRAMS`).
        num_buckets: Number of feature ids, unigrams included; must exceed
            `vocabulary_size` (default 2^20).
        **kwargs: Base layer keyword arguments, such as `name`.

    Call arguments:
        inputs: Int ids `(batch, ..., length)`, 0 for padding; n-grams never
            span padding or rows.
        return_contributions: If `True`, also return the feature ids of each
            distinct n-gram `(batch, k)` (-1 for none) and their contributions
            to every logit `(batch, k, num_classes)`.

    Returns:
        Logits `(batch, num_classes)` (float32), and with
        `return_contributions=True` the feature ids and contributions.

    Example:

    >>> import numpy as np
    >>> layer = NgramLogits(vocabulary_size=10, num_classes=2, ngram_max=2, num_buckets=64)
    >>> ids = np.array([[3, 4, 3, 0]])                # "a b a", padded
    >>> int((np.asarray(layer.feature_ids(ids)) >= 0).sum())  # a, b, "a b", "b a"
    4
    >>> layer(ids).shape                              # zero logits until fitted
    TensorShape([1, 2])

    Reference:
        Joulin, Grave, Bojanowski, Mikolov. "Bag of Tricks for Efficient Text
        Classification." EACL 2017 (hashed n-gram features). Mesnil, Mikolov,
        Ranzato, Bengio. "Ensemble of Generative and Discriminative Techniques
        for Sentiment Analysis of Movie Reviews." ICLR 2015 workshop (an
        n-gram linear model combined with neural ones).
    """

    def __init__(self, vocabulary_size, num_classes, ngram_max=NGRAMS["ngram_max"], num_buckets=NGRAMS["num_buckets"],
                 **kwargs):
        kwargs.setdefault("dtype", "float32")
        super().__init__(**kwargs)
        for name, value in (("vocabulary_size", vocabulary_size), ("num_classes", num_classes),
                            ("ngram_max", ngram_max), ("num_buckets", num_buckets)):
            check_positive_int(value, name)
        if num_buckets <= vocabulary_size:
            raise ValueError(f"num_buckets must exceed vocabulary_size ({vocabulary_size}). "
                             f"Received: num_buckets={num_buckets}")
        if vocabulary_size ** ngram_max >= 2**63:
            raise ValueError(f"vocabulary_size**ngram_max must fit in 63 bits. Received: "
                             f"vocabulary_size={vocabulary_size}, ngram_max={ngram_max}")
        self.vocabulary_size = vocabulary_size
        self.num_classes = num_classes
        self.ngram_max = ngram_max
        self.num_buckets = num_buckets

    def build(self, input_shape):
        self.idf = self.add_weight(shape=(self.num_buckets,), initializer="ones", trainable=False, name="idf")
        self.kernel = self.add_weight(shape=(self.num_buckets, self.num_classes), initializer="zeros",
                                      trainable=False, name="kernel")
        self.bias = self.add_weight(shape=(self.num_classes,), initializer="zeros", trainable=False, name="bias")

    def ngram_features(self, inputs):
        """The feature id of the n-gram starting at each position, one `(rows, length)` array per order n.

        Rows are the last axis's sequences (sentences, or whole documents);
        -1 where no n-gram of that order starts (padding, row ends).
        """
        ids = ops.cast(inputs, "int64")
        ids = ops.reshape(ids, (-1, ops.shape(ids)[-1]))
        features = [ops.where(ids > 0, ids, -1)]
        key, present = ids, ids > 0
        hashed_buckets = self.num_buckets - self.vocabulary_size
        for n in range(2, self.ngram_max + 1):
            # The n-gram starting at t, ids[t..t+n-1], as one integer in base vocabulary_size.
            following = ops.pad(ids[:, n - 1:], [(0, 0), (0, n - 1)])
            key = key * self.vocabulary_size + following
            present = ops.logical_and(present, following > 0)
            bucket = ops.mod(ops.mod(key, _PRIME) * _MULTIPLIER, _PRIME) % hashed_buckets + self.vocabulary_size
            features.append(ops.where(present, bucket, -1))
        return features

    def feature_ids(self, inputs):
        """The distinct feature ids of each document, `(batch, k)`, sorted, -1 for none (padding, repeats)."""
        batch = ops.shape(inputs)[0]
        flat = ops.sort(ops.reshape(ops.concatenate(self.ngram_features(inputs), axis=-1), (batch, -1)), axis=-1)
        repeat = ops.concatenate([ops.zeros_like(flat[:, :1], dtype="bool"), flat[:, 1:] == flat[:, :-1]], axis=-1)
        return ops.cast(ops.where(repeat, -1, flat), "int32")

    def feature_values(self, feature_ids):
        """Each feature's weight `x_f`: idf scaled so a document's weights have unit length (0 for none)."""
        valid = feature_ids >= 0
        idf = ops.where(valid, ops.take(self.idf, ops.maximum(feature_ids, 0)), 0.0)
        norm = ops.sqrt(ops.sum(ops.square(idf), axis=-1, keepdims=True))
        return idf / ops.maximum(norm, 1e-12)

    def call(self, inputs, return_contributions=False):
        feature_ids = self.feature_ids(inputs)
        values = self.feature_values(feature_ids)
        rows = ops.take(self.kernel, ops.maximum(feature_ids, 0), axis=0)  # (batch, k, classes)
        contributions = rows * values[..., None]
        logits = ops.sum(contributions, axis=1) + self.bias
        if return_contributions:
            return logits, feature_ids, contributions
        return logits

    def compute_output_shape(self, input_shape):
        return (input_shape[0], self.num_classes)

    def get_config(self):
        config = super().get_config()
        config.update({
            "vocabulary_size": self.vocabulary_size,
            "num_classes": self.num_classes,
            "ngram_max": self.ngram_max,
            "num_buckets": self.num_buckets,
        })
        return config
