"""A training run on a data source in one call: `train_imdb`, `train_table`, and `resume_run` to continue one.

Each checks the settings and the run directory first, then finds and reads
the data, then trains (`hierattn.runs.train.train`), so a bad setting or an
unusable run directory is refused before any data is read, and bad data
before TensorFlow loads. The `hierattn train imdb`, `hierattn train csv` and
`hierattn train --resume` commands map their options onto these functions.
Interrupted (Ctrl-C), they raise `TrainingInterrupted`, which says whether
the run can be resumed.

Example:

```python
run = hierattn.runs.sources.train_table("reviews.csv", {"model": "rnn", "epochs": 4}, test="test.csv")
run.metrics["test"]["accuracy"], run.path
run = hierattn.runs.sources.resume_run("runs/han-reviews-20261124-101500")  # after an interruption
```
"""

import dataclasses
import functools
import pathlib

from hierattn.data import load_imdb, load_table, locate_imdb
from hierattn.data.decoding import DEFAULT_ENCODING, codec_name
from hierattn.data.tables import rows_text
from hierattn.data.text_files import read_texts
from hierattn.defaults import GROUPS, MULTILABEL
from hierattn.distribute import is_chief_in_tf_config
from hierattn.errors import ArgumentError, DataError
from hierattn.runs.config import TrainConfig, load_config
from hierattn.runs.data_record import data_to_resume, describe_source
from hierattn.runs.directory import (
    DEFAULT_ROOT,
    adapted,
    dataset_name,
    ensure_new_or_resumable,
    new_run_dir,
    read_status,
    resumable,
)
from hierattn.runs.run_context import RunData


class TrainingInterrupted(KeyboardInterrupt):
    """A training run stopped by Ctrl-C (a `KeyboardInterrupt`), with where the run is and whether it can be resumed.

    Args:
        run_dir: The run directory, or None when it was not chosen yet.
        resumable: Whether the run can be resumed (`resume_run`): it had a checkpoint (word2vec's first
            epoch, or `adapted.keras`). A new run interrupted before then is removed.

    Example:

    >>> error = TrainingInterrupted("runs/han-agnews-20261124-101500", resumable=True)
    >>> isinstance(error, KeyboardInterrupt), str(error.run_dir), error.resumable
    (True, 'runs/han-agnews-20261124-101500', True)
    """

    def __init__(self, run_dir=None, resumable=False):
        super().__init__()
        self.run_dir = None if run_dir is None else pathlib.Path(run_dir)
        self.resumable = resumable


def train_imdb(
    source=None,
    settings=None,
    output=None,
    resume=None,
    distribute=None,
    log=print,
    verbose="auto",
    group=GROUPS["imdb"],
):
    """Trains on IMDB: its train split (validation held out of it), its test split evaluated once.

    The 50,000 unlabelled reviews feed word2vec (when the classifier's
    `embeddings` is `"word2vec"`, the default). The validation part holds
    whole films (`group="film"`, the default): no film has reviews on both
    sides, as none has in the train and test splits, so what is chosen on
    validation is chosen on films the network never read. An archive or
    folder without the urls files that name the films (`load_imdb`) is
    split by class alone, and the log says so.

    Args:
        source: aclImdb_v1.tar.gz or an aclImdb/ folder; `None`: the data/
            cache, else the official download (checksum verified).
        settings: Flat settings (`TrainConfig.from_dict`: `{"model": "rnn",
            "epochs": 4, "embedding_dim": 64, ...}`) or a `TrainConfig`;
            `None`: the defaults.
        output: The run directory (never overwritten); `None`:
            runs/<model>-imdb-<time>.
        resume: An unfinished run directory to continue, with its own
            settings and data (give no `settings` or `output` then; see
            `resume_run`, which `source` is given to).
        distribute: `None`, `"none"`, `"mirrored"` or `"multi-worker"`
            (see `hierattn.runs.train.train`).
        log: Function printing progress messages.
        verbose: Keras `fit` verbosity.
        group: What the validation part keeps whole: `"film"`, or `None`
            (split by class alone). Resuming, the run splits as it recorded
            (config.json's `data.group`), whatever is given.

    Returns:
        The finished `hierattn.runs.run.Run`.

    Raises:
        HierattnError: Bad settings, an unusable run directory, or data
            that cannot be read; in one line.
        TrainingInterrupted: Ctrl-C.
    """
    if group not in (GROUPS["imdb"], None):
        raise ArgumentError(f"{{argument}} for IMDB is {GROUPS['imdb']!r} or None; got {group!r}", argument="group")
    config = _checked(settings, output, resume, distribute)
    if resume is not None:
        return resume_run(resume, imdb=source, distribute=distribute, log=log, verbose=verbose)
    located = locate_imdb(source)
    splits = ("train", "test", "unsup") if config.uses_unlabeled else ("train", "test")
    datasets = load_imdb(located, splits=splits)  # train() cuts every part to the limit
    train = _imdb_groups(datasets["train"], group, located, log)
    config = config.with_data(
        {"imdb": describe_source(located), **({"group": group} if train.groups is not None else {})}
    )
    unlabeled = datasets["unsup"].texts if "unsup" in datasets else None
    data = RunData(train, datasets["test"], unlabeled, "imdb")
    return _train(config, data, output=output, distribute=distribute, log=log, verbose=verbose)


def _imdb_groups(train, group, source, log=None):
    """IMDB's training reviews with their films as groups when `group` is "film" (else none), as the run records it.

    Without urls files the reviews are split by class alone: said in `log` for a new run (`log` given); a run
    resumed that recorded films (no `log`) is refused.
    """
    if group is None:
        return dataclasses.replace(train, groups=None)
    if train.groups is None:
        if log is None:
            raise DataError(
                f"{source} has no train/urls_pos.txt and urls_neg.txt, which name the film of each review: the run "
                "held out whole films for validation, and cannot split its reviews again without them"
            )
        log(
            f"{source} has no train/urls_pos.txt and urls_neg.txt, which name the film of each review: the "
            "validation part is split by class alone, with reviews of one film on both sides"
        )
    return train


def train_table(
    path,
    settings=None,
    test=None,
    text_column=None,
    label_column=None,
    unlabeled=None,
    encoding=None,
    output=None,
    resume=None,
    distribute=None,
    log=print,
    verbose="auto",
    on_table=None,
    label_separator=None,
    group_column=None,
):
    """Trains on a table of texts and labels (CSV, TSV or JSON lines), a validation part held out of it.

    With the setting `multi_label`, a label cell holds a document's labels
    joined by `label_separator` (default `|`; an empty cell: none). With
    `group_column`, the validation part holds whole groups (all the rows of
    one product, author or film: `hierattn.data.dataset.grouped_split`).

    Args:
        path: The training table.
        settings: Flat settings or a `TrainConfig` (see `train_imdb`).
        test: A labelled table evaluated once at the end, or `None`.
        text_column: The column of the texts; `None`: the first of
            `hierattn.defaults.TEXT_COLUMNS` there is.
        label_column: The column of the labels; `None`: the first of
            `hierattn.defaults.LABEL_COLUMNS` there is.
        unlabeled: A file of unlabelled texts for word2vec (one per line, or
            a table's `text_column`), or `None`.
        encoding: The files' text encoding; `None`: UTF-8, or the legacy CJK encoding detected
            (`hierattn.data.decoding`; recorded as `detected_encoding`).
        output, resume, distribute, log, verbose: As for `train_imdb`
            (`output` defaults to runs/<model>-<dataset>-<time>, the
            dataset named by `hierattn.runs.directory.dataset_name`: `agnews` for
            agnews/train.csv). Resuming (`resume_run`), the files and
            columns given are checked against the recorded ones, and those
            not given are the recorded ones.
        on_table: Called with `(path, report)` for each table read (the
            rows used and skipped, `hierattn.data.load_table`); `None`: their
            counts go to `log`.
        label_separator: What joins a document's labels (multi-label runs only).
        group_column: The column of each text's group, or `None` (the
            validation part is stratified by class alone). Every row used
            needs its group. Resuming, the run splits as it recorded; one
            given again must be the recorded one.

    Returns:
        The finished `hierattn.runs.run.Run`.

    Raises:
        HierattnError: Bad settings, an unusable run directory, data that
            cannot be read, or unlabelled texts that would go unused; in
            one line.
        TrainingInterrupted: Ctrl-C.
    """
    config = _checked(settings, output, resume, distribute)
    if resume is not None:
        return resume_run(
            resume,
            train=path,
            test=test,
            unlabeled=unlabeled,
            text_column=text_column,
            label_column=label_column,
            encoding=encoding,
            distribute=distribute,
            log=log,
            verbose=verbose,
            on_table=on_table,
            group_column=group_column,
        )
    separator = _table_options(config, unlabeled, label_separator)
    files = {"train": path, "test": test, "unlabeled": unlabeled}
    recorded = {name: describe_source(f) for name, f in files.items() if f}
    columns = (text_column, label_column, encoding, on_table, log, separator, group_column)
    train_data, test_data, columns = _read_tables(path, test, *columns)
    texts = read_texts(unlabeled, text_column, encoding=encoding) if unlabeled else None
    if texts:
        log(f"{unlabeled}: {len(texts):,} unlabelled texts")
    given = {"unlabeled_text_column": text_column} if unlabeled else {}  # read again if word2vec stops
    config = config.with_data({**recorded, **columns, "encoding": encoding, **given})
    data = RunData(train_data, test_data, texts, dataset_name(path))
    return _train(config, data, output=output, distribute=distribute, log=log, verbose=verbose)


def _table_options(config, unlabeled, label_separator):
    """Refuses options the run would not use; returns the label separator of a multi-label run (else None)."""
    if unlabeled and not config.uses_unlabeled:
        raise ArgumentError(
            "{argument} texts would go unused: only word2vec embeddings use them, and the run's are not",
            argument="unlabeled",
        )
    if not config.classifier.get("multi_label", False):
        if label_separator is not None:
            raise ArgumentError("{argument} applies to multi-label data only", argument="label_separator")
        return None
    return label_separator or MULTILABEL["separator"]


def resume_run(
    run_dir,
    train=None,
    test=None,
    unlabeled=None,
    imdb=None,
    text_column=None,
    label_column=None,
    encoding=None,
    distribute=None,
    log=print,
    verbose="auto",
    on_table=None,
    group_column=None,
):
    """Continues an interrupted run with what it recorded: its settings, its data files, columns and encoding.

    Nothing needs to be given again but the run directory: an IMDB run
    resumes on the IMDB archive or folder it recorded, a run on tables on
    its training and test tables, with their columns and encoding.
    config.json records each file's absolute path, so a run resumes from
    any working directory. What is given again must be what the run
    recorded (a file with the same content, wherever it is now); a recorded
    file that is missing or changed is refused, before any is read. The
    network is not trained further when it had finished (its epochs, early
    stopping or time budget; `hierattn.runs.train.train`): the run goes on to
    what remained (the n-gram part, the test evaluation, the baseline, the
    model file).

    Args:
        run_dir: The unfinished run directory.
        train, test, unlabeled: Table files (and unlabelled texts) of a run
            on tables, given again; `None`: the recorded ones (unlabelled
            texts are read again only when the run stopped while word2vec
            trained: it continues from its last epoch).
        imdb: The IMDB archive or folder of a run on IMDB, given again;
            `None`: the recorded one.
        text_column, label_column, encoding: A table run's columns and
            encoding, given again; `None`: the recorded ones.
        distribute, log, verbose: As for `train_imdb`.
        on_table: As for `train_table`.
        group_column: A table run's group column, given again: it must be
            the one the run recorded (`None`: the recorded one, or none).
            The validation part is split as the run recorded
            (config.json's `data.group`), so it is the same.

    Returns:
        The finished `hierattn.runs.run.Run`.

    Raises:
        HierattnError: A run that is complete, not a run, or held by
            another process; data given for another kind of run than the
            run's, or not what it recorded; a recorded file missing or
            changed; in one line.
        TrainingInterrupted: Ctrl-C (the run stays resumable).
    """
    check_output(resume=run_dir, distribute=distribute)
    try:  # from here on a Ctrl-C leaves the run as resumable as it was (reading and hashing the data take time)
        config = load_config(run_dir)
        if imdb is not None:
            imdb = locate_imdb(imdb, download=False)  # a folder holding the archive: the archive, as recorded
        given = {"train": train, "test": test, "unlabeled": unlabeled, "imdb": imdb}
        again = not adapted(run_dir) and config.uses_unlabeled  # stopped in word2vec: its texts read again
        files = data_to_resume(run_dir, config.data, given, unlabeled=again)
        options = {
            name: _as_recorded(run_dir, config.data, name, value)
            for name, value in (("text_column", text_column), ("label_column", label_column), ("encoding", encoding))
        }
        if group_column is not None and group_column != config.data.get("group"):
            was = config.data.get("group")
            raise ArgumentError(
                f"cannot resume {run_dir} with {{argument}} {group_column!r}: it split its validation part "
                + (f"by {was!r}" if was else "without groups")
                + "; leave {argument} out to resume as it split",
                argument="group_column",
            )
        log("resuming on the data the run recorded: " + ", ".join(f"{k} {v}" for k, v in files.items()))
        data = _resumed_data(run_dir, config, files, options, again, on_table, log)
        return _train(config, data, resume=run_dir, distribute=distribute, log=log, verbose=verbose)
    except TrainingInterrupted:
        raise
    except KeyboardInterrupt:
        raise TrainingInterrupted(run_dir, True) from None
    except Exception as error:
        error.run_dir = pathlib.Path(run_dir)  # which run it ended (see `_train`)
        raise


def _resumed_data(run_dir, config, files, options, again, on_table, log):
    """The `RunData` a run resumes on: its recorded files read (the unlabelled texts too when `again`)."""
    if "imdb" in files:
        datasets = load_imdb(files["imdb"], splits=("train", "test", "unsup") if again else ("train", "test"))
        train_data, test_data = (
            _imdb_groups(datasets["train"], config.data.get("group"), files["imdb"]),
            datasets["test"],
        )
        extra = datasets["unsup"].texts if again else None
    else:
        options = {
            **options,
            "label_separator": config.data.get("label_separator"),
            "group_column": config.data.get("group"),
        }
        train_data, test_data, _ = _read_tables(
            files["train"], files.get("test"), **options, on_table=on_table, log=log
        )
        column = config.data.get("unlabeled_text_column")  # as given: None found it as in any table
        extra = again and files.get("unlabeled") and read_texts(files["unlabeled"], column, options["encoding"])
    return RunData(train_data, test_data, extra or None, name=read_status(run_dir).get("dataset") or "data")


def check_output(output=None, resume=None, distribute=None):
    """Refuses a run directory that cannot be written (or resumed), before any data is read.

    Raises:
        RunError: `output` exists and is not empty, or `resume` is not an
            unfinished run that this process may continue.
        ArgumentError: A multi-worker run without its run directory.
    """

    if distribute == "multi-worker":
        if not (output or resume):
            raise ArgumentError(
                "a multi-worker run needs {argument}: the same run directory on every worker", argument="output"
            )
        if not is_chief_in_tf_config():
            return  # the chief writes the run directory, and may have made it already
    if output:
        ensure_new_or_resumable(output, False)
    if resume:
        ensure_new_or_resumable(resume, True)


def _checked(settings, output, resume, distribute):
    """The `TrainConfig` of `settings`, with the run directory checked, before any data is read; None to resume."""
    if resume is not None:
        if settings or output:
            raise ArgumentError(
                "{argument} continues a run with its own settings and directory: give neither", argument="resume"
            )
        return None
    # a TrainConfig was checked when it was made (from_dict makes and checks one from flat settings)
    config = settings if isinstance(settings, TrainConfig) else TrainConfig.from_dict(settings or {})
    check_output(output, None, distribute)
    return config


def _as_recorded(run_dir, recorded, name, given):
    """A table option to resume with: the one the run recorded, which one given again must equal.

    An encoding recorded as not given was UTF-8 or the one detected (`detected_encoding`): one given again must
    be that one.
    """
    value = recorded.get(name)
    if name == "encoding" and value is None and given is not None:
        found = recorded.get("detected_encoding") or DEFAULT_ENCODING
        if codec_name(given) != codec_name(found):
            raise ArgumentError(
                f"cannot resume {run_dir} with {{argument}} {given!r}: it read its files as {found!r}; leave "
                "{argument} out to resume as it read them",
                argument=name,
            )
        return None
    if given is not None and value is not None and given != value:
        raise ArgumentError(
            f"cannot resume {run_dir} with {{argument}} {given!r}: it was trained with {value!r}; leave "
            "{argument} out to resume with the recorded one",
            argument=name,
        )
    return value if value is not None else given


def _read_tables(
    path, test, text_column, label_column, encoding, on_table, log, label_separator=None, group_column=None
):
    """The training and test tables (`load_table`, each reported to `on_table`), and the columns they were read from.

    With `label_separator`, label cells are label sets (multi-label), and the separator is recorded with the columns;
    with `group_column`, the training texts' groups are read from it (the test table's are not), and the column is
    recorded as the run's `group`.
    """
    on_table = on_table or functools.partial(_log_rows, log)
    read = functools.partial(load_table, encoding=encoding, label_separator=label_separator)
    train_data, report = read(path, text_column, label_column, group_column=group_column)
    on_table(path, report)
    test_data = None
    if test:
        test_data, test_report = read(test, text_column, label_column, label_map=train_data.label_map)
        on_table(test, test_report)
    columns = {"text_column": report["text_column"], "label_column": report["label_column"]}
    if report.get("detected_encoding"):  # recorded beside the encoding as given (None: detected again on resume)
        columns["detected_encoding"] = report["detected_encoding"]
    if label_separator is not None:
        columns["label_separator"] = label_separator
    if group_column is not None:
        columns["group"] = group_column
    return train_data, test_data, columns


def _log_rows(log, path, report):
    """Says how many rows of a table were used, and how many skipped (`hierattn.data.tables.rows_text`)."""

    for line in rows_text(path, report):
        if line:
            log(line)


def _train(config, data, output=None, resume=None, distribute=None, log=print, verbose="auto"):
    """Trains on `data` (a `RunData`) into `output` (a new one by default) or `resume` (`hierattn.runs.train.train`).

    Ctrl-C raises `TrainingInterrupted`, with the run directory.
    """
    output = pathlib.Path(resume or output or new_run_dir(DEFAULT_ROOT, config.model, data.name))
    try:
        # Keras (TensorFlow) loads only here, once the settings, output and data were checked without it.
        from hierattn.runs.train import train

        log(f"run directory: {output}")
        return train(
            data.train,
            data.test,
            config,
            output,
            unlabeled=data.unlabeled,
            resume=resume is not None,
            dataset_name=data.name,
            log=log,
            verbose=verbose,
            distribute=distribute,
        )
    except TrainingInterrupted:
        raise
    except KeyboardInterrupt:
        raise TrainingInterrupted(output, resumable(output)) from None
    except Exception as error:
        # Which run it ended: TensorFlow's C++ code can lose a Ctrl-C and raise another error in its place
        # (e.g. "AttributeError: 'list' object has no attribute '_type_spec'" while a tf.data pipeline is made), and
        # a program that saw the signal (`hierattn train`) still tells the user how to resume this run.
        error.run_dir = output
        raise
