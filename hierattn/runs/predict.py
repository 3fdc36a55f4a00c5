"""Predicting with a run directory: one text, or every text of a file or stream into a CSV.

Each function finds the run (the latest complete one under runs/ by
default), checks its input before the run's model loads, then predicts with
the run's bundle on `hierattn.runtime` (without TensorFlow), or its Keras
classifier when it has none (`hierattn.runs.export.load_model`):

    from hierattn.runs.predict import predict_file, predict_text

    predict_text("A superb film.", "runs/han-imdb-20250101-120000")  # {"neg": 0.03, "pos": 0.97}
    predict_one("A superb film.", top_k=1)  # {"label": "pos", "probabilities": {...}, "top_k": [["pos", 0.97]]}
    predict_file("reviews.csv", "predictions.csv", text_column="review")

A multi-label run's model (`multi_label` true) predicts each text's label
set, the labels over their thresholds: `predict_one` gives `labels` (a
list) instead of `label`, and the CSV's `predicted` cell the labels joined
by the run's separator (config.json's `data.label_separator`, else
`hierattn.defaults.MULTILABEL["separator"]`).
"""

import contextlib
import csv
import itertools
import os

import numpy as np

from hierattn.data.ids import take_documents, token_ids
from hierattn.data.progress import tqdm
from hierattn.data.text_files import iter_text_chunks
from hierattn.defaults import MULTILABEL
from hierattn.errors import DataError
from hierattn.runs.data_record import recorded_data
from hierattn.runs.directory import DEFAULT_ROOT, find_complete_run
from hierattn.runs.export import load_model
from hierattn.runtime.predictor import check_k, over_thresholds
from hierattn.runtime.predictor import top_k as most_probable
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
    return predict_one(text, run_dir, log=log)["probabilities"]


def predict_one(text, run_dir=None, top_k=None, log=None):
    """One text's prediction: its class (or a multi-label model's label set) and every class's probability.

    Args:
        text: A string.
        run_dir: The run directory (default: the latest complete run under runs/).
        top_k: Also rank the `top_k` most probable classes (labels).
        log: Called with a line naming the run once it is loaded.

    Returns:
        A dict: `label` (the most probable class) or, for a multi-label
        model, `labels` (those over their thresholds, in the model's order,
        possibly none) and `thresholds` (`{label: threshold}`);
        `probabilities` (`{class: probability}`, in the model's order); and
        with `top_k`, `top_k`: `[class, probability]` pairs, most probable
        first, `min(top_k, classes)` of them.

    Raises:
        ArgumentError: `top_k` is not a whole number of at least 1.
        RunError: No such run, or a run that cannot be loaded.
        DataError: The text has no word to read (only markup, symbols or spaces).
    """
    if top_k is not None:
        check_k(top_k, "top_k")
    model = load_model(run_dir, log=log)
    texts_with_words(model, [text])
    probabilities = model.predict_ids(encode(model, [text]))
    (answer,) = answers(model, probabilities, top_k)
    return answer


def answers(model, probabilities, k=None):
    """What a model says of each row of its `probabilities`, as `predict_one` gives it (`top_k` as lists).

    Args:
        model: A trained `TextClassifier`, or a `hierattn.runtime.Predictor`.
        probabilities: Rows of class probabilities, columns in the model's
            `label_names` order (no NaN).
        k: With a number, each answer's `top_k`.
    """
    names = [str(name) for name in model.label_names]
    predicted = predicted_labels(model, probabilities)
    thresholds = dict(zip(names, model.thresholds)) if is_multi_label(model) else None
    ranked = most_probable(probabilities, names, k) if k is not None else [None] * len(probabilities)
    result = []
    for row, labels, best in zip(probabilities, predicted, ranked):
        answer = {"labels": labels, "thresholds": thresholds} if thresholds else {"label": labels}
        answer["probabilities"] = {name: float(p) for name, p in zip(names, row)}
        if best is not None:
            answer["top_k"] = [[name, p] for name, p in best]
        result.append(answer)
    return result


def is_multi_label(model):
    """Whether `model` (a `TextClassifier` or a `hierattn.runtime.Predictor`) is a multi-label classifier's."""
    return bool(getattr(model, "multi_label", False))


def predicted_labels(model, probabilities):
    """Each row's prediction: the most probable class, or a multi-label model's labels over their thresholds.

    A row of NaN (a text without words, `score_texts`) gives None.

    Returns:
        One per row: a class name, or for a multi-label model a list of
        label names in the model's order (possibly empty).
    """
    names = [str(name) for name in model.label_names]
    probabilities = np.asarray(probabilities)
    if len(probabilities) == 0:
        return []
    missing = np.isnan(probabilities[:, 0])
    filled = np.nan_to_num(probabilities)
    if is_multi_label(model):
        over = over_thresholds(filled, model.thresholds)
        labels = [[names[j] for j in np.flatnonzero(row)] for row in over]
    else:
        labels = [names[i] for i in filled.argmax(axis=1)]
    return [None if gone else label for label, gone in zip(labels, missing)]


def label_separator(run_dir=None, root=DEFAULT_ROOT):
    """What joins a multi-label run's labels in a table: config.json's `data.label_separator`, else the default's."""
    return recorded_data(find_complete_run(run_dir, root)).get("label_separator") or MULTILABEL["separator"]


def predict_file(
    source,
    output,
    run_dir=None,
    text_column=None,
    encoding=None,
    stream=None,
    progress=True,
    log=None,
    top_k=None,
):
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
        top_k: Also write each text's `top_k` most probable classes
            (columns `top_1`, `p_top_1`, ...).

    Returns:
        The number of texts scored (those without words are not counted).

    Raises:
        ArgumentError: `output` exists, or its folder does not; `top_k` is
            not a whole number of at least 1.
        DataError: The input is missing or cannot be read, or holds no text.
        RunError: No such run, or a run that cannot be loaded.
    """
    if top_k is not None:
        check_k(top_k, "top_k")
    if isinstance(output, (str, os.PathLike)):
        check_new_file(output)
    chunks = iter_text_chunks(source, text_column, stream=stream, encoding=encoding)  # reads the first chunk
    model = load_model(run_dir, log=log)
    separator = label_separator(run_dir) if is_multi_label(model) else None
    return score_to_csv(model, chunks, output, progress=progress, top_k=top_k, separator=separator)


__all__ = ["predict_file", "predict_one", "predict_text"]


def encode(model, texts):
    """The ids `model` reads for `texts`: a `hierattn.runtime.Predictor`'s, or a `TextClassifier` preprocessor's."""
    return model.preprocess(texts) if hasattr(model, "preprocess") else model.preprocessor(texts)


def score_to_csv(classifier, chunks, output, progress=True, top_k=None, separator=None):
    """Writes one CSV row per text: row number, id and label (if a table has them), prediction, probabilities.

    The columns: `row`, `id` and `label` when a table has them, `predicted`,
    one `p_<class>` per class, and with `top_k` the ranked classes `top_1,
    p_top_1, top_2, p_top_2, ...` (`min(top_k, classes)` pairs, most
    probable first). A multi-label model's `predicted` is its label set,
    joined by `separator` (empty when no label is over its threshold).
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
        top_k: With a number, the ranked columns.
        separator: What joins a multi-label model's labels (default
            `hierattn.defaults.MULTILABEL["separator"]`).

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
    if top_k is not None:
        check_k(top_k, "top_k")
    ranks = 0 if top_k is None else min(top_k, len(names))
    header = ["row", *carried, "predicted"] + [f"p_{n}" for n in names] + top_k_columns(ranks)
    to_file = isinstance(output, (str, os.PathLike))
    separator = MULTILABEL["separator"] if separator is None else separator
    with atomic_open(output, newline="", overwrite=False) if to_file else contextlib.nullcontext(output) as handle:
        return _score_rows(classifier, chunks, handle, header, (names, ranks, separator), carried, progress)


def top_k_columns(k):
    """The ranked columns of `k` classes: `["top_1", "p_top_1", ..., "top_k", "p_top_k"]`."""
    return [column for rank in range(1, k + 1) for column in (f"top_{rank}", f"p_top_{rank}")]


def _score_rows(classifier, chunks, handle, header, settings, carried, progress):
    names, ranks, separator = settings
    count = rows = 0
    writer = csv.writer(handle)
    writer.writerow(header)
    with tqdm(desc="scoring", unit="doc", disable=not progress) as bar:
        for texts in chunks:
            probabilities = score_texts(classifier, texts)
            predicted = predicted_labels(classifier, probabilities)
            ranked = most_probable(np.nan_to_num(probabilities), names, ranks) if ranks else [[]] * len(texts)
            for i, row in enumerate(probabilities):
                if predicted[i] is None:
                    cells = [""] * (1 + len(names) + 2 * ranks)
                else:
                    label = predicted[i] if isinstance(predicted[i], str) else separator.join(predicted[i])
                    cells = [label, *[f"{p:.6f}" for p in row]]
                    cells += [cell for name, p in ranked[i] for cell in (name, f"{p:.6f}")]
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
