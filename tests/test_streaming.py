"""Tests for hierattn.data.streaming: chunked reading into tf.data."""

import numpy as np
import pandas as pd

from hierattn.data.dataset import LabelMap
from hierattn.data.encoding import TextEncoder
from hierattn.data.streaming import stream_table, table_dataset


def test_streamed_batches_equal_in_memory_encoding(tmp_path):
    texts = [f"Review number {i}. It was {'great' if i % 3 else 'awful'}!" for i in range(53)]
    labels = ["pos" if i % 3 else "neg" for i in range(53)]
    path = tmp_path / "big.csv"
    pd.DataFrame({"text": texts, "label": labels}).to_csv(path, index=False)
    encoder = TextEncoder.fit(texts, min_count=1, progress=False)
    label_map = LabelMap(["neg", "pos"])

    chunks = list(stream_table(path, encoder, label_map, chunk_size=10))
    assert len(chunks) == 6 and all(len(ids) <= 10 for ids, _ in chunks)
    np.testing.assert_array_equal(np.concatenate([ids for ids, _ in chunks]), encoder.encode(texts))

    dataset = table_dataset(path, encoder, label_map, mode="flat", batch_size=16, chunk_size=7)
    batches = list(dataset.as_numpy_iterator())
    ids = np.concatenate([b[0] for b in batches])
    y = np.concatenate([b[1] for b in batches])
    np.testing.assert_array_equal(ids, encoder.encode(texts, mode="flat"))
    np.testing.assert_array_equal(y, label_map.to_ids(labels))
    assert [len(b[0]) for b in batches] == [16, 16, 16, 5]
