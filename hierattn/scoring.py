"""Scoring files with a trained run, and evaluating a run on labelled data."""

import csv
import os
import pathlib

import numpy as np
from tqdm.auto import tqdm

from hierattn.data.tables import TEXT_COLUMNS, pick_column, read_table
from hierattn.errors import DataError
from hierattn.evaluation import classification_metrics

TABLE_SUFFIXES = (".csv", ".tsv", ".tab", ".jsonl", ".ndjson", ".json")


def _line_chunks(lines, chunk_size):
    """Lists of up to `chunk_size` lines (without their line breaks)."""
    chunk = []
    for line in lines:
        chunk.append(line.rstrip("\n"))
        if len(chunk) == chunk_size:
            yield chunk
            chunk = []
    if chunk:
        yield chunk


def iter_text_chunks(source, text_column=None, chunk_size=2000, stream=None):
    """Texts to score, in chunks.

    Args:
        source: A CSV/TSV/JSON-lines file (texts from `text_column`, found by
            name if not given) or a text file (one text per line).
        text_column: Column of the texts in a table file.
        chunk_size: Texts per chunk.
        stream: Read lines from this stream (e.g. stdin) instead of `source`.

    Yields:
        Lists of texts.
    """
    if stream is not None:
        yield from _line_chunks(stream, chunk_size)
        return
    path = pathlib.Path(source)
    if path.suffix.lower() in TABLE_SUFFIXES:
        for frame in read_table(path, chunksize=chunk_size):
            column = pick_column(frame.columns, text_column, TEXT_COLUMNS, "text")
            yield ["" if v is None or v != v else str(v) for v in frame[column]]
        return
    if not path.is_file():
        raise DataError(f"no such file: {path}")
    with open(path, encoding="utf-8", errors="replace") as f:
        yield from _line_chunks(f, chunk_size)


def read_texts(source, text_column=None):
    """All non-blank texts of a file (see `iter_text_chunks`), e.g. unlabelled texts for word2vec.

    Args:
        source: A CSV/TSV/JSON-lines file or a text file (one text per line).
        text_column: Column of the texts in a table file.

    Returns:
        A list of strings.

    Raises:
        DataError: If the file is missing or holds no text.
    """
    texts = [t for chunk in iter_text_chunks(source, text_column) for t in chunk if t.strip()]
    if not texts:
        raise DataError(f"{source}: no texts found")
    return texts


def score_to_csv(run, chunks, output, progress=True):
    """Writes one CSV row per text: row number, predicted label, probabilities.

    Texts are read, encoded and scored one chunk at a time, so memory does
    not grow with the input. The file is written under a temporary name and
    moved into place at the end.

    Args:
        run: A loaded `Run`.
        chunks: Iterable of lists of texts (see `iter_text_chunks`).
        output: Path of the CSV, or a writable text stream.
        progress: Show a progress bar.

    Returns:
        The number of texts scored.
    """
    names = [str(n) for n in run.label_map.names]
    header = ["row", "predicted"] + [f"p_{n}" for n in names]
    to_file = isinstance(output, (str, os.PathLike))
    partial = pathlib.Path(f"{output}.partial") if to_file else None
    handle = open(partial, "w", newline="", encoding="utf-8") if to_file else output
    count = 0
    try:
        writer = csv.writer(handle)
        writer.writerow(header)
        with tqdm(desc="scoring", unit="doc", disable=not progress) as bar:
            for texts in chunks:
                probabilities = run.predict_proba(texts)
                for i, row in enumerate(probabilities):
                    writer.writerow([count + i, names[int(row.argmax())]] + [f"{p:.6f}" for p in row])
                count += len(texts)
                bar.update(len(texts))
    except BaseException:
        if to_file:
            handle.close()
            partial.unlink(missing_ok=True)
        raise
    if to_file:
        handle.close()
        os.replace(partial, output)
    return count


def evaluate_run(run, dataset, batch_size=32):
    """Metrics of a run on a labelled `TextDataset` (labels in the run's map)."""
    if list(dataset.label_map.names) != list(run.label_map.names):
        raise DataError(
            f"the data's classes {dataset.label_map.names} differ from the run's {run.label_map.names}"
        )
    probabilities = run.predict_proba(dataset.texts, batch_size=batch_size, progress=True)
    return classification_metrics(dataset.labels, np.argmax(probabilities, axis=1), run.label_map.names)
