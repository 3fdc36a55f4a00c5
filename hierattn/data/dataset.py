"""In-memory labelled text datasets, label maps and validation splits."""

import dataclasses
import math

import numpy as np

from hierattn.defaults import GROUPS
from hierattn.errors import DataError, names_text
from hierattn.kinds import MULTI, kind_of


class LabelMap:
    """Class names ↔ integer ids.

    Args:
        names: Class names in id order (any JSON-able values: strings or
            integers).

    Example:

    >>> labels = LabelMap.from_labels(["pos", "neg", "pos"])   # ids in sorted order
    >>> labels.names, len(labels)
    (['neg', 'pos'], 2)
    >>> labels.to_ids(["pos", "neg"])
    array([1, 0], dtype=int32)
    >>> labels.to_ids(["neutral"])
    Traceback (most recent call last):
        ...
    hierattn.errors.DataError: labels not seen in training: neutral (known: neg, pos).

    `class_ids` reads labels as Keras's verbs take them: integers are class
    ids, unless the class names are integers themselves:

    >>> labels.class_ids(["pos", 0, 1])
    array([1, 0, 1], dtype=int32)
    >>> LabelMap([1, 2, 5]).class_ids([5, 1])   # star ratings: integers are the names
    array([2, 0], dtype=int32)
    """

    def __init__(self, names):
        names = list(names)
        if len(names) < 2:
            raise DataError(
                f"a classifier needs at least two classes; found {len(names)}: {names_text(names, 'classes')}."
            )
        if len(set(map(str, names))) != len(names):
            raise DataError(f"class names must be unique: {names_text(names, 'classes')}.")
        self.names = names
        self._ids = {str(name): i for i, name in enumerate(names)}

    @classmethod
    def from_labels(cls, labels):
        """Sorted unique labels (numbers numerically, strings alphabetically)."""
        unique = set(labels)
        try:
            names = sorted(unique)
        except TypeError:
            names = sorted(unique, key=str)
        return cls([n.item() if isinstance(n, np.generic) else n for n in names])

    @classmethod
    def from_label_sets(cls, label_sets):
        """The sorted union of documents' label sets (multi-label), as `from_labels` sorts them."""
        return cls.from_labels([label for labels in label_sets for label in labels])

    def __len__(self):
        return len(self.names)

    def names_of(self, ids):
        """The class names of class ids `(n,)`, or each document's label names of multi-hot rows `(n, labels)`.

        >>> LabelMap(["earn", "grain"]).names_of([1, 0]), LabelMap(["earn", "grain"]).names_of([[1, 1], [0, 0]])
        (['grain', 'earn'], [['earn', 'grain'], []])
        """
        if np.ndim(ids) == 2:
            return [[self.names[j] for j in np.flatnonzero(row)] for row in np.asarray(ids)]
        return [self.names[i] for i in ids]

    def multi_hot(self, label_sets):
        """Multi-hot rows `(n, len(names))` (float32) of documents' label sets, read as `class_ids` reads labels.

        A document may have no label (a row of zeros); a label named twice counts once.

        >>> LabelMap(["earn", "grain", "wheat"]).multi_hot([["wheat", "grain"], [], ["earn"]])
        array([[0., 1., 1.],
               [0., 0., 0.],
               [1., 0., 0.]], dtype=float32)
        """
        label_sets = [list(labels) for labels in label_sets]
        rows = np.repeat(np.arange(len(label_sets)), [len(labels) for labels in label_sets])
        columns = self.class_ids([label for labels in label_sets for label in labels])
        matrix = np.zeros((len(label_sets), len(self.names)), np.float32)
        matrix[rows, columns] = 1.0
        return matrix

    def to_ids(self, labels):
        """Maps labels to ids; unknown labels raise a `DataError` naming them."""
        ids, unknown = [], set()
        for label in labels:
            i = self._ids.get(str(label.item() if isinstance(label, np.generic) else label))
            if i is None:
                unknown.add(str(label))
            ids.append(i)
        if unknown:
            shown = names_text(sorted(unknown), "labels")
            raise DataError(f"labels not seen in training: {shown} (known: {names_text(self.names, 'classes')}).")
        return np.asarray(ids, dtype=np.int32)

    @property
    def integer_names(self):
        """Whether every class name is an integer, or the text of one (`[1, 2, 5]`, `["1", "2", "5"]`)."""
        return all(
            self._integer(name) is not None or (isinstance(name, str) and self._is_integer_text(name))
            for name in self.names
        )

    def class_ids(self, labels):
        """Class ids of labels as Keras's verbs take them: class names, or integers that are class ids.

        Keras reads integer labels as class indices. So does this map, unless
        its class names are integers themselves (a classifier fitted on
        integer labels, e.g. star ratings `[1, 2, 5]`, or their text): then
        an integer label is a class name, as in `to_ids`. Any other label is
        a class name.

        Raises:
            DataError: A label that is not a class name, or an integer
                outside `0 .. len(names) - 1` where integers are class ids;
                in one line.
        """
        labels = list(labels)
        if self.integer_names:
            return self.to_ids([label if self._integer(label) is None else self._integer(label) for label in labels])
        integers = [self._integer(label) for label in labels]
        wrong = sorted({i for i in integers if i is not None and not 0 <= i < len(self.names)})
        if wrong:
            shown = ", ".join(map(str, wrong[:10])) + (" ..." if len(wrong) > 10 else "")
            raise DataError(
                f"integer labels are class ids, 0 to {len(self.names) - 1} for the classes "
                f"{', '.join(map(str, self.names))}; got {shown}."
            )
        names = self.to_ids([label for label, i in zip(labels, integers) if i is None])
        ids = np.asarray([-1 if i is None else i for i in integers], dtype=np.int32)
        ids[ids < 0] = names
        return ids

    @staticmethod
    def _integer(value):
        """`value` as an `int` when it is an integer number (`3`, `np.int64(3)`, `3.0`), else `None` (booleans too)."""
        if isinstance(value, (bool, np.bool_)):
            return None
        if isinstance(value, (int, np.integer)):
            return int(value)
        if isinstance(value, (float, np.floating)) and float(value).is_integer():
            return int(value)
        return None

    @staticmethod
    def _is_integer_text(text):
        """Whether `text` is an integer as `str` writes one (`"5"`, `"-1"`; not `"05"` or `"+1"`)."""
        try:
            return str(int(text)) == text
        except ValueError:
            return False


@dataclasses.dataclass
class TextDataset:
    """Texts with integer labels.

    Attributes:
        texts: The documents.
        labels: int32 array of class ids (`-1` where unlabelled); for
            multi-label data, int8 multi-hot rows `(n, len(label_map))`.
        label_map: The `LabelMap` of the ids.
        ids: An identifier per document (file name or row number).
        ratings: Optional per-document extra number (IMDB star rating).
        groups: Optional group of each document (a NumPy array of strings:
            IMDB's film, a table's `group_column`); a run's validation part
            then holds whole groups (`grouped_split`). `None`: ungrouped.

    Example:

    >>> import pandas as pd
    >>> from hierattn.data import load_table
    >>> frame = pd.DataFrame({"text": ["A great film.", "Dull.", "Loved it!"], "label": ["pos", "neg", "pos"]})
    >>> data, report = load_table(frame)
    >>> len(data), data.label_map.names, data.labels
    (3, ['neg', 'pos'], array([1, 0, 1], dtype=int32))
    >>> part = data.subset([2, 0])
    >>> part.texts, part.ids
    (['Loved it!', 'A great film.'], [2, 0])
    """

    texts: list
    labels: np.ndarray
    label_map: LabelMap
    ids: list
    ratings: np.ndarray = None
    groups: np.ndarray = None

    def __len__(self):
        return len(self.texts)

    @property
    def multi_label(self):
        """Whether each document has a set of labels (multi-hot `labels`) rather than one class."""
        return np.ndim(self.labels) == 2

    def subset(self, indices):
        """A new dataset with the documents at `indices`, in that order."""
        indices = np.asarray(indices, dtype=int)
        return TextDataset(
            [self.texts[i] for i in indices],
            self.labels[indices],
            self.label_map,
            [self.ids[i] for i in indices],
            None if self.ratings is None else self.ratings[indices],
            None if self.groups is None else self.groups[indices],
        )


def sample(data, limit, seed):
    """A seeded random subset of at most `limit` items, in their order, of a `TextDataset` or list.

    `None` stays `None`; data no longer than `limit` is returned as it is.
    """
    if data is None or len(data) <= limit:
        return data
    indices = np.sort(np.random.default_rng(seed).permutation(len(data))[:limit])
    return data.subset(indices) if isinstance(data, TextDataset) else [data[i] for i in indices]


def stratified_split(labels, validation_fraction=0.1, seed=0, names=None):
    """Stratified, seeded split of indices into training and validation.

    The validation part holds `ceil(validation_fraction * n)` documents, and
    at least one of each class.

    Args:
        labels: Class id per document.
        validation_fraction: Share of each class held out for validation.
        seed: Random seed.
        names: Class names for messages (default: the ids).

    Returns:
        `(train_indices, validation_indices)`, each sorted.

    Raises:
        DataError: Too few documents for both parts to hold every class, in
            one line that says which classes are short.
    """
    if not 0.0 < validation_fraction < 1.0:
        raise DataError(f"validation fraction must be between 0 and 1; got {validation_fraction}.")
    labels = np.asarray(labels)
    classes, counts = np.unique(labels, return_counts=True)
    named = [str(names[c]) if names is not None else str(c) for c in classes]
    if len(classes) < 2:
        raise DataError(f"a classifier needs at least two classes; the training data has one ({names_text(named)}).")
    if counts.max() == 1:
        raise DataError(
            f"every label occurs once ({len(labels)} documents, {len(classes)} labels): is the label column right?"
        )
    short = [f"{name!r} ({count})" for name, count in zip(named, counts) if count < 2]
    if short:
        shown = ", ".join(short[:5]) + (f" and {len(short) - 5} more" if len(short) > 5 else "")
        raise DataError(f"every class needs at least 2 documents (one to train on, one to validate); too few: {shown}.")
    validation = max(math.ceil(validation_fraction * len(labels)), len(classes))
    if len(labels) - validation < len(classes):
        raise DataError(f"{len(labels)} documents are too few to train and validate on {len(classes)} classes.")
    from sklearn.model_selection import train_test_split  # imported here: scikit-learn takes ~0.8 s to import

    train, validation = train_test_split(
        np.arange(len(labels)), test_size=validation, random_state=seed, stratify=labels
    )
    return np.sort(train), np.sort(validation)


def random_split(count, validation_fraction=0.1, seed=0):
    """A seeded random split of `count` indices into training and validation, each sorted (multi-label data).

    Documents with several labels cannot be stratified by one class: the
    validation part is a plain random `ceil(validation_fraction * count)`
    of them, as scikit-learn's `train_test_split` draws it.

    Raises:
        DataError: Fewer than two documents, or a bad fraction.
    """
    if not 0.0 < validation_fraction < 1.0:
        raise DataError(f"validation fraction must be between 0 and 1; got {validation_fraction}.")
    if count < 2:
        raise DataError(f"{count} documents are too few to train and validate on.")
    from sklearn.model_selection import train_test_split  # imported here: scikit-learn takes ~0.8 s to import

    validation = min(max(math.ceil(validation_fraction * count), 1), count - 1)
    train, validation = train_test_split(np.arange(count), test_size=validation, random_state=seed)
    return np.sort(train), np.sort(validation)


def grouped_split(labels, groups, validation_fraction=0.1, seed=0, names=None):
    """A seeded split of indices into training and validation that keeps every group on one side.

    The validation part holds whole groups (all the reviews of one film, the
    texts of one author or product), so that what is chosen on it is chosen
    on groups the training part never saw, as a test split's are. Each
    class wants `validation_fraction` of its documents in the part. The
    groups are visited twice in an order shuffled by `seed`: first a group
    joins the part when it fits in what each of its classes still wants
    (by half a document at most), then when it brings the part nearer to
    what the classes want (their summed distance falls); either only when
    each of its classes keeps a group in the training part. A class the
    part then lacks gets its smallest group that can go (ties: the seeded
    order). So the part holds about `validation_fraction` of the documents,
    class by class, as `stratified_split`'s does, within what whole groups
    allow (IMDB's films: to a document). Multi-label data (multi-hot rows)
    is balanced on the number of documents alone, as `random_split` draws
    it. NumPy only.

    Args:
        labels: Class id per document, or multi-hot rows `(n, labels)`.
        groups: The group of each document (any values, compared as text).
        validation_fraction, seed, names: As for `stratified_split`.

    Returns:
        `(train_indices, validation_indices)`, each sorted.

    Raises:
        DataError: A bad fraction; fewer than two groups; a class whose
            documents are all in one group; no part of whole groups that
            leaves every class on both sides, or only one holding more than
            `GROUPS["max_validation_share"]` of the documents; in one line.

    Example:

    >>> labels = [0, 0, 1, 1, 0, 1, 0, 1, 0, 1]
    >>> groups = ["a", "a", "a", "b", "c", "c", "d", "d", "e", "e"]
    >>> fit, validation = grouped_split(labels, groups, 0.2, seed=0)
    >>> sorted({groups[i] for i in validation}), sorted({groups[i] for i in fit})
    (['c'], ['a', 'b', 'd', 'e'])
    """
    if not 0.0 < validation_fraction < 1.0:
        raise DataError(f"validation fraction must be between 0 and 1; got {validation_fraction}.")
    labels, groups = np.asarray(labels), np.asarray(groups).astype(str)
    if len(groups) != len(labels):
        raise ValueError(f"{len(groups)} groups for {len(labels)} documents")
    keys, group_of = np.unique(groups, return_inverse=True)
    if len(keys) < 2:
        one = f" (all in {str(keys[0])!r})" if len(keys) else ""
        raise DataError(
            f"the validation part holds whole groups, and the {len(labels):,} training documents are of one "
            f"group{one}: it needs at least 2 groups, one to train on and one to validate on."
        )
    kind = kind_of(labels.ndim == 2)  # multi-hot rows: label sets, spread over the groups as one class
    classes, class_of = (
        (np.zeros(1), np.zeros(len(labels), int)) if kind is MULTI else np.unique(labels, return_inverse=True)
    )
    named = [str(names[c]) if names is not None else str(c) for c in classes]
    if len(classes) < kind.fewest_classes:
        raise DataError(f"a classifier needs at least two classes; the training data has one ({named[0]}).")
    pairs, sizes = np.unique(group_of.astype(np.int64) * len(classes) + class_of, return_counts=True)
    pair_group, pair_class = (pairs // len(classes)).tolist(), (pairs % len(classes)).tolist()
    spread = np.bincount(pair_class, minlength=len(classes)).tolist()  # groups holding each class
    alone = [c for c in range(len(classes)) if spread[c] < 2]
    if alone:
        shown = ", ".join(f"{named[c]!r} ({str(keys[group_of[class_of == c][0]])!r})" for c in alone[:5])
        raise DataError(
            "every class needs documents in at least 2 groups (the validation part holds whole groups: one to train "
            f"on, one to validate on); in one group only: {shown}"
            + (f" and {len(alone) - 5} more" if len(alone) > 5 else "")
            + "."
        )
    entries, members = [[] for _ in keys], [[] for _ in classes]  # each group's (class, documents); each class's groups
    for g, c, n in zip(pair_group, pair_class, sizes.tolist()):
        entries[g].append((c, n))
        members[c].append(g)
    wanted = (validation_fraction * np.bincount(class_of, minlength=len(classes))).tolist()  # documents still wanted
    used = [0] * len(classes)  # the validation part's groups of each class
    unmet = sum(w > 0.5 for w in wanted)  # classes a group (of 1 document or more) can still bring nearer
    chosen = np.zeros(len(keys), bool)
    rank = np.empty(len(keys), int)
    order = np.random.default_rng(seed).permutation(len(keys))
    rank[order] = np.arange(len(keys))

    def movable(g):  # every class of the group keeps a group to train on
        return all(used[c] + 1 < spread[c] for c, _ in entries[g])

    def take(g):
        nonlocal unmet
        chosen[g] = True
        for c, n in entries[g]:
            unmet -= wanted[c] > 0.5 >= wanted[c] - n
            wanted[c] -= n
            used[c] += 1

    for fits in (True, False):  # first the groups that fit in what each class still wants, then any that helps
        for g in order.tolist():
            if not unmet:
                break
            if chosen[g] or (fits and any(n > wanted[c] + 0.5 for c, n in entries[g])):
                continue
            if sum(abs(wanted[c] - n) - abs(wanted[c]) for c, n in entries[g]) < -1e-9 and movable(g):
                take(g)
    group_sizes = np.bincount(group_of, minlength=len(keys))
    for c in range(len(classes)):  # a class (multi-label: any document) the part lacks: its smallest group that can go
        if used[c] == 0:
            candidates = [g for g in members[c] if not chosen[g] and movable(g)]
            if not candidates:
                raise DataError(
                    f"no validation part of whole groups holds {named[c]!r} and leaves every class a group to train "
                    "on: each of its groups is the last one left to train on of another class."
                )
            take(min(candidates, key=lambda g: (group_sizes[g], rank[g])))
    validation = np.flatnonzero(chosen[group_of])
    if len(validation) > GROUPS["max_validation_share"] * len(labels):
        raise DataError(
            f"the groups are too few or too large for a validation part of about {validation_fraction:.0%}: "
            f"of whole groups, with every class on both sides, it holds {len(validation):,} of the {len(labels):,} "
            f"training documents ({len(validation) / len(labels):.0%}); give data of more groups, or split without them."
        )
    return np.flatnonzero(~chosen[group_of]), validation


def validation_pair(validation_data):
    """`(x, y)` of a verb's `validation_data`: `(texts, labels)` as given, or a dataset holding both (`y` `None`)."""
    return validation_data if isinstance(validation_data, (list, tuple)) else (validation_data, None)
