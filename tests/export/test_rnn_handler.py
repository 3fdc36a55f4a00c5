"""`hierattn.export.rnn_handler`: tf2onnx writes the fused op with hierattn's handler only while exporting."""

import subprocess
import sys

import keras
import onnx
import pytest
import tensorflow as tf
from tf2onnx.handler import tf_op

from hierattn.export.fused_rnn import fused_recurrent
from hierattn.export.rnn_handler import OP

pytestmark = pytest.mark.slow


def handlers():
    """Every handler tf2onnx holds for `OP`: in its table of handlers, and in the table of its last conversion."""
    table = [ops[OP] for opsets in tf_op.get_opsets().values() for ops in opsets if OP in ops]
    return table + [ops[OP] for ops in (tf_op._MAPPING or {}, *(tf_op._DOMAIN_MAPPING or {}).values()) if OP in ops]


def _gru_model():
    ids = keras.Input((None,), dtype="int32")
    x = keras.layers.Embedding(50, 8, mask_zero=True)(ids)
    return keras.Model(ids, keras.layers.GRU(6)(x))


def test_after_an_export_tf2onnx_has_no_handler_of_hierattn_left(tmp_path):
    model = _gru_model()
    assert handlers() == []  # importing hierattn registered none
    with fused_recurrent(model) as fused:
        assert fused and len(handlers()) == 1
        model.export(
            tmp_path / "m.onnx", format="onnx", input_signature=[tf.TensorSpec((None, None), tf.int32)], verbose=False
        )
    assert "GRU" in {node.op_type for node in onnx.load(tmp_path / "m.onnx").graph.node}  # written by the handler
    assert handlers() == []


def test_a_handler_registered_before_is_restored_even_on_error():
    class Theirs:
        @classmethod
        def version_7(cls, ctx, node, **kwargs):
            pass

    tf_op(OP)(Theirs)
    try:
        theirs = handlers()
        assert theirs == [(Theirs.version_7, {})]
        with pytest.raises(RuntimeError, match="while exporting"), fused_recurrent(_gru_model()):
            assert handlers() != theirs  # hierattn's replaces it while active
            raise RuntimeError("an error while exporting")
        assert handlers() == theirs
    finally:
        tf_op.get_opsets()[""][7].pop(OP)
    assert handlers() == []


def test_importing_the_export_package_loads_neither_tensorflow_nor_tf2onnx():
    script = (
        "import sys\nimport hierattn.export, hierattn.export.converter, hierattn.export.rnn_handler\n"
        "print(sorted(m for m in ('tensorflow', 'tf2onnx', 'keras') if m in sys.modules))"
    )
    found = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, check=True)
    assert found.stdout.strip() == "[]"
