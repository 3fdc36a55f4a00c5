"""`hierattn train imdb`, `hierattn train csv` and `hierattn train --resume`: options onto `hierattn.runs.sources`.

Ctrl-C during training prints the command that resumes the run (or that
nothing can be resumed) and exits with code 130.
"""

import contextlib
import signal
import sys

import click

from hierattn.cli.commands import command_line, script
from hierattn.cli.options import (
    distribute_option,
    echo_rows,
    encoding_option,
    friendly_errors,
    given,
    interrupted_text,
    metric_option,
    train_options,
    units_option,
)
from hierattn.defaults import GROUPS, LABEL_COLUMNS, MULTILABEL, TEXT_COLUMNS


@click.group(invoke_without_command=True, no_args_is_help=True)
@click.option(
    "--resume",
    type=click.Path(file_okay=False),
    default=None,
    metavar="RUN_DIR",
    help="Continue the interrupted run in RUN_DIR with what it recorded: its settings, data files (from any "
    "working directory), columns and encoding.",
)
@distribute_option
@click.pass_context
@friendly_errors
def train(ctx, resume, distribute):
    """Train a classifier (HAN by default) and write a run directory, or resume one: train --resume RUN_DIR."""
    if ctx.invoked_subcommand is not None:
        if resume or given("distribute"):
            raise click.UsageError(
                f"give --resume and --distribute after {ctx.invoked_subcommand} (or --resume alone: train --resume "
                "RUN_DIR)"
            )
        return
    if resume is None:
        raise click.UsageError(
            "give the data to train on (train imdb, train csv) or a run to resume (--resume RUN_DIR)"
        )
    # imported when the command runs: --help, and refusing bad input, come before pandas and TensorFlow load
    from hierattn.runs import sources as train_sources

    with _interrupts(distribute):
        run = train_sources.resume_run(resume, distribute=distribute, log=click.echo, on_table=echo_rows)
    _report(run)


@train.command("imdb")
@click.argument("source", required=False, type=click.Path())
@train_options
@friendly_errors
def train_imdb(source, config_file, output, resume, distribute, **settings):
    """Train on IMDB: official train split (validation carved out of it), test split evaluated once.

    SOURCE is aclImdb_v1.tar.gz or an aclImdb/ folder (default: the data/
    cache, else the official download, checksum verified). The 50,000
    unlabelled reviews feed word2vec. The validation part holds whole
    films (from the archive's train/urls_*.txt; an archive without them is
    split by class alone, and the run says so). With --resume, a run
    resumes on the data it recorded, whichever it was, split as it was.
    """
    # imported when the command runs: --help, and refusing bad input, come before pandas and TensorFlow load
    from hierattn.runs import sources as train_sources

    config = _config(_settings(settings, config_file, output, resume, distribute))
    with _interrupts(distribute):
        if resume:
            run = train_sources.resume_run(
                resume, imdb=source, distribute=distribute, log=click.echo, on_table=echo_rows
            )
        else:
            run = train_sources.train_imdb(
                source,
                config,
                output=output,
                distribute=distribute,
                log=click.echo,
                group=GROUPS["imdb"],
            )
    _report(run)


@train.command("csv")
@click.argument("path", required=False, type=click.Path())
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
    "--group",
    "group_column",
    default=None,
    metavar="COLUMN",
    show_default="none",
    help="Column of each text's group (a product, an author, a film): the validation part holds whole groups, "
    "stratified by class as far as they allow, so that what is chosen on it is chosen on unseen groups.",
)
@click.option(
    "--unlabeled",
    "unlabeled_path",
    type=click.Path(exists=True, dir_okay=False),
    default=None,
    show_default="none",
    help="Unlabelled texts for word2vec (a text file, one per line, or a table's --text-column).",
)
@click.option(
    "--multi-label",
    is_flag=True,
    default=False,
    show_default="off",
    help="Each text has a set of labels (possibly none), joined by --label-separator in the label column: "
    "one probability per label, each label's threshold chosen on the validation part.",
)
@click.option(
    "--label-separator",
    default=None,
    show_default=repr(MULTILABEL["separator"]),
    help="What joins a text's labels in the label column (with --multi-label).",
)
@encoding_option
@metric_option
@units_option
@train_options
@friendly_errors
def train_csv(
    path,
    test_path,
    text_column,
    label_column,
    group_column,
    unlabeled_path,
    multi_label,
    label_separator,
    encoding,
    config_file,
    output,
    resume,
    distribute,
    **settings,
):
    """Train on any CSV / TSV / JSON-lines file of texts and labels.

    With --resume, PATH and the other files, columns and encoding may be
    left out: the run resumes with those it recorded (any given must be
    the same).
    """
    # imported when the command runs: --help, and refusing bad input, come before pandas and TensorFlow load
    from hierattn.runs import sources as train_sources

    if multi_label:
        if label_separator == "":
            raise click.UsageError("--label-separator cannot be empty")
        if resume:
            raise click.UsageError("--resume continues a run with its own settings: give no other training option")
        settings["multi_label"] = True
    elif label_separator is not None:
        raise click.UsageError("--label-separator applies with --multi-label")
    settings = _settings(settings, config_file, output, resume, distribute)
    if path is None and not resume:
        raise click.UsageError("Missing argument 'PATH': the training table (or --resume RUN_DIR).")
    config = _config(settings)
    with _interrupts(distribute):
        if resume:
            run = train_sources.resume_run(
                resume,
                train=path,
                test=test_path,
                unlabeled=unlabeled_path,
                text_column=text_column,
                label_column=label_column,
                encoding=encoding if given("encoding") else None,
                distribute=distribute,
                log=click.echo,
                on_table=echo_rows,
                group_column=group_column,
            )
        else:
            run = train_sources.train_table(
                path,
                config,
                test=test_path,
                text_column=text_column,
                label_column=label_column,
                unlabeled=unlabeled_path,
                encoding=encoding,
                output=output,
                distribute=distribute,
                log=click.echo,
                on_table=echo_rows,
                label_separator=label_separator,
                group_column=group_column,
            )
    _report(run)


def _settings(settings, config_file, output, resume, distribute):
    """The flat settings of the options given on the command line, over those of --config FILE; None to resume."""
    # imported when the command runs: --help, and refusing bad input, come before NumPy, pandas and TensorFlow load
    from hierattn.runs.config import read_settings

    typed = {name: value for name, value in settings.items() if given(name)}
    if resume:
        if typed or config_file or output:
            raise click.UsageError("--resume continues a run with its own settings: give no other training option")
        return None
    if distribute == "multi-worker" and not output:
        raise click.UsageError("--distribute multi-worker needs --output: the same run directory on every worker")
    return {**(read_settings(config_file) if config_file else {}), **typed}


def _config(settings):
    """The run's `TrainConfig`, made (and so checked) once, here, from flat settings, and handed down as it is."""
    from hierattn.runs.config import TrainConfig

    return None if settings is None else TrainConfig.from_dict(settings)


@contextlib.contextmanager
def _interrupts(distribute):
    """Ctrl-C: the command that resumes the run, or that nothing can be resumed, on standard error; exit code 130.

    TensorFlow's C++ code can lose the `KeyboardInterrupt` of a Ctrl-C that
    arrives while it runs and raise another error in its place (seen:
    "AttributeError: 'list' object has no attribute '_type_spec'" while a
    tf.data pipeline is made). So the program notes the signal while
    training (its own handler, which then raises `KeyboardInterrupt` as
    Python's does), and an error that follows it is taken for the interrupt
    it replaced; the library names the run such an error ended (`run_dir`).
    What TensorFlow prints of the lost interrupt (through `sys.excepthook`)
    is not shown once the signal came.
    """
    received = []

    def on_interrupt(signum, frame):
        received.append(signum)
        signal.default_int_handler(signum, frame)

    def on_printed_error(*exc_info):  # TensorFlow prints the error it lost the interrupt to (PyErr_Print)
        if not received:
            excepthook(*exc_info)

    previous = signal.getsignal(signal.SIGINT)
    if previous is not signal.default_int_handler:  # SIGINT ignored (a background job) or handled by an embedder
        previous = None
    else:
        try:
            signal.signal(signal.SIGINT, on_interrupt)
        except ValueError:  # not the main thread: Python's own handling
            previous = None
    excepthook, sys.excepthook = sys.excepthook, on_printed_error
    try:
        yield
    except KeyboardInterrupt as interrupt:
        click.echo("\n" + interrupted_text(interrupt, distribute), err=True)
        sys.exit(130)
    except Exception as error:
        if not received:
            raise
        from hierattn.runs.directory import resumable  # loaded already: the training ran
        from hierattn.runs.sources import TrainingInterrupted

        run_dir = getattr(error, "run_dir", None)
        interrupt = TrainingInterrupted(run_dir, run_dir is not None and resumable(run_dir))
        click.echo("\n" + interrupted_text(interrupt, distribute), err=True)
        sys.exit(130)
    finally:
        sys.excepthook = excepthook
        if previous is not None:
            signal.signal(signal.SIGINT, previous)


# What a complete run's directory holds for the user to open, in the order `train` lists it (docs/runs.md).
RUN_FILES = {
    "model.keras": "the whole classifier",
    "model.onnx": "the same, run without TensorFlow",
    "config.json": "its settings and data",
    "run.json": "its record",
    "history.csv": None,
    "metrics.json": None,
    "report.html": "the test split's scores and calibration",
}


def _report(run):
    """The run's metrics, what it wrote, and the commands that explain a prediction with it (as text, and as a page)."""
    # imported when the command runs: --help, and refusing bad input, come before NumPy, pandas and TensorFlow load
    from hierattn.cli.render import metrics_text

    text = metrics_text(run.metrics)
    if text:
        click.echo(text)
    if not run.chief:
        click.echo(f"\nthis worker wrote nothing; the chief wrote {run.path}/")
        return
    logs = f"{script('tensorboard')} {command_line('--logdir', run.path / 'logs', program=False)}"
    written = [
        name + (f" ({about})" if about else "") for name, about in RUN_FILES.items() if (run.path / name).is_file()
    ]
    click.echo(f"\nwrote {run.path}/: {', '.join(written)}, logs/ (TensorBoard: {logs})")
    explain = ["explain", "your text", "--run", run.path]
    click.echo(f"explain a prediction: {command_line(*explain)}")
    click.echo(f"as a page: {command_line(*explain, '--format', 'html', '--output', run.path / 'explanation.html')}")
