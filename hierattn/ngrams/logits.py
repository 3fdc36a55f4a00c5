"""A linear classifier over a hashed bag of word n-grams, computed from token ids."""

import keras
import numpy as np
from keras import ops

from hierattn.defaults import NGRAMS
from hierattn.layers._attention_utils import check_positive_int
from hierattn.ngrams.search import lower_bound
from hierattn.ngrams.twin import _MULTIPLIER, _PRIME  # the n-gram hash, the same in NumPy

# The names under which `save_own_variables` stores the fitted tables.
_TABLES = ("kept_ids", "idf", "kernel", "bias", "unseen_idf")

# The term frequencies `g(count)` the layer offers (its argument `tf`).
TERM_FREQUENCIES = ("binary", "sublinear")


@keras.saving.register_keras_serializable(package="hierattn")
class NgramLogits(keras.layers.Layer):
    """Class logits of a linear model over the word 1..n-grams of a document.

    The document's n-grams (within each row of ids: a sentence, or the whole
    document) are mapped to `num_buckets` feature ids: a unigram to its own
    word id (no collisions), a longer n-gram to a hashed bucket above the
    vocabulary, as fastText does. Each distinct feature `f` of a document
    has the value

        x_f = idf[f] g(c_f),   g(c) = 1 (tf="binary") or 1 + log(c) (tf="sublinear")

    where `c_f` is the number of occurrences of `f` in the document (over all
    its rows) and `idf` its inverse document frequency; with `normalize` the
    document's values are then scaled to unit L2 length. These are the rows
    of scikit-learn's `TfidfTransformer(norm="l2" or None, sublinear_tf=...)`
    on the binary (`tf="binary"`) or count (`tf="sublinear"`) matrix. The
    logits are

        z = bias + sum_f x_f kernel[f]

    so each n-gram's contribution `x_f kernel[f, c]` to class `c` is exact.
    The weights are not trained by gradient descent: `hierattn.ngrams.recipes` fits
    them with scikit-learn on the features this layer computes
    (`feature_ids`, `feature_counts`), and sets them (`set_tables`).

    The layer holds only the features seen in training: their ids
    (`kept_ids`, sorted), idf and kernel rows, found by binary search. Any
    other feature has no kernel row (it contributes nothing) and the idf
    `unseen_idf`: scikit-learn's smoothed `log(1 + n) + 1` of a feature in no
    training document, which still counts in the document's length, exactly
    as in the whole `num_buckets` table; or 0, so that a feature outside the
    fitted vocabulary is ignored entirely (a document of such features only
    gets the bias). The tables' sizes depend on the training data, so they
    are not Keras variables (whose shapes are fixed when a layer is built):
    like the vocabulary of Keras's `IndexLookup`, they travel in the `.keras`
    file by `save_own_variables` and are not among `weights`. Freshly made,
    the layer keeps no feature and outputs zero logits.

    Args:
        vocabulary_size: Number of word ids (padding id 0 included).
        num_classes: Number of output logits.
        ngram_max: Longest n-gram (1 for a bag of words; default 2, from
            `hierattn.defaults.NGRAMS`).
        num_buckets: Number of feature ids, unigrams included; must exceed
            `vocabulary_size` (default 2^24, `hierattn.defaults.NGRAMS`).
        tf: Term frequency `g`: `"binary"` (each distinct feature counts 1)
            or `"sublinear"` (`1 + log(count)`).
        normalize: Whether each document's feature values are scaled to unit
            L2 length (`False`: the values themselves, as NB-weighted binary
            features need).
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
    >>> feature_ids, counts = layer.feature_counts(ids)
    >>> sorted(np.asarray(counts)[np.asarray(feature_ids) >= 0].tolist())  # b, "a b", "b a" once, a twice
    [1, 1, 1, 2]
    >>> layer(ids).shape                              # zero logits until fitted
    TensorShape([1, 2])
    >>> layer.set_tables(kept_ids=[3, 4], idf=[1.0, 2.0], kernel=[[1.0, -1.0], [0.0, 0.0]], bias=[0.0, 0.0],
    ...                  unseen_idf=2.0)              # word 3 seen, with weight for class 0
    >>> np.round(np.asarray(layer(ids)), 3)         # x_3 = 1 / sqrt(1 + 3 * 2**2)
    array([[ 0.277, -0.277]], dtype=float32)
    >>> raw = NgramLogits(10, 2, ngram_max=2, num_buckets=64, tf="sublinear", normalize=False)
    >>> raw.set_tables([3, 4], [1.0, 2.0], [[1.0, -1.0], [0.0, 0.0]], [0.0, 0.0], 2.0)
    >>> np.round(np.asarray(raw(ids)), 3)           # x_3 = 1 + log 2
    array([[ 1.693, -1.693]], dtype=float32)

    Reference:
        Joulin, Grave, Bojanowski, Mikolov. "Bag of Tricks for Efficient Text
        Classification." EACL 2017 (hashed n-gram features). Mesnil, Mikolov,
        Ranzato, Bengio. "Ensemble of Generative and Discriminative Techniques
        for Sentiment Analysis of Movie Reviews." ICLR 2015 workshop (an
        n-gram linear model combined with neural ones).
    """

    def __init__(
        self,
        vocabulary_size,
        num_classes,
        ngram_max=NGRAMS["ngram_max"],
        num_buckets=NGRAMS["num_buckets"],
        tf="binary",
        normalize=True,
        **kwargs,
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
        if tf not in TERM_FREQUENCIES:
            raise ValueError(f"tf must be one of {', '.join(TERM_FREQUENCIES)}. Received: tf={tf!r}")
        if not isinstance(normalize, (bool, np.bool_)):
            raise ValueError(f"normalize must be True or False. Received: normalize={normalize!r}")
        self.vocabulary_size = vocabulary_size
        self.num_classes = num_classes
        self.ngram_max = ngram_max
        self.num_buckets = num_buckets
        self.tf = tf
        self.normalize = bool(normalize)
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
        # looked up (so an empty table needs no special case). Held as NumPy
        # arrays, so that a traced function (`predict`, an export) holds them
        # as constants of its graph rather than as inputs it must be given.
        self._ids = np.append(kept_ids.astype(np.int32), np.int32(self.num_buckets))
        self._idf = np.append(idf, unseen_idf).astype(np.float32)
        self._kernel = np.concatenate([kernel, np.zeros((1, self.num_classes), np.float32)])
        self._bias = bias

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

    def exported_tables(self):
        """The tables as `hierattn.ngrams.twin.NgramTables` takes them: ids, idf, kernel (each with its sentinel row), bias."""
        return self._ids, self._idf, self._kernel, self._bias

    @property
    def num_kept(self):
        """The number of features kept (seen in training)."""
        return len(self._ids) - 1

    def save_own_variables(self, store):
        for name in _TABLES:
            store[name] = np.asarray(getattr(self, name))

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

    def _sorted_features(self, inputs):
        """Every n-gram's feature id of each document, `(batch, N)` int32, sorted (-1 first)."""
        batch = ops.shape(inputs)[0]
        features = ops.concatenate(self.ngram_features(inputs), axis=-1)
        return ops.sort(ops.cast(ops.reshape(features, (batch, -1)), "int32"), axis=-1)

    @staticmethod
    def _firsts(flat):
        """Whether each entry of sorted rows `flat` is the first of its run of equal ids."""
        return ops.concatenate([ops.ones_like(flat[:, :1], dtype="bool"), flat[:, 1:] != flat[:, :-1]], axis=-1)

    def feature_ids(self, inputs):
        """The distinct feature ids of each document, `(batch, k)`, sorted, -1 for none (padding, repeats)."""
        flat = self._sorted_features(inputs)
        return ops.where(self._firsts(flat), flat, -1)

    def feature_counts(self, inputs):
        """The distinct feature ids of each document and how often each occurs in it.

        Args:
            inputs: Int ids `(batch, ..., length)`, as the layer takes them.

        Returns:
            `(feature_ids, counts)`, both `(batch, k)` int32: `feature_ids`
            as `feature_ids(inputs)` gives them, `counts` the number of
            occurrences of each in its document, over all its rows (0 where
            the id is -1).
        """
        flat = self._sorted_features(inputs)
        firsts = self._firsts(flat)
        # A run of equal ids ends where the next one starts: sorting the
        # positions of the runs' first entries (the others set to the row's
        # width) lists, after run r's start, the start of run r + 1.
        width = ops.shape(flat)[1]
        positions = ops.broadcast_to(ops.arange(width, dtype="int32")[None, :], ops.shape(flat))
        starts = ops.sort(ops.where(firsts, positions, width), axis=-1)
        starts = ops.concatenate([starts, ops.full_like(starts[:, :1], width)], axis=-1)
        run = ops.cumsum(ops.cast(firsts, "int32"), axis=-1)  # run r + 1 for each entry of run r
        counts = ops.take_along_axis(starts, run, axis=-1) - positions
        distinct = ops.logical_and(firsts, flat >= 0)
        return ops.where(firsts, flat, -1), ops.where(distinct, counts, 0)

    def _rows(self, feature_ids):
        """Each feature id's row in the tables: its own if kept, else the last (unseen idf, zero kernel)."""
        flat = ops.reshape(ops.cast(feature_ids, "int32"), (-1,))
        row = lower_bound(self._ids, flat)  # in [0, n]: the sentinel id is above every feature id
        row = ops.where(ops.take(self._ids, row) == flat, row, self.num_kept)
        return ops.reshape(row, ops.shape(feature_ids))

    def _feature_values(self, feature_ids, rows, counts):
        x = ops.where(feature_ids >= 0, ops.take(ops.convert_to_tensor(self._idf), rows), 0.0)
        if self.tf == "sublinear" and counts is not None:
            counts = ops.cast(counts, "float32")
            x = x * ops.where(counts > 0, 1.0 + ops.log(ops.maximum(counts, 1.0)), 0.0)
        if self.normalize:
            # An all-zero document (no features, or only features of idf 0) stays zero.
            x = x / ops.maximum(ops.sqrt(ops.sum(ops.square(x), axis=-1, keepdims=True)), 1e-12)
        return x

    def feature_values(self, feature_ids, counts=None):
        """Each feature's value `x_f` (0 for none), `(batch, k)` float32.

        Args:
            feature_ids: The distinct feature ids of each document `(batch, k)`,
                -1 for none (as `feature_ids` or `feature_counts` give them).
            counts: Their numbers of occurrences `(batch, k)`, as
                `feature_counts` gives them; `None`: each feature once.

        Returns:
            `idf[f] g(count_f)`, scaled to unit length per document if
            `normalize`.
        """
        return self._feature_values(feature_ids, self._rows(feature_ids), counts)

    def call(self, inputs, return_contributions=False):
        if self.tf == "sublinear":
            feature_ids, counts = self.feature_counts(inputs)
        else:  # each distinct feature counts 1: no need to count
            feature_ids, counts = self.feature_ids(inputs), None
        rows = self._rows(feature_ids)
        values = self._feature_values(feature_ids, rows, counts)
        contributions = ops.take(ops.convert_to_tensor(self._kernel), rows, axis=0) * values[..., None]
        logits = ops.sum(contributions, axis=1) + ops.convert_to_tensor(
            self._bias
        )  # contributions: (batch, k, classes)
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
                "tf": self.tf,
                "normalize": self.normalize,
            }
        )
        return config
