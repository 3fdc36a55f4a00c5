"""The tf2onnx handler that writes a fused recurrent op (`hierattn.export.fused_rnn`) as one ONNX `GRU` or `LSTM` node.

tf2onnx looks up the handler of each TensorFlow op in one table that the
whole process shares (`tf2onnx.handler.tf_op`). hierattn's handler for
`CudnnRNNV3` is in that table only while `registered()` is active, which
`fused_recurrent` enters: importing hierattn changes nothing in tf2onnx, and
after an export (finished or failed) the table is as it was before, with the
`CudnnRNNV3` handler someone else registered, if any, back in place.

Importing this module imports neither TensorFlow nor tf2onnx.
"""

import contextlib

import numpy as np

# The TensorFlow op that `fused_recurrent` traces, which this handler writes.
OP = "CudnnRNNV3"
# The name given to the traced op, which tells the handler the op is one of ours.
FUSED_NAME = "fused_rnn"


@contextlib.contextmanager
def registered():
    """While active, tf2onnx writes a `CudnnRNNV3` op traced by `fused_recurrent` as one ONNX `GRU`/`LSTM` node.

    The handler that was registered for `CudnnRNNV3` before (none in
    tf2onnx itself) is restored on exit, an error included.

    Example:

    >>> from tf2onnx.handler import tf_op
    >>> with registered():
    ...     OP in tf_op.get_opsets()[""][7]  # the ONNX domain's ("") handlers from opset 7
    True
    >>> OP in tf_op.get_opsets()[""][7]
    False
    """
    import tf2onnx.tfonnx  # noqa: F401  (registers tf2onnx's own handlers first, so that ours is the only change)
    from tf2onnx.handler import tf_op

    restore = _handler_restorer(tf_op)
    try:
        tf_op(OP)(_FusedRNN)
        yield
    finally:
        restore()


def _handler_restorer(tf_op):
    """A function that puts tf2onnx's handlers for `OP` back as they are now: another's, or none.

    tf2onnx can register a handler (`tf_op(name)(cls)`, public) but has no
    way to remove one, so this reads and writes its private structures
    (tf2onnx 1.17, `tf2onnx/handler.py`): the table `tf_op.get_opsets()`
    (`tf_op._OPSETS`: domain -> list indexed by opset -> {op name:
    (handler, kwargs)}), where `tf_op(OP)(_FusedRNN)` writes `OP` under the
    ONNX domain at each `version_N` of `_FusedRNN`; and the table of the last
    conversion, `tf_op._MAPPING` and `tf_op._DOMAIN_MAPPING`, which
    `tf_op.create_mapping` rebuilds at each conversion and which holds the
    handler after one.
    """
    from tf2onnx import constants

    versions = [int(name.removeprefix("version_")) for name in vars(_FusedRNN) if name.startswith("version_")]
    opsets = tf_op.get_opsets()
    tables = opsets.get(constants.ONNX_DOMAIN, [])
    before = {v: tables[v][OP] for v in versions if v < len(tables) and OP in tables[v]}
    mapping, domain_mapping = tf_op._MAPPING, tf_op._DOMAIN_MAPPING

    def restore():
        for version in versions:
            table = opsets.get(constants.ONNX_DOMAIN, [])
            if version < len(table):
                table[version].pop(OP, None)
                if version in before:
                    table[version][OP] = before[version]
        tf_op._MAPPING, tf_op._DOMAIN_MAPPING = mapping, domain_mapping

    return restore


class _FusedRNN:
    """tf2onnx handler: a `CudnnRNNV3` traced by `fused_recurrent` becomes one ONNX `GRU` or `LSTM` node."""

    @classmethod
    def version_7(cls, ctx, node, **kwargs):
        from tf2onnx import utils as tf2onnx_utils

        tf2onnx_utils.make_sure(
            node.name.split("/")[-1].startswith(FUSED_NAME),
            "%s: a CudnnRNNV3 op that fused_rnn did not trace (Keras's cuDNN path?); export with use_cudnn=False",
            node.name,
        )
        lstm = node.get_attr_str("rnn_mode") == "lstm"
        bidirectional = node.get_attr_str("direction") == "bidirectional"
        x, h0, c0, params, lengths = node.input
        directions, gates = (2 if bidirectional else 1), (4 if lstm else 3)
        units = ctx.get_shape(h0)[-1]
        tf2onnx_utils.make_sure(units is not None and units > 0, "%s: unknown number of units", node.name)
        weights = ctx.get_node_by_output(params).get_tensor_value(as_list=False)
        # size = directions * gates * units * (input size + units + 2) + 1
        inputs = (weights.size - 1) // (directions * gates * units) - units - 2
        w_end = directions * gates * units * inputs
        r_end = w_end + directions * gates * units * units
        w = weights[:w_end].reshape(directions, gates * units, inputs)
        r = weights[w_end:r_end].reshape(directions, gates * units, units)
        b = weights[r_end:-1].reshape(directions, 2 * gates * units)
        outputs = node.output
        ctx.remove_node(node.name)

        time_major = ctx.make_node("Transpose", [x], attr={"perm": [1, 0, 2]}).output[0]
        onnx_inputs = [time_major] + [
            ctx.make_const(tf2onnx_utils.make_name(node.name + "_" + n), v).output[0]
            for n, v in (("W", w), ("R", r), ("B", b))
        ]
        onnx_inputs += [lengths, h0] + ([c0] if lstm else [])
        attr = {"hidden_size": units, "direction": "bidirectional" if bidirectional else "forward"}
        if not lstm:
            attr["linear_before_reset"] = 1
        y = tf2onnx_utils.make_name(node.name + "_Y")
        rnn_outputs = [y, outputs[1]] + ([outputs[2]] if lstm else [])
        ctx.make_node("LSTM" if lstm else "GRU", onnx_inputs, attr=attr, outputs=rnn_outputs, name=node.name)
        # Y is (steps, directions, batch, units); the op's output is (batch, steps, directions * units).
        batch_major = ctx.make_node("Transpose", [y], attr={"perm": [2, 0, 1, 3]}).output[0]
        shape = ctx.make_const(tf2onnx_utils.make_name("shape"), np.array([0, 0, directions * units], np.int64))
        ctx.make_node("Reshape", [batch_major, shape.output[0]], outputs=[outputs[0]])
