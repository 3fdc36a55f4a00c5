"""`hierattn.models.inputs`: texts and labels as `TextClassifier`'s verbs take them; anything else refused in one line."""

import numpy as np
import pytest
import tensorflow as tf

from hierattn.data.dataset import random_split
from hierattn.errors import DataError
from hierattn.kinds import MULTI
from hierattn.models.inputs import as_texts, label_values, split_validation


def test_texts_come_from_a_list_array_or_string_tensor_utf8_bytes_decoded():
    assert as_texts(["a", b"caf\xc3\xa9"]) == as_texts(tf.constant(["a", "café"])) == ["a", "café"]
    assert as_texts(np.array([b"a"])) == ["a"]


@pytest.mark.parametrize(
    ("texts", "message"),
    [
        ([b"good", b"caf\xe9 au lait"], r"^text 2 is not UTF-8: it has the byte 0xe9 at position 3"),
        (tf.constant([b"\xff"]), r"^text 1 is not UTF-8: it has the byte 0xff at position 0"),
        (["a", None], r"^texts must be strings: text 2 is None \(NoneType\)$"),
        ({"a": 1}, r"^texts must be a list \(or tuple, array, Series\) of strings; got \{'a': 1\} \(dict\)$"),
        (tf.constant("one text"), "not a single string"),
        (tf.constant([["a", "b"]]), r"one-dimensional .* got shape \(1, 2\)"),
    ],
)
def test_texts_that_are_not_strings_or_utf8_are_refused_in_one_line(texts, message):
    with pytest.raises(DataError, match=message):
        as_texts(texts)


def test_undecodable_label_bytes_are_refused_in_one_line():
    assert label_values(np.array([b"pos", b"neg"]))[0] == ["pos", "neg"]
    with pytest.raises(DataError, match=r"^label b'caf\\xe9' is not UTF-8"):
        label_values(np.array([b"pos", b"caf\xe9"], dtype=object))


def test_each_kind_reads_its_own_labels():
    assert label_values(["pos", "neg"]) == (["pos", "neg"], None)
    assert label_values(np.array([[0, 1], [1, 0]]), ["neg", "pos"]) == (["pos", "neg"], 2)  # one-hot rows
    assert label_values([("sport", "food"), []], multi_label=True) == ([["food", "sport"], []], None)
    assert label_values(np.array([[1, 1], [0, 0]]), ["a", "b"], multi_label=MULTI) == ([["a", "b"], []], 2)
    with pytest.raises(DataError, match="labels given as rows must be one-hot"):
        label_values(np.array([[1, 1], [0, 0]]), ["a", "b"])
    with pytest.raises(DataError, match="a multi-label classifier takes each text's labels as a list"):
        label_values(["sport"], multi_label=True)


def test_each_kind_splits_its_own_labels():
    texts = [f"text {i}" for i in range(20)]
    classes = ["pos"] * 16 + ["neg"] * 4
    (fit_texts, fit_labels), (held_texts, held_labels) = split_validation(texts, classes, 0.25, seed=3)
    assert sorted(held_labels) == ["neg"] + ["pos"] * 4 and sorted(fit_texts + held_texts) == sorted(texts)
    label_sets = [["sport"]] * 20
    _, (held_texts, _) = split_validation(texts, label_sets, 0.25, seed=3, multi_label=True)  # no class stratifies
    assert held_texts == [texts[i] for i in random_split(20, 0.25, 3)[1]]


def test_fit_to_a_file_writes_lines_within_each_epoch(capfd):
    import hierattn

    texts, labels = ["a fine film", "dull and slow", "great acting", "bad plot"] * 10, ["pos", "neg", "pos", "neg"] * 10
    classifier = hierattn.TextClassifier(embeddings="none", ngrams=False, embedding_dim=8, word_units=4)
    classifier.fit(texts, labels, epochs=1, batch_size=2, validation_split=0.0)  # verbose="auto": stdout is a file
    printed = capfd.readouterr().out
    assert "epoch 1/1: 2/20 steps (10%)" in printed and "epoch 1/1: 18/20 steps (90%)" in printed, printed
    assert "\r" not in printed and "\x1b[" not in printed
