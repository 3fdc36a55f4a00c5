"""A binary search in a sorted table that every exporter can express."""

from keras import ops


def lower_bound(table, values):
    """The index of the first entry of the sorted, non-empty `table` (NumPy) not below each of `values`.

    `ops.searchsorted` is TensorFlow's `LowerBound`, which ONNX has no
    operator for; this search is unrolled into `ceil(log2(len(table) + 1))`
    steps of gathers and comparisons, which every exporter supports. Each
    step moves the answer up by a power of two while the entry just below
    the new place is still below the value.
    """
    size = len(table)
    table = ops.convert_to_tensor(table)
    found = ops.zeros_like(values)
    step = 1 << max(size.bit_length() - 1, 0)
    while step:
        below = ops.take(table, ops.minimum(found + step, size) - 1) < values
        found = ops.where(below, found + step, found)
        step >>= 1
    return ops.minimum(found, size)  # a value above every entry: past the end
