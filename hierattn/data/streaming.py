"""A `tf.data` path for corpora too large for memory."""

from hierattn.data.tables import LABEL_COLUMNS, TEXT_COLUMNS, plain_label, pick_column, read_table


def stream_table(path, encoder, label_map, mode="hierarchical", text_column=None, label_column=None,
                 chunk_size=2000, fmt=None):
    """Yields `(ids, labels)` array pairs, reading and encoding `chunk_size` rows at a time.

    Rows with a missing text or label are skipped (as in `load_table`).

    Args:
        path: CSV/TSV/JSON-lines file.
        encoder: A fitted `TextEncoder`.
        label_map: The `LabelMap` for the labels.
        mode: `"hierarchical"` or `"flat"`.
        text_column: Text column (default as in `load_table`).
        label_column: Label column.
        chunk_size: Rows per chunk.
        fmt: File format override.
    """
    for frame in read_table(path, fmt, chunksize=chunk_size):
        text = pick_column(frame.columns, text_column, TEXT_COLUMNS, "text")
        label = pick_column(frame.columns, label_column, LABEL_COLUMNS, "label")
        frame = frame[frame[text].notna() & frame[label].notna()]
        if len(frame):
            yield (
                encoder.encode([str(t) for t in frame[text]], mode=mode, workers=1),
                label_map.to_ids([plain_label(v) for v in frame[label]]),
            )


def table_dataset(path, encoder, label_map, mode="hierarchical", batch_size=64, **kwargs):
    """A `tf.data.Dataset` of `(ids, label)` batches streamed from a file.

    Memory holds one chunk at a time, whatever the file's size.

    Args:
        path: CSV/TSV/JSON-lines file.
        encoder: A fitted `TextEncoder`.
        label_map: The `LabelMap`.
        mode: `"hierarchical"` or `"flat"`.
        batch_size: Examples per batch.
        **kwargs: Passed to `stream_table`.
    """
    import tensorflow as tf

    shape = (encoder.max_sentences, encoder.max_words) if mode == "hierarchical" else (encoder.max_len,)

    def rows():
        for ids, labels in stream_table(path, encoder, label_map, mode=mode, **kwargs):
            yield from zip(ids, labels)

    signature = (tf.TensorSpec(shape, tf.int32), tf.TensorSpec((), tf.int32))
    return tf.data.Dataset.from_generator(rows, output_signature=signature).batch(batch_size).prefetch(2)
