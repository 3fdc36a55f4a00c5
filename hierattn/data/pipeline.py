"""`tf.data` input pipelines of encoded documents: length-bucketed, padding trimmed."""

import numpy as np

from hierattn.data.encoding import bucket_batches, document_lengths, sort_batches_by_length, trim_padding


def one_hot(labels, num_classes):
    """Integer labels `(n,)` as float32 one-hot rows (targets of the categorical loss)."""
    return np.eye(num_classes, dtype=np.float32)[np.asarray(labels, dtype=np.int64)]


def make_train_dataset(x, y, batch_size, seed, num_classes, first_epoch=0):
    """A `tf.data.Dataset` of length-bucketed, padding-trimmed batches.

    A new shuffle every epoch (seeded by `seed` and the epoch number, counted
    from `first_epoch`, so a resumed run sees the batches it would have seen
    without the interruption). `y` is integer labels `(n,)`.
    """
    lengths = document_lengths(x)
    steps = -(-len(x) // batch_size)
    targets = one_hot(y, num_classes)
    epoch = [first_epoch]

    def batches():
        for index in bucket_batches(lengths, batch_size, seed=seed + epoch[0]):
            yield trim_padding(x[index]), targets[index]
        epoch[0] += 1

    return _from_batches(batches, x.ndim, num_classes, steps)


def make_eval_dataset(x, y, batch_size, num_classes):
    """Evaluation batches: sorted by length (fixed order), padding trimmed."""
    batches_index = sort_batches_by_length(x, batch_size)
    targets = one_hot(y, num_classes)

    def batches():
        for index in batches_index:
            yield trim_padding(x[index]), targets[index]

    return _from_batches(batches, x.ndim, num_classes, len(batches_index))


def _from_batches(batches, rank, num_classes, steps):
    """A dataset of known length (Keras then shows real progress bars)."""
    import tensorflow as tf

    signature = (tf.TensorSpec((None,) * rank, tf.int32), tf.TensorSpec((None, num_classes), tf.float32))
    dataset = tf.data.Dataset.from_generator(batches, output_signature=signature)
    return dataset.apply(tf.data.experimental.assert_cardinality(steps)).prefetch(2)
