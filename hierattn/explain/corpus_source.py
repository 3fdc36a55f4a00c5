"""The documents `explain --dataset` explains: IMDB, or a table or text file, streamed (`open_corpus`)."""

import dataclasses
import itertools
import pathlib

from hierattn.data import load_imdb
from hierattn.data.dataset import sample
from hierattn.data.text_files import iter_text_chunks, text_rows
from hierattn.errors import ArgumentError, HierattnError


@dataclasses.dataclass
class CorpusSource:
    """Texts to explain, streamed, with labels and ids when known.

    Example:

    >>> import pathlib
    >>> import tempfile
    >>> from hierattn.explain import open_corpus
    >>> path = pathlib.Path(tempfile.mkdtemp()) / "reviews.csv"
    >>> _ = path.write_text("id,text,label\\nr1,A great film.,pos\\nr2,Dull.,neg\\n")
    >>> source = open_corpus(str(path))         # for explain_corpus(explainer, source.texts, ...)
    >>> list(source.texts), list(source.labels), list(source.ids)
    (['A great film.', 'Dull.'], ['pos', 'neg'], ['r1', 'r2'])
    """

    texts: object
    labels: object = None
    ids: object = None
    total: int = None


def open_corpus(dataset, split="test", data=None, text_column=None, limit=None, seed=0, progress=True, encoding=None):
    """The documents of a dataset to explain (see `explain_corpus`).

    Args:
        dataset: `"imdb"`, or a CSV/TSV/JSON-lines file or text file (one
            text per line).
        split: IMDB split (`"test"`, `"train"` or `"unsup"`).
        data: IMDB archive or folder (default: the `data/` cache, else
            download).
        text_column: Text column of a table file.
        limit: Only this many documents: for IMDB a seeded random sample
            (the split is ordered by class), for a file its first rows.
        seed: Seed of the IMDB sample.
        progress: Show progress while reading IMDB.
        encoding: Text encoding of a file (default UTF-8).

    Returns:
        A `CorpusSource`.
    """
    if limit is not None and limit < 1:
        raise ArgumentError("{argument} must be at least 1", argument="limit")
    if dataset == "imdb":
        documents = load_imdb(data, splits=(split,), progress=progress)[split]
        if limit is not None:
            documents = sample(documents, limit, seed)
        names = documents.label_map.names
        labels = [names[i] if i >= 0 else None for i in documents.labels]
        return CorpusSource(documents.texts, labels, documents.ids, len(documents))
    if not pathlib.Path(dataset).is_file():
        raise HierattnError(f"no such dataset {dataset!r}: use imdb or the path of a CSV/TSV/JSON-lines or text file")
    carried, rows = text_rows(iter_text_chunks(dataset, text_column, encoding=encoding))
    streams = itertools.tee(rows, 3)
    texts = (row[0] for row in streams[0])
    ids = (row[1] for row in streams[1]) if "id" in carried else None
    labels = (row[2] for row in streams[2]) if "label" in carried else None
    first = (lambda values: None if values is None else itertools.islice(values, limit)) if limit else (lambda v: v)
    return CorpusSource(first(texts), first(labels), first(ids), total=limit)
