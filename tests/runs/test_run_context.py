"""Tests for hierattn.runs.run_context: a run's data cut into the part fitted and the part validated on (no Keras)."""

import numpy as np

from hierattn.data.dataset import LabelMap, TextDataset
from hierattn.runs.run_context import RunData, Split


def reviews(films=40, per_film=5):
    """Reviews of `films` films, `per_film` each, of both classes, with their films as groups."""
    count = films * per_film
    groups = np.repeat([f"tt{i:03d}" for i in range(films)], per_film)
    labels = (np.arange(count) % 2).astype(np.int32)
    return TextDataset(
        [f"review {i}" for i in range(count)], labels, LabelMap(["neg", "pos"]), list(range(count)), None, groups
    )


def test_a_split_of_data_with_groups_holds_whole_groups_and_counts_them():
    data = RunData(reviews(), name="imdb")
    split = data.split(0.1, seed=0)
    fit = {data.train.groups[int(text.split()[1])] for text in split.fit_texts}
    held = {data.train.groups[int(text.split()[1])] for text in split.val_texts}
    assert not fit & held and len(split.val_texts) == 20 and split.val_labels.tolist().count(1) == 10
    assert split.groups == {"fit": {"texts": 180, "groups": 36}, "validation": {"texts": 20, "groups": 4}}
    assert split.groups_text("film") == (
        "validation: 20 texts (10.0%) of 4 groups by film, fitted: 180 of 36; no film on both sides"
    )
    assert data.split(0.1, seed=0).val_texts == split.val_texts  # seeded: a resumed run splits the same way
    assert data.split(0.1, seed=1).val_texts != split.val_texts


def test_without_groups_the_split_is_stratified_and_counts_none():
    train = reviews()
    split = RunData(TextDataset(train.texts, train.labels, train.label_map, train.ids)).split(0.1, seed=0)
    assert split.groups is None and len(split.val_texts) == 20
    assert Split(["a"], np.array([0]), ["b"], np.array([1])).groups is None


def test_a_limited_sample_keeps_each_text_with_its_group():
    data = RunData(reviews(), name="imdb").limited(50, seed=0)
    assert len(data.train) == 50
    for text, group in zip(data.train.texts, data.train.groups):
        assert group == f"tt{int(text.split()[1]) // 5:03d}"
