"""`hierattn train imdb` and `hierattn train csv`: options onto `hierattn.train_sources`."""

import click

from hierattn.cli.options import echo_rows, encoding_option, friendly_errors, train_options
from hierattn.defaults import LABEL_COLUMNS, TEXT_COLUMNS


@click.group()
def train():
    """Train a classifier (HAN by default) and write a run directory."""


@train.command("imdb")
@click.argument("source", required=False, type=click.Path())
@train_options
@friendly_errors
def train_imdb(source, config_file, output, resume, distribute, **settings):
    """Train on IMDB: official train split (validation carved out of it), test split evaluated once.

    SOURCE is aclImdb_v1.tar.gz or an aclImdb/ folder (default: the data/
    cache, else the official download, checksum verified). The 50,000
    unlabelled reviews feed word2vec.
    """
    # imported when the command runs: --help, and refusing bad input, come before pandas and TensorFlow load
    from hierattn import train_sources

    settings = _settings(settings, config_file, output, resume, distribute)
    run = train_sources.train_imdb(
        source, settings, output=output, resume=resume, distribute=distribute, log=click.echo
    )
    _report(run)


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
def train_csv(
    path,
    test_path,
    text_column,
    label_column,
    unlabeled_path,
    encoding,
    config_file,
    output,
    resume,
    distribute,
    **settings,
):
    """Train on any CSV / TSV / JSON-lines file of texts and labels."""
    # imported when the command runs: --help, and refusing bad input, come before pandas and TensorFlow load
    from hierattn import train_sources

    run = train_sources.train_table(
        path,
        _settings(settings, config_file, output, resume, distribute),
        test=test_path,
        text_column=text_column,
        label_column=label_column,
        unlabeled=unlabeled_path,
        encoding=encoding,
        output=output,
        resume=resume,
        distribute=distribute,
        log=click.echo,
        on_table=echo_rows,
    )
    _report(run)


def _settings(settings, config_file, output, resume, distribute):
    """The flat settings of the options given on the command line, over those of --config FILE; None to resume."""
    # imported when the command runs: --help, and refusing bad input, come before NumPy, pandas and TensorFlow load
    from hierattn.train_config import read_settings

    context = click.get_current_context()
    given = {
        name: value
        for name, value in settings.items()
        if context.get_parameter_source(name) is click.core.ParameterSource.COMMANDLINE
    }
    if resume:
        if given or config_file or output:
            raise click.UsageError("--resume continues a run with its own settings: give no other training option")
        return None
    if distribute == "multi-worker" and not output:
        raise click.UsageError("--distribute multi-worker needs --output: the same run directory on every worker")
    return {**(read_settings(config_file) if config_file else {}), **given}


def _report(run):
    """The run's metrics, and what it wrote."""
    # imported when the command runs: --help, and refusing bad input, come before NumPy, pandas and TensorFlow load
    from hierattn.explain.report import metrics_text

    text = metrics_text(run.metrics)
    if text:
        click.echo(text)
    if not run.chief:
        click.echo(f"\nthis worker wrote nothing; the chief wrote {run.path}/")
        return
    click.echo(
        f"\nwrote {run.path}/: model.keras (the whole classifier), config.json, history.csv, metrics.json, "
        f"logs/ (TensorBoard: tensorboard --logdir {run.path}/logs)"
    )
    click.echo(
        f'explain a prediction: python cli.py explain "your text" --run {run.path} [--format html --output page.html]'
    )
