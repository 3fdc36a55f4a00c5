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
(`hierattn.runtime.checks`).
"""

import json

from hierattn.errors import DataError

FORMAT = "hierattn.bundle/1"
METADATA_KEY = "hierattn"
_REQUIRED = ("format", "label_names", "preprocessor", "vocabulary", "inputs", "output")


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
    except ValueError as error:
        raise DataError(f"{path}: its hierattn metadata is not JSON ({error})") from None
    if not isinstance(metadata, dict):
        raise DataError(f"{path}: its hierattn metadata is not a JSON object")
    missing = [key for key in _REQUIRED if key not in metadata]
    if missing:
        raise DataError(f"{path}: its hierattn metadata lacks {', '.join(missing)}")
    if metadata["format"] != FORMAT:
        raise DataError(
            f"{path} is a bundle of format {metadata['format']!r}; this hierattn reads {FORMAT!r} "
            "(export it again with this version)"
        )
    return metadata
