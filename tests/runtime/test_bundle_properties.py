"""Hostile bundles (#67): mutations of a real run's model.onnx, loaded by `hierattn.runtime.load`.

Each property takes a trained run's bundle (`han_run_dir`, single-label; `multilabel_run_dir`), mutates it
and loads it. Loading must either refuse it with one `HierattnError` line, or give a `Predictor` whose
probabilities on `TEXTS` are finite, in [0, 1] (rows summing to 1 for a single-label bundle), and which
answers as the original did unless the mutation touched what legitimately changes answers. No case may
take over 10 s (the fuzz profile's deadline) or raise the process's peak memory by 2 GiB.

"Answering differently without saying so" is a bundle whose graph or whose description of its graph was
changed and which still gives answers, other ones. A bundle's metadata holds two kinds of values:

- what the runtime does around the graph, which a user may edit on purpose and which nothing can check
  against the graph: the decision (`label_names`, `thresholds`, `offsets`, `cascade`, `multi_label` with
  its thresholds), the preprocessing (`preprocessor`: length limits, tokenizer) and the vocabulary's words.
  Edits of these (`CHANGES_ANSWERS`) need only give sound answers;
- what describes the graph: its inputs and outputs, its embedding's ids and rows, the n-gram part's
  settings (which the runtime uses to compute that part in NumPy), the format, the digest of the graph,
  and anything added. Edits of these must be refused or change nothing: the probabilities, and the n-gram
  part's logits of the original's ids, equal the original's within 1e-6. (One edit passes unseen where it
  changes nothing seen: an ngram_max raised on a part that keeps no n-gram of the new order among the
  probes `hierattn.runtime.checks.check_ngram_part` draws, as the tiny parts here.)

The graph's own bytes are covered by the digest written at export (`graph_sha256`), so a changed byte
outside the metadata is refused; inside the metadata it is one of the edits above. Two properties:

- metadata edits: a value at a random place replaced by a random JSON value (null, a bool, a huge or
  negative number, NaN, infinity, a string, a list, an object), by a near one (a number scaled) or by
  another value of the same metadata, a key deleted or added. For speed these run `load`'s checks on one onnxruntime session per bundle
  (`predictor._checked`: what `load` does once onnxruntime has read the file, which an edit of the
  metadata does not change), where a full `load` spends 0.3 s building the session again;
  `test_a_rewritten_bundle_loads_as_the_session_path_does` keeps the two the same;
- byte edits of the whole file (one changed, some inserted or deleted, the file cut short), written
  and loaded by `load` itself.
"""

import json
import math
import resource

import numpy as np
import pytest
from hypothesis import event, example, given
from hypothesis import strategies as st

from hierattn import runtime
from hierattn.errors import DataError, HierattnError
from hierattn.runs.directory import BUNDLE_FILE
from hierattn.runtime import predictor as predictor_module
from hierattn.runtime.bundle import DIGEST_KEY, METADATA_KEY, file_digest

from conftest import rewrite_bundle_metadata
from hostile import budget

TEXTS = ["A wonderful film, I loved it.", "Dull and boring. I hated it!", "the", "", "brilliant acting in 1999"]
MEMORY_LIMIT = 2 << 30  # bytes a case may add to the process's peak memory (#67)
# The metadata's top-level keys whose edits may change answers (see the module's docstring).
CHANGES_ANSWERS = {"label_names", "thresholds", "offsets", "cascade", "multi_label", "preprocessor", "vocabulary"}
# Keys a random path may name (any other is reached by an index into the sorted keys).
TOP_KEYS = (
    "format", "hierattn_version", "architecture", "preprocessor", "vocabulary", "embedding", "inputs", "output",
    "label_names", "multi_label", "thresholds", "offsets", "cascade", "ngram_output", "ngram_part", DIGEST_KEY,
)  # fmt: skip
KEYS = (
    "preprocessor", "max_sentences", "max_words", "sequence_length", "ngram_length", "tokenizer", "mode",
    "vocabulary", "tokens", "embedding", "ids", "rows", "inputs", "output", "ngram_output", "cascade", "cut",
    "ngram_part", "num_buckets", "ngram_max", "tf", "normalize", "tables", "thresholds", DIGEST_KEY,
)  # fmt: skip


# The original bundles and their answers -----------------------------------------------------------------------------


class Original:
    """A bundle's bytes, metadata, onnxruntime session, digest and answers on `TEXTS`."""

    def __init__(self, path):
        self.path = str(path)
        self.data = path.read_bytes()
        self.predictor = runtime.load(path)
        self.metadata = self.predictor.metadata
        self.session = self.predictor._session
        self.digest = file_digest(path)[0]
        self.answers = answers(self.predictor)
        self.ids = self.predictor.preprocess(TEXTS).get("ngram_ids")
        self.ngram_logits = None if self.ids is None else self.predictor._ngram_logits(self.ids)


def answers(predictor):
    """The predictor's probabilities of `TEXTS` with the network reading some documents, and all."""
    return np.stack([predictor.with_network(network).predict(TEXTS) for network in ("auto", "always")])


@pytest.fixture(scope="module")
def originals(han_run_dir, multilabel_run_dir):
    return {"han": Original(han_run_dir / BUNDLE_FILE), "multi": Original(multilabel_run_dir / BUNDLE_FILE)}


@pytest.fixture(scope="module")
def folder(tmp_path_factory):
    return tmp_path_factory.mktemp("hostile-bundles")


# Mutations ----------------------------------------------------------------------------------------------------------


def _child(node, selector):
    """The key (or index) of `node` that `selector` names: a key as it is, an int counted modulo the children."""
    if isinstance(node, dict):
        if isinstance(selector, str):
            return selector if selector in node else None
        return sorted(node)[selector % len(node)] if node else None
    if isinstance(node, list) and node:
        return selector % len(node) if isinstance(selector, int) else None
    return None


def _place(root, path):
    """The parent and key (or index) that `path` (selectors, `_child`) leads to: as deep as it goes."""
    parent, key, node = None, None, root
    for selector in path:
        child = _child(node, selector)
        if child is None:
            break
        parent, key, node = node, child, node[child]
    return parent, key


def edited(metadata, mutation):
    """A copy of `metadata` after `mutation`, and the top-level key it changed (None: none or the whole)."""
    root = json.loads(json.dumps(metadata))
    kind, path, *args = mutation
    parent, key = _place(root, path)
    if kind == "copy":  # another value of the metadata put there
        source, source_key = _place(root, args[0])
        kind, args = "set", [json.loads(json.dumps(root if source is None else source[source_key]))]
    if kind == "scale":  # a number (or each number of a list) times a factor: near values, as an edit by hand gives
        value = root if parent is None else parent[key]
        kind, args = "set", [json.loads(json.dumps(_scaled(value, args[0])))]
    if path and isinstance(root, dict) and path[0] not in root:  # a key the metadata lacks: added
        if kind != "delete" and parent is None:
            root[path[0]] = args[0] if kind == "set" else {args[0]: args[1]}
        return root, path[0]
    if parent is None:  # the path names nothing deeper: the whole object
        if kind == "add":
            return ({**root, args[0]: args[1]} if isinstance(root, dict) else {args[0]: args[1]}), args[0]
        return (args[0] if kind == "set" else {}), None
    if kind == "delete":
        del parent[key]
    elif kind == "add" and isinstance(parent[key], dict):
        parent[key][args[0]] = args[1]
    elif kind == "set":
        parent[key] = args[0]
    else:
        parent[key] = {args[0]: args[1]}
    top = path and _child(json.loads(json.dumps(metadata)), path[0])
    return root, top


def _scaled(value, factor):
    if isinstance(value, list):
        return [_scaled(item, factor) for item in value]
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return value
    return type(value)(value * factor) if isinstance(value, float) or float(factor).is_integer() else value * factor


def _nested(values):
    """Lists and objects of `values`: `json_values`' recursion."""
    return st.one_of(st.lists(values, max_size=4), st.dictionaries(st.text(max_size=8), values, max_size=3))


json_values = st.recursive(
    st.one_of(
        st.none(),
        st.booleans(),
        st.sampled_from([0, 1, -1, 2, 3, 28, 10**9, 2**17, 2**17 + 1, 2**31 - 1, 2**31, 2**63, -(10**9), 10**30]),
        st.integers(),
        st.floats(allow_nan=True, allow_infinity=True),
        st.sampled_from([0.5, 1e-300, 1e300, -0.0]),
        st.text(max_size=20),
        st.sampled_from(
            ["Identity:0", "Identity_1:0", "ngram_ids", "token_ids", "flat", "subwords", "binary", "a" * 64]
        ),
    ),
    _nested,
    max_leaves=8,
)
paths = st.builds(
    lambda top, rest: [top, *rest],
    st.sampled_from(TOP_KEYS),
    st.lists(st.one_of(st.integers(0, 40), st.sampled_from(KEYS)), max_size=3),
)
metadata_mutations = st.one_of(
    st.tuples(st.just("set"), paths, json_values),
    st.tuples(st.just("scale"), paths, st.sampled_from([-1, 0, 0.5, 0.999, 1.001, 2, 10, 1000, 10**9])),
    st.tuples(st.just("set"), st.just([]), json_values),  # the whole metadata replaced
    st.tuples(st.just("copy"), paths, paths),
    st.tuples(st.just("delete"), paths),
    st.tuples(st.just("add"), paths, st.one_of(st.sampled_from(KEYS), st.text(max_size=8)), json_values),
)


def mutated_bytes(data, mutation):
    """The bytes `data` after `mutation` (a tuple: its kind, the position as a share of the file, its argument)."""
    kind, share, argument = mutation
    at = min(int(share * len(data)), len(data) - 1)
    if kind == "flip":  # one bit of one byte
        return data[:at] + bytes([data[at] ^ (1 << argument)]) + data[at + 1 :]
    if kind == "byte":
        return data[:at] + bytes([argument]) + data[at + 1 :]
    if kind == "insert":
        return data[:at] + argument + data[at:]
    if kind == "delete":
        return data[:at] + data[at + argument :]
    if kind == "cut":
        return data[:at]
    raise AssertionError(kind)


# Where in the file: anywhere, or (one time in five) in its last 1.5%, where the metadata lies (the last field that
# onnx.save writes). A case there reaches onnxruntime's session (0.1-0.2 s); one elsewhere is refused in a few ms.
anywhere = st.floats(0, 1, exclude_max=True)
shares = st.one_of(anywhere, anywhere, anywhere, anywhere, st.floats(0.985, 1, exclude_max=True))
byte_mutations = st.one_of(
    st.tuples(st.just("flip"), shares, st.integers(0, 7)),
    st.tuples(st.just("byte"), shares, st.integers(0, 255)),
    st.tuples(st.just("insert"), shares, st.binary(min_size=1, max_size=16)),
    st.tuples(st.just("delete"), shares, st.integers(1, 64)),
    st.tuples(st.just("cut"), shares, st.none()),
)


# The checks ---------------------------------------------------------------------------------------------------------


def _peak_memory():
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024  # kilobytes on Linux


def check_sound(original, load, may_change):
    """`load()`: one `HierattnError` line, or sound answers (the original's, unless `may_change`)."""
    peak = _peak_memory()
    try:
        predictor = load()
        found = answers(predictor)
        predictor.predict_labels(TEXTS)
    except HierattnError as error:
        assert "\n" not in str(error) and str(error).strip(), repr(str(error))
        assert len(str(error)) < len(original.path) + 1000, f"a refusal of {len(str(error))} characters"
        event(f"refused: {_gist(str(error))}")
        return None
    finally:
        assert _peak_memory() - peak < MEMORY_LIMIT, "the case took over 2 GiB"
    assert found.shape == (2, len(TEXTS), len(predictor.label_names))
    assert np.isfinite(found).all() and (found >= 0).all() and (found <= 1).all()
    if not predictor.multi_label:
        np.testing.assert_allclose(found.sum(axis=-1), 1, atol=1e-4)
    if original.ids is not None and "ngram_part" in predictor.metadata:  # the n-gram part's NumPy twin, as exported
        np.testing.assert_allclose(predictor._ngram_logits(original.ids), original.ngram_logits, atol=1e-6)
    if not may_change:
        np.testing.assert_allclose(found, original.answers, atol=1e-6)
    same = np.allclose(found, original.answers, rtol=0, atol=1e-6)
    event(f"loaded: {'the same answers' if same else 'other answers'}")
    return predictor


def _gist(message):
    """A refusal's kind for Hypothesis's statistics: its words after the path, without the values."""
    words = message.split(": ", 1)[-1].replace("(", " ").split()
    return " ".join(word for word in words[:6] if not any(c.isdigit() for c in word))


def _load_edited(original, metadata):
    props = {METADATA_KEY: json.dumps(metadata)}
    return lambda: predictor_module._checked(original.session, props, original.path, "auto", original.digest)


# The properties -----------------------------------------------------------------------------------------------------


@given(model=st.sampled_from(["han", "multi"]), mutations=st.lists(metadata_mutations, min_size=1, max_size=3))
@budget(150)
# Before the mends of #67 (each case as it was met, then what it does now):
# MemoryError (89 GiB for the ids of 4 texts) at the first prediction; now refused: at most 131,072.
@example(model="han", mutations=[("set", ["preprocessor", "max_sentences"], 10**9)])
# OverflowError (the probe id past the embedding, in int32) at load; now refused: at most 2**31 - 1 rows.
@example(model="han", mutations=[("set", ["embedding", "rows"], 2**40)])
# onnxruntime's InvalidArgument (ids of 2 axes for a graph of 3) at the first prediction; now refused at load.
@example(
    model="han", mutations=[("set", ["preprocessor", "mode"], "flat"), ("set", ["preprocessor", "sequence_length"], 50)]
)
# Loaded, answering the n-gram part's logits as probabilities (up to 1e-31 and 1, 3e-4 off); now refused at load.
@example(model="multi", mutations=[("copy", ["output"], ["ngram_output"])])
# MemoryError (512 GiB for the n-gram part's bitmap) at the first document the cascade decides; now refused at load.
@example(model="multi", mutations=[("set", ["cascade", "cut"], 0.5), ("set", ["ngram_part", "num_buckets"], 2**40)])
# ValueError (shapes not broadcast) there; then, in a mend's first draft, a hang (computing 29 ** 10**9).
@example(model="han", mutations=[("set", ["cascade", "cut"], 0.5), ("set", ["ngram_part", "ngram_max"], 10**9)])
# Loaded, the n-gram part's logits computed in NumPy other than its graph's (1.7e-4 off at cut 0.5); now refused.
@example(model="multi", mutations=[("set", ["ngram_part", "normalize"], False)])
@example(model="multi", mutations=[("set", ["ngram_part", "tf"], "binary")])
@example(model="han", mutations=[("set", ["ngram_part", "ngram_max"], 1)])
@example(model="han", mutations=[("set", ["ngram_part", "num_buckets"], 1000)])
# Loaded without its n-gram part's metadata: the cascade and its calibration dropped (9e-7 off); now refused.
@example(model="multi", mutations=[("delete", ["ngram_part"]), ("delete", ["ngram_output"])])
# Refused in one line, but a line as long as the value: the format repeated whole; now shortened (reprlib).
@example(model="han", mutations=[("copy", ["format"], ["vocabulary", "tokens"])])
# Found by the long profile: refused in one line, but with the whole metadata put in `temperature`, 1,351
# characters of it (the temperature's check wrote the value whole); now shortened (reprlib).
@example(model="han", mutations=[("copy", ["cascade", "temperature"], [])])
def test_an_edited_bundle_is_refused_in_one_line_or_answers_soundly(originals, model, mutations):
    original = originals[model]
    metadata, changed = original.metadata, set()
    for mutation in mutations:
        metadata, top = edited(metadata, mutation)
        changed.add(top)
    check_sound(original, _load_edited(original, metadata), may_change=bool(changed & CHANGES_ANSWERS))


@given(model=st.sampled_from(["han", "multi"]), mutation=byte_mutations)
@budget(50)
@example(model="han", mutation=("byte", 0.999, 0x80))  # was UnicodeDecodeError: metadata not UTF-8
def test_a_bundle_with_bytes_changed_is_refused_in_one_line_or_answers_as_before(originals, folder, model, mutation):
    original = originals[model]
    path = folder / "model.onnx"
    path.write_bytes(mutated_bytes(original.data, mutation))
    try:
        check_sound(original, lambda: runtime.load(path), may_change=_says_other_answers(original, path))
    finally:
        path.unlink(missing_ok=True)


def _says_other_answers(original, path):
    """Whether the changed bytes fell in the metadata and changed a value that changes answers (a digit of the
    cascade's scale): the bundle then says what it answers, as an edit of its metadata does (found by the long
    profile, issue #67: a byte of `ngram_scale` took the first text from 1.6e-7 to 7.7e-5)."""
    import onnx

    try:
        props = {prop.key: prop.value for prop in onnx.load_model_from_string(path.read_bytes()).metadata_props}
        metadata = json.loads(props[METADATA_KEY])
    except Exception:  # not a model, or its metadata no JSON: `load` refuses it, and that is what is checked
        return False
    changed = {
        key for key in metadata.keys() | original.metadata.keys() if metadata.get(key) != original.metadata.get(key)
    }
    return bool(changed & CHANGES_ANSWERS)


def test_a_changed_digit_in_the_metadata_is_an_edit_the_bundle_says(originals, folder):
    """Found by the long profile (#67): a byte of `ngram_scale` changed a text's answer; the bundle says so."""
    original = originals["han"]
    at = original.data.index(b'"ngram_scale": ') + len(b'"ngram_scale": ')
    digit = original.data[at : at + 1]
    assert digit.isdigit()
    path = folder / "digit.onnx"
    path.write_bytes(original.data[:at] + str((int(digit) + 1) % 10).encode() + original.data[at + 1 :])
    try:
        assert _says_other_answers(original, path)
        found = answers(runtime.load(path))
        assert np.isfinite(found).all()
        np.testing.assert_allclose(found.sum(axis=2), 1, atol=1e-5)
    finally:
        path.unlink(missing_ok=True)


# The properties' own assumptions --------------------------------------------------------------------------------------


def test_a_rewritten_bundle_loads_as_the_session_path_does(originals, folder):
    """The metadata property's shortcut (`_checked` on the original's session) gives what `load` of the file gives."""
    original = originals["han"]
    path = folder / "rewritten.onnx"
    change = {"thresholds": None, "offsets": [0.0, 1.5]}
    rewrite_bundle_metadata(original.path, path, lambda m: m.update(offsets=change["offsets"]))
    metadata = {**original.metadata, "offsets": change["offsets"]}
    assert file_digest(path)[0] == original.digest  # the digest leaves the metadata out
    np.testing.assert_array_equal(answers(runtime.load(path)), answers(_load_edited(original, metadata)()))
    rewrite_bundle_metadata(original.path, path, lambda m: m["preprocessor"].update(max_sentences=10**9))
    huge = json.loads(json.dumps(original.metadata))
    huge["preprocessor"]["max_sentences"] = 10**9
    for load in (lambda: runtime.load(path), _load_edited(original, huge)):
        with pytest.raises(DataError, match="damaged .max_sentences must be at most 131,072, not 1,000,000,000.$"):
            load()


def test_the_mutations_are_what_they_say(originals):
    metadata = originals["han"].metadata
    assert edited(metadata, ("set", ["preprocessor", "max_words"], 5))[0]["preprocessor"]["max_words"] == 5
    assert edited(metadata, ("delete", ["embedding"]))[0].keys() == metadata.keys() - {"embedding"}
    copied, top = edited(metadata, ("copy", ["output"], ["ngram_output"]))
    assert copied["output"] == metadata["ngram_output"] and top == "output"
    data = originals["han"].data
    assert mutated_bytes(data, ("cut", 0.5, None)) == data[: len(data) // 2]
    assert len(mutated_bytes(data, ("insert", 0.0, b"ab"))) == len(data) + 2
    assert math.isclose(originals["han"].answers[0].sum(axis=1)[0], 1, abs_tol=1e-5)
