"""Evaluating a trained run on labelled data (the data chosen and checked before the run loads)."""

import pathlib

import numpy as np

from hierattn.calibration import score
from hierattn.data import LabelMap, load_imdb, load_table, locate_imdb
from hierattn.data.tables import (
    LABEL_COLUMNS,
    TEXT_COLUMNS,
    pick_column,
    read_table,
    table_format,
)
from hierattn.data.text_files import TABLE_SUFFIXES
from hierattn.decision import check_min_confidence
from hierattn.defaults import MULTILABEL
from hierattn.errors import ArgumentError, DataError
from hierattn.kinds import kind_of
from hierattn.metrics import label_metrics
from hierattn.runs.data_record import data_changes
from hierattn.runs.run import Run
from hierattn.tuning import outcomes

# The scores of the whole combination shown beside the classifier's.
SCORES = ("accuracy", "micro_f1", "macro_f1")


def evaluate_classifier(classifier, dataset, batch_size=32, progress=True, min_confidence=None, policy=None):
    """Accuracy, macro-F1 and confusion matrix of a classifier on a labelled `TextDataset` (in its classes).

    A multi-label classifier: `hierattn.metrics.multilabel_metrics` of the labels over its thresholds.
    With a cascade (`TextClassifier.cascade`), also `network_read` (the
    share of documents the network read) and `whole` (the scores with the
    network reading every document); with an n-gram part, `calibration`
    (`TextClassifier.calibration_report`: ECE, log-loss, Brier score and
    accuracy by coverage, before and after the classifier's temperature).
    With `min_confidence`, `abstention` (`abstention`'s report). `policy`: the
    `DecisionPolicy` to decide with (None: the classifier's), e.g. `policy.for_network("always")`.
    The network reads the documents once; every score comes from that pass (`hierattn.tuning.outcomes`).
    """
    names = list(classifier.label_names)
    if list(dataset.label_map.names) != names:
        raise DataError(f"the data's classes {dataset.label_map.names} differ from the model's {names}")
    data, model = kind_of(dataset), kind_of(classifier)
    if data is not model:
        raise DataError(
            f"the data has {data.labels_are}, the model is {'' if model.multi_label else 'not '}multi-label"
        )
    policy = policy or classifier.policy
    x = classifier.preprocess(dataset.texts, progress=progress)
    found = outcomes(policy, *classifier.part_outputs(x, batch_size, progress), dataset.labels)
    probabilities = found["probabilities"]
    metrics = label_metrics(dataset.labels, policy.ids(probabilities), names)
    if found["share"] is not None:
        scores = label_metrics(dataset.labels, policy.ids(found["whole"]), names)
        metrics["network_read"] = found["share"]
        metrics["whole"] = {key: scores[key] for key in SCORES if key in scores}
    if found["calibration"] is not None:
        metrics["calibration"] = found["calibration"]
    if min_confidence is not None:
        metrics["abstention"] = abstention(policy, probabilities, dataset.labels, min_confidence)
    return metrics


def abstention(decision, probabilities, labels, min_confidence):
    """What a minimum confidence does on labelled documents: how many it answers, and how well.

    Args:
        decision: The classifier's `hierattn.policy.DecisionPolicy`.
        probabilities: Its probabilities of the documents.
        labels: Their class ids, or multi-hot rows.
        min_confidence: The probability under which a decision is no answer.

    Returns:
        `{"min_confidence", "answered", "left", "coverage", "accuracy"}` (for
        a multi-label classifier `micro_f1` instead of `accuracy`): the
        documents answered, those with words left for a person, the share
        of all answered, and the score of the answered ones (NaN if none).

    >>> from hierattn.policy import DecisionPolicy
    >>> p = np.array([[0.95, 0.05], [0.6, 0.4], [0.2, 0.8], [np.nan, np.nan]])   # the last without words
    >>> abstention(DecisionPolicy(["neg", "pos"]), p, np.array([0, 1, 0, 0]), 0.75)
    {'min_confidence': 0.75, 'answered': 2, 'left': 1, 'coverage': 0.5, 'accuracy': 0.5}
    """
    check_min_confidence(min_confidence)
    answered = decision.answered(probabilities, min_confidence)
    found = score(decision.ids(np.asarray(probabilities)[answered]), np.asarray(labels)[answered], decision.multi_label)
    return {
        "min_confidence": float(min_confidence),
        "answered": int(answered.sum()),
        "left": int((~answered & ~np.isnan(np.asarray(probabilities, float)).any(axis=1)).sum()),
        "coverage": round(float(answered.mean()), 5) if len(answered) else float("nan"),
        kind_of(decision).metric: round(found, 5),
    }


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

    def __init__(
        self,
        path,
        frame=None,
        text_column=None,
        label_column=None,
        split="test",
        recorded=False,
        label_separator=MULTILABEL["separator"],
    ):
        self.path, self.frame, self.split, self.recorded = path, frame, split, recorded
        self.text_column, self.label_column, self.label_separator = text_column, label_column, label_separator

    def load(self, label_names, multi_label=False):
        """The data in the model's classes.

        Args:
            label_names: The classifier's `label_names`.
            multi_label: Whether the classifier is multi-label: each label
                cell then holds labels joined by `label_separator`.

        Returns:
            `(dataset, report)`: a labelled `TextDataset`, and for a table
            `load_table`'s report of the rows it used (None for IMDB).
        """

        if self.frame is None:
            return load_imdb(self.path, splits=(self.split,))[self.split], None
        separator = self.label_separator if multi_label else None
        return load_table(
            self.frame, self.text_column, self.label_column, label_map=LabelMap(label_names), label_separator=separator
        )


def evaluation_data(run, data=None, split="test", text_column=None, label_column=None, encoding="utf-8", log=None):
    """The labelled data to evaluate `run` on, chosen and checked before its model loads.

    Without `data`: the run's own test file, with the columns and encoding
    it was trained with, or for a run trained on IMDB its IMDB source, as
    config.json records them; a recorded file that changed since is refused.
    A table's file and columns are read and checked here.

    Args:
        run: The `hierattn.runs.run.Run` (or its directory).
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

    run = run if isinstance(run, Run) else Run(run)
    recorded = run.data
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
        return EvaluationData(data, frame, text_column, label_column, recorded=own, label_separator=run.label_separator)
    # what config.json recorded says whether the run was trained on IMDB (the run's name may be "imdb" for a table
    # in an imdb/ folder); runs that recorded no data fall back on run.json's dataset
    if "imdb" in recorded or (not recorded and run.status.get("dataset") == "imdb"):
        if data is None and "imdb" in recorded:
            _check_recorded(recorded, "imdb")
        return EvaluationData(locate_imdb(data or recorded.get("imdb", {}).get("path")), split=split)
    if data:
        raise ArgumentError(
            f"{{argument}} {data}: give a labelled {'/'.join(TABLE_SUFFIXES)} file (this run was not trained on IMDB)",
            argument="data",
        )
    raise ArgumentError(
        "this run was trained without a test file: pass labelled data with {argument} FILE", argument="data"
    )


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
        raise ArgumentError(f"{change}; {remedy}", argument="data")


def evaluate_run(
    run_dir=None,
    data=None,
    split="test",
    text_column=None,
    label_column=None,
    encoding="utf-8",
    log=None,
    on_table=None,
    network=None,
    min_confidence=None,
):
    """Evaluates a run (the latest under runs/ by default) on labelled data: find it, choose the data, load, score.

    The run directory and the data (see `evaluation_data`) are checked
    before the run's model, and with it TensorFlow, loads.

    Args:
        run_dir: The run directory, or a `Run` (default: the latest complete run under runs/).
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
        network: `"auto"` or `"always"`: the classifier's `network` setting
            (None: as saved, `"auto"`).
        min_confidence: Also report what this minimum confidence answers, and how well (`abstention`).

    Returns:
        The metrics (see `evaluate_classifier`).

    Raises:
        RunError: No such run, or a run that cannot be loaded.
        ArgumentError: No labelled data to evaluate on (see `evaluation_data`).
        DataError: The data cannot be read, or its classes differ from the model's.
    """
    check_min_confidence(min_confidence)
    run = Run.open(run_dir)
    chosen = evaluation_data(run, data, split, text_column, label_column, encoding, log=log)
    classifier = run.load().classifier  # loaded now (a damaged run refused): TensorFlow starts once the data is checked
    if log:
        log(run.line)
    dataset, report = chosen.load(classifier.label_names, classifier.multi_label)
    if report is not None and on_table is not None:
        on_table(chosen.path, report)
    policy = classifier.policy.for_network(network)
    return evaluate_classifier(classifier, dataset, min_confidence=min_confidence, policy=policy)
