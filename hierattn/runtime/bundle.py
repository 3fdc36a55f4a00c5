"""The exported bundle's format: one ONNX file whose metadata holds everything its tokenizer needs.

A bundle is a standard ONNX model (any ONNX tool opens it) from token ids
to class probabilities, the whole classifier in one graph: the network, the
n-gram part and their combination (the network reading every document; the
runtime's cascade runs the n-gram part alone first, and the whole graph
only on the documents it is not sure of). Its metadata (ONNX `metadata_props`)
has one entry, `"hierattn"`, a JSON object:

    format            "hierattn.bundle/1"
    hierattn_version  the version that exported it
    architecture      "han", "transformer" or "rnn"
    label_names       the class names, in the order of the output's columns
    preprocessor      mode ("hierarchical" or "flat"), max_sentences,
                      max_words, sequence_length, ngram_length (null
                      without an n-gram input), tokenizer (its settings)
    vocabulary        tokens (the words of ids 2, 3, ...), min_count, max_size
    embedding         ids (the vocabulary's, padding and unknown included)
                      and rows (the graph's embedding's: as many, or more
                      for a backbone of its own); absent before issue #54
    inputs            the graph's input names: "token_ids" and, with an
                      n-gram part reading the whole text, "ngram_ids"
    output            the graph's output name
    multi_label       true for a multi-label classifier (the output's
                      columns are independent label probabilities, a
                      sigmoid each); absent for a single-label one (a
                      softmax over the classes)
    thresholds        with multi_label: each label's threshold, in
                      label_names order (a label is predicted when its
                      probability is over it)
    offsets           a single-label classifier's offsets, when it has
                      them (`decision_metric="macro_f1"`): one per class,
                      added to the log-probabilities before the highest is
                      taken (absent: the most probable class)
    ngram_output      with an n-gram part: the graph's second output, the
                      n-gram part's logits `z` (absent from bundles
                      exported before the cascade)
    cascade           with it: `cut` (null: the network reads every
                      document), `ngram_weight` (`b`), `ngram_scale`
                      (`s`, null: `b`), `temperature` and
                      `temperature_always` (null or absent: 1; a
                      multi-label classifier's: one per label, its
                      thresholds those of the calibrated probabilities,
                      `hierattn.decision.Cascade`); a document
                      whose margin (`hierattn.decision.Cascade`) is under
                      `cut` gets the graph's output at `temperature`
                      (`hierattn.calibration.calibrated`; every document
                      at `temperature_always` when the network reads all),
                      any other `softmax(s z)` (`sigmoid(b z)` per label
                      for a multi-label one)
    ngram_part        with it: the n-gram layer's settings
                      (`hierattn.ngrams.twin.SETTINGS`) and `tables`, the
                      names of four more outputs, constants of the graph:
                      the kept feature ids, their idf, their kernel rows
                      (each with a sentinel row last) and the bias, from
                      which the runtime computes `z` in NumPy
    graph_sha256      the SHA-256 (hex) of the ONNX model without its
                      metadata (`model_digest`: the graph, its weights, its
                      opsets); absent from bundles exported before #67

A caller outside hierattn tokenizes as `hierattn.data.Tokenizer` with those
settings, maps words to ids (0 padding, 1 unknown, word i+2 of `tokens`),
cuts documents to the length limits, and feeds int32 arrays:
`token_ids` `(batch, max_sentences, max_words)` (hierarchical) or
`(batch, sequence_length)` (flat), and `ngram_ids` `(batch, tokens)`, every
token of each text up to `ngram_length`. Any axis but the batch may be
shorter (padding trimmed), none may be empty.

`hierattn.runtime.load` believes none of it unchecked: each value's type
and range, and its agreement with the graph (one output column per label,
an embedding of the vocabulary's ids (or the rows recorded), a softmax or not as
`multi_label` says), are checked when the bundle loads
(`hierattn.runtime.checks`). A bundle that records `graph_sha256` is
refused when the rest of its file no longer has that digest: a changed
weight answers differently without any other sign. The digest leaves the
metadata out, so metadata edits are checked by the checks above instead.
"""

import hashlib
import json
import mmap
import reprlib

from hierattn.errors import DataError

FORMAT = "hierattn.bundle/1"
METADATA_KEY = "hierattn"
_REQUIRED = ("format", "label_names", "preprocessor", "vocabulary", "inputs", "output")
DIGEST_KEY = "graph_sha256"
# The field of ONNX's ModelProto that holds `metadata_props` (onnx.proto): the one field `model_digest` leaves out.
_METADATA_PROPS = 14


def read_metadata(metadata_map, path):
    """The bundle's metadata from an ONNX model's `metadata_props` (a dict), checked.

    Raises:
        DataError: `path` is an ONNX model but not a hierattn bundle, or one
            of a format this version cannot read.
    """
    text = metadata_map.get(METADATA_KEY)
    if text is None:
        raise DataError(f"{path} is an ONNX model but not a hierattn bundle (no '{METADATA_KEY}' metadata)")
    try:
        metadata = json.loads(text)
    except (ValueError, RecursionError) as error:  # RecursionError: arrays nested thousands deep
        raise DataError(f"{path}: its hierattn metadata is not JSON ({error})") from None
    if not isinstance(metadata, dict):
        raise DataError(f"{path}: its hierattn metadata is not a JSON object")
    missing = [key for key in _REQUIRED if key not in metadata]
    if missing:
        raise DataError(f"{path}: its hierattn metadata lacks {', '.join(missing)}")
    if metadata["format"] != FORMAT:
        raise DataError(
            f"{path} is a bundle of format {reprlib.repr(metadata['format'])}; this hierattn reads {FORMAT!r} "
            "(export it again with this version)"
        )
    return metadata


def model_digest(data):
    """The SHA-256 (hex) of a serialized ONNX model without its metadata, and the digest its metadata records.

    Every top-level field of the protobuf but `metadata_props` is hashed as
    it lies in the file, in file order: the graph with its weights, the
    opsets, the IR version, the doc string. Reading the wire format here
    needs neither the `onnx` package nor a parse of the graph, so a damaged
    file is refused before onnxruntime builds anything from it.

    Args:
        data: The model's bytes (`bytes`, a `memoryview` or an `mmap`).

    Returns:
        `(digest, recorded)`: `digest` None where `data` is no protobuf
        message (onnxruntime says why when it loads it); `recorded` the
        `graph_sha256` of its hierattn metadata where that is a JSON object
        that holds one, else None.
    """
    view = memoryview(data)
    try:
        fields = list(_fields(view))
        sha, recorded = hashlib.sha256(), None
        for number, start, payload, end in fields:
            if number != _METADATA_PROPS:
                sha.update(view[start:end])
            elif recorded is None:
                recorded = _recorded_digest(view[payload:end].tobytes())
    except ValueError:
        return None, None
    return sha.hexdigest(), recorded


def file_digest(path):
    """`model_digest` of the file at `path`, read through a memory map (no copy of a large graph)."""
    try:
        with open(path, "rb") as file, mmap.mmap(file.fileno(), 0, access=mmap.ACCESS_READ) as mapped:
            return model_digest(mapped)
    except (ValueError, OSError):  # unreadable, or empty (no map): onnxruntime says why when it reads it
        return None, None


def _recorded_digest(entry):
    """The `graph_sha256` of one `metadata_props` entry (a serialized key and value) if it is hierattn's, else None."""
    entry = {number: value for number, _, value, _ in _fields(memoryview(entry), strings=True)}
    if entry.get(1) != METADATA_KEY.encode():
        return None
    try:
        metadata = json.loads(entry.get(2, b""))
    except (ValueError, RecursionError):  # not JSON, or not UTF-8 (`read_metadata` says so)
        return None
    return metadata.get(DIGEST_KEY) if isinstance(metadata, dict) else None


def _fields(view, strings=False):
    """The top-level fields of a protobuf message: `(number, start, payload start, end)`, or with `strings`
    `(number, None, bytes, None)` of its length-delimited ones.

    Raises:
        ValueError: `view` is not a protobuf message (a truncated field, a group, an unknown wire type).
    """
    at, size = 0, len(view)
    while at < size:
        start = at
        tag, at = _varint(view, at)
        number, wire = tag >> 3, tag & 7
        if number == 0:
            raise ValueError("field number 0")
        if wire == 0:
            _, at = _varint(view, at)
            payload = at
        elif wire == 2:
            length, payload = _varint(view, at)
            at = payload + length
        elif wire in (1, 5):
            payload, at = at, at + (8 if wire == 1 else 4)
        else:  # groups (3, 4) are no field of an ONNX model; 6 and 7 do not exist
            raise ValueError(f"wire type {wire}")
        if at > size:
            raise ValueError("truncated")
        if strings:
            if wire == 2:
                yield number, None, view[payload:at].tobytes(), None
        else:
            yield number, start, payload, at


def _varint(view, at):
    """The varint at `at` of `view` and where it ends."""
    value = shift = 0
    while at < len(view) and shift < 64:
        byte = view[at]
        value |= (byte & 0x7F) << shift
        at += 1
        if byte < 0x80:
            return value, at
        shift += 7
    raise ValueError("truncated varint")
