"""Exporting a `TextClassifier` as one bundle: the whole classifier as an ONNX graph, with its tokenizer's settings.

The graph (token ids to class probabilities: the backbone, the n-gram part
and their combination) is written by Keras's own exporter
(`keras.Model.export(format="onnx")`, which converts with tf2onnx); the
tokenizer's settings, vocabulary, length limits and class names go into the
ONNX file's metadata (`hierattn.runtime.bundle`). The file is then loaded
by onnxruntime and checked against the classifier on probe texts before it
is moved into place: a converter that meets an operator it cannot express
only logs it, so a finished conversion proves nothing.

Importing this module imports neither Keras nor TensorFlow: exporting does.
"""

import contextlib
import json
import logging
import os
import warnings

import numpy as np

from hierattn.defaults import CASCADE
from hierattn.errors import ArgumentError, ExportError, first_line
from hierattn.ngrams.twin import SETTINGS
from hierattn.runtime import load
from hierattn.runtime.bundle import DIGEST_KEY, FORMAT, METADATA_KEY, model_digest
from hierattn.utils.atomic import atomic_path

# The largest difference of a probability allowed between the exported graph and the classifier on the probe texts.
TOLERANCE = 1e-5
# The ONNX operator set the graph is written in (onnxruntime 1.16 and later run it).
OPSET = 17


def input_signature(classifier):
    """The id inputs of `classifier` as Keras's exporter wants them: one dict of `tf.TensorSpec`, or one spec."""
    import tensorflow as tf  # Keras's exporter takes TensorFlow specs under the TensorFlow backend

    ids = tf.TensorSpec((None,) * classifier.preprocessor.input_rank, tf.int32, name="token_ids")
    if classifier.preprocessor.ngram_length is None:
        return [ids]
    return [{"token_ids": ids, "ngram_ids": tf.TensorSpec((None, None), tf.int32, name="ngram_ids")}]


def export_bundle(classifier, filepath, verbose=True, overwrite=True):
    """Writes `classifier` as one bundle (`.onnx`) that `hierattn.runtime.load` runs without TensorFlow.

    Args:
        classifier: A trained `TextClassifier`.
        filepath: The bundle's path (an existing file is replaced, once
            the new one is complete and checked).
        verbose: Print one line: where the bundle went, and its size.
        overwrite: Replace a file at `filepath`; with False a file that
            appeared there meanwhile is kept and a `WriteError` raised.

    Returns:
        The path written.

    Raises:
        ArgumentError: The classifier is not trained.
        ExportError: The converter failed, or the exported graph does not
            give the classifier's answers on the probe texts (nothing is
            written).
    """
    if not classifier.adapted or classifier.backbone is None or classifier.label_names is None:
        raise ArgumentError("the classifier is not trained: fit it before exporting it")
    filepath = os.fspath(filepath)
    import onnx  # tf2onnx, which Keras's exporter uses, depends on it

    with atomic_path(filepath, overwrite=overwrite) as temporary:
        _convert(classifier, temporary)
        model = onnx.load(temporary)
        names = [graph_input.name for graph_input in model.graph.input]
        inputs = {"token_ids": next(n for n in names if n.endswith("token_ids"))}
        if len(names) > 1:
            inputs["ngram_ids"] = next(n for n in names if n.endswith("ngram_ids"))
        outputs = [output.name for output in model.graph.output]
        metadata = bundle_metadata(classifier, inputs, outputs[0], *outputs[1:2], tables=outputs[2:])
        model.doc_string = (
            f"hierattn {metadata['architecture']} text classifier ({', '.join(map(str, classifier.label_names))}): "
            f"token ids in, {classifier.kind.noun} probabilities out; "
            "the tokenizer is described in the 'hierattn' metadata"
        )
        # The digest of the model without its metadata, as `onnx.save` writes it: `load` refuses a changed graph.
        metadata[DIGEST_KEY] = model_digest(model.SerializeToString())[0]
        onnx.helper.set_model_props(model, {METADATA_KEY: json.dumps(metadata)})
        onnx.checker.check_model(model)
        onnx.save(model, temporary)
        check_bundle(classifier, temporary)
    if verbose:
        print(f"exported {filepath} ({os.path.getsize(filepath) / 2**20:.1f} MiB)")
    return filepath


def _convert(classifier, path):
    """Keras's ONNX exporter on `classifier`, recurrent layers fused; any converter failure as one `ExportError`."""
    import keras

    from hierattn.export.fused_rnn import fused_recurrent  # its tf2onnx handler is registered only while active

    try:
        with (
            _without_cudnn(classifier),
            _with_ngram_logits(classifier),
            fused_recurrent(classifier),
            _quiet_converter(),
        ):
            keras.Model.export(
                classifier,
                path,
                format="onnx",
                input_signature=input_signature(classifier),
                verbose=False,
                opset_version=OPSET,
            )
    except Exception as error:  # tf2onnx and TensorFlow raise many classes: one line, the first of theirs
        first = first_line(error)
        raise ExportError(f"the classifier could not be converted to ONNX ({type(error).__name__}: {first})") from error


def bundle_metadata(classifier, inputs, output, ngram_output=None, tables=()):
    """The bundle's metadata (`hierattn.runtime.bundle`) for `classifier`.

    The classifier's decision policy is its `DecisionPolicy.to_dict`: a
    multi-label classifier's adds `multi_label` (true) and `thresholds`
    (one per label, in `label_names` order); a single-label one's has neither,
    and `offsets` (one per class) if it has them. With an n-gram part
    (`ngram_output`, the graph's output of its logits), `cascade` (the cut,
    the parts' weights, the n-gram part's scale, the whole combination's
    temperatures), `ngram_output` and `ngram_part` (its settings, and the
    outputs `tables` that give its tables). `export_bundle` adds the graph's
    digest (`graph_sha256`) once the model is complete.
    """
    from hierattn import __version__

    preprocessor = classifier.preprocessor
    vocabulary = preprocessor.vocabulary
    metadata = {
        "format": FORMAT,
        "hierattn_version": __version__,
        "architecture": classifier.architecture,
        "preprocessor": {
            "mode": preprocessor.mode,
            "max_sentences": preprocessor.max_sentences,
            "max_words": preprocessor.max_words,
            "sequence_length": preprocessor.sequence_length,
            "ngram_length": preprocessor.ngram_length,
            "tokenizer": preprocessor.tokenizer.get_config(),
        },
        "vocabulary": vocabulary.get_config(),
        "embedding": {"ids": len(vocabulary.tokens), "rows": int(classifier.backbone.vocabulary_size)},
        "inputs": inputs,
        "output": output,
    }
    policy = classifier.policy.to_dict()
    metadata.update(policy, label_names=[str(name) for name in policy["label_names"]])
    if ngram_output is not None:
        metadata["ngram_output"] = ngram_output
        layer = classifier.ngram_logits
        metadata["ngram_part"] = {name: getattr(layer, name) for name in SETTINGS}
        metadata["ngram_part"]["tables"] = list(tables)
    return metadata


def probe_texts(classifier):
    """Texts that reach every path of the graph: short, beyond the length limits, without known words, wordless."""
    words = classifier.preprocessor.vocabulary.tokens[2:202] or ["word"]
    sentence = " ".join(words[:12]) + "."
    long = " ".join(f"{' '.join(words[i : i + 25])}." for i in range(0, len(words), 5)) * 3
    return [sentence, words[0], long, "Qwxzv blorptk zzyzx.", "", sentence + " " + long]


def check_bundle(classifier, path):
    """Loads the bundle at `path` with onnxruntime and compares it with `classifier` on `probe_texts`.

    Both ways: as the classifier decides (with its cascade), and with the network reading every document.

    Raises:
        ExportError: A probability differs by more than `TOLERANCE`.
    """
    import tensorflow as tf

    texts = probe_texts(classifier)
    x = classifier.preprocessor(texts)
    expected = {}
    with tf.device("/CPU:0"):  # as onnxruntime computes: a GPU's TF32 products would differ by more than TOLERANCE
        for setting in CASCADE["networks"]:
            expected[setting] = classifier.predict_ids(x, policy=classifier.policy.for_network(setting))
    loaded = load(path)
    for network in CASCADE["networks"]:
        predictor = loaded.with_network(network)
        for batch_size in (1, len(texts)):
            found = predictor.predict(texts, batch_size=batch_size)
            difference = float(np.abs(found - expected[network]).max())
            if not difference <= TOLERANCE:
                raise ExportError(
                    f"the exported graph does not give the classifier's answers (largest difference of a probability "
                    f"{difference:.2g} on the probe texts, batches of {batch_size}, network {network}); "
                    "nothing was written"
                )


@contextlib.contextmanager
def _with_ngram_logits(classifier):
    """While exporting: the graph's second output is the n-gram part's logits (the runtime's cascade reads them)."""
    classifier._with_ngram_logits = classifier.ngram_logits is not None
    try:
        yield
    finally:
        classifier._with_ngram_logits = False


@contextlib.contextmanager
def _quiet_converter():
    """While converting: tf2onnx's own warnings (shapes it leaves to onnxruntime) and Keras's NumPy warning unsaid.

    What matters is checked after: the graph is loaded and compared with the classifier (`check_bundle`).
    """
    logger = logging.getLogger("tf2onnx")
    level = logger.level
    logger.setLevel(logging.ERROR)
    try:
        with warnings.catch_warnings():
            warnings.filterwarnings("ignore", message="In the future `np.object`", category=FutureWarning)
            yield
    finally:
        logger.setLevel(level)


@contextlib.contextmanager
def _without_cudnn(classifier):
    """Traces the recurrent layers without cuDNN's kernel (which neither ONNX nor a CPU runs), GPU or not."""
    from hierattn.export.fused_rnn import sublayers

    layers = [layer for layer in sublayers(classifier) if hasattr(layer, "use_cudnn")]
    before = [layer.use_cudnn for layer in layers]
    for layer in layers:
        layer.use_cudnn = False
    try:
        yield
    finally:
        for layer, value in zip(layers, before):
            layer.use_cudnn = value
