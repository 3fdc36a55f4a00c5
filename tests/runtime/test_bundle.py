"""The bundle's metadata (`hierattn.runtime.bundle`): read back, and refused when it is not what this version reads.

A real bundle whose metadata was edited is refused by `hierattn.runtime.load` in one line, before any prediction:
its types and ranges, and its agreement with its graph (`hierattn.runtime.checks`).
"""

import json

import pytest

from hierattn import runtime
from hierattn.errors import ArgumentError, DataError
from hierattn.runs.directory import BUNDLE_FILE
from hierattn.runtime.bundle import DIGEST_KEY, FORMAT, METADATA_KEY, file_digest, read_metadata

from conftest import rewrite_bundle_metadata

GOOD = {
    "format": FORMAT,
    "label_names": ["neg", "pos"],
    "preprocessor": {},
    "vocabulary": {"tokens": []},
    "inputs": {"token_ids": "x"},
    "output": "y",
}


def test_read_metadata_gives_the_json_back():
    assert read_metadata({METADATA_KEY: json.dumps(GOOD)}, "m.onnx") == GOOD


@pytest.mark.parametrize(
    ("props", "message"),
    [
        ({}, "not a hierattn bundle"),
        ({METADATA_KEY: "{not json"}, "not JSON"),
        ({METADATA_KEY: json.dumps({"format": FORMAT})}, "lacks label_names"),
        ({METADATA_KEY: json.dumps({**GOOD, "format": "hierattn.bundle/9"})}, "export it again"),
    ],
)
def test_read_metadata_refuses_other_files(props, message):
    with pytest.raises(DataError, match=message):
        read_metadata(props, "m.onnx")


# A real bundle edited: `load` refuses it in one line, before any prediction (issue #54). ---------------------------


def _tokens(metadata, change):
    metadata["vocabulary"]["tokens"] = change(metadata["vocabulary"]["tokens"])


def _with_ngram_part(change, **settings):
    """`change`, and the n-gram part's settings made to agree with it: only the graph can tell then."""

    def both(metadata):
        change(metadata)
        ids = len(metadata["vocabulary"]["tokens"]) + 2
        metadata["ngram_part"].update(vocabulary_size=ids, num_classes=len(metadata["label_names"]), **settings)

    return both


SINGLE_LABEL_EDITS = {
    "label names duplicated": (lambda m: m.update(label_names=["pos", "pos"]), "label_names: 'pos' appears twice"),
    "vocabulary shortened": (
        lambda m: _tokens(m, lambda t: t[:-3]),
        r"vocabulary: 23 words \(25 ids\) where it had 28 ids",
    ),
    "vocabulary shortened, the n-gram part too": (
        _with_ngram_part(lambda m: _tokens(m, lambda t: t[:-3])),
        r"vocabulary: 23 words \(25 ids\) where it had 28 ids",
    ),
    "vocabulary shortened, as a bundle before #54 (no embedding record)": (
        _with_ngram_part(lambda m: (_tokens(m, lambda t: t[:-3]), m.pop("embedding"))),
        "its graph's embedding holds more than its 25 ids",
    ),
    "an embedding record of more rows than the graph's": (
        lambda m: m["embedding"].update(rows=40),
        r"its graph cannot read its vocabulary's ids",
    ),
    "vocabulary entries made integers": (
        lambda m: _tokens(m, lambda t: list(range(len(t)))),
        "vocabulary tokens must be a list of strings",
    ),
    "a single-label bundle claiming multi_label": (
        lambda m: m.update(multi_label=True, thresholds=[0.5, 0.5]),
        r"it says multi_label, but its graph is a single-label classifier's \(a softmax\)",
    ),
    "3 label names for a 2-class graph": (
        _with_ngram_part(lambda m: m.update(label_names=["neg", "pos", "meh"])),
        "its graph's output Identity:0 has 2 columns for its 3 label names",
    ),
    "vocabulary longer than the embedding": (
        _with_ngram_part(lambda m: _tokens(m, lambda t: t + ["zzyzx", "qwv"])),
        r"vocabulary: 28 words \(30 ids\) where it had 28 ids",
    ),
    "max_sentences negative": (
        lambda m: m["preprocessor"].update(max_sentences=-1),
        "max_sentences must be a whole number of at least 1, not -1",
    ),
    "max_sentences a string": (
        lambda m: m["preprocessor"].update(max_sentences="3"),
        "max_sentences must be a whole number of at least 1, not '3'",
    ),
    "max_sentences a billion (#67: loaded, then 89 GiB asked at the first prediction)": (
        lambda m: m["preprocessor"].update(max_sentences=10**9),
        "max_sentences must be at most 131,072, not 1,000,000,000",
    ),
    "the mode flat for a hierarchical graph (#67: onnxruntime's InvalidArgument at the first prediction)": (
        lambda m: m["preprocessor"].update(mode="flat", sequence_length=50),
        "its mode is flat, but its graph reads token ids of 3 axes, not 2",
    ),
    "the output named the n-gram part's (#67: its logits answered as probabilities)": (
        lambda m: m.update(output=m["ngram_output"]),
        "its hierattn metadata names inputs or outputs other than its graph's",
    ),
    "the n-gram part's normalize flipped (#67: its logits in NumPy other than the graph's)": (
        lambda m: m["ngram_part"].update(normalize=not m["ngram_part"]["normalize"]),
        r"its n-gram part's settings \(ngram_max, tf, normalize\) are not its graph's",
    ),
    "the n-gram part's num_buckets changed": (
        lambda m: m["ngram_part"].update(num_buckets=1000),
        "its n-gram part's num_buckets is 1000, its graph's 16777216",
    ),
    "the graph's digest changed": (
        lambda m: m.update(graph_sha256="0" * 64),
        r"its graph was changed after export \(its SHA-256 is not the graph_sha256 its metadata records\)",
    ),
}


def refused_when_edited(run_dir, tmp_path, change, message):
    """The run's bundle with its metadata changed by `change`, refused at load in one line saying `message`."""
    target = tmp_path / "model.onnx"
    rewrite_bundle_metadata(run_dir / BUNDLE_FILE, target, change)
    with pytest.raises(DataError, match=f"^{target}: .*{message}") as refused:
        runtime.load(target)
    assert "\n" not in str(refused.value)
    return target


@pytest.mark.slow
@pytest.mark.parametrize("edit", list(SINGLE_LABEL_EDITS))
def test_an_edited_bundle_is_refused_at_load(edit, han_run_dir, tmp_path):
    target = refused_when_edited(han_run_dir, tmp_path, *SINGLE_LABEL_EDITS[edit])
    rewrite_bundle_metadata(han_run_dir / BUNDLE_FILE, target, lambda m: None)  # the same bundle, unedited, loads
    assert runtime.load(target).label_names == ["neg", "pos"]


def _two_of_three_labels(metadata):
    metadata.update(label_names=["food", "money"], thresholds=[0.5, 0.5])
    metadata["ngram_part"].update(num_classes=2)
    metadata["cascade"].update(temperature=None, temperature_always=None)  # one per label: two would not fit


def _unsaid(metadata):
    """A multi-label classifier's graph whose bundle says nothing of it: independent probabilities, no thresholds."""
    del metadata["multi_label"], metadata["thresholds"]
    metadata["cascade"].update(temperature=None, temperature_always=None)


MULTI_LABEL_EDITS = {
    "thresholds NaN": (
        lambda m: m.update(thresholds=[float("nan")] * 3),
        r"thresholds must be 3 numbers between 0 and 1.*nan",
    ),
    "a threshold over 1": (lambda m: m.update(thresholds=[0.5, 0.5, 1.5]), "thresholds must be 3 numbers between 0"),
    "2 label names for a 3-label graph": (
        _two_of_three_labels,
        "its graph's output Identity:0 has 3 columns for its 2 label names",
    ),
    "multi_label and thresholds removed": (
        _unsaid,
        r"its graph is a multi-label classifier's \(its rows do not sum to 1\), but it is a bundle without its thresholds",
    ),
}


@pytest.mark.slow
@pytest.mark.parametrize("edit", list(MULTI_LABEL_EDITS))
def test_an_edited_multi_label_bundle_is_refused_at_load(edit, multilabel_run_dir, tmp_path):
    refused_when_edited(multilabel_run_dir, tmp_path, *MULTI_LABEL_EDITS[edit])


@pytest.mark.slow
def test_threads_are_checked_at_load_before_the_bundle(han_run_dir):
    for threads in (-1, 0, 100000, 1.5, "2", True):
        with pytest.raises(ArgumentError, match=f"^threads must be a whole number from 1 to \\d+, not {threads!r}"):
            runtime.load(han_run_dir / BUNDLE_FILE, threads=threads)
    with pytest.raises(ArgumentError, match="threads"):  # before looking for the file or starting onnxruntime
        runtime.load("no/such/model.onnx", threads=0)
    assert runtime.load(han_run_dir / BUNDLE_FILE, threads=1).label_names == ["neg", "pos"]


@pytest.mark.slow
def test_a_bundle_whose_graph_changed_after_export_is_refused(han_run_dir, tmp_path):
    """The digest of everything but the metadata (#67): a changed weight answered otherwise, without a word."""
    source = han_run_dir / BUNDLE_FILE
    metadata = runtime.load(source).metadata
    assert metadata[DIGEST_KEY] == file_digest(source)[0]
    data = source.read_bytes()
    target = tmp_path / "model.onnx"
    for at in (len(data) // 3, len(data) // 2):  # inside the graph's weights
        target.write_bytes(data[:at] + bytes([data[at] ^ 1]) + data[at + 1 :])
        with pytest.raises(DataError, match=f"^{target}: its graph was changed after export .*; export it again$"):
            runtime.load(target)
    rewrite_bundle_metadata(source, target, lambda m: m.pop(DIGEST_KEY))  # as exported before #67: loads
    assert runtime.load(target).label_names == ["neg", "pos"]


@pytest.mark.slow
def test_a_bundle_whose_metadata_is_not_utf8_is_refused(han_run_dir, tmp_path):
    """#67: onnxruntime's metadata read as Python strings raised UnicodeDecodeError."""
    data = (han_run_dir / BUNDLE_FILE).read_bytes()
    assert data.count(b'"neg"') == 1
    target = tmp_path / "model.onnx"
    target.write_bytes(data.replace(b'"neg"', b'"n\x80g"'))
    with pytest.raises(DataError, match=f"^{target}: its metadata or graph names are not UTF-8 text .the byte 0x80 "):
        runtime.load(target)
