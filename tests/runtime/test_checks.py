"""`hierattn.runtime.checks`: a bundle's metadata checked for its types and ranges; the texts a predictor takes."""

import copy
import itertools

import numpy as np
import pytest

from hierattn.defaults import MAX_DOCUMENT_IDS
from hierattn.errors import ArgumentError, DataError
from hierattn.runtime.bundle import DIGEST_KEY
from hierattn.runtime.checks import as_texts, check_digest, check_metadata
from hierattn.runtime.threads import check_threads, max_threads

GOOD = {
    "format": "hierattn.bundle/1",
    "label_names": ["neg", "pos"],
    "preprocessor": {
        "mode": "hierarchical",
        "max_sentences": 3,
        "max_words": 9,
        "sequence_length": 19,
        "ngram_length": 5000,
        "tokenizer": {"lower": True, "unescape_html": True},
    },
    "vocabulary": {"tokens": ["film", "great", "dull"], "min_count": 1, "max_size": None},
    "inputs": {"token_ids": "token_ids", "ngram_ids": "ngram_ids"},
    "output": "Identity:0",
    "ngram_output": "Identity_1:0",
    "cascade": {"cut": 0.5, "ngram_weight": 4.0, "ngram_scale": 11.2, "temperature": 0.2, "temperature_always": 0.2},
    "ngram_part": {
        "vocabulary_size": 5,
        "num_classes": 2,
        "ngram_max": 2,
        "num_buckets": 16777216,
        "tf": "sublinear",
        "normalize": True,
        "tables": ["Identity_2:0", "Identity_3:0", "Identity_4:0", "Identity_5:0"],
    },
}
MULTI = {**GOOD, "label_names": ["food", "money", "sport"], "multi_label": True, "thresholds": [0.5, 0.4, 0.3]}
MULTI["ngram_part"] = {**GOOD["ngram_part"], "num_classes": 3}


def _changed(base, **changes):
    """A deep copy of `base` with `changes`: `{"a__b": value}` sets `metadata["a"]["b"]`."""
    metadata = copy.deepcopy(base)
    for key, value in changes.items():
        *parents, name = key.split("__")
        target = metadata
        for parent in parents:
            target = target[parent]
        target[name] = value
    return metadata


def test_good_metadata_passes():
    for metadata in (GOOD, MULTI, _changed(MULTI, label_names=["sport"], thresholds=[0.5], ngram_part__num_classes=1)):
        check_metadata(metadata, "m.onnx")
    flat = _changed(GOOD, preprocessor__mode="flat", preprocessor__max_sentences=None, preprocessor__max_words=None)
    check_metadata(flat, "m.onnx")
    check_metadata(_changed(GOOD, offsets=[0.0, 0.5]), "m.onnx")
    no_ngrams = {k: v for k, v in GOOD.items() if k not in ("ngram_part", "cascade", "ngram_output")}
    check_metadata(_changed(no_ngrams, inputs={"token_ids": "t"}, preprocessor__ngram_length=None), "m.onnx")


@pytest.mark.parametrize(
    ("base", "changes", "message"),
    [
        (GOOD, {"label_names": ["pos", "pos"]}, "label_names: 'pos' appears twice"),
        (GOOD, {"label_names": ["pos"]}, "label_names: 1 for a classifier of at least 2"),
        (MULTI, {"label_names": [], "thresholds": []}, "label_names: 0 for a classifier of at least 1"),
        (GOOD, {"label_names": ["neg", ""]}, "non-empty strings"),
        (GOOD, {"label_names": ["neg", 1]}, "non-empty strings"),
        (GOOD, {"label_names": "neg,pos"}, "non-empty strings"),
        (GOOD, {"multi_label": "yes"}, "multi_label must be true or false"),
        (MULTI, {"thresholds": [float("nan")] * 3}, "thresholds must be 3 numbers between 0 and 1"),
        (MULTI, {"thresholds": [0.5, 0.5, 1.0]}, "thresholds must be 3 numbers between 0 and 1"),
        (MULTI, {"thresholds": [0.5, 0.5, 0.0]}, "thresholds must be 3 numbers between 0 and 1"),
        (MULTI, {"thresholds": [0.5, 0.5, "0.5"]}, "thresholds must be 3 numbers between 0 and 1"),
        (MULTI, {"thresholds": [0.5, 0.5]}, "thresholds must be 3 numbers between 0 and 1"),
        (MULTI, {"thresholds": None}, "thresholds must be 3 numbers between 0 and 1"),
        (GOOD, {"offsets": [0.0, float("inf")]}, "offsets must be 2 finite numbers"),
        (GOOD, {"offsets": [0.0]}, "offsets must be 2 finite numbers"),
        (GOOD, {"vocabulary__tokens": ["film", "great", "film"]}, "vocabulary tokens: 'film' appears twice"),
        (GOOD, {"vocabulary__tokens": [0, 1, 2]}, "vocabulary tokens must be a list of strings"),
        (GOOD, {"vocabulary__tokens": ["film", "<pad>", "dull"]}, "vocabulary tokens hold <pad>"),
        (GOOD, {"vocabulary": ["film"]}, "vocabulary tokens must be a list of strings"),
        (GOOD, {"preprocessor__mode": "deep"}, "mode must be one of hierarchical, flat"),
        (GOOD, {"preprocessor__tokenizer": {"lower": "false"}}, "tokenizer's lower and unescape_html must be true or"),
        (GOOD, {"preprocessor__tokenizer": {"units": "auto"}}, "tokenizer's units must be one of words, characters"),
        (GOOD, {"preprocessor__tokenizer": {"units": "subwords"}}, "its subword model is missing or damaged"),
        (GOOD, {"preprocessor__tokenizer": {"units": "subwords", "subwords": "bm90IGEgbW9kZWw="}}, "subword model is"),
        (GOOD, {"preprocessor__tokenizer": {"stem": True}}, "the tokenizer has no setting 'stem'"),
        (GOOD, {"inputs": {"token_ids": 3}}, "inputs and outputs must name the graph's"),
        (GOOD, {"inputs": {"ids": "x"}}, "inputs and outputs must name the graph's"),
        (GOOD, {"output": None}, "inputs and outputs must name the graph's"),
        (GOOD, {"cascade__cut": float("nan")}, "the cascade's cut must be a finite number"),
        (GOOD, {"cascade__ngram_weight": None}, "the cascade's ngram_weight must be a finite number"),
        (GOOD, {"cascade__ngram_scale": "11"}, "the cascade's ngram_scale must be a finite number"),
        (GOOD, {"ngram_part__num_classes": 3}, "the n-gram part has 3 classes for 2 labels"),
        (GOOD, {"ngram_part__vocabulary_size": 9}, "the n-gram part reads 9 ids, the vocabulary 5"),
        (GOOD, {"ngram_part__ngram_max": 0}, "the n-gram part's ngram_max must be a whole number"),
        (GOOD, {"ngram_part__tables": ["a"]}, "the n-gram part must name its 4 tables"),
    ],
)
def test_metadata_of_the_wrong_type_or_range_is_refused(base, changes, message):
    with pytest.raises(DataError, match="^m.onnx: its hierattn metadata is damaged .*" + message):
        check_metadata(_changed(base, **changes), "m.onnx")


@pytest.mark.parametrize("name", ["max_sentences", "max_words", "ngram_length"])
@pytest.mark.parametrize("value", [-1, 0, "3", True, 2.5, None])
def test_a_length_limit_must_be_a_whole_number_of_at_least_one(name, value):
    with pytest.raises(DataError, match=f"damaged \\({name} must be a whole number of at least 1, not "):
        check_metadata(_changed(GOOD, **{f"preprocessor__{name}": value}), "m.onnx")


def test_a_limit_the_mode_does_not_use_may_be_null_but_not_wrong():
    check_metadata(_changed(GOOD, preprocessor__sequence_length=None), "m.onnx")
    with pytest.raises(DataError, match="sequence_length must be a whole number of at least 1, not -5"):
        check_metadata(_changed(GOOD, preprocessor__sequence_length=-5), "m.onnx")


@pytest.mark.parametrize(
    ("changes", "message"),
    [
        ({"preprocessor__max_sentences": 10**9}, "max_sentences must be at most 131,072, not 1,000,000,000"),
        ({"preprocessor__max_words": MAX_DOCUMENT_IDS + 1}, "max_words must be at most 131,072, not 131,073"),
        ({"preprocessor__sequence_length": 10**12}, "sequence_length must be at most 131,072"),  # unused, still bounded
        ({"preprocessor__ngram_length": 2**40}, "ngram_length must be at most 131,072"),
        (
            {"preprocessor__max_sentences": 1000, "preprocessor__max_words": 1000},
            "max_sentences x max_words must be at",
        ),
        (
            {"embedding": {"ids": 5, "rows": 2**40}},
            "the embedding's rows must be a whole number from 5 to 2,147,483,647",
        ),
        ({"ngram_part__num_buckets": 2**40}, "the n-gram part's num_buckets must be from 6 to 2,147,483,647"),
        ({"ngram_part__num_buckets": 5}, "the n-gram part's num_buckets must be from 6 to"),
        ({"ngram_part__ngram_max": 10**9}, "the n-gram part's ngram_max 1000000000 makes keys over 63 bits for 5 ids"),
        ({"ngram_part__ngram_max": 28}, "the n-gram part's ngram_max 28 makes keys over 63 bits"),
        ({"ngram_part__tf": "log"}, "the n-gram part's tf must be one of binary, sublinear"),
        ({"ngram_part__normalize": "yes"}, "the n-gram part's normalize must be true or false"),
        ({"ngram_output": None}, "inputs and outputs must name the graph's"),
    ],
)
def test_every_size_in_a_bundle_has_an_upper_bound(changes, message):
    """Each number that sizes an allocation is bounded (#67): an edited max_sentences of 1e9 is refused at load, not
    when a prediction asks for gigabytes; a huge ngram_max is refused without computing vocabulary ** ngram_max."""
    with pytest.raises(DataError, match="^m.onnx: its hierattn metadata is damaged .*" + message):
        check_metadata(_changed(GOOD, **changes), "m.onnx")


def test_the_limits_real_bundles_use_pass():
    check_metadata(_changed(GOOD, preprocessor__max_sentences=30, preprocessor__max_words=40), "m.onnx")
    check_metadata(_changed(GOOD, preprocessor__max_sentences=1, preprocessor__max_words=MAX_DOCUMENT_IDS), "m.onnx")
    check_metadata(
        _changed(GOOD, preprocessor__sequence_length=32768, preprocessor__ngram_length=MAX_DOCUMENT_IDS), "m.onnx"
    )
    check_metadata(
        _changed(GOOD, ngram_part__num_buckets=2**31 - 1, ngram_part__ngram_max=27), "m.onnx"
    )  # 5**27 < 2**63


def test_an_ngram_part_and_its_output_go_together():
    without = {k: v for k, v in GOOD.items() if k != "ngram_output"}
    with pytest.raises(DataError, match="ngram_part and ngram_output go together"):
        check_metadata(without, "m.onnx")


def test_a_recorded_digest_must_be_the_files():
    digest = "ab" * 32
    check_digest(GOOD, "anything", "m.onnx")  # exported before #67: nothing to check
    check_digest({**GOOD, DIGEST_KEY: digest}, digest, "m.onnx")
    with pytest.raises(DataError, match=r"^m.onnx: its graph was changed after export .*; export it again$"):
        check_digest({**GOOD, DIGEST_KEY: digest}, "cd" * 32, "m.onnx")
    with pytest.raises(DataError, match=r"^m.onnx: its graph was changed after export"):
        check_digest({**GOOD, DIGEST_KEY: digest}, None, "m.onnx")  # a file whose protobuf this cannot read
    for bad in (None, 5, "short", ["ab" * 32]):
        with pytest.raises(DataError, match=f"damaged .{DIGEST_KEY} must be a SHA-256, not "):
            check_digest({**GOOD, DIGEST_KEY: bad}, digest, "m.onnx")


def test_texts_are_strings_or_utf8_bytes_in_a_list_array_series_or_iterator():
    import pandas as pd

    assert as_texts(["a", b"caf\xc3\xa9"]) == ["a", "café"]
    assert as_texts(("a", "b")) == as_texts(np.array(["a", "b"])) == as_texts(pd.Series(["a", "b"])) == ["a", "b"]
    assert as_texts(np.array([b"a", b"b"])) == as_texts(text for text in ["a", "b"]) == ["a", "b"]
    assert as_texts([]) == []


@pytest.mark.parametrize(
    ("texts", "message"),
    [
        ("one text", "not a single string"),
        (b"one text", "not a single string"),
        (["a", None], r"^texts must be strings: text 2 is None \(NoneType\)$"),
        (["a", "b", 3], r"^texts must be strings: text 3 is 3 \(int\)$"),
        ({"a": 1, "b": 2}, r"^texts must be a list \(or tuple, array, Series\) of strings; got .* \(dict\)$"),
        ({"a", "b"}, r"of strings; got .* \(set\)$"),
        ((n for n in [1, 2]), r"^texts must be strings: text 1 is 1 \(int\)$"),
        (itertools.count(), r"^texts must be strings: text 1 is 0 \(int\)$"),
        (5, r"of strings; got 5 \(int\)$"),
        (np.array([["a", "b"]]), r"one-dimensional .* got shape \(1, 2\)"),
        (["fine", b"caf\xe9"], r"^text 2 is not UTF-8: it has the byte 0xe9 at position 3 \(decode it first"),
    ],
)
def test_anything_else_is_refused_naming_the_text(texts, message):
    with pytest.raises(DataError, match=message):
        as_texts(texts)


def test_threads_are_a_whole_number_from_one_to_a_sane_most():
    assert check_threads(None) is None and check_threads(1) == 1 and check_threads(np.int64(4)) == 4
    assert check_threads(max_threads()) == max_threads() >= 256
    for bad in (-1, 0, 100000, max_threads() + 1, 1.5, "2", True):
        with pytest.raises(ArgumentError, match=r"^threads must be a whole number from 1 to \d+, not "):
            check_threads(bad)
