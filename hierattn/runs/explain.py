"""Explaining with a run directory, in one call: texts, the rows of a file or stream, or a whole dataset.

Each function finds the run (the latest complete one under runs/ by
default), checks its input before the run's model, and with it TensorFlow,
loads, explains, and with `check=True` also measures whether the
explanations are faithful to the classifier (`check_faithfulness`: ERASER's
comprehensiveness and sufficiency, with a one-line verdict):

    from hierattn.explain import to_html
    from hierattn.runs.explain import explain_dataset, explain_file

    explanations, _ = explain_file("reviews.csv", "runs/han-imdb-20250101-120000")
    page = to_html(explanations)
    summary, report = explain_dataset("imdb", limit=1000, output="words.csv", check=True)
"""

import pathlib

from hierattn.data.text_files import iter_text_chunks, text_rows
from hierattn.errors import DataError
from hierattn.explain.corpus import documents_path, explain_corpus
from hierattn.explain.corpus_source import open_corpus
from hierattn.explain.explainer import Explainer
from hierattn.explain.faithfulness import check_faithfulness
from hierattn.runs.predict import texts_with_words
from hierattn.runs.run import load_run
from hierattn.utils.atomic import check_new_file
from hierattn.utils.jsonfile import save_json

FAITHFULNESS_FORMAT = "hierattn.faithfulness/2"  # 2: ERASER comprehensiveness and sufficiency per bin (1: drops per k)


def faithfulness_path(output):
    """Where `explain_dataset` writes its faithfulness report beside `output` (`words.csv` → `words.faithfulness.json`)."""
    output = pathlib.Path(output)
    return output.with_name(f"{output.stem}.faithfulness.json")


def explain_texts(
    texts, run_dir=None, ids=None, labels=None, check=False, random_draws=5, seed=0, log=None, label=None, network=None
):
    """Explains texts with a run's classifier (see `TextClassifier.explain`), leaving out those without words.

    A multi-label run's texts get one explanation per label explained
    (`Explainer.explain`): each text's predicted labels, or `label`.

    Args:
        texts: A list of strings.
        run_dir: The run directory (default: the latest complete run under runs/).
        ids: Optional document ids, parallel to `texts`.
        labels: Optional true labels, parallel to `texts`.
        check: Also test faithfulness on the texts (`check_faithfulness`, on
            the explanations just made).
        random_draws: Random orders per document for the check.
        seed: Seed of the check's random orders.
        log: Called with a line naming the run once it is loaded, and with
            one saying how many texts without words were left out.
        label: A multi-label run's label to explain, or a list of them
            (default: each text's predicted labels).
        network: `"auto"` or `"always"`: the classifier's `network` setting
            (None: as saved); explanations explain the decision so made.

    Returns:
        `(explanations, report)`: the `Explanation`s of the texts that have
        words, in order, and the `FaithfulnessReport` (None without `check`).

    Raises:
        RunError: No such run, or a run that cannot be loaded.
        DataError: None of the texts has a word.
        ArgumentError: A `label` the run's classifier does not have (or
            one given to a run that is not multi-label).
    """
    classifier = _classifier(load_run(run_dir, log=log), network)
    kept = texts_with_words(classifier, texts)
    if len(kept) < len(texts) and log:
        log(f"skipped {len(texts) - len(kept)} text(s) without words (only markup or spaces)")
    texts, ids, labels = ([values[i] for i in kept] if values is not None else None for values in (texts, ids, labels))
    # the check ranks words by attention too: where the network would read, also where the n-gram part decided alone
    explanations = classifier.explain(texts, ids=ids, labels=labels, label=label, attention=check)
    report = None
    if check:
        report = check_faithfulness(
            classifier, explanations=explanations, random_draws=random_draws, seed=seed, progress=len(texts) > 50
        )
    return explanations, report


def explain_file(
    source,
    run_dir=None,
    text_column=None,
    encoding=None,
    stream=None,
    check=False,
    random_draws=5,
    seed=0,
    log=None,
    label=None,
    network=None,
):
    """Explains the non-blank rows of a file or stream, with their ids and labels when a table has them.

    The input is read, and checked, before the run is looked for.

    Args:
        source: A CSV/TSV/JSON-lines file (texts from `text_column`, ids and
            labels from columns found by name) or a text file (one text per
            line); None with `stream`.
        run_dir: The run directory (default: the latest complete run under runs/).
        text_column: Column of the texts in a table file (default: found by name).
        encoding: Text encoding of the file or stream (default UTF-8).
        stream: Read lines from this binary stream (e.g. standard input's
            buffer) instead of `source`.
        check, random_draws, seed, log, label, network: As for `explain_texts`.

    Returns:
        `(explanations, report)`, as `explain_texts` returns them.

    Raises:
        DataError: The input is missing or cannot be read, or every row is blank.
        RunError: No such run, or a run that cannot be loaded.
    """
    _, rows = text_rows(iter_text_chunks(source, text_column, stream=stream, encoding=encoding))
    rows = [row for row in rows if row[0].strip()]
    if not rows:
        raise DataError(f"no text to explain in {source or 'standard input'} (every line is blank)")
    texts, ids, labels = (list(column) for column in zip(*rows))
    return explain_texts(texts, run_dir, ids, labels, check, random_draws, seed, log, label, network)


def explain_dataset(
    dataset,
    run_dir=None,
    split="test",
    data=None,
    text_column=None,
    limit=None,
    seed=0,
    encoding=None,
    top_k=10,
    output=None,
    check=False,
    random_draws=5,
    log=None,
    label=None,
    network=None,
):
    """Each predicted class's words by evidence and attention over a whole dataset (`explain_corpus`), and a check.

    A multi-label run's words are ranked per label, over the documents
    where the label is predicted (`label`: only those labels).

    The files to write and the dataset are checked before the run is looked
    for, and the run before its model loads.

    Args:
        dataset: `"imdb"`, or a CSV/TSV/JSON-lines file or text file (see `open_corpus`).
        run_dir: The run directory (default: the latest complete run under runs/).
        split: The IMDB split (`"test"`, `"train"` or `"unsup"`).
        data: IMDB archive or folder (default: the `data/` cache, else download).
        text_column: Text column of a table file.
        limit: Only this many documents: for IMDB a seeded random sample, for
            a file its first rows.
        seed: Seed of the IMDB sample and of the check's random orders.
        encoding: Text encoding of a file (default UTF-8).
        top_k: Words of each document's top list (by evidence).
        output: The word table (CSV) to write, beside it each document's top
            words (`documents_path`) and with `check` the faithfulness report
            (`faithfulness_path`); none may exist. None: nothing is written.
        check: Also test faithfulness on the documents (`check_faithfulness`;
            the documents are explained a second time for it, as
            `explain_corpus` keeps only its counts).
        random_draws: Random orders per document for the check.
        log: Called with a line naming the run once it is loaded.
        label: A multi-label run's label, or a list of them: rank (and
            check) only these (default: every label).
        network: As for `explain_texts`.

    Returns:
        `(summary, report)`: the `CorpusSummary` (its `outputs` are the
        tables written) and the `FaithfulnessReport` (None without `check`).

    Raises:
        ArgumentError: A file to write exists, or its folder does not.
        HierattnError: No such dataset, or one that cannot be read.
        RunError: No such run, or a run that cannot be loaded.
    """
    if output:
        for path in (output, documents_path(output), *([faithfulness_path(output)] if check else [])):
            check_new_file(path)
    source = open_corpus(dataset, split, data, text_column, limit, seed, encoding=encoding)
    run = load_run(run_dir, log=log)
    _classifier(run, network)
    if check:  # the check needs the texts a second time
        source.texts = list(source.texts)
    explainer = Explainer(run)
    explainer.label_indices(label)  # a label the run does not have is refused before any document is explained
    summary = explain_corpus(
        explainer, source.texts, output, source.labels, source.ids, top_k, total=source.total, label=label
    )
    report = None
    if check:
        report = check_faithfulness(
            run.classifier, source.texts, random_draws=random_draws, seed=seed, progress=True, label=label
        )
        if output:
            save_json(faithfulness_path(output), FAITHFULNESS_FORMAT, report.to_dict(), indent=2, overwrite=False)
    return summary, report


def _classifier(run, network):
    """The run's classifier, its `network` setting `network` (when given)."""
    if network is not None:
        run.classifier.network = network
    return run.classifier


__all__ = ["explain_dataset", "explain_file", "explain_texts", "faithfulness_path"]
