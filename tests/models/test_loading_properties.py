"""Hostile `.keras` files (#67): mutations of a real run's model.keras, loaded by `load_classifier`.

Each property takes a trained run's model.keras (`han_run_dir`, `multilabel_run_dir`), mutates it, writes
the result under a module folder and loads it. Loading must either refuse the file with one `RunError`
line, or give a classifier whose probabilities on `TEXTS` are finite, in [0, 1] (rows summing to 1 for a
single-label classifier), and, for a mutation that changes nothing the classifier is made of, equal to
the original's within 1e-6. No case may take over 10 s (the fuzz profile's deadline) or raise the
process's peak memory by 2 GiB.

The mutations:

- of the file's bytes: a byte changed anywhere, the file cut short. The zip's CRCs see any change in an
  entry's data, and its headers any change in its structure, so these answer as the original or not at all;
- of its entries, the zip rewritten consistently: one removed, duplicated (the same bytes twice) or added
  (another name). Answers as the original, or refused (an entry the classifier needs, gone);
- of a JSON entry's values, the zip rewritten consistently: any value of config.json, metadata.json or the
  vocabulary replaced by another JSON value (null, a bool, a huge or negative number, NaN, infinity, a
  string, a list, an object) or its key deleted. Editing config.json legitimately changes answers (a
  temperature, a weight of the combination, a length limit, the tokenizer's settings, the vocabulary's
  words), so these answers need only be sound; metadata.json (Keras's version and the date saved) decides
  nothing, so its edits answer as the original;
- of the weights (model.weights.h5), a byte changed inside it and the zip rewritten consistently: an edited
  weight legitimately changes answers (HDF5 keeps no checksum of its data), so these need only be sound.
"""

import io
import json
import math
import resource
import shutil
import warnings
import zipfile

import keras
import numpy as np
import pytest
from hypothesis import example, given
from hypothesis import strategies as st

import hierattn.models
from hierattn.errors import HierattnError, RunError
from hierattn.models.loading import load_classifier, numbers_asked
from hierattn.runs.run import load_run

from hostile import budget

TEXTS = ["A wonderful film, I loved it.", "Dull and boring. I hated it!", "the", "", "brilliant acting in 1999"]
ENTRIES = ("config.json", "metadata.json", "model.weights.h5", "assets/layers/text_preprocessor/vocabulary.json")
JSON_ENTRIES = ("config.json", "metadata.json", "assets/layers/text_preprocessor/vocabulary.json")
DELETE = "<delete>"  # a JSON edit that deletes the key (or list item) instead of replacing its value
MEMORY_LIMIT = 2 << 30  # bytes a case may add to the process's peak memory (#67)


# The original files and their answers -------------------------------------------------------------------------------


class Original:
    """A `.keras` file's bytes, entries and answers on `TEXTS`."""

    def __init__(self, path):
        self.data = path.read_bytes()
        with zipfile.ZipFile(io.BytesIO(self.data)) as archive:
            self.entries = {info.filename: archive.read(info) for info in archive.infolist()}
        self.probabilities = load_classifier(path).predict(TEXTS, verbose=0)


@pytest.fixture(scope="module")
def originals(han_run_dir, multilabel_run_dir):
    return {"han": Original(han_run_dir / "model.keras"), "multi": Original(multilabel_run_dir / "model.keras")}


@pytest.fixture(scope="module")
def folder(tmp_path_factory):
    return tmp_path_factory.mktemp("hostile-keras")


# Mutations ----------------------------------------------------------------------------------------------------------


def zipped(entries):
    """A `.keras` file (zip) of `(name, bytes)` pairs, in order, as Keras writes them (deflated)."""
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as archive, warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)  # "Duplicate name": what "duplicate" means to write
        for name, data in entries:
            archive.writestr(name, data)
    return buffer.getvalue()


def _child(node, selector):
    """The key (or index) of `node` that `selector` names: a key as it is, an int counted modulo the children."""
    if isinstance(node, dict):
        if isinstance(selector, str):
            return selector
        return sorted(node)[selector % len(node)] if node else None
    if isinstance(node, list) and node:
        return selector % len(node) if isinstance(selector, int) else None
    return None


def edited_json(document, path, value):
    """`document` (JSON text) with the value at `path` (selectors, `_child`) replaced by `value`, or deleted."""
    root = json.loads(document)
    parent, key, node = None, None, root
    for selector in path:
        child = _child(node, selector)
        if child is None or (isinstance(node, dict) and child not in node):
            break
        parent, key, node = node, child, node[child]
    if parent is None:
        root = None if value == DELETE else value
    elif value == DELETE:
        del parent[key]
    else:
        parent[key] = value
    return json.dumps(root).encode()


def mutated(original, mutation):
    """The bytes of `original` (an `Original`) after `mutation` (a tuple: its kind, then its arguments)."""
    kind, *args = mutation
    entries = list(original.entries.items())
    if kind == "byte":  # (position as a share of the file, new byte)
        share, byte = args
        data = bytearray(original.data)
        data[min(int(share * len(data)), len(data) - 1)] = byte
        return bytes(data)
    if kind == "cut":  # (the share of the file kept)
        return original.data[: int(args[0] * len(original.data))]
    if kind == "remove":
        return zipped([(name, data) for name, data in entries if name != args[0]])
    if kind == "duplicate":
        return zipped([*entries, (args[0], original.entries[args[0]])])
    if kind == "add":  # (name, bytes)
        return zipped([*entries, tuple(args)])
    if kind == "json":  # (entry, path, value)
        name, path, value = args
        return zipped([(n, edited_json(data, path, value) if n == name else data) for n, data in entries])
    if kind == "weights":  # (position as a share of model.weights.h5, new byte)
        share, byte = args
        weights = bytearray(original.entries["model.weights.h5"])
        weights[min(int(share * len(weights)), len(weights) - 1)] = byte
        return zipped([(n, bytes(weights) if n == "model.weights.h5" else data) for n, data in entries])
    raise AssertionError(kind)


def may_change_answers(mutation):
    """Whether `mutation` edits what the classifier is made of (config.json, the vocabulary, the weights)."""
    return mutation[0] == "weights" or (mutation[0] == "json" and mutation[1] != "metadata.json")


shares = st.floats(0, 1, exclude_max=True)
json_values = st.recursive(
    st.one_of(
        st.none(),
        st.booleans(),
        st.sampled_from([0, 1, -1, 2, 10**9, 2**31, 2**63, -(10**9), 10**30]),
        st.integers(),
        st.floats(allow_nan=True, allow_infinity=True),
        st.text(max_size=20),
        st.just(DELETE),
    ),
    lambda inner: st.one_of(st.lists(inner, max_size=3), st.dictionaries(st.text(max_size=8), inner, max_size=3)),
    max_leaves=6,
)
# The settings that size what loading builds, each at its path in config.json.
SIZES = [
    *(["config", "backbone", "config", name] for name in ("vocabulary_size", "num_classes", "embedding_dim")),
    *(["config", "backbone", "config", name] for name in ("word_units", "sentence_units", "attention_units")),
    *(["config", "preprocessor", "config", name] for name in ("max_sentences", "max_words", "sequence_length")),
    *(["config", "preprocessor", "config", name] for name in ("ngram_length", "max_vocab", "min_count")),
    *(["config", "ngram_logits", "config", name] for name in ("vocabulary_size", "num_classes", "ngram_max")),
    ["config", "ngram_logits", "config", "num_buckets"],
]
sizes = st.sampled_from([0, -1, 1, 3, 2**17 + 1, 10**9, 2**31, 2**40, 2**63, 1.5, 1e9, math.inf, "8", None, True])
paths = st.lists(st.one_of(st.integers(0, 40), st.sampled_from(["config", "backbone", "preprocessor"])), max_size=8)
mutations = st.one_of(
    st.tuples(st.just("byte"), shares, st.integers(0, 255)),
    st.tuples(st.just("cut"), shares),
    st.tuples(st.just("remove"), st.sampled_from(ENTRIES)),
    st.tuples(st.just("duplicate"), st.sampled_from(ENTRIES)),
    st.tuples(st.just("add"), st.sampled_from(["extra.bin", "assets/x.json", "config.json/"]), st.binary(max_size=64)),
    st.tuples(st.just("json"), st.sampled_from(JSON_ENTRIES), paths, json_values),
    st.tuples(st.just("json"), st.just("config.json"), paths, json_values),
    st.tuples(st.just("json"), st.just("config.json"), st.sampled_from(SIZES), sizes),
    st.tuples(st.just("weights"), shares, st.integers(0, 255)),
)


# The property -------------------------------------------------------------------------------------------------------


def _peak_memory():
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024  # kilobytes on Linux


def check_loads_soundly(original, mutation, path):
    """Loads `original` mutated: one `HierattnError` line, or sound answers (the original's, unless it may change)."""
    path.write_bytes(mutated(original, mutation))
    peak = _peak_memory()
    try:
        classifier = load_classifier(path)
    except HierattnError as error:
        assert "\n" not in str(error) and str(error).strip(), repr(str(error))
        return
    finally:
        assert _peak_memory() - peak < MEMORY_LIMIT, f"loading {mutation!r} took over 2 GiB"
    probabilities = classifier.predict(TEXTS, verbose=0)
    assert probabilities.shape == (len(TEXTS), len(classifier.label_names))
    assert np.isfinite(probabilities).all() and (probabilities >= 0).all() and (probabilities <= 1).all()
    if not classifier.multi_label:
        assert np.allclose(probabilities.sum(axis=1), 1, atol=1e-4)
    if not may_change_answers(mutation):
        np.testing.assert_allclose(probabilities, original.probabilities, atol=1e-6)


PREPROCESSOR = ["config", "preprocessor", "config"]


@given(model=st.sampled_from(["han", "multi"]), mutation=mutations)
@budget(15)
# Found by Hypothesis, before the mends (what happened then):
# the preprocessor null or a number: a new one made, untrained, the saved vocabulary read into it; then ValueError
# "units='auto' are chosen from training texts first" at the first prediction, or AttributeError "'int' object has
# no attribute 'adapted'" at load
@example(model="multi", mutation=("json", "config.json", ["config", "preprocessor"], None))
@example(model="multi", mutation=("json", "config.json", ["config", "preprocessor"], 2))
# and by hand: the tokenizer's settings deleted (units "auto": the same ValueError at the first prediction); units
# "auto" and a length limit null, refused as a bundle's are (Keras refused the one, the other read whole texts)
@example(model="han", mutation=("json", "config.json", [*PREPROCESSOR, "tokenizer"], DELETE))
@example(model="han", mutation=("json", "config.json", [*PREPROCESSOR, "tokenizer", "units"], "auto"))
@example(model="han", mutation=("json", "config.json", [*PREPROCESSOR, "max_words"], None))
# the sizes of #67: a vocabulary_size of 1e9 (TensorFlow allocating a 1e9 x 8 embedding, 32 GB:
# ResourceExhaustedError or the OOM killer), a max_sentences of 1e9 (loaded; MemoryError, 33.5 GiB, at the first
# prediction)
@example(model="han", mutation=("json", "config.json", ["config", "backbone", "config", "vocabulary_size"], 10**9))
@example(model="han", mutation=("json", "config.json", [*PREPROCESSOR, "max_sentences"], 10**9))
@example(model="multi", mutation=("json", "config.json", ["config", "backbone", "config", "word_units"], 2**31))
# an n-gram part's ngram_max of 1e9 (its class computes vocabulary_size ** ngram_max: a hang, stopped after 30 s), and
# its num_classes of 1e9 (an array of 8 GB asked for; refused only where that allocation fails)
@example(model="han", mutation=("json", "config.json", ["config", "ngram_logits", "config", "ngram_max"], 10**9))
@example(model="multi", mutation=("json", "config.json", ["config", "ngram_logits", "config", "num_classes"], 10**9))
# found in the checks written for these (TypeError: unhashable type: 'list')
@example(model="han", mutation=("json", "config.json", [*PREPROCESSOR, "mode"], []))
def test_a_mutated_keras_file_is_refused_in_one_line_or_answers_soundly(originals, folder, model, mutation):
    path = folder / "model.keras"
    try:
        check_loads_soundly(originals[model], mutation, path)
    finally:
        path.unlink(missing_ok=True)


def test_mutations_are_what_they_say(originals):
    original = originals["han"]
    assert mutated(original, ("cut", 0.5)) == original.data[: len(original.data) // 2]
    edited = mutated(original, ("json", "config.json", ["config", "label_names", 1], "good"))
    with zipfile.ZipFile(io.BytesIO(edited)) as archive:
        assert json.loads(archive.read("config.json"))["config"]["label_names"] == ["neg", "good"]
        assert archive.read("model.weights.h5") == original.entries["model.weights.h5"]
    assert math.isclose(original.probabilities.sum(axis=1)[0], 1, abs_tol=1e-5)


@pytest.mark.parametrize(
    "backbone, options",
    [
        ("HANBackbone", {"embedding_dim": 12, "word_units": 6, "sentence_units": 10, "attention_units": 7}),
        ("HANBackbone", {"embedding_dim": 6, "word_units": 8, "sentence_units": 4, "cell": "lstm"}),
        ("TransformerBackbone", {"sequence_length": 16, "embedding_dim": 8, "intermediate_dim": 32, "num_layers": 2}),
        ("TransformerBackbone", {"sequence_length": 16, "embedding_dim": 8, "position": "learned", "pooling": "mean"}),
        ("RNNBackbone", {"embedding_dim": 8, "units": 6, "attention": "bahdanau", "cell": "lstm"}),
        ("RNNBackbone", {"embedding_dim": 8, "units": 6, "attention": "luong-general", "window": 2}),
    ],
)
def test_the_memory_bound_counts_every_variable_of_each_architecture(backbone, options):
    # `numbers_asked` must count at least what a backbone builds (or a real file would be refused), and not far more.
    made = getattr(hierattn.models, backbone)(50, 3, **options)
    true = sum(int(np.prod(variable.shape)) for variable in made.weights)
    assert true <= numbers_asked(keras.saving.serialize_keras_object(made)) <= 2 * true


def test_a_run_refuses_its_edited_model_file_in_one_line(originals, han_run_dir, tmp_path):
    # `hierattn.runs` loads model.keras through `load_classifier`: the same checks, the same line.
    shutil.copytree(han_run_dir, tmp_path / "run")
    size = ["config", "backbone", "config", "vocabulary_size"]
    (tmp_path / "run" / "model.keras").write_bytes(mutated(originals["han"], ("json", "config.json", size, 10**9)))
    with pytest.raises(RunError, match=r"model.keras could not be loaded \(its config.json: its backbone's sizes ask"):
        _ = load_run(tmp_path / "run").classifier
