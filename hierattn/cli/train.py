"""`hierattn train imdb` and `hierattn train csv`: options onto `hierattn.training.train`."""

import pathlib

import click

from hierattn.cli.options import (
    echo_rows,
    encoding_option,
    friendly_errors,
    train_options,
)
from hierattn.defaults import LABEL_COLUMNS, TEXT_COLUMNS

# The train options that are settings of `TrainConfig` (or, `max_length`, set its length limits).
SETTINGS = (
    "model",
    "epochs",
    "batch_size",
    "learning_rate",
    "max_length",
    "embedding_dim",
    "embeddings",
    "seed",
    "limit",
    "mixed_precision",
    "baseline",
)


@click.group()
def train():
    """Train a classifier (HAN by default) and write a run directory."""


@train.command("imdb")
@click.argument("source", required=False, type=click.Path())
@train_options
@friendly_errors
def train_imdb(source, **options):
    """Train on IMDB: official train split (validation carved out of it), test split evaluated once.

    SOURCE is aclImdb_v1.tar.gz or an aclImdb/ folder (default: the data/
    cache, else the official download, checksum verified). The 50,000
    unlabelled reviews feed word2vec.
    """
    from hierattn.data import load_imdb, locate_imdb
    from hierattn.runs import describe_source
    from hierattn.train_config import config_for_run

    config = _config(options)
    _check_output(options)
    located = locate_imdb(source)
    config = config_for_run(config, {"imdb": describe_source(located)}, resume=options["resume"])
    splits = ("train", "test", "unsup") if config.uses_unlabeled else ("train", "test")
    datasets = load_imdb(located, splits=splits)  # train() cuts every part to --limit
    unlabeled = datasets["unsup"].texts if "unsup" in datasets else None
    _run_training(options, config, "imdb", datasets["train"], datasets["test"], unlabeled)


@train.command("csv")
@click.argument("path", type=click.Path())
@click.option(
    "--test",
    "test_path",
    type=click.Path(exists=True, dir_okay=False),
    default=None,
    show_default="none",
    help="Labelled test file, evaluated once at the end.",
)
@click.option(
    "--text-column", default=None, show_default="the first of " + ", ".join(TEXT_COLUMNS), help="Column of the texts."
)
@click.option(
    "--label-column",
    default=None,
    show_default="the first of " + ", ".join(LABEL_COLUMNS),
    help="Column of the labels.",
)
@click.option(
    "--unlabeled",
    "unlabeled_path",
    type=click.Path(exists=True, dir_okay=False),
    default=None,
    show_default="none",
    help="Unlabelled texts for word2vec (a text file, one per line, or a table's --text-column).",
)
@encoding_option
@train_options
@friendly_errors
def train_csv(path, test_path, text_column, label_column, unlabeled_path, encoding, **options):
    """Train on any CSV / TSV / JSON-lines file of texts and labels."""
    from hierattn.data import load_table
    from hierattn.runs import describe_source
    from hierattn.scoring import read_texts
    from hierattn.train_config import config_for_run

    config = _config(options)
    _check_output(options)
    files = {"train": path, "test": test_path, "unlabeled": unlabeled_path}
    config = config_for_run(
        config, {name: describe_source(file) for name, file in files.items() if file}, resume=options["resume"]
    )
    if unlabeled_path and not config.uses_unlabeled:
        raise click.UsageError("--unlabeled texts would go unused: they feed word2vec (--embeddings word2vec)")
    train_data, report = load_table(path, text_column, label_column, encoding=encoding)
    echo_rows(path, report)
    test_data = None
    if test_path:
        test_data, test_report = load_table(
            test_path, text_column, label_column, label_map=train_data.label_map, encoding=encoding
        )
        echo_rows(test_path, test_report)
    unlabeled = read_texts(unlabeled_path, text_column, encoding=encoding) if unlabeled_path else None
    if unlabeled:
        click.echo(f"{unlabeled_path}: {len(unlabeled):,} unlabelled texts")
    config.data.update(text_column=report["text_column"], label_column=report["label_column"], encoding=encoding)
    _run_training(options, config, pathlib.Path(path).stem, train_data, test_data, unlabeled)


def _config(options):
    """The `TrainConfig` the options (and --config FILE) describe, checked before any data is read; None to resume."""
    from hierattn.jsonfile import read_json_object
    from hierattn.train_config import TrainConfig, length_settings

    context = click.get_current_context()
    given = {
        name: options[name]
        for name in SETTINGS
        if context.get_parameter_source(name) is click.core.ParameterSource.COMMANDLINE
    }
    if options["resume"]:
        if given or options["config_file"] or options["output"]:
            raise click.UsageError("--resume continues a run with its own settings: give no other training option")
        return None
    values = read_json_object(options["config_file"]) if options["config_file"] else {}
    if "max_length" in given:
        given.update(length_settings({**values, **given}.get("model", "han"), given.pop("max_length")))
    return TrainConfig.from_dict({**values, **given}).validate()


def _check_output(options):
    """Refuses a run directory that cannot be written (or resumed), before any data is read."""
    from hierattn.distribute import is_chief_in_tf_config
    from hierattn.runs import ensure_new_or_resumable

    if options["distribute"] == "multi-worker":
        if not (options["output"] or options["resume"]):
            raise click.UsageError("--distribute multi-worker needs --output: the same run directory on every worker")
        if not is_chief_in_tf_config():
            return  # the chief writes the run directory, and may have made it already
    if options["output"]:
        ensure_new_or_resumable(options["output"], False)
    if options["resume"]:
        ensure_new_or_resumable(options["resume"], True)


def _run_training(options, config, dataset_name, train_data, test_data, unlabeled=None):
    from hierattn.explain.report import metrics_text
    from hierattn.runs import new_run_dir
    from hierattn.training import train as train_run

    resume = options["resume"]
    output = pathlib.Path(resume or options["output"] or new_run_dir("runs", config.model, dataset_name))
    click.echo(f"run directory: {output}")
    run = train_run(
        train_data,
        test_data,
        config,
        output,
        unlabeled=unlabeled,
        resume=bool(resume),
        dataset_name=dataset_name,
        log=click.echo,
        distribute=options["distribute"],
    )
    text = metrics_text(run.metrics)
    if text:
        click.echo(text)
    if not run.chief:
        click.echo(f"\nthis worker wrote nothing; the chief wrote {output}/")
        return
    click.echo(
        f"\nwrote {output}/: model.keras (the whole classifier), config.json, history.csv, metrics.json, "
        f"logs/ (TensorBoard: tensorboard --logdir {output}/logs)"
    )
    click.echo(
        f'explain a prediction: python cli.py explain "your text" --run {output} [--format html --output page.html]'
    )
