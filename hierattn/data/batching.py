"""Batches of encoded documents of similar length, with their padding trimmed."""

import numpy as np


def bucket_batches(lengths, batch_size, seed=0, chunk_batches=50):
    """Batches of indices of similar length, to cut padding in training.

    Shuffles, sorts by length within chunks of `chunk_batches * batch_size`
    documents, cuts the chunks into batches, and shuffles the batch order.

    Args:
        lengths: Length of each document (e.g. its number of tokens).
        batch_size: Documents per batch.
        seed: Seed of the shuffles.
        chunk_batches: Batches per sorting chunk (larger: less padding, less
            randomness).

    Returns:
        A list of index arrays; every index appears exactly once.
    """
    rng = np.random.default_rng(seed)
    lengths = np.asarray(lengths)
    order = rng.permutation(len(lengths))
    chunk = batch_size * chunk_batches
    batches = []
    for start in range(0, len(order), chunk):
        part = order[start : start + chunk]
        part = part[np.argsort(lengths[part], kind="stable")]
        batches.extend(part[i : i + batch_size] for i in range(0, len(part), batch_size))
    rng.shuffle(batches)
    return batches


def document_lengths(x):
    """The padding-relevant length of each encoded document.

    Flat `(n, T)`: the number of real tokens. Hierarchical `(n, S, W)`: the
    number of real sentences (a HAN batch costs about max sentences x max
    words, and the word axis is nearly always full), with the token count as a
    tie-breaker.
    """
    x = np.asarray(x)
    tokens = np.count_nonzero(x.reshape(len(x), -1), axis=1)
    if x.ndim == 2:
        return tokens
    sentences = np.count_nonzero(x.any(axis=2), axis=1)
    return sentences * (x.shape[1] * x.shape[2] + 1) + tokens


def sort_batches_by_length(x, batch_size):
    """Batches of indices in order of document length (for evaluation).

    Args:
        x: Encoded documents, flat or hierarchical (see `document_lengths`).
        batch_size: Documents per batch.

    Returns:
        A list of index arrays covering every document once.
    """
    order = np.argsort(document_lengths(x), kind="stable")
    return [order[i : i + batch_size] for i in range(0, len(order), batch_size)]


def trim_padding(batch):
    """Drops trailing all-padding positions of a batch along every axis but 0."""
    batch = np.asarray(batch)
    slices = [slice(None)]
    for axis in range(1, batch.ndim):
        other = tuple(a for a in range(batch.ndim) if a != axis)
        used = np.flatnonzero(np.any(batch != 0, axis=other))
        slices.append(slice(0, int(used[-1]) + 1 if used.size else 1))
    return batch[tuple(slices)]
