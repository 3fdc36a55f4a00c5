"""Predicting with a run directory: one text, or every text of a file or stream into a CSV.

Each function finds the run (the latest complete one under runs/ by
default), checks its input before the run's model loads, then predicts with
the run's bundle on `hierattn.runtime` (without TensorFlow), or its Keras
classifier when it has none (`hierattn.runs.export.load_model`):

    from hierattn.runs.predict import predict_file, predict_text

    predict_text("A superb film.", "runs/han-imdb-20250101-120000")  # {"neg": 0.03, "pos": 0.97}
    predict_file("reviews.csv", "predictions.csv", text_column="review")
"""

import contextlib
import csv
import itertools
import os

import numpy as np

from hierattn.data.ids import take_documents, token_ids
from hierattn.data.progress import tqdm
from hierattn.data.text_files import iter_text_chunks
from hierattn.errors import DataError
from hierattn.runs.export import load_model
from hierattn.utils.atomic import atomic_open, check_new_file


def predict_text(text, run_dir=None, log=None):
    """The class probabilities of one text.

    Args:
        text: A string.
        run_dir: The run directory (default: the latest complete run under runs/).
        log: Called with a line naming the run once it is loaded.

    Returns:
        A dict from each class name, in the model's order, to its probability.

    Raises:
        RunError: No such run, or a run that cannot be loaded.
        DataError: The text has no word to read (only markup, symbols or spaces).
    """
    model = load_model(run_dir, log=log)
    texts_with_words(model, [text])
    probabilities = model.predict_ids(encode(model, [text]))[0]
    return {name: float(p) for name, p in zip(model.label_names, probabilities)}


def predict_file(source, output, run_dir=None, text_column=None, encoding=None, stream=None, progress=True, log=None):
    """Scores every text of a file (or of a stream) into a CSV of predictions (see `score_to_csv`).

    The output file and the start of the input are checked before the run
    is looked for, and the run before its model loads.

    Args:
        source: A CSV/TSV/JSON-lines file (texts from `text_column`) or a
            text file (one text per line); None with `stream`.
        output: Path of the CSV (it must not exist), or a writable text stream.
        run_dir: The run directory (default: the latest complete run under runs/).
        text_column: Column of the texts in a table file (default: found by name).
        encoding: Text encoding of the file or stream (default UTF-8).
        stream: Read lines from this binary stream (e.g. standard input's
            buffer) instead of `source`.
        progress: Show a progress bar.
        log: Called with a line naming the run once it is loaded.

    Returns:
        The number of texts scored (those without words are not counted).

    Raises:
        ArgumentError: `output` exists, or its folder does not.
        DataError: The input is missing or cannot be read, or holds no text.
        RunError: No such run, or a run that cannot be loaded.
    """
    if isinstance(output, (str, os.PathLike)):
        check_new_file(output)
    chunks = iter_text_chunks(source, text_column, stream=stream, encoding=encoding)  # reads the first chunk
    return score_to_csv(load_model(run_dir, log=log), chunks, output, progress=progress)


__all__ = ["predict_file", "predict_text"]


def encode(model, texts):
    """The ids `model` reads for `texts`: a `hierattn.runtime.Predictor`'s, or a `TextClassifier` preprocessor's."""
    return model.preprocess(texts) if hasattr(model, "preprocess") else model.preprocessor(texts)


def score_to_csv(classifier, chunks, output, progress=True):
    """Writes one CSV row per text: row number, id and label (if a table has them), prediction, probabilities.

    Texts without words (blank, or only markup) keep their row, so rows line
    up with the input, with empty prediction cells: a model has nothing to
    say about them.

    Texts are read, encoded and scored one chunk at a time, so memory does
    not grow with the input. The file is written under a temporary name and
    moved into place at the end.

    Args:
        classifier: A trained `TextClassifier`, or a `hierattn.runtime.Predictor`.
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
            probabilities = score_texts(classifier, texts)
            for i, row in enumerate(probabilities):
                cells = (
                    ["", *[""] * len(names)]
                    if np.isnan(row[0])
                    else [names[int(row.argmax())], *[f"{p:.6f}" for p in row]]
                )
                writer.writerow([rows + i, *(texts.columns[c][i] for c in carried), *cells])
            rows += len(texts)
            count += int((~np.isnan(probabilities[:, 0])).sum())
            bar.update(len(texts))
    if count == 0:
        raise DataError("no text to score: every text is blank or has no words")
    return count


def score_texts(classifier, texts, workers=None, batch_size=32):
    """The class probabilities of `texts`, one row each, NaN for a text without words.

    A text that is blank or only markup has nothing for a model to read, so
    its row is NaN rather than what the model says of padding.

    Args:
        classifier: A trained `TextClassifier`, or a `hierattn.runtime.Predictor`.
        texts: A list of strings.
        workers: Processes that tokenize many texts (a `Predictor`'s;
            default: one per core; 1 tokenizes in this process).
        batch_size: Documents per call of the model.

    Returns:
        A float32 array `(len(texts), classes)`, columns in the model's
        `label_names` order.
    """
    x = (
        classifier.preprocess(texts, workers=workers)
        if hasattr(classifier, "preprocess")
        else encode(classifier, texts)
    )
    ids = token_ids(x)
    filled = np.flatnonzero(ids.reshape(len(ids), -1).any(axis=1))
    probabilities = np.full((len(texts), len(classifier.label_names)), np.nan, np.float32)
    if len(filled):
        probabilities[filled] = classifier.predict_ids(take_documents(x, filled), batch_size=batch_size)
    return probabilities


def texts_with_words(classifier, texts):
    """The positions of the texts that have a word for `classifier` to read.

    Args:
        classifier: A trained `TextClassifier`, or a `hierattn.runtime.Predictor`.
        texts: A list of strings.

    Returns:
        The positions, in order, of the texts that are not only markup,
        symbols or spaces.

    Raises:
        DataError: None of the texts has a word.
    """
    has_words = getattr(classifier, "preprocessor", classifier).has_words
    kept = [i for i, text in enumerate(texts) if has_words(text)]
    if not kept:
        raise DataError(
            ("the text has no word" if len(texts) == 1 else "none of the texts has a word")
            + " to read (only markup, symbols or spaces)"
        )
    return kept
