"""`NgramLogits` computed in NumPy: the same features, values, logits and contributions, outside a graph.

The layer computes with Keras ops so that it traces into `predict`'s graph
and exports to ONNX; called eagerly on one document at a time (as the
explainer does), every call converts its tables (over a million rows for
IMDB) to tensors and runs a few hundred small ops, and in onnxruntime its
binary search is 21 steps of gathers. These functions read the settings and
tables of a layer (or of an exported bundle: `NgramTables`) and compute the
same numbers with NumPy (`numpy.searchsorted` for the binary search);
tests compare them with the layer. Importing this module imports neither
Keras nor TensorFlow: the runtime uses it.
"""

import weakref

import numpy as np

from hierattn.data.batching import sort_batches_by_length, trim_padding

# The hash of an n-gram of order 2 or more (`NgramLogits`): its ids as one integer in base `vocabulary_size`,
# reduced modulo a Mersenne prime and multiplied by a fixed odd constant modulo the same prime (products stay
# below 2**62).
_PRIME = 2**31 - 1
_MULTIPLIER = 1_140_671_485

# What `NgramTables` needs of a layer's settings.
SETTINGS = ("vocabulary_size", "num_classes", "ngram_max", "num_buckets", "tf", "normalize")


class NgramTables:
    """A fitted n-gram layer's settings and tables as NumPy arrays: what the functions here read.

    Args:
        settings: `SETTINGS` of the layer (a dict).
        ids: The kept feature ids, then a sentinel above every feature id.
        idf: Their idf, then the unseen idf.
        kernel: Their kernel rows, then a zero row.
        bias: `(num_classes,)`.

    Example:

    >>> from hierattn.ngrams.logits import NgramLogits
    >>> layer = NgramLogits(vocabulary_size=10, num_classes=2, ngram_max=2, num_buckets=64)
    >>> layer.set_tables(kept_ids=[3, 4], idf=[1.0, 2.0], kernel=[[1.0, -1.0], [0.0, 0.0]], bias=[0.0, 0.0],
    ...                  unseen_idf=2.0)
    >>> tables = NgramTables({name: getattr(layer, name) for name in SETTINGS}, *layer.exported_tables())
    >>> logits(tables, np.array([[3, 4, 3, 0]])).round(3)   # the layer's own logits, in NumPy
    array([[ 0.277, -0.277]], dtype=float32)
    """

    def __init__(self, settings, ids, idf, kernel, bias):
        for name in SETTINGS:
            setattr(self, name, settings[name])
        self._ids, self._idf = np.asarray(ids, np.int32), np.asarray(idf, np.float32)
        self._kernel, self._bias = np.asarray(kernel, np.float32), np.asarray(bias, np.float32)
        self.num_kept = len(self._ids) - 1


def ngram_features(layer, ids):
    """`NgramLogits.ngram_features` in NumPy: the feature id of the n-gram starting at each position, per order.

    Args:
        layer: An `NgramLogits` (its `vocabulary_size`, `ngram_max` and `num_buckets`).
        ids: Int ids `(batch, ..., length)`, 0 for padding.

    Returns:
        One `(rows, length)` int64 array per order n, -1 where no n-gram of that order starts.
    """
    ids = np.asarray(ids, np.int64)
    ids = ids.reshape(-1, ids.shape[-1])
    features = [np.where(ids > 0, ids, -1)]
    key, present = ids, ids > 0
    hashed_buckets = layer.num_buckets - layer.vocabulary_size
    for n in range(2, layer.ngram_max + 1):
        following = np.pad(ids[:, n - 1 :], [(0, 0), (0, n - 1)])
        key = key * layer.vocabulary_size + following
        present = present & (following > 0)
        bucket = (key % _PRIME) * _MULTIPLIER % _PRIME % hashed_buckets + layer.vocabulary_size
        features.append(np.where(present, bucket, -1))
    return features


def contributions(layer, ids):
    """`layer(ids, return_contributions=True)` in NumPy: logits, distinct feature ids, their contributions.

    Args:
        layer: A fitted `NgramLogits`.
        ids: Int ids `(batch, ..., length)`, 0 for padding.

    Returns:
        `(logits (batch, classes), feature_ids (batch, k), contributions (batch, k, classes))`, float32 and int32,
        as the layer gives them: `feature_ids` sorted, -1 for none.
    """
    ids = np.asarray(ids)
    batch = ids.shape[0]
    flat = np.sort(np.concatenate(ngram_features(layer, ids), axis=-1).reshape(batch, -1), axis=-1).astype(np.int32)
    firsts = np.concatenate([np.ones((batch, 1), bool), flat[:, 1:] != flat[:, :-1]], axis=-1)
    feature_ids = np.where(firsts, flat, -1)
    rows_of, _ = _lookups(layer)
    rows = np.where(feature_ids >= 0, rows_of(np.maximum(feature_ids, 0)), layer.num_kept)
    values = np.where(feature_ids >= 0, layer._idf[rows], 0.0).astype(np.float32)
    if layer.tf == "sublinear":
        values = values * np.where(feature_ids >= 0, 1.0 + np.log(np.maximum(_counts(flat, firsts), 1)), 0.0)
    if layer.normalize:
        values = values / np.maximum(np.sqrt(np.sum(np.square(values), axis=-1, keepdims=True)), 1e-12)
    found = layer._kernel[rows] * values[..., None].astype(np.float32)
    logits = found.sum(axis=1) + layer._bias
    return logits.astype(np.float32), feature_ids, found.astype(np.float32)


def logits(layer, ids, batch_size=256):
    """The layer's logits of id arrays `ids` `(n, ..., length)`, `(n, classes)` float32, in batches of similar length.

    The same numbers as `contributions`, computed for many documents at once:
    each document's distinct features are found in the kept ids by rank
    (`KeptRows`) rather than by binary search, and summed per document.
    """
    ids = np.asarray(ids)
    found = np.zeros((len(ids), layer.num_classes), np.float32)
    rows_of, weights = _lookups(layer)
    for index in sort_batches_by_length(ids, batch_size) if len(ids) else []:
        batch = trim_padding(ids[index])
        flat = np.sort(np.concatenate(ngram_features(layer, batch), axis=-1).reshape(len(batch), -1), axis=-1)
        firsts = np.ones(flat.shape, bool)
        firsts[:, 1:] = flat[:, 1:] != flat[:, :-1]
        starts = np.flatnonzero(firsts)  # every row starts a run, so a row's last run ends where the row does
        counts, features = np.diff(np.append(starts, flat.size)), flat.reshape(-1)[starts]
        present = features >= 0
        documents, rows = starts[present] // flat.shape[1], rows_of(features[present])
        scale = 1.0 + np.log(counts[present]) if layer.tf == "sublinear" else np.ones(len(rows))
        if layer.normalize:
            values = np.take(layer._idf, rows) * scale
            scale = scale / np.maximum(np.sqrt(np.bincount(documents, np.square(values), len(batch))), 1e-12)[documents]
        found[index] = _sums(documents, np.take(weights, rows, axis=0), scale, len(batch)) + layer._bias
    return found


class KeptRows:
    """The row of each feature id among a layer's kept ids: its rank, from a bitmap of them.

    A bit per possible feature id (16 to a word) and, per word, how many kept
    ids lie before it: 3 bits a bucket (6 MB for 16.8 million), where a
    table of rows would take 32, and a lookup of a few gathers, where a
    binary search takes ~20 dependent ones.

    Args:
        kept_ids: The kept feature ids, sorted, each below `num_buckets`.
        num_buckets: The number of possible feature ids.

    Example:

    >>> rows_of = KeptRows([3, 17, 40], num_buckets=64)
    >>> rows_of(np.array([17, 3, 5, 40])).tolist()   # not kept: the row after them (3)
    [1, 0, 3, 2]
    """

    def __init__(self, kept_ids, num_buckets):
        kept = np.asarray(kept_ids, np.int64)
        words = np.bincount(kept >> 4, weights=np.left_shift(1, kept & 15), minlength=num_buckets // 16 + 1)
        self._bits = words.astype(np.uint16)
        self._before = np.concatenate([[0], np.cumsum(_BITS_SET[self._bits])[:-1]]).astype(np.int32)
        self._missing = len(kept)

    def __call__(self, feature_ids):
        """The rows of feature ids (any shape, each in `[0, num_buckets)`); the number kept where not kept."""
        feature_ids = np.asarray(feature_ids, np.int64)
        word, bit = feature_ids >> 4, (feature_ids & 15).astype(np.uint16)
        bits = np.take(self._bits, word)
        rows = np.take(self._before, word) + np.take(_BITS_SET, bits & ((np.uint16(1) << bit) - np.uint16(1)))
        return np.where((bits >> bit) & 1, rows, self._missing)


# How many bits are set in each 16-bit number.
_BITS_SET = np.unpackbits(np.arange(2**16, dtype=">u2").view(np.uint8)).reshape(-1, 16).sum(axis=1, dtype=np.uint8)


# Each layer's (or `NgramTables`') lookups, with the ids array they were made from, for as long as it lives.
_LOOKUPS = weakref.WeakKeyDictionary()


def _lookups(layer):
    """The layer's `KeptRows` and its kernel rows times their idf, made once per set of tables."""
    ids, *found = _LOOKUPS.get(layer, (None,))
    if ids is not layer._ids:  # new tables (`set_tables`, or loaded weights)
        found = [KeptRows(layer._ids[:-1], layer.num_buckets), layer._kernel * layer._idf[:, None]]
        _LOOKUPS[layer] = (layer._ids, *found)
    return found


def _sums(documents, weights, scale, num_documents):
    """Each document's sum of its rows of `weights` `(k, classes)`, each row times its `scale`."""
    columns = weights.T * scale
    return np.stack([np.bincount(documents, column, num_documents) for column in columns], axis=1)


def _counts(flat, firsts):
    """How often each run's id occurs in its sorted row, at the run's first entry (0 elsewhere)."""
    counts = np.zeros(flat.shape, np.int64)
    for row in range(len(flat)):
        starts = np.flatnonzero(firsts[row])
        counts[row, starts] = np.diff(np.append(starts, flat.shape[1]))
    return counts
