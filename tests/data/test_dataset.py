"""Tests for hierattn.data.dataset: label maps, datasets, stratified, random and grouped splits (NumPy only)."""

import numpy as np
import pytest

from hierattn.data.dataset import LabelMap, TextDataset, grouped_split, stratified_split
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
        ["a", "b", "c"],
        np.array([0, 1, 0]),
        LabelMap(["x", "y"]),
        ["i0", "i1", "i2"],
        np.array([1, 9, 2]),
        np.array(["g0", "g1", "g0"]),
    )
    part = data.subset([2, 1])
    assert part.texts == ["c", "b"] and part.ids == ["i2", "i1"]
    np.testing.assert_array_equal(part.labels, [0, 1])
    np.testing.assert_array_equal(part.ratings, [2, 9])
    assert part.groups.tolist() == ["g0", "g1"] and data.subset([0]).groups.tolist() == ["g0"]
    assert TextDataset(["a"], np.array([0]), LabelMap(["x", "y"]), [0]).subset([0]).groups is None


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


# Grouped splits ------------------------------------------------------------------------------------------------------


def films(count=400, reviews=(1, 30), seed=0, positive=0.5):
    """Labels and groups as IMDB's: films of 1 to 30 reviews, each film's reviews mostly of one class."""
    rng = np.random.default_rng(seed)
    sizes = rng.integers(reviews[0], reviews[1] + 1, count)
    groups = np.repeat([f"tt{i:07d}" for i in range(count)], sizes)
    leaning = np.repeat(rng.random(count) < positive, sizes)
    labels = np.where(rng.random(len(groups)) < 0.8, leaning, ~leaning).astype(int)
    return labels, groups


def test_grouped_split_keeps_every_group_on_one_side_seeded_sized_and_balanced():
    labels, groups = films()
    fit, validation = grouped_split(labels, groups, 0.1, seed=3)
    assert sorted([*fit, *validation]) == list(range(len(labels)))
    assert not set(groups[fit]) & set(groups[validation])  # no film on both sides
    assert abs(len(validation) - 0.1 * len(labels)) <= 5  # about the share asked, in films of up to 30
    for c in (0, 1):  # each class about its share, as a stratified split's
        assert abs((labels[validation] == c).sum() - 0.1 * (labels == c).sum()) <= 5
    again = grouped_split(labels, groups, 0.1, seed=3)
    assert again[1].tolist() == validation.tolist() and again[0].tolist() == fit.tolist()
    assert grouped_split(labels, groups, 0.1, seed=4)[1].tolist() != validation.tolist()
    shuffled = np.random.default_rng(0).permutation(len(labels))  # the same groups, whatever the rows' order
    _, moved = grouped_split(labels[shuffled], groups[shuffled], 0.1, seed=3)
    assert sorted(set(groups[shuffled][moved])) == sorted(set(groups[validation]))


def test_grouped_split_of_singletons_is_a_stratified_split():
    labels = np.array([0] * 900 + [1] * 100)
    fit, validation = grouped_split(labels, np.arange(1000), 0.1, seed=0)
    assert len(validation) == 100 and labels[validation].sum() == 10


def test_grouped_split_keeps_every_class_on_both_sides():
    # the rare class's groups are large: no greedy step takes one (each overshoots), so the part is given the smallest
    labels = np.array([0] * 200 + [1] * 30)
    groups = np.array([f"common{i // 4}" for i in range(200)] + ["rare-a"] * 20 + ["rare-b"] * 10)
    fit, validation = grouped_split(labels, groups, 0.05, seed=0)
    assert set(labels[validation]) == {0, 1} and set(labels[fit]) == {0, 1}
    assert set(groups[validation]) & {"rare-a", "rare-b"} == {"rare-b"}  # the smaller of the two
    assert not set(groups[fit]) & set(groups[validation])


def test_grouped_split_of_multi_label_rows_balances_the_documents():
    rng = np.random.default_rng(0)
    rows = (rng.random((300, 4)) < 0.3).astype(np.int8)
    groups = np.repeat(np.arange(60), 5)
    fit, validation = grouped_split(rows, groups, 0.1, seed=0)
    assert len(validation) == 30 and not set(groups[fit]) & set(groups[validation])
    _, validation = grouped_split(rows[:20], np.repeat([0, 1], 10), 0.1, seed=0)
    assert len(validation) == 10  # two groups: one of them, however large


@pytest.mark.parametrize(
    "labels, groups, fraction, message",
    [
        (
            [0, 1, 0, 1],
            ["a", "a", "a", "a"],
            0.1,
            r"the 4 training documents are of one group \(all in 'a'\): it needs",
        ),
        (
            [0, 0, 1, 1, 0, 0],
            ["a", "b", "c", "c", "a", "b"],
            0.1,
            r"every class needs documents in at least 2 groups .*in one group only: 'pos' \('c'\)\.$",
        ),
        (  # the rare class's groups are both large: the part that holds one holds over half the documents
            [0] * 11 + [1] + [0] * 11 + [1] + [0] * 4,
            ["big-a"] * 12 + ["big-b"] * 12 + ["s1", "s2", "s3", "s4"],
            0.1,
            (
                r"^the groups are too few or too large for a validation part of about 10%: .* it holds 15 of the 28 "
                r"training documents \(54%\); give data of more groups, or split without them\.$"
            ),
        ),
        ([0, 1, 0, 1], ["a", "a", "b", "b"], 1.5, "between 0 and 1"),
        ([0, 0, 0, 0], ["a", "a", "b", "b"], 0.5, r"^a classifier needs at least two classes; .* has one \(neg\)\.$"),
    ],
    ids=["one-group", "class-in-one-group", "over-half", "bad-fraction", "one-class"],
)
def test_grouped_split_refuses_what_whole_groups_cannot_split(labels, groups, fraction, message):
    with pytest.raises(DataError, match=message):
        grouped_split(labels, groups, fraction, seed=0, names=["neg", "pos"])


def test_grouped_split_of_two_groups_holds_out_one_of_them():
    labels, groups = np.array([0, 1] * 6), np.array(["a"] * 6 + ["b"] * 6)
    fit, validation = grouped_split(labels, groups, 0.1, seed=0)  # half of the documents: the most accepted
    assert len(validation) == 6 and len(set(groups[validation])) == 1 and set(labels[validation]) == {0, 1}


def test_grouped_split_needs_no_tensorflow_nor_scikit_learn():
    import subprocess
    import sys

    code = (
        "import sys; from hierattn.data.dataset import grouped_split; grouped_split([0, 1, 0, 1], list('aabb'), 0.5); "
        "print(sorted({'tensorflow', 'keras', 'sklearn'} & set(sys.modules)))"
    )
    assert subprocess.run([sys.executable, "-c", code], capture_output=True, text=True).stdout.strip() == "[]"
