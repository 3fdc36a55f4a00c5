"""Tests for hierattn.data.dataset: label maps, datasets, stratified splits."""

import numpy as np
import pytest

from hierattn.data.dataset import LabelMap, TextDataset, stratified_split
from hierattn.errors import DataError


def test_label_map_from_strings_and_ints(tmp_path):
    labels = LabelMap.from_labels(["pos", "neg", "pos", "neutral"])
    assert labels.names == ["neg", "neutral", "pos"]
    np.testing.assert_array_equal(labels.to_ids(["pos", "neg"]), [2, 0])
    numbers = LabelMap.from_labels([10, 2, 2, 1])
    assert numbers.names == [1, 2, 10]  # numeric order, not "1", "10", "2"
    numbers.save(tmp_path / "labels.json")
    assert LabelMap.load(tmp_path / "labels.json").names == [1, 2, 10]


def test_label_map_errors():
    with pytest.raises(DataError, match="at least two classes"):
        LabelMap.from_labels(["only"])
    with pytest.raises(DataError, match="labels not seen in training: maybe"):
        LabelMap(["neg", "pos"]).to_ids(["pos", "maybe"])


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


def test_subset_keeps_fields_aligned():
    data = TextDataset(["a", "b", "c"], np.array([0, 1, 0]), LabelMap(["x", "y"]), ["i0", "i1", "i2"], np.array([1, 9, 2]))
    part = data.subset([2, 1])
    assert part.texts == ["c", "b"] and part.ids == ["i2", "i1"]
    np.testing.assert_array_equal(part.labels, [0, 1])
    np.testing.assert_array_equal(part.ratings, [2, 9])
    assert len(data.head(2)) == 2
