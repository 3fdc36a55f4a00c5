"""Predicting with a run directory: one text, or every text of a file or stream into a CSV.

Each function finds the run once (`hierattn.runs.run.Run.open`: the latest
complete one under runs/ by default, or a `Run` given), checks its input
before the run's model loads, then predicts with the run's bundle on
`hierattn.runtime` (without TensorFlow), or its Keras classifier when it has
none (`Run.predictor`); the rows are `hierattn.runs.table.PredictionTable`'s:

    from hierattn.runs.predict import predict_file, predict_text

    predict_text("A superb film.", "runs/han-imdb-20250101-120000")  # {"neg": 0.03, "pos": 0.97}
    predict_one("A superb film.", top_k=1)  # {"label": "pos", "probabilities": {...}, "top_k": [["pos", 0.97]]}
    predict_file("reviews.csv", "predictions.csv", text_column="review")

A multi-label run's model (`multi_label` true) predicts each text's label
set, the labels over their thresholds: `predict_one` gives `labels` (a
list) instead of `label`, and the CSV's `predicted` cell the labels joined
by the run's separator (`Run.label_separator`).
"""

import contextlib
import csv
import itertools
import os

from hierattn.data.progress import tqdm
from hierattn.data.text_files import iter_text_chunks
from hierattn.errors import DataError
from hierattn.policy import PredictOptions
from hierattn.runs.run import Run
from hierattn.runs.table import PredictionTable, left_line, prediction_columns, wordless_line
from hierattn.utils.atomic import atomic_open, check_new_file


def predict_text(text, run_dir=None, log=None, network=None):
    """The class probabilities of one text.

    Args:
        text: A string.
        run_dir: The run directory, or a `Run` (default: the latest complete run under runs/).
        log: Called with a line naming the run once it is loaded, and with
            the summary of texts without words (`score_to_csv`).
        network: `"auto"` (the default): the network reads the text only when
            the n-gram part is not sure of it; `"always"`: it reads it.

    Returns:
        A dict from each class name, in the model's order, to its probability.

    Raises:
        RunError: No such run, or a run that cannot be loaded.
        DataError: The text has no word to read (only markup, symbols or spaces).
    """
    return predict_one(text, run_dir, log=log, network=network)["probabilities"]


def predict_one(text, run_dir=None, top_k=None, log=None, network=None, min_confidence=None, options=None):
    """One text's prediction: its class (or a multi-label model's label set) and every class's probability.

    Args:
        text: A string.
        run_dir: The run directory (default: the latest complete run under runs/).
        top_k: Also rank the `top_k` most probable classes (labels).
        log: Called with a line naming the run once it is loaded, and with
            the summary of texts without words (`score_to_csv`).
        network: `"auto"` or `"always"` (`Run.predictor`).
        min_confidence: A probability: a decision less sure than it is no
            answer (`hierattn.policy.DecisionPolicy.answered`).
        options: The three above as one `hierattn.policy.PredictOptions`, checked already (instead of them).

    Returns:
        A dict: `label` (the most probable class) or, for a multi-label
        model, `labels` (those over their thresholds, in the model's order,
        possibly none) and `thresholds` (`{label: threshold}`);
        `probabilities` (`{class: probability}`, in the model's order); and
        with `top_k`, `top_k`: `[class, probability]` pairs, most probable
        first, `min(top_k, classes)` of them. With `min_confidence`, also
        `answered` (false: `label` is None, the text left for a person) and
        `confidence` (the probability that the decision is right).

    Raises:
        ArgumentError: `top_k` is not a whole number of at least 1, or
            `min_confidence` not a number in [0, 1].
        RunError: No such run, or a run that cannot be loaded.
        DataError: The text has no word to read (only markup, symbols or spaces).
    """
    options = options or PredictOptions(top_k, min_confidence, network)
    model = _model(Run.open(run_dir), log, options)
    texts_with_words(model, [text])
    return PredictionTable.of(model, model.predict_texts([text]), options).answers()[0]


def load_predictor(run_dir=None, log=None, options=None):
    """The run's model to predict with (`Run.predictor`), the run found once; `log` is told which run answers.

    `options`: a `hierattn.policy.PredictOptions`, whose `network` the model predicts with.
    """
    return _model(Run.open(run_dir), log, options or PredictOptions())


def _model(run, log, options):
    model = run.predictor(log=log, network=options.network)
    if log:
        log(run.line)
    return model


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
    network=None,
    min_confidence=None,
    options=None,
):
    """Scores every text of a file (or of a stream) into a CSV of predictions (see `score_to_csv`).

    The output file and the start of the input are checked before the run
    is looked for, and the run before its model loads.

    Args:
        source: A CSV/TSV/JSON-lines file (texts from `text_column`) or a
            text file (one text per line); None with `stream`.
        output: Path of the CSV (it must not exist), or a writable text stream.
        run_dir: The run directory, or a `Run` (default: the latest complete run under runs/).
        text_column: Column of the texts in a table file (default: found by name).
        encoding: Text encoding of the file or stream (default UTF-8).
        stream: Read lines from this binary stream (e.g. standard input's
            buffer) instead of `source`.
        progress: Show a progress bar.
        log: Called with a line naming the run once it is loaded, and with
            the summary of texts without words (`score_to_csv`).
        top_k: Also write each text's `top_k` most probable classes
            (columns `top_1`, `p_top_1`, ...).
        network: `"auto"` or `"always"` (`Run.predictor`).
        min_confidence: A probability: a decision less sure than it is no
            answer (an empty `predicted`, and a `confidence` column); `log`
            is told how many texts were left for a person.
        options: `top_k`, `network` and `min_confidence` as one `hierattn.policy.PredictOptions` (instead).

    Returns:
        The number of texts scored (those without words are not counted).

    Raises:
        ArgumentError: `output` exists, or its folder does not; `top_k` is
            not a whole number of at least 1; `min_confidence` is not a
            number in [0, 1].
        DataError: The input is missing or cannot be read, or holds no text.
        RunError: No such run, or a run that cannot be loaded.
    """
    options = options or PredictOptions(top_k, min_confidence, network)
    if isinstance(output, (str, os.PathLike)):
        check_new_file(output)
    chunks = iter_text_chunks(source, text_column, stream=stream, encoding=encoding)  # reads the first chunk
    run = Run.open(run_dir)
    model = _model(run, log, options)
    return score_to_csv(model, chunks, output, progress, options, run.label_separator, log)  # joins a label set


__all__ = ["predict_file", "predict_one", "predict_text"]


def score_to_csv(classifier, chunks, output, progress=True, options=None, separator=None, log=None):
    """Writes one CSV row per text: row number, id and label (if a table has them), prediction, probabilities.

    The columns: `row`, the id and label columns when a table has them (by its names for them), `predicted`,
    with `min_confidence` `confidence` (`predicted` empty where it is under
    it), one `p_<class>` per class, and with `top_k` the ranked classes `top_1,
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
        classifier: A `hierattn.runtime.TextPredictor`: a run's bundle, or its Keras classifier.
        chunks: Iterable of lists of texts (see `iter_text_chunks`).
        output: Path of the CSV, or a writable text stream.
        progress: Show a progress bar.
        options: A `hierattn.policy.PredictOptions`: with `top_k`, the ranked columns; with `min_confidence`,
            a decision less sure than it is no answer.
        separator: What joins a multi-label model's labels (default
            `hierattn.defaults.MULTILABEL["separator"]`).
        log: Told in one line how many texts had no words (when some had
            none), and with `min_confidence` how many were left for a person.

    Returns:
        The number of texts scored (blank ones not counted).

    Raises:
        DataError: Every text was blank (no file is left behind).
    """
    options = options or PredictOptions()
    chunks = iter(chunks)
    first = next(chunks, None)
    chunks = itertools.chain([] if first is None else [first], chunks)
    carried = list(getattr(first, "columns", {}))  # "id", "label"
    named = [first.names[role] for role in carried]  # as the table names them ("labels", "review_id")
    names = [str(n) for n in classifier.label_names]
    header = ["row", *named, *prediction_columns(names, options.top_k, options.min_confidence is not None)]
    to_file = isinstance(output, (str, os.PathLike))
    with atomic_open(output, newline="", overwrite=False) if to_file else contextlib.nullcontext(output) as handle:
        count, left, rows = _score_rows(classifier, chunks, handle, header, (options, separator), carried, progress)
    if rows > count and log:
        log(wordless_line(rows - count, rows))
    if options.min_confidence is not None and log:
        log(left_line(left, count, options.min_confidence))
    return count


def _score_rows(classifier, chunks, handle, header, settings, carried, progress):
    options, separator = settings
    count = rows = left = 0
    writer = csv.writer(handle)
    writer.writerow(header)
    with tqdm(desc="scoring", unit="doc", disable=not progress) as bar:
        for texts in chunks:
            probabilities = score_texts(classifier, texts)
            table = PredictionTable.of(classifier, probabilities, options, separator)
            for i, cells in enumerate(table.csv_cells()):
                writer.writerow([rows + i, *(texts.columns[c][i] for c in carried), *cells])
            rows += len(texts)
            count, left = count + table.scored, left + table.left
            bar.update(len(texts))
    if count == 0:
        raise DataError("no text to score: every text is blank or has no words")
    return count, left, rows


def score_texts(classifier, texts, workers=None, batch_size=32):
    """The class probabilities of `texts`, one row each, NaN for a text without words.

    A text that is blank or only markup has nothing for a model to read, so
    its row is NaN rather than what the model says of padding.

    Args:
        classifier: A `hierattn.runtime.TextPredictor`: a run's bundle, or its Keras classifier.
        texts: A list of strings.
        workers: Processes that tokenize many texts (`predict_texts`'s;
            by default a bundle tokenizes in this process, overlapping the
            network, and a Keras classifier in one process per core).
        batch_size: Documents per call of the model.

    Returns:
        A float32 array `(len(texts), classes)`, columns in the model's
        `label_names` order.
    """
    return classifier.predict_texts(texts, batch_size=batch_size, workers=workers)


def texts_with_words(classifier, texts):
    """The positions of the texts that have a word for `classifier` to read.

    Args:
        classifier: A `hierattn.runtime.TextPredictor`: a run's bundle, or its Keras classifier.
        texts: A list of strings.

    Returns:
        The positions, in order, of the texts that are not only markup,
        symbols or spaces.

    Raises:
        DataError: None of the texts has a word.
    """
    kept = [i for i, text in enumerate(texts) if classifier.has_words(text)]
    if not kept:
        raise DataError(
            ("the text has no word" if len(texts) == 1 else "none of the texts has a word")
            + " to read (only markup, symbols or spaces)"
        )
    return kept
