"""Tests for hierattn.data.dataset: label maps, datasets, stratified splits."""

import numpy as np
import pytest

from hierattn.data.dataset import LabelMap, TextDataset, stratified_split
from hierattn.errors import DataError


def test_label_map_from_strings_and_ints():
    labels = LabelMap.from_labels(["pos", "neg", "pos", "neutral"])
    assert labels.names == ["neg", "neutral", "pos"]
    np.testing.assert_array_equal(labels.to_ids(["pos", "neg"]), [2, 0])
    numbers = LabelMap.from_labels([10, 2, 2, 1])
    assert numbers.names == [1, 2, 10]  # numeric order, not "1", "10", "2"


def test_label_map_errors():
    with pytest.raises(DataError, match="at least two classes"):
        LabelMap.from_labels(["only"])
    with pytest.raises(DataError, match="labels not seen in training: maybe"):
        LabelMap(["neg", "pos"]).to_ids(["pos", "maybe"])


def test_class_ids_read_integers_as_class_ids_unless_the_names_are_integers():
    words = LabelMap(["neg", "pos"])
    ids = words.class_ids(["pos", 0, 1, np.int64(1), 0.0, "neg"])  # Keras's contract: integers are class indices
    np.testing.assert_array_equal(ids, [1, 0, 1, 1, 0, 0])
    assert ids.dtype == np.int32
    with pytest.raises(DataError, match=r"^integer labels are class ids, 0 to 1 for the classes neg, pos; got 2, 5\.$"):
        words.class_ids(["pos", 2, 5, -0.0])
    with pytest.raises(DataError, match="labels not seen in training: True"):  # a boolean is no class id
        words.class_ids([True])
    stars = LabelMap.from_labels([5, 1, 2, 5])  # fitted on integers: integers are the names
    np.testing.assert_array_equal(stars.class_ids([5, 1, np.int64(2), 5.0]), [2, 0, 1, 2])
    with pytest.raises(DataError, match=r"labels not seen in training: 0 \(known: 1, 2, 5\)"):
        stars.class_ids([0])
    text = LabelMap(["1", "2", "5"])  # the same names read from a text file
    assert text.integer_names and not LabelMap(["01", "2"]).integer_names
    np.testing.assert_array_equal(text.class_ids([5, "1", 2]), [2, 0, 1])


def test_stratified_split_is_stratified_and_seeded():
    labels = np.array([0] * 900 + [1] * 100)
    train, validation = stratified_split(labels, 0.1, seed=3)
    assert len(validation) == 100 and len(set(train) | set(validation)) == 1000
    assert labels[validation].sum() == 10  # class balance kept
    again_train, again_validation = stratified_split(labels, 0.1, seed=3)
    np.testing.assert_array_equal(validation, again_validation)
    assert not np.array_equal(validation, stratified_split(labels, 0.1, seed=4)[1])
    with pytest.raises(DataError, match="between 0 and 1"):
        stratified_split(labels, 1.5)


def test_stratified_split_of_small_data_keeps_every_class_in_both_parts():
    train, validation = stratified_split([0, 0, 1, 1], 0.1, seed=0)  # 10% of 4 would be 1 < 2 classes
    assert sorted(np.array([0, 0, 1, 1])[validation]) == [0, 1] and len(train) == 2
    labels = np.array([0] * 2500 + [1] * 22500)
    _, validation = stratified_split(labels, 0.1, seed=0)
    assert len(validation) == 2500  # ceil(0.1 * n), as before


@pytest.mark.parametrize(
    "labels, message",
    [
        ([0, 0, 0], "needs at least two classes; the training data has one \\(neg\\)"),
        ([0, 1, 2, 3], "every label occurs once \\(4 documents, 4 labels\\)"),
        ([0, 0, 1], "every class needs at least 2 documents .*too few: 'pos' \\(1\\)"),
        ([0, 0, 1, 1, 2, 2], "6 documents are too few to train and validate on 3 classes"),
    ],
)
def test_stratified_split_refuses_what_cannot_be_split(labels, message):
    names = ["neg", "pos", "neutral", "mixed"]
    with pytest.raises(DataError, match=message):
        stratified_split(labels, 0.7, seed=0, names=names)


def test_subset_keeps_fields_aligned():
    data = TextDataset(
        ["a", "b", "c"], np.array([0, 1, 0]), LabelMap(["x", "y"]), ["i0", "i1", "i2"], np.array([1, 9, 2])
    )
    part = data.subset([2, 1])
    assert part.texts == ["c", "b"] and part.ids == ["i2", "i1"]
    np.testing.assert_array_equal(part.labels, [0, 1])
    np.testing.assert_array_equal(part.ratings, [2, 9])


def test_multi_hot_rows_and_back():
    labels = LabelMap.from_label_sets([["wheat", "grain"], [], ["earn"]])
    assert labels.names == ["earn", "grain", "wheat"]
    rows = labels.multi_hot([["wheat", "grain", "wheat"], [], ["earn"]])
    assert rows.tolist() == [[0, 1, 1], [0, 0, 0], [1, 0, 0]] and rows.dtype == np.float32
    assert labels.names_of(rows) == [["grain", "wheat"], [], ["earn"]]
    assert labels.names_of([2, 0]) == ["wheat", "earn"]
    with pytest.raises(DataError, match="labels not seen in training: corn"):
        labels.multi_hot([["corn"]])


def test_random_split_is_seeded_and_sized():
    from hierattn.data.dataset import random_split

    fit, validation = random_split(50, 0.1, seed=3)
    assert len(validation) == 5 and sorted([*fit, *validation]) == list(range(50))
    assert random_split(50, 0.1, seed=3)[1].tolist() == validation.tolist()
    assert random_split(50, 0.1, seed=4)[1].tolist() != validation.tolist()
    with pytest.raises(DataError, match="too few"):
        random_split(1, 0.1)


def test_a_multi_label_dataset_subsets_its_rows():
    data = TextDataset(["a", "b", "c"], np.array([[1, 0], [0, 0], [1, 1]], np.int8), LabelMap(["x", "y"]), [0, 1, 2])
    assert data.multi_label and data.subset([2, 0]).labels.tolist() == [[1, 1], [1, 0]]
