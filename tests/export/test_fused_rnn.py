"""`hierattn.export.fused_rnn`: Keras's GRU and LSTM layers exported as ONNX's own GRU and LSTM operators, with Keras's answers."""

import collections

import keras
import numpy as np
import onnx
import onnxruntime
import pytest
import tensorflow as tf

from hierattn.export.fused_rnn import fused_recurrent

pytestmark = pytest.mark.slow


def _model(cell, bidirectional, **options):
    ids = keras.Input((None,), dtype="int32")
    x = keras.layers.Embedding(50, 8, mask_zero=True)(ids)
    merge_mode = options.pop("merge_mode", "concat")
    layer = (keras.layers.GRU if cell == "gru" else keras.layers.LSTM)(6, bias_initializer="random_normal", **options)
    if bidirectional:
        layer = keras.layers.Bidirectional(layer, merge_mode=merge_mode)
    out = layer(x)
    return keras.Model(ids, list(out) if isinstance(out, (list, tuple)) else [out])


def _ids(rng, lengths, width):
    """Right-padded rows of the given lengths (0: a row of padding only)."""
    ids = np.zeros((len(lengths), width), np.int32)
    for row, length in enumerate(lengths):
        ids[row, :length] = rng.integers(1, 50, length)
    return ids


CASES = {
    "bigru-sequences": ("gru", True, {"return_sequences": True}),
    "bilstm-sequences": ("lstm", True, {"return_sequences": True}),
    "bigru-last": ("gru", True, {}),
    "bigru-sum": ("gru", True, {"return_sequences": True, "merge_mode": "sum"}),
    "bilstm-mul": ("lstm", True, {"merge_mode": "mul"}),
    "bilstm-last-states": ("lstm", True, {"return_state": True}),
    "gru-sequences": ("gru", False, {"return_sequences": True}),
    "lstm-sequences-states": ("lstm", False, {"return_sequences": True, "return_state": True}),
}


@pytest.mark.parametrize("case", list(CASES))
def test_fused_layers_give_keras_answers_as_one_onnx_node(case, tmp_path, rng):
    cell, bidirectional, options = CASES[case]
    model = _model(cell, bidirectional, **dict(options))
    path = tmp_path / "model.onnx"
    with fused_recurrent(model) as fused:
        model.export(path, format="onnx", input_signature=[tf.TensorSpec((None, None), tf.int32)], verbose=False)
    assert len(fused) == 1
    ops = collections.Counter(node.op_type for node in onnx.load(path).graph.node)
    assert ops[cell.upper()] == 1 and "Loop" not in ops
    session = onnxruntime.InferenceSession(path, providers=["CPUExecutionProvider"])
    for lengths, width in (([5, 0, 2, 1], 5), ([0], 3), ([1], 1), ([7], 7), ([3, 3], 4)):
        ids = _ids(rng, lengths, width)
        found = session.run(None, {session.get_inputs()[0].name: ids})
        expected = model.predict(ids, verbose=0)
        expected = expected if len(model.outputs) > 1 else [expected]
        assert len(found) == len(expected)
        for want, got in zip(expected, found):
            np.testing.assert_allclose(got, want, atol=1e-5)
    assert "call" not in vars(model.layers[-1])  # the layer's own call is back


def test_sentences_folded_from_documents_run_in_groups_of_similar_length(tmp_path, rng):
    """Inside a `SentenceWise`, rows are grouped by length (`chunks`): the same answers, empty sentences included."""
    from hierattn.layers import SentenceWise

    ids = keras.Input((None, None), dtype="int32")
    x = keras.layers.Embedding(50, 8, mask_zero=True)(ids)
    gru = keras.layers.GRU(6, return_sequences=True, bias_initializer="random_normal")
    model = keras.Model(ids, SentenceWise(keras.layers.Bidirectional(gru))(x))
    path = tmp_path / "model.onnx"
    signature = [tf.TensorSpec((None, None, None), tf.int32)]
    with fused_recurrent(model, chunks=3) as fused:
        model.export(path, format="onnx", input_signature=signature, verbose=False)
    assert len(fused) == 1 and collections.Counter(n.op_type for n in onnx.load(path).graph.node)["GRU"] == 3
    session = onnxruntime.InferenceSession(path, providers=["CPUExecutionProvider"])
    for lengths in ([[5, 0, 2], [1, 3, 0]], [[0, 0, 0]], [[1]], [[4, 4], [2, 0], [7, 1], [0, 0]]):
        documents = np.stack([_ids(rng, row, 7) for row in lengths])
        (found,) = session.run(None, {session.get_inputs()[0].name: documents})
        np.testing.assert_allclose(found, model.predict(documents, verbose=0), atol=1e-5)


def test_a_layer_onnx_cannot_express_keeps_keras_loop(tmp_path):
    model = _model("gru", False, return_sequences=True, reset_after=False)
    with fused_recurrent(model) as fused:
        model.export(
            tmp_path / "m.onnx", format="onnx", input_signature=[tf.TensorSpec((None, None), tf.int32)], verbose=False
        )
    assert fused == []
    assert "GRU" not in {node.op_type for node in onnx.load(tmp_path / "m.onnx").graph.node}
