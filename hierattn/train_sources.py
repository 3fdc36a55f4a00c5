"""A training run on a data source in one call: `train_imdb` and `train_table`.

Each checks the settings and the run directory first, then finds and reads
the data, then trains (`hierattn.training.train`), so a bad setting or an
unusable run directory is refused before any data is read, and bad data
before TensorFlow loads. The `hierattn train imdb` and `hierattn train csv`
commands map their options onto these functions.

Example:

```python
run = hierattn.train_sources.train_table("reviews.csv", {"model": "rnn", "epochs": 4}, test="test.csv")
run.metrics["test"]["accuracy"], run.path
```
"""

import dataclasses
import functools
import pathlib

from hierattn.data import load_imdb, load_table, locate_imdb
from hierattn.distribute import is_chief_in_tf_config
from hierattn.errors import ArgumentError
from hierattn.explain.report import rows_text
from hierattn.run_data import check_same_data, describe_source
from hierattn.runs import DEFAULT_ROOT, ensure_new_or_resumable, new_run_dir
from hierattn.scoring import read_texts
from hierattn.train_config import TrainConfig, load_config


def train_imdb(source=None, settings=None, output=None, resume=None, distribute=None, log=print, verbose="auto"):
    """Trains on IMDB: its train split (validation held out of it), its test split evaluated once.

    The 50,000 unlabelled reviews feed word2vec (when the classifier's
    `embeddings` is `"word2vec"`, the default).

    Args:
        source: aclImdb_v1.tar.gz or an aclImdb/ folder; `None`: the data/
            cache, else the official download (checksum verified).
        settings: Flat settings (`TrainConfig.from_dict`: `{"model": "rnn",
            "epochs": 4, "embedding_dim": 64, ...}`) or a `TrainConfig`;
            `None`: the defaults.
        output: The run directory (never overwritten); `None`:
            runs/<model>-imdb-<time>.
        resume: An unfinished run directory to continue, with its own
            settings (give no `settings` or `output` then).
        distribute: `None`, `"none"`, `"mirrored"` or `"multi-worker"`
            (see `hierattn.training.train`).
        log: Function printing progress messages.
        verbose: Keras `fit` verbosity.

    Returns:
        The finished `hierattn.runs.Run`.

    Raises:
        HierattnError: Bad settings, an unusable run directory, or data
            that cannot be read; in one line.
    """

    config = _checked(settings, output, resume, distribute)
    located = locate_imdb(source)
    config = config_for_run(config, {"imdb": describe_source(located)}, resume=resume)
    splits = ("train", "test", "unsup") if config.uses_unlabeled else ("train", "test")
    datasets = load_imdb(located, splits=splits)  # train() cuts every part to the limit
    unlabeled = datasets["unsup"].texts if "unsup" in datasets else None
    run = (datasets["train"], datasets["test"], unlabeled)
    return _train(config, "imdb", run, output, resume, distribute, log, verbose)


def train_table(
    path,
    settings=None,
    test=None,
    text_column=None,
    label_column=None,
    unlabeled=None,
    encoding="utf-8",
    output=None,
    resume=None,
    distribute=None,
    log=print,
    verbose="auto",
    on_table=None,
):
    """Trains on a table of texts and labels (CSV, TSV or JSON lines), a validation part held out of it.

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
        encoding: The files' text encoding.
        output, resume, distribute, log, verbose: As for `train_imdb`
            (`output` defaults to runs/<model>-<table name>-<time>).
        on_table: Called with `(path, report)` for each table read (the
            rows used and skipped, `hierattn.data.load_table`); `None`: their
            counts go to `log`.

    Returns:
        The finished `hierattn.runs.Run`.

    Raises:
        HierattnError: Bad settings, an unusable run directory, data that
            cannot be read, or unlabelled texts that would go unused; in
            one line.
    """

    config = _checked(settings, output, resume, distribute)
    files = {"train": path, "test": test, "unlabeled": unlabeled}
    config = config_for_run(config, {name: describe_source(f) for name, f in files.items() if f}, resume=resume)
    if unlabeled and not config.uses_unlabeled:
        raise ArgumentError(
            "unlabeled", "{argument} texts would go unused: only word2vec embeddings use them, and the run's are not"
        )
    on_table = on_table or functools.partial(_log_rows, log)
    train_data, report = load_table(path, text_column, label_column, encoding=encoding)
    on_table(path, report)
    test_data = None
    if test:
        test_data, test_report = load_table(
            test, text_column, label_column, label_map=train_data.label_map, encoding=encoding
        )
        on_table(test, test_report)
    texts = read_texts(unlabeled, text_column, encoding=encoding) if unlabeled else None
    if texts:
        log(f"{unlabeled}: {len(texts):,} unlabelled texts")
    config.data.update(text_column=report["text_column"], label_column=report["label_column"], encoding=encoding)
    return _train(
        config, pathlib.Path(path).stem, (train_data, test_data, texts), output, resume, distribute, log, verbose
    )


def config_for_run(config, data, resume=None):
    """The config to train with, recording where the data comes from.

    Args:
        config: The `TrainConfig` of a new run; None when resuming.
        data: Descriptions of the data files (`hierattn.run_data.describe_source`
            by name: `train`, `test`, `unlabeled` or `imdb`), stored as
            `config.data`.
        resume: The run directory of an unfinished run to continue: its own
            saved config is used, checked before any data is read.

    Returns:
        A `TrainConfig` whose `data` is `data`.

    Raises:
        RunError: Resuming on other data than the run recorded, or from a
            config.json that does not describe a run.
    """
    if resume is not None:
        config = load_config(resume).validate()
        check_same_data(resume, config.data, data)
    return dataclasses.replace(config, data=dict(data))


def check_output(output=None, resume=None, distribute=None):
    """Refuses a run directory that cannot be written (or resumed), before any data is read.

    Raises:
        RunError: `output` exists and is not empty, or `resume` is not an
            unfinished run that this process may continue.
        ArgumentError: A multi-worker run without its run directory.
    """

    if distribute == "multi-worker":
        if not (output or resume):
            raise ArgumentError("output", "a multi-worker run needs {argument}: the same run directory on every worker")
        if not is_chief_in_tf_config():
            return  # the chief writes the run directory, and may have made it already
    if output:
        ensure_new_or_resumable(output, False)
    if resume:
        ensure_new_or_resumable(resume, True)


def _checked(settings, output, resume, distribute):
    """The `TrainConfig` of `settings` (None to resume), with the run directory checked: before any data is read."""
    if resume is not None and (settings or output):
        raise ArgumentError("resume", "{argument} continues a run with its own settings and directory: give neither")
    config = None
    if resume is None:
        # from_dict validates what it makes; a TrainConfig given as it is gets the same check here
        config = settings.validate() if isinstance(settings, TrainConfig) else TrainConfig.from_dict(settings or {})
    check_output(output, resume, distribute)
    return config


def _log_rows(log, path, report):
    """Says how many rows of a table were used, and how many skipped (`hierattn.explain.report.rows_text`)."""

    for line in rows_text(path, report):
        if line:
            log(line)


def _train(config, dataset_name, data, output, resume, distribute, log, verbose):
    """Trains on `data` (training, test and unlabelled texts) into `output` (a new one by default) or `resume`."""
    # Keras (TensorFlow) loads only here, once the settings, output and data were checked without it.
    from hierattn.training import train

    output = pathlib.Path(resume or output or new_run_dir(DEFAULT_ROOT, config.model, dataset_name))
    log(f"run directory: {output}")
    train_data, test_data, unlabeled = data
    return train(
        train_data,
        test_data,
        config,
        output,
        unlabeled=unlabeled,
        resume=resume is not None,
        dataset_name=dataset_name,
        log=log,
        verbose=verbose,
        distribute=distribute,
    )
