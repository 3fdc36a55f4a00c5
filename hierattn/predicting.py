"""Predicting with a run directory: one text, or every text of a file or stream into a CSV.

Each function finds the run (the latest complete one under runs/ by
default), checks its input before the run's model, and with it TensorFlow,
loads, then predicts:

    from hierattn.predicting import predict_file, predict_text

    predict_text("A superb film.", "runs/han-imdb-20250101-120000")  # {"neg": 0.03, "pos": 0.97}
    predict_file("reviews.csv", "predictions.csv", text_column="review")
"""

import os

from hierattn.atomic import check_new_file
from hierattn.runs import load_run
from hierattn.scoring import iter_text_chunks, score_to_csv, texts_with_words


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
    classifier = load_run(run_dir, log=log).classifier
    texts_with_words(classifier, [text])
    probabilities = classifier.predict([text], verbose=0)[0]
    return {name: float(p) for name, p in zip(classifier.label_names, probabilities)}


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
    classifier = load_run(run_dir, log=log).classifier
    return score_to_csv(classifier, chunks, output, progress=progress)


__all__ = ["predict_file", "predict_text"]
