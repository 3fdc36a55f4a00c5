"""Export Keras GRU/LSTM layers as ONNX's fused `GRU`/`LSTM` operators.

Keras 3's recurrent layers trace to a TensorFlow while loop, which tf2onnx
writes as an ONNX `Loop` running one small subgraph per time step, and
tf2onnx's rewriters that would turn it into a fused `GRU`/`LSTM` do not
recognise Keras 3's masked loop. With hierattn's batch sizes that loop is
mostly matrix products, not overhead: fusing alone gains 0-10%. What gains
more is the work saved by running rows of similar length together, cut to
their own length (`chunks`), which the fused op makes cheap to express.

`fused_recurrent(model)` fixes that at the source. While it is active, every
eligible `Bidirectional(GRU|LSTM)`, `GRU` and `LSTM` layer in `model` traces
as ONE TensorFlow `CudnnRNNV3` op (cuDNN's fused RNN, which has the inputs
an ONNX RNN needs: the sequences batch-major, the initial states, the
weights and the sequence lengths) instead of a loop, and tf2onnx writes that
op as ONE ONNX `GRU`/`LSTM` node, with the handler of
`hierattn.export.rnn_handler`, which is registered with tf2onnx while the
context is active and removed after (tf2onnx's table of handlers is the
whole process's). Keras's own exporter is used unchanged:

    with fused_recurrent(classifier):
        keras.Model.export(classifier, path, format="onnx", input_signature=...)

The op is only traced for the exporter, never run: use the context around the
export call alone (a `predict` traced inside it would hold the op and fail,
as TensorFlow has no CPU kernel for it). Its `params` input holds the layers'
weights in the ONNX operator's layout (not cuDNN's): `W` (directions,
gates * units, input size), `R` (directions, gates * units, units) and `B`
(directions, 2 * gates * units), each flattened, in ONNX's gate order (GRU:
z, r, h, as Keras; LSTM: i, o, f, c, where Keras has i, f, c, o), then one
extra element, so that its size never matches what cuDNN expects and a GPU
refuses to run it. The op is named `FUSED_NAME`: a `CudnnRNNV3` traced by
Keras itself (its cuDNN path on a GPU, in cuDNN's layout) is refused by the
handler instead of misread.

Semantics, exactly Keras's (checked against `Model.predict`):
- The mask (from `Embedding(mask_zero=True)`) becomes `sequence_lens`: the
  number of real steps of each row. Like Keras's own cuDNN path, this needs
  right-padded rows (real steps first, padding after), which is what
  hierattn's preprocessor produces. A row of padding only has length 0 and
  gives zero outputs and zero final states, as in Keras.
- `reset_after=True` (Keras's default) is `linear_before_reset=1`.
- The reverse direction of ONNX runs over the real steps of each row only,
  which is what Keras's `go_backwards` with a mask computes; outputs at padded
  steps are 0 (Keras's `Bidirectional` sets `zero_output_for_mask` when it
  returns sequences; a plain layer without it repeats its last real output
  there, and so does this module).

ONNX Runtime's GRU/LSTM kernels abort the process on an empty batch (0
rows). `chunks` never makes an empty group out of a non-empty batch, but a
batch of 0 texts must not be run (hierattn's predictor does not run one).

Anything else (custom cells or activations, `reset_after=False`, stateful or
lone `go_backwards` layers, a given initial state, dropout while training,
a compute dtype other than float32) keeps Keras's own call, i.e. the loop.
"""

import contextlib

import keras
import numpy as np
import tensorflow as tf

from hierattn.export import rnn_handler
from hierattn.layers.sentence_wise import SentenceWise

# The name given to the traced op, which tells the handler the op is one of ours.
FUSED_NAME = rnn_handler.FUSED_NAME


@contextlib.contextmanager
def fused_recurrent(model, chunks=8):
    """While active, the eligible recurrent layers of `model` trace as fused RNN ops, which tf2onnx writes as ONNX's.

    On exit (an error included) the layers have their own calls back, and
    tf2onnx its own table of handlers (`rnn_handler.registered`).

    Args:
        model: A built Keras model; its layers are changed only while the context is active.
        chunks: For a layer inside a `SentenceWise` (sentences folded from documents,
            of very different lengths), the rows are sorted by length and split into
            this many groups, each run as its own op over its own longest row (exactly
            the same results). ONNX Runtime computes every step of every row, and most
            of such a batch is padding (BENCHMARKS.md, "Export and the runtime").
            Other layers read documents, which the predictor batches by length: one op.

    Yields:
        The names of the layers that trace fused.
    """
    patched = []
    try:
        layers = list(sublayers(model))
        # The two layers inside a Bidirectional are traced by the Bidirectional, not called.
        inner = {
            id(d) for layer in layers if isinstance(layer, keras.layers.Bidirectional) for d in _directions(layer) or []
        }
        # Rows of very different lengths (sentences folded from documents) are grouped; documents come sorted.
        folded = {
            id(inside) for layer in layers if isinstance(layer, SentenceWise) for inside in sublayers(layer.layer)
        }
        for layer in layers:
            directions = None if id(layer) in inner else _directions(layer)
            if directions is not None and "call" not in vars(layer):
                groups = chunks if id(layer) in folded else 1
                object.__setattr__(layer, "call", _fused_call(layer, directions, layer.call, groups))
                patched.append(layer)
        with rnn_handler.registered():  # tf2onnx's handler for the fused op: only while the context is active
            yield [layer.name for layer in patched]
    finally:
        for layer in patched:
            object.__delattr__(layer, "call")


def sublayers(layer):
    """`layer` and every layer inside it, each once: a model's `layers`, a wrapper's `layer`, a bidirectional's two."""
    seen = set()

    def walk(current):
        if id(current) in seen:
            return
        seen.add(id(current))
        yield current
        inner = list(getattr(current, "layers", []))
        inner += [getattr(current, name, None) for name in ("backbone", "layer", "forward_layer", "backward_layer")]
        for child in inner:
            if isinstance(child, keras.layers.Layer):
                yield from walk(child)

    yield from walk(layer)


def _directions(layer):
    """The recurrent layers (one per direction) that `layer` can trace as, or None where it must keep its own call."""
    if isinstance(layer, keras.layers.Bidirectional):
        forward, backward = layer.forward_layer, layer.backward_layer
        if _plain(forward) and _plain(backward) and not forward.go_backwards and backward.go_backwards:
            if type(forward.cell) is type(backward.cell) and forward.cell.units == backward.cell.units:
                return [forward, backward]
        return None
    if isinstance(layer, (keras.layers.GRU, keras.layers.LSTM)) and _plain(layer) and not layer.go_backwards:
        return [layer]
    return None


def _plain(layer):
    """Whether `layer` is a GRU or LSTM computing exactly what ONNX's operator computes."""
    cell = getattr(layer, "cell", None)
    if type(cell) not in (keras.layers.GRUCell, keras.layers.LSTMCell) or not layer.built:
        return False
    return (
        cell.activation is keras.activations.tanh
        and cell.recurrent_activation is keras.activations.sigmoid
        and getattr(cell, "reset_after", True)
        and not layer.stateful
        and layer.compute_dtype == "float32"
    )


def _fused_call(layer, directions, keras_call, chunks):
    """`layer.call` that traces the recurrence as one `CudnnRNNV3` op, falling back to `keras_call`."""
    first = directions[0]
    lstm = isinstance(first.cell, keras.layers.LSTMCell)
    units = first.cell.units
    params = _onnx_weights(directions, lstm)

    def fused(sequences, lengths):
        """The one op: the output sequences, the last hidden states and (LSTM) the last cell states."""
        zeros = tf.zeros(tf.stack([len(directions), tf.shape(sequences)[0], units]), sequences.dtype)
        outputs, last_h, last_c, _, _ = tf.raw_ops.CudnnRNNV3(
            input=sequences,
            input_h=zeros,
            input_c=zeros,
            params=tf.constant(params),
            sequence_lengths=lengths,
            rnn_mode="lstm" if lstm else "gru",
            input_mode="linear_input",
            direction="bidirectional" if len(directions) == 2 else "unidirectional",
            is_training=False,
            time_major=False,
            name=FUSED_NAME,
        )
        return outputs, last_h, (last_c if lstm else last_h)  # a GRU has no cell state

    def call(sequences, initial_state=None, mask=None, training=None):
        dropout = any(d.cell.dropout or d.cell.recurrent_dropout for d in directions)
        if initial_state is not None or (training and dropout) or sequences.dtype != tf.float32:
            return keras_call(sequences, initial_state=initial_state, mask=mask, training=training)
        batch, steps = tf.shape(sequences)[0], tf.shape(sequences)[1]
        if mask is None:
            lengths = tf.fill([batch], steps)
        else:
            lengths = tf.reduce_sum(tf.cast(mask, tf.int32), axis=1)
        if mask is None or chunks == 1:
            outputs, last_h, last_c = fused(sequences, lengths)
        else:
            outputs, last_h, last_c = _by_length(fused, sequences, lengths, chunks)
        # Per direction: the output sequence, its last output, and its states.
        per_direction = []
        for index, direction in enumerate(directions):
            h = last_h[index]
            states = (h, last_c[index]) if lstm else (h,)
            sequence = outputs[..., index * units : (index + 1) * units]
            if mask is not None and not direction.zero_output_for_mask and not direction.go_backwards:
                # Keras repeats the last real output over the padding (the backward
                # direction's padding comes first in its order, so it stays 0).
                sequence = tf.where(tf.cast(mask, tf.bool)[..., None], sequence, h[:, None, :])
            per_direction.append((sequence, h, states))
        if len(directions) == 1:
            sequence, h, states = per_direction[0]
            output = sequence if layer.return_sequences else h
            return (output, *states) if layer.return_state else output
        (y, h_f, states_f), (y_rev, h_b, states_b) = per_direction
        if layer.merge_mode == "concat" and layer.return_sequences and layer.forward_layer.zero_output_for_mask:
            output = outputs  # already [forward, backward] along the last axis
        elif layer.return_sequences:
            output = _merge(layer.merge_mode, y, y_rev)
        else:
            output = _merge(layer.merge_mode, h_f, h_b)
        if layer.return_state:
            states = states_f + states_b
            return output + states if layer.merge_mode is None else (output,) + states
        return output

    return call


def _by_length(fused, sequences, lengths, chunks):
    """`fused` run on `chunks` groups of rows of similar length, each cut to its longest row.

    The rows are independent, so the results are the same; what changes is the
    work: ONNX Runtime computes every step of every row up to the input's
    length, and a batch of sentences folded from documents is mostly padding.
    """
    rows, steps = tf.shape(sequences)[0], tf.shape(sequences)[1]
    order = tf.argsort(lengths, direction="DESCENDING", stable=True)
    outputs, last_h, last_c = [], [], []
    for group in range(chunks):
        start, end = group * rows // chunks, (group + 1) * rows // chunks
        # ONNX Runtime's RNN kernels abort on an empty batch: an empty group runs on one row, dropped after.
        first = tf.minimum(start, rows - 1)
        index = order[first : tf.maximum(end, first + 1)]
        group_lengths = tf.gather(lengths, index)
        longest = tf.maximum(tf.reduce_max(group_lengths), 1)
        y, h, c = fused(tf.gather(sequences, index)[:, :longest], group_lengths)
        kept = end - start
        outputs.append(tf.pad(y[:kept], [[0, 0], [0, steps - longest], [0, 0]]))
        last_h.append(h[:, :kept])
        last_c.append(c[:, :kept])
    back = tf.argsort(order)  # where each row went
    return (
        tf.gather(tf.concat(outputs, 0), back),
        tf.gather(tf.concat(last_h, 1), back, axis=1),
        tf.gather(tf.concat(last_c, 1), back, axis=1),
    )


def _merge(mode, y, y_rev):
    """What `Bidirectional` does with its two directions' outputs."""
    if mode == "concat":
        return tf.concat([y, y_rev], axis=-1)
    if mode == "sum":
        return y + y_rev
    if mode == "ave":
        return (y + y_rev) / 2
    if mode == "mul":
        return y * y_rev
    return (y, y_rev)


def _onnx_weights(directions, lstm):
    """The weights of the `directions` as ONNX's `W`, `R` and `B`, flattened and concatenated, float32."""
    gates = 4 if lstm else 3
    # Column blocks of Keras's kernels in ONNX's gate order (Keras LSTM: i, f, c, o; ONNX: i, o, f, c).
    order = [0, 3, 1, 2] if lstm else [0, 1, 2]

    def reorder(matrix):  # (rows, gates * units) -> (gates * units, rows) in ONNX's order
        blocks = np.split(np.asarray(matrix), gates, axis=-1)
        return np.concatenate([blocks[i] for i in order], axis=-1).T

    w, r, b = [], [], []
    for layer in directions:
        cell = layer.cell
        units = cell.units
        w.append(reorder(keras.ops.convert_to_numpy(cell.kernel)))
        r.append(reorder(keras.ops.convert_to_numpy(cell.recurrent_kernel)))
        if not cell.use_bias:
            bias = np.zeros((2, gates * units), np.float32)
        elif lstm:
            bias = np.stack([keras.ops.convert_to_numpy(cell.bias), np.zeros(gates * units, np.float32)])
        else:
            bias = keras.ops.convert_to_numpy(cell.bias).reshape(2, gates * units)  # input bias, recurrent bias
        b.append(reorder(bias).T.reshape(-1))
    # One extra element, so that the size never matches what cuDNN expects: TensorFlow cannot run the op
    # (no CPU kernel; the GPU kernel rejects the size) instead of misreading these weights.
    parts = [np.stack(part).reshape(-1) for part in (w, r, b)] + [np.zeros(1)]
    return np.concatenate(parts).astype(np.float32)
