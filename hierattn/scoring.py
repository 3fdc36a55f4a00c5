"""Scoring files with a trained run, and evaluating a run on labelled data (chosen and checked before it loads)."""

import contextlib
import csv
import itertools
import os
import pathlib

import numpy as np

from hierattn.atomic import atomic_open
from hierattn.data import LabelMap, load_imdb, load_table, locate_imdb
from hierattn.data.decoding import check_text_file, iter_lines, open_bytes
from hierattn.data.ids import take_documents, token_ids
from hierattn.data.progress import tqdm
from hierattn.data.tables import (
    ID_COLUMNS,
    LABEL_COLUMNS,
    TEXT_COLUMNS,
    cell_text,
    find_column,
    pick_column,
    read_table,
    table_format,
)
from hierattn.errors import ArgumentError, DataError
from hierattn.evaluation import classification_metrics
from hierattn.run_data import data_changes, recorded_data
from hierattn.runs import DEFAULT_ROOT, find_run, load_run, read_status, run_line

# The table files named in messages (also read: Parquet, and any of them compressed: see `read_table`).
TABLE_SUFFIXES = (".csv", ".tsv", ".tab", ".jsonl", ".ndjson", ".json")


class _TextChunk(list):
    """A list of texts; from a table, `columns` also holds the rows' `id` and `label` cells when it has them."""

    def __init__(self, texts, columns=None):
        super().__init__(texts)
        self.columns = columns or {}


CARRIED = ("id", "label")


def text_rows(chunks):
    """A table's carried columns and its rows, from chunks of texts (see `iter_text_chunks`).

    Returns:
        `(carried, rows)`: the names among `CARRIED` that the first chunk
        holds, and an iterator of `(text, id, label)`, with `None` for a
        column the table lacks or a blank cell.
    """
    chunks = iter(chunks)
    first = next(chunks, None)
    carried = [name for name in CARRIED if name in getattr(first, "columns", {})]

    def rows():
        for chunk in itertools.chain([] if first is None else [first], chunks):
            columns = getattr(chunk, "columns", {})
            cells = [[v or None for v in columns[name]] if name in columns else [None] * len(chunk) for name in CARRIED]
            yield from zip(chunk, *cells)

    return carried, rows()


def _line_chunks(lines, chunk_size):
    """Lists of up to `chunk_size` lines."""
    chunk = []
    for line in lines:
        chunk.append(line)
        if len(chunk) == chunk_size:
            yield chunk
            chunk = []
    if chunk:
        yield chunk


def iter_text_chunks(source, text_column=None, chunk_size=2000, stream=None, encoding=None):
    """Texts to score, in chunks.

    The first chunk is read at once, so a missing file, a missing column or
    undecodable bytes at the start raise here rather than on first use (a
    caller can check its input before loading a model).

    Args:
        source: A CSV/TSV/JSON-lines/Parquet file (texts from
            `text_column`, found by name if not given) or a text file (one
            text per line), either compressed or not (`.gz`, `.bz2`, `.xz`,
            `.zip`: see `hierattn.data.read_table`).
        text_column: Column of the texts in a table file.
        chunk_size: Texts per chunk.
        stream: Read lines from this binary stream (e.g. standard input's
            buffer) instead of `source`.
        encoding: Text encoding of the file or stream (default UTF-8);
            undecodable or NUL bytes raise a `DataError` naming the line.

    Returns:
        An iterator of chunks: lists of texts (a table's id and label
        columns, found by name, ride along in `chunk.columns`).
    """
    chunks = _text_chunks(source, text_column, chunk_size, stream, encoding)
    first = next(chunks, None)
    return itertools.chain([] if first is None else [first], chunks)


def _text_chunks(source, text_column, chunk_size, stream, encoding):
    if stream is not None:
        yield from _line_chunks(iter_lines(stream, "standard input", encoding), chunk_size)
        return
    path = pathlib.Path(source)
    if table_format(path):
        for frame in read_table(path, chunksize=chunk_size, encoding=encoding):
            column = pick_column(frame.columns, text_column, TEXT_COLUMNS, "text")
            extra = {
                role: find_column(frame.columns, names)
                for role, names in (("id", ID_COLUMNS), ("label", LABEL_COLUMNS))
            }
            yield _TextChunk(
                [cell_text(v) for v in frame[column]],
                {role: [cell_text(v) for v in frame[name]] for role, name in extra.items() if name},
            )
        return
    check_text_file(path, encoding)  # a folder, a missing file, a spreadsheet, binary data
    with open_bytes(path) as f:
        yield from _line_chunks(iter_lines(f, path, encoding), chunk_size)


def read_texts(source, text_column=None, encoding=None):
    """All non-blank texts of a file (see `iter_text_chunks`), e.g. unlabelled texts for word2vec.

    Args:
        source: A table or text file (one text per line), compressed or
            not (see `iter_text_chunks`).
        text_column: Column of the texts in a table file.
        encoding: Text encoding (default UTF-8).

    Returns:
        A list of strings.

    Raises:
        DataError: If the file is missing, undecodable or holds no text.
    """
    texts = [t for chunk in iter_text_chunks(source, text_column, encoding=encoding) for t in chunk if t.strip()]
    if not texts:
        raise DataError(f"{source}: no texts found")
    return texts


def score_to_csv(classifier, chunks, output, progress=True):
    """Writes one CSV row per text: row number, id and label (if a table has them), prediction, probabilities.

    Texts without words (blank, or only markup) keep their row, so rows line
    up with the input, with empty prediction cells: a model has nothing to
    say about them.

    Texts are read, encoded and scored one chunk at a time, so memory does
    not grow with the input. The file is written under a temporary name and
    moved into place at the end.

    Args:
        classifier: A trained `TextClassifier`.
        chunks: Iterable of lists of texts (see `iter_text_chunks`).
        output: Path of the CSV, or a writable text stream.
        progress: Show a progress bar.

    Returns:
        The number of texts scored (blank ones not counted).

    Raises:
        DataError: Every text was blank (no file is left behind).
    """
    names = [str(n) for n in classifier.label_names]
    chunks = iter(chunks)
    first = next(chunks, None)
    chunks = itertools.chain([] if first is None else [first], chunks)
    carried = list(getattr(first, "columns", {}))  # "id", "label"
    header = ["row", *carried, "predicted"] + [f"p_{n}" for n in names]
    to_file = isinstance(output, (str, os.PathLike))
    with atomic_open(output, newline="", overwrite=False) if to_file else contextlib.nullcontext(output) as handle:
        return _score_rows(classifier, chunks, handle, header, names, carried, progress)


def _score_rows(classifier, chunks, handle, header, names, carried, progress):
    count = rows = 0
    writer = csv.writer(handle)
    writer.writerow(header)
    with tqdm(desc="scoring", unit="doc", disable=not progress) as bar:
        for texts in chunks:
            x = classifier.preprocessor(texts)
            ids = token_ids(x)
            filled = np.flatnonzero(ids.reshape(len(ids), -1).any(axis=1))
            probabilities = dict(zip(filled, classifier.predict_ids(take_documents(x, filled))))
            for i in range(len(texts)):
                row = probabilities.get(i)
                cells = (
                    ["", *[""] * len(names)] if row is None else [names[int(row.argmax())], *[f"{p:.6f}" for p in row]]
                )
                writer.writerow([rows + i, *(texts.columns[c][i] for c in carried), *cells])
            rows += len(texts)
            count += len(filled)
            bar.update(len(texts))
    if count == 0:
        raise DataError("no text to score: every text is blank or has no words")
    return count


def evaluate_classifier(classifier, dataset, batch_size=32, progress=True):
    """Accuracy, macro-F1 and confusion matrix of a classifier on a labelled `TextDataset` (in its classes)."""
    names = list(classifier.label_names)
    if list(dataset.label_map.names) != names:
        raise DataError(f"the data's classes {dataset.label_map.names} differ from the model's {names}")
    probabilities = classifier.predict(dataset.texts, batch_size=batch_size, verbose=int(progress))
    return classification_metrics(dataset.labels, np.argmax(probabilities, axis=1), names)


def texts_with_words(classifier, texts):
    """The positions of the texts that have a word for `classifier` to read.

    Args:
        classifier: A trained `TextClassifier`.
        texts: A list of strings.

    Returns:
        The positions, in order, of the texts that are not only markup,
        symbols or spaces.

    Raises:
        DataError: None of the texts has a word.
    """
    kept = [i for i, text in enumerate(texts) if classifier.preprocessor.has_words(text)]
    if not kept:
        raise DataError(
            ("the text has no word" if len(texts) == 1 else "none of the texts has a word")
            + " to read (only markup, symbols or spaces)"
        )
    return kept


class EvaluationData:
    """Labelled data chosen to evaluate a run on (see `evaluation_data`), read once the model's classes are known.

    Attributes:
        path: The table file, or the IMDB archive or folder.
        split: The IMDB split to read (`"test"` or `"train"`).
        recorded: Whether it is the run's own test file, as config.json records it.

    Example:

    >>> import pandas as pd
    >>> frame = pd.DataFrame({"review": ["A great film.", "Dull."], "sentiment": ["pos", "neg"]})
    >>> data = EvaluationData("reviews.csv", frame, text_column="review", label_column="sentiment")
    >>> dataset, report = data.load(["neg", "pos"])   # the classifier's label_names
    >>> dataset.texts, dataset.labels, report["used"]
    (['A great film.', 'Dull.'], array([1, 0], dtype=int32), 2)
    """

    def __init__(self, path, frame=None, text_column=None, label_column=None, split="test", recorded=False):
        self.path, self.frame, self.split, self.recorded = path, frame, split, recorded
        self.text_column, self.label_column = text_column, label_column

    def load(self, label_names):
        """The data in the model's classes.

        Args:
            label_names: The classifier's `label_names`.

        Returns:
            `(dataset, report)`: a labelled `TextDataset`, and for a table
            `load_table`'s report of the rows it used (None for IMDB).
        """

        if self.frame is None:
            return load_imdb(self.path, splits=(self.split,))[self.split], None
        return load_table(self.frame, self.text_column, self.label_column, label_map=LabelMap(label_names))


def evaluation_data(run_dir, data=None, split="test", text_column=None, label_column=None, encoding="utf-8", log=None):
    """The labelled data to evaluate the run in `run_dir` on, chosen and checked before its model loads.

    Without `data`: the run's own test file, with the columns and encoding
    it was trained with, or for a run trained on IMDB its IMDB source, as
    config.json records them; a recorded file that changed since is refused.
    A table's file and columns are read and checked here.

    Args:
        run_dir: The run directory.
        data: A labelled CSV/TSV/JSON-lines file, or for a run trained on
            IMDB an IMDB archive or folder.
        split: The IMDB split, for runs trained on IMDB.
        text_column: Column of the texts (default: found by name).
        label_column: Column of the labels (default: found by name).
        encoding: Text encoding of the table.
        log: Called with a line saying which data was chosen, when it is the
            run's own test file.

    Returns:
        An `EvaluationData`.

    Raises:
        ArgumentError: No data given and none recorded, the recorded file
            changed, or `data` is not a table for a run not trained on IMDB.
        DataError: The table or its columns cannot be read.
    """

    recorded = recorded_data(run_dir)
    own = data is None and "test" in recorded
    if own:  # the run's own test file, with its columns and encoding
        _check_recorded(recorded, "test")
        data, text_column = recorded["test"]["path"], text_column or recorded.get("text_column")
        label_column, encoding = label_column or recorded.get("label_column"), recorded.get("encoding", encoding)
        if log:
            log(f"data: {data} (the run's test file)")
    if data and table_format(data):
        frame = read_table(data, encoding=encoding)  # file and column errors come before TensorFlow's import
        pick_column(frame.columns, text_column, TEXT_COLUMNS, "text")
        pick_column(frame.columns, label_column, LABEL_COLUMNS, "label")
        return EvaluationData(data, frame, text_column, label_column, recorded=own)
    # what config.json recorded says whether the run was trained on IMDB (the run's name may be "imdb" for a table
    # in an imdb/ folder); runs that recorded no data fall back on run.json's dataset
    if "imdb" in recorded or (not recorded and read_status(run_dir).get("dataset") == "imdb"):
        if data is None and "imdb" in recorded:
            _check_recorded(recorded, "imdb")
        return EvaluationData(locate_imdb(data or recorded.get("imdb", {}).get("path")), split=split)
    if data:
        raise ArgumentError(
            "data",
            f"{{argument}} {data}: give a labelled {'/'.join(TABLE_SUFFIXES)} file (this run was not trained on IMDB)",
        )
    raise ArgumentError("data", "this run was trained without a test file: pass labelled data with {argument} FILE")


def _check_recorded(recorded, name):
    """Refuses to evaluate on a recorded data file that changed since the run was trained."""

    change = data_changes({name: recorded[name]}).get(name)
    if change:
        file = recorded[name]["path"]
        remedy = (
            f"to evaluate on it as it is now, pass it with {{argument}} {file}"
            if pathlib.Path(file).exists()
            else "pass labelled data with {argument} FILE"
        )
        raise ArgumentError("data", f"{change}; {remedy}")


def evaluate_run(
    run_dir=None,
    data=None,
    split="test",
    text_column=None,
    label_column=None,
    encoding="utf-8",
    log=None,
    on_table=None,
):
    """Evaluates a run (the latest under runs/ by default) on labelled data: find it, choose the data, load, score.

    The run directory and the data (see `evaluation_data`) are checked
    before the run's model, and with it TensorFlow, loads.

    Args:
        run_dir: The run directory (default: the latest complete run under runs/).
        data: A labelled CSV/TSV/JSON-lines file, or for a run trained on
            IMDB an IMDB archive or folder (default: the run's own test data).
        split: The IMDB split, for runs trained on IMDB.
        text_column: Column of the texts (default: found by name).
        label_column: Column of the labels (default: found by name).
        encoding: Text encoding of the table.
        log: Called with a line saying which data (when it is the run's own
            test file) and which run were chosen.
        on_table: Called with `(path, report)` once a table is read, before
            the model predicts: `report` is `load_table`'s count of the rows
            used and skipped.

    Returns:
        The metrics (see `evaluate_classifier`).

    Raises:
        RunError: No such run, or a run that cannot be loaded.
        ArgumentError: No labelled data to evaluate on (see `evaluation_data`).
        DataError: The data cannot be read, or its classes differ from the model's.
    """

    path = find_run(run_dir)
    chosen = evaluation_data(path, data, split, text_column, label_column, encoding, log=log)
    run = load_run(path)
    if log:
        log(run_line(path, DEFAULT_ROOT if run_dir is None else None))
    dataset, report = chosen.load(run.classifier.label_names)
    if report is not None and on_table is not None:
        on_table(chosen.path, report)
    return evaluate_classifier(run.classifier, dataset)
