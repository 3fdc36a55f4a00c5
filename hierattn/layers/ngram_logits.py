"""A linear classifier over a hashed bag of word n-grams, computed from token ids."""

import keras
import numpy as np
from keras import ops

from hierattn.defaults import NGRAMS
from hierattn.layers._attention_utils import check_positive_int

# The hash of an n-gram of order 2 or more: its ids as one integer in base
# `vocabulary_size`, reduced modulo a Mersenne prime and multiplied by a fixed
# odd constant modulo the same prime (products stay below 2**62).
_PRIME = 2**31 - 1
_MULTIPLIER = 1_140_671_485

# The names under which `save_own_variables` stores the fitted tables.
_TABLES = ("kept_ids", "idf", "kernel", "bias", "unseen_idf")


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
    computes (`features`), and sets them (`set_tables`).

    The layer holds only the features seen in training: their ids
    (`kept_ids`, sorted), idf and kernel rows, found by binary search. Any
    other feature has no kernel row (it contributes nothing) and the idf
    `unseen_idf` of a feature in no training document (scikit-learn's
    smoothed `log(1 + n) + 1`), which still counts in the document's length,
    exactly as in the whole `num_buckets` table. The tables' sizes depend on
    the training data, so they are not Keras variables (whose shapes are
    fixed when a layer is built): like the vocabulary of Keras's
    `IndexLookup`, they travel in the `.keras` file by `save_own_variables`
    and are not among `weights`. Freshly made, the layer keeps no feature
    and outputs zero logits.

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
    >>> layer.set_tables(kept_ids=[3, 4], idf=[1.0, 2.0], kernel=[[1.0, -1.0], [0.0, 0.0]], bias=[0.0, 0.0],
    ...                  unseen_idf=2.0)              # word 3 seen, with weight for class 0
    >>> np.round(np.asarray(layer(ids)), 3)         # x_3 = 1 / sqrt(1 + 3 * 2**2)
    array([[ 0.277, -0.277]], dtype=float32)

    Reference:
        Joulin, Grave, Bojanowski, Mikolov. "Bag of Tricks for Efficient Text
        Classification." EACL 2017 (hashed n-gram features). Mesnil, Mikolov,
        Ranzato, Bengio. "Ensemble of Generative and Discriminative Techniques
        for Sentiment Analysis of Movie Reviews." ICLR 2015 workshop (an
        n-gram linear model combined with neural ones).
    """

    def __init__(
        self, vocabulary_size, num_classes, ngram_max=NGRAMS["ngram_max"], num_buckets=NGRAMS["num_buckets"], **kwargs
    ):
        kwargs.setdefault("dtype", "float32")
        super().__init__(**kwargs)
        for name, value in (
            ("vocabulary_size", vocabulary_size),
            ("num_classes", num_classes),
            ("ngram_max", ngram_max),
            ("num_buckets", num_buckets),
        ):
            check_positive_int(value, name)
        if num_buckets <= vocabulary_size:
            raise ValueError(
                f"num_buckets must exceed vocabulary_size ({vocabulary_size}). Received: num_buckets={num_buckets}"
            )
        if num_buckets > 2**31 - 1:
            raise ValueError(f"num_buckets must fit in 31 bits. Received: num_buckets={num_buckets}")
        if vocabulary_size**ngram_max >= 2**63:
            raise ValueError(
                f"vocabulary_size**ngram_max must fit in 63 bits. Received: "
                f"vocabulary_size={vocabulary_size}, ngram_max={ngram_max}"
            )
        self.vocabulary_size = vocabulary_size
        self.num_classes = num_classes
        self.ngram_max = ngram_max
        self.num_buckets = num_buckets
        self.set_tables([], [], np.zeros((0, num_classes)), np.zeros(num_classes), 1.0)

    # -- the fitted tables ---------------------------------------------

    def set_tables(self, kept_ids, idf, kernel, bias, unseen_idf):
        """Sets the fitted linear model: the kept features' ids, idf and kernel rows, the bias and the unseen idf.

        A function traced before (e.g. a model's `predict_function`) keeps
        the tables it was traced with; trace it again.

        Args:
            kept_ids: The kept feature ids `(n,)`, strictly increasing, in
                `[1, num_buckets)`.
            idf: Their idf `(n,)`.
            kernel: Their rows of the kernel `(n, num_classes)`.
            bias: `(num_classes,)`.
            unseen_idf: The idf of every other feature (a scalar).

        Raises:
            ValueError: Tables of the wrong shapes, or ids not strictly
                increasing or out of range.
        """
        kept_ids = np.asarray(kept_ids).reshape(-1)
        idf = np.asarray(idf, np.float32)
        kernel = np.asarray(kernel, np.float32)
        bias = np.asarray(bias, np.float32)
        unseen_idf = np.asarray(unseen_idf, np.float32)
        n = len(kept_ids)
        expected = {"idf": (n,), "kernel": (n, self.num_classes), "bias": (self.num_classes,), "unseen_idf": ()}
        for name, value in (("idf", idf), ("kernel", kernel), ("bias", bias), ("unseen_idf", unseen_idf)):
            if value.shape != expected[name]:
                raise ValueError(
                    f"{name} must have shape {expected[name]} for {n} kept features and "
                    f"{self.num_classes} classes. Received: {name}.shape={value.shape}"
                )
        if n and (
            kept_ids.dtype.kind not in "iu"
            or kept_ids[0] < 1
            or kept_ids[-1] >= self.num_buckets
            or np.any(np.diff(kept_ids) <= 0)
        ):
            raise ValueError(
                f"kept_ids must be strictly increasing integers in [1, {self.num_buckets}). Received: "
                f"kept_ids={kept_ids[:5].tolist()}{' ...' if n > 5 else ''} (dtype {kept_ids.dtype})"
            )
        # One row past the kept ones: a sentinel id above every feature id,
        # the unseen idf and a zero kernel row, where every other feature is
        # looked up (so an empty table needs no special case).
        self._ids = ops.convert_to_tensor(np.append(kept_ids.astype(np.int32), np.int32(self.num_buckets)))
        self._idf = ops.convert_to_tensor(np.append(idf, unseen_idf))
        self._kernel = ops.convert_to_tensor(np.concatenate([kernel, np.zeros((1, self.num_classes), np.float32)]))
        self._bias = ops.convert_to_tensor(bias)

    @property
    def kept_ids(self):
        """The ids of the features seen in training `(n,)`, sorted."""
        return self._ids[:-1]

    @property
    def idf(self):
        """The kept features' inverse document frequencies `(n,)`."""
        return self._idf[:-1]

    @property
    def unseen_idf(self):
        """The idf of every feature not kept: of a feature in no training document."""
        return self._idf[-1]

    @property
    def kernel(self):
        """The kept features' weights `(n, num_classes)`."""
        return self._kernel[:-1]

    @property
    def bias(self):
        """`(num_classes,)`."""
        return self._bias

    @property
    def num_kept(self):
        """The number of features kept (seen in training)."""
        return int(self._ids.shape[0]) - 1

    def save_own_variables(self, store):
        for name in _TABLES:
            store[name] = ops.convert_to_numpy(getattr(self, name))

    def load_own_variables(self, store):
        keys = set(store.keys())
        if keys == {"0", "1", "2"}:  # written before the tables were compact: idf, kernel, bias of every bucket
            self._load_full_tables(*(np.asarray(store[key]) for key in ("0", "1", "2")))
            return
        missing = [name for name in _TABLES if name not in keys]
        if missing:
            raise ValueError(
                f"layer '{self.name}' expected the tables {', '.join(_TABLES)}. "
                f"Received: {', '.join(sorted(keys)) or 'none'}"
            )
        self.set_tables(*(np.asarray(store[name]) for name in _TABLES))

    def _load_full_tables(self, idf, kernel, bias):
        if idf.shape != (self.num_buckets,) or kernel.shape != (self.num_buckets, self.num_classes):
            raise ValueError(
                f"layer '{self.name}' expected idf ({self.num_buckets},) and kernel "
                f"({self.num_buckets}, {self.num_classes}). Received: {idf.shape} and {kernel.shape}"
            )
        # A feature in no training document has the largest idf (document
        # frequency 0) and a zero kernel row; the rest are kept.
        unseen_idf = idf.max()
        kept = np.flatnonzero((idf != unseen_idf) | np.any(kernel != 0, axis=1))
        self.set_tables(kept, idf[kept], kernel[kept], bias, unseen_idf)

    # -- computing -------------------------------------------------------

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
            following = ops.pad(ids[:, n - 1 :], [(0, 0), (0, n - 1)])
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

    def _rows(self, feature_ids):
        """Each feature id's row in the tables: its own if kept, else the last (unseen idf, zero kernel)."""
        flat = ops.reshape(ops.cast(feature_ids, "int32"), (-1,))
        row = ops.searchsorted(self._ids, flat)  # in [0, n]: the sentinel id is above every feature id
        row = ops.where(ops.take(self._ids, row) == flat, row, self.num_kept)
        return ops.reshape(row, ops.shape(feature_ids))

    def _feature_values(self, feature_ids, rows):
        valid = feature_ids >= 0
        idf = ops.where(valid, ops.take(self._idf, rows), 0.0)
        norm = ops.sqrt(ops.sum(ops.square(idf), axis=-1, keepdims=True))
        return idf / ops.maximum(norm, 1e-12)

    def feature_values(self, feature_ids):
        """Each feature's weight `x_f`: idf scaled so a document's weights have unit length (0 for none)."""
        return self._feature_values(feature_ids, self._rows(feature_ids))

    def call(self, inputs, return_contributions=False):
        feature_ids = self.feature_ids(inputs)
        rows = self._rows(feature_ids)
        values = self._feature_values(feature_ids, rows)
        contributions = ops.take(self._kernel, rows, axis=0) * values[..., None]  # (batch, k, classes)
        logits = ops.sum(contributions, axis=1) + self._bias
        # Computed in float32 (the tables' dtype); given in the compute dtype.
        logits, contributions = ops.cast(logits, self.compute_dtype), ops.cast(contributions, self.compute_dtype)
        if return_contributions:
            return logits, feature_ids, contributions
        return logits

    def compute_output_shape(self, input_shape):
        return (None if input_shape is None else input_shape[0], self.num_classes)

    def get_config(self):
        config = super().get_config()
        config.update(
            {
                "vocabulary_size": self.vocabulary_size,
                "num_classes": self.num_classes,
                "ngram_max": self.ngram_max,
                "num_buckets": self.num_buckets,
            }
        )
        return config
