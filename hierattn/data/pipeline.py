"""`tf.data` input pipelines of encoded documents: length-bucketed, padding trimmed, sharded across replicas.

A pipeline is planned as global batches (lists of document indices of
similar length). Under a `tf.distribute` strategy each global batch is cut
into one piece per replica, and every worker's input pipeline (built by
`Strategy.distribute_datasets_from_function`) yields only its own replicas'
pieces, so each document is seen exactly once per epoch across all workers,
every worker runs the same number of steps, and each piece keeps the length
bucketing of its batch.
"""

import numpy as np
import tensorflow as tf

from hierattn.data.batching import bucket_batches, document_lengths, sort_batches_by_length, trim_padding
from hierattn.errors import DataError


def one_hot(labels, num_classes):
    """Integer labels `(n,)` as float32 one-hot rows (targets of the categorical loss); multi-hot rows as they are."""
    if np.ndim(labels) == 2:  # multi-label: already one column per label
        return np.asarray(labels, dtype=np.float32)
    return np.eye(num_classes, dtype=np.float32)[np.asarray(labels, dtype=np.int64)]


def make_train_dataset(x, y, batch_size, seed, num_classes, first_epoch=0, strategy=None):
    """Training batches: length-bucketed, padding trimmed, a new shuffle every epoch.

    The shuffle of each epoch is seeded by `seed` and the epoch number,
    counted from `first_epoch`, so a resumed run sees the batches it would
    have seen without the interruption. `y` is integer labels `(n,)` (or multi-hot rows);
    `batch_size` is the global batch (split between the replicas of
    `strategy`, if any).
    """
    lengths = document_lengths(x)
    return _dataset(
        lambda epoch: bucket_batches(lengths, batch_size, seed=seed + first_epoch + epoch),
        x,
        one_hot(y, num_classes),
        strategy,
    )


def make_eval_dataset(x, y, batch_size, num_classes, strategy=None):
    """Evaluation batches: sorted by length (fixed order), padding trimmed.

    `x` is an id array, or a dict of them (a preprocessor's `"token_ids"`
    and `"ngram_ids"`: sorted by the first, each trimmed alone).
    """
    batches = sort_batches_by_length(x["token_ids"] if isinstance(x, dict) else x, batch_size)
    return _dataset(lambda epoch: batches, x, one_hot(y, num_classes), strategy)


def replica_pieces(batches, num_replicas):
    """Cuts each global batch into `num_replicas` pieces of nearly equal size.

    A last batch too small to give every replica a document is merged into
    the one before, so no replica ever gets an empty piece.

    Args:
        batches: Global batches (index arrays), each index once.
        num_replicas: Replicas in sync.

    Returns:
        A list with, for each step, a list of `num_replicas` index arrays.

    Raises:
        DataError: Fewer documents than replicas.
    """
    batches = [np.asarray(b) for b in batches]
    if len(batches) > 1 and len(batches[-1]) < num_replicas:
        batches[-2:] = [np.concatenate(batches[-2:])]
    if not batches or len(batches[0]) < num_replicas:
        raise DataError(f"{sum(len(b) for b in batches)} documents cannot be shared between {num_replicas} replicas")
    return [np.array_split(batch, num_replicas) for batch in batches]


def _dataset(plan, x, targets, strategy):
    """The dataset of `plan(epoch)`'s batches, distributed by `strategy` (`None`: not distributed)."""
    num_replicas = strategy.num_replicas_in_sync if strategy is not None else 1
    steps = len(replica_pieces(plan(0), num_replicas))
    if isinstance(x, dict):
        spec = {key: tf.TensorSpec((None,) * value.ndim, tf.int32) for key, value in x.items()}
        take = lambda index: {key: trim_padding(value[index]) for key, value in x.items()}  # noqa: E731
    else:
        spec, take = tf.TensorSpec((None,) * x.ndim, tf.int32), lambda index: trim_padding(x[index])
    signature = (spec, tf.TensorSpec((None, targets.shape[1]), tf.float32))

    def dataset_fn(context=None):
        pipelines, pipeline = (context.num_input_pipelines, context.input_pipeline_id) if context else (1, 0)
        per_pipeline = num_replicas // pipelines
        mine = slice(pipeline * per_pipeline, (pipeline + 1) * per_pipeline)
        epoch = [0]

        def batches():
            for pieces in replica_pieces(plan(epoch[0]), num_replicas):
                for index in pieces[mine]:
                    yield take(index), targets[index]
            epoch[0] += 1

        dataset = tf.data.Dataset.from_generator(batches, output_signature=signature)
        # A known length: Keras then shows real progress bars.
        return dataset.apply(tf.data.experimental.assert_cardinality(steps * per_pipeline)).prefetch(2)

    if strategy is None:
        return dataset_fn()
    return strategy.distribute_datasets_from_function(dataset_fn)
