"""Input pipelines: length bucketing, and sharding between the replicas and workers of tf.distribute."""

import numpy as np
import pytest
import tensorflow as tf

from hierattn.data.pipeline import make_eval_dataset, make_train_dataset, replica_pieces
from hierattn.errors import DataError


def documents(n, rng, hierarchical=False):
    """Encoded documents whose first id names them (id = index + 1), of random lengths, right-padded."""
    lengths = rng.integers(1, 12, size=n)
    x = np.zeros((n, 12), np.int32)
    for i, length in enumerate(lengths):
        x[i, :length] = rng.integers(1000, 2000, size=length)
        x[i, 0] = i + 1
    return x.reshape(n, 3, 4) if hierarchical else x


class FakeStrategy:
    """Stands in for a strategy: collects the per-worker dataset function `distribute_datasets_from_function` gets."""

    def __init__(self, num_replicas):
        self.num_replicas_in_sync = num_replicas

    def distribute_datasets_from_function(self, dataset_fn):
        return dataset_fn


def worker_batches(dataset_fn, pipelines, pipeline, replicas, epochs=1):
    context = tf.distribute.InputContext(
        num_input_pipelines=pipelines, input_pipeline_id=pipeline, num_replicas_in_sync=replicas
    )
    dataset = dataset_fn(context)
    out = []
    for _ in range(epochs):
        out.append([(x.numpy(), y.numpy()) for x, y in dataset])
    return out, int(dataset.cardinality())


def first_ids(x):
    return x.reshape(len(x), -1)[:, 0]


def test_replica_pieces_share_every_batch_and_leave_no_replica_empty():
    batches = [np.arange(0, 8), np.arange(8, 16), np.arange(16, 17)]
    steps = replica_pieces(batches, 2)
    assert len(steps) == 2  # the one-document batch joined the one before
    assert [len(p) for p in steps[1]] == [5, 4]
    assert sorted(np.concatenate([p for step in steps for p in step])) == list(range(17))
    with pytest.raises(DataError, match="3 documents cannot be shared between 4 replicas"):
        replica_pieces([np.arange(3)], 4)


@pytest.mark.parametrize("pipelines, replicas, hierarchical", [(2, 2, False), (2, 4, True), (1, 2, False)])
def test_every_document_is_seen_once_per_epoch_across_workers(rng, pipelines, replicas, hierarchical):
    n, batch_size = 203, 16
    x = documents(n, rng, hierarchical)
    labels = rng.integers(0, 3, size=n)
    dataset_fn = make_train_dataset(x, labels, batch_size, seed=5, num_classes=3, strategy=FakeStrategy(replicas))
    per_worker = [worker_batches(dataset_fn, pipelines, i, replicas, epochs=2) for i in range(pipelines)]
    cardinalities = {cardinality for _, cardinality in per_worker}
    assert len(cardinalities) == 1  # every worker runs the same number of steps
    epoch_orders = []
    for epoch in range(2):
        seen = np.concatenate([first_ids(x_) for epochs, _ in per_worker for x_, _ in epochs[epoch]])
        assert sorted(seen) == list(range(1, n + 1))  # each document exactly once across all workers
        epoch_orders.append(seen)
        for epochs, _ in per_worker:
            for x_, y_ in epochs[epoch]:
                ids = first_ids(x_) - 1
                np.testing.assert_array_equal(y_.argmax(1), labels[ids])  # targets travel with their documents
                np.testing.assert_array_equal(x_, x[ids][tuple(slice(0, s) for s in x_.shape)])
                assert len(x_) <= batch_size // replicas + 1
    assert not np.array_equal(epoch_orders[0], epoch_orders[1])  # a new shuffle each epoch


def test_pieces_keep_the_length_bucketing(rng):
    x = documents(640, rng)
    dataset_fn = make_train_dataset(x, np.zeros(640, int), 32, seed=0, num_classes=2, strategy=FakeStrategy(2))
    (epochs, _) = worker_batches(dataset_fn, 2, 1, 2)
    kept = sum(x_.shape[1] for x_, _ in epochs[0])
    assert kept < 0.75 * 12 * len(epochs[0])  # trimmed to each piece's longest document, not the longest overall


def test_without_a_strategy_a_plain_dataset_of_known_length(rng):
    x = documents(50, rng)
    dataset = make_eval_dataset(x, np.zeros(50, int), 16, num_classes=2)
    assert isinstance(dataset, tf.data.Dataset) and int(dataset.cardinality()) == 4
    assert sorted(np.concatenate([first_ids(b.numpy()) for b, _ in dataset])) == list(range(1, 51))
