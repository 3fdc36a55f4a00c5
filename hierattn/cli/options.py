"""What the commands share: option groups, parameter types, errors as one line.

Options used by several commands are defined once here and applied as a
group (`train_options`) or one by one (`run_option`, `encoding_option`,
`text_argument`, ...). The helpers below them turn option values into what
the library takes (`one_text`) and refuse bad combinations before any work,
and before TensorFlow loads. The program's process-wide settings are
`hierattn.cli.process`'s.
"""

import functools
import math
import sys

import click

from hierattn.cli.commands import command_line
from hierattn.defaults import (
    BACKBONES,
    CASCADE,
    DECISION,
    DISTRIBUTE,
    EPOCH_BUDGET,
    LENGTH_PERCENTILE,
    MAX_DOCUMENT_IDS,
    MODELS,
    PREPROCESSING,
    TRAINING,
    UNITS,
)
from hierattn.errors import HierattnError
from hierattn.utils.atomic import check_new_file, reason

# Library arguments whose option is not named after them.
OPTION_NAMES = {"run_dir": "--run", "decision_metric": "--metric", "text_units": "--units", "group_column": "--group"}


def option_name(argument):
    """The option that sets a library argument: its name with dashes (`max_length` -> `--max-length`), or `OPTION_NAMES`'s."""
    return OPTION_NAMES.get(argument) or "--" + argument.replace("_", "-")


def friendly_errors(command):
    """Turns library errors, and files that cannot be read or written, into one `Error: ...` line and exit code 1.

    An error that names an argument names the option of that argument
    (`option_name`): the options are named after the library's arguments.
    """

    @functools.wraps(command)
    def wrapper(*args, **kwargs):
        try:
            return command(*args, **kwargs)
        except HierattnError as error:  # one that names an argument names its option
            raise click.ClickException(error.naming(option_name(error.argument) if error.argument else "")) from None
        except OSError as error:  # permissions, a full disk, a name too long, a path under /proc, ...
            raise click.ClickException((f"{error.filename}: " if error.filename else "") + reason(error)) from None
        except MemoryError:
            raise click.ClickException(
                "out of memory: the data does not fit in this machine's memory; try --limit N"
            ) from None
        except KeyboardInterrupt:
            click.echo("\nError: interrupted", err=True)
            sys.exit(130)

    return wrapper


class FiniteFloat(click.ParamType):
    """A click parameter type: a finite float within `minimum` and `maximum` (NaN and infinities are refused).

    Example:

    >>> FiniteFloat().convert("1e-3", None, None)
    0.001
    >>> FiniteFloat(0, 1, max_open=True).convert("nan", None, None)
    Traceback (most recent call last):
    ...
    click.exceptions.BadParameter: 'nan' is not a finite number > 0 and < 1.
    """

    name = "float"

    def __init__(self, minimum=0.0, maximum=math.inf, min_open=True, max_open=False):
        self.minimum, self.maximum, self.min_open, self.max_open = minimum, maximum, min_open, max_open

    def convert(self, value, param, ctx):
        try:
            number = float(value)
        except (TypeError, ValueError):
            self.fail(f"{value!r} is not a number.", param, ctx)
        low_ok = number > self.minimum if self.min_open else number >= self.minimum
        high_ok = number < self.maximum if self.max_open else number <= self.maximum
        if not math.isfinite(number) or not (low_ok and high_ok):
            low = f"{'>' if self.min_open else '>='} {self.minimum:g}"
            high = "" if math.isinf(self.maximum) else f" and {'<' if self.max_open else '<='} {self.maximum:g}"
            self.fail(f"{value!r} is not a finite number {low}{high}.", param, ctx)
        return number


class _Embeddings(click.ParamType):
    """word2vec, none, or an existing word-vector file."""

    name = "word2vec|none|FILE"

    def convert(self, value, param, ctx):
        if value in ("word2vec", "none"):
            return value
        return click.Path(exists=True, dir_okay=False).convert(value, param, ctx)


def _shown(name):
    """How --help shows a default that depends on the model or on the data (hierattn.defaults)."""
    if name in PREPROCESSING:
        return f"{LENGTH_PERCENTILE}th percentile of the training texts, within {MAX_DOCUMENT_IDS:,} ids"
    values = {}
    for model, defaults in BACKBONES.items():
        values.setdefault(defaults[name], []).append(model)
    return ", ".join(f"{value} for {'/'.join(models)}" for value, models in values.items())


def train_options(function):
    """The options of every `train` command: the run's settings, where the run goes and how it runs.

    The settings' options are named after the settings (`--max-length` is
    `max_length`, see `hierattn.runs.config.TrainConfig.from_dict`); the
    command receives them as keyword arguments, with `config_file`,
    `output`, `resume` and `distribute`.
    """
    for option in reversed(_setting_options() + _run_options()):
        function = option(function)
    return function


def _setting_options():
    """The options that are training settings (and --config FILE, for any other)."""
    return [
        click.option("--model", type=click.Choice(MODELS), default="han", show_default=True),
        click.option(
            "--epochs",
            type=click.IntRange(1),
            default=TRAINING["epochs"],
            show_default="scaled to the corpus",
            help="Most epochs (early stopping on the validation loss). By default about "
            f"{EPOCH_BUDGET['steps']:,} batches' worth ({EPOCH_BUDGET['min_epochs']} to "
            f"{EPOCH_BUDGET['max_epochs']} epochs), and no epoch begun that would end after "
            f"{EPOCH_BUDGET['seconds'] / 60:g} minutes of training.",
        ),
        click.option("--batch-size", type=click.IntRange(1), default=TRAINING["batch_size"], show_default=True),
        click.option("--learning-rate", type=FiniteFloat(), default=TRAINING["learning_rate"], show_default=True),
        click.option(
            "--max-length",
            default=None,
            metavar="SxW|N",
            show_default=_shown("max_sentences"),
            help="How much of each document is read: sentences x words per sentence for han (e.g. 30x40), "
            f"words for transformer and rnn (e.g. 400); at most {MAX_DOCUMENT_IDS:,} ids a document.",
        ),
        click.option("--embedding-dim", type=click.IntRange(1), default=None, show_default=_shown("embedding_dim")),
        click.option(
            "--embeddings",
            type=_Embeddings(),
            default=TRAINING["embeddings"],
            show_default=True,
            help="Start the word embeddings from word2vec trained on the training (and unlabelled) texts, "
            "from random, or from a word2vec/GloVe text file.",
        ),
        click.option("--seed", type=int, default=TRAINING["seed"], show_default=True),
        click.option(
            "--limit",
            type=click.IntRange(4),
            default=None,
            show_default="all",
            help="Train and test on a random sample of N documents each.",
        ),
        click.option(
            "--config",
            "config_file",
            type=click.Path(exists=True, dir_okay=False),
            default=None,
            show_default="none",
            help="JSON object of any other setting: training ones (patience, validation_split, min_count, "
            'max_vocab, pretrain_epochs, ngrams) or the model builder\'s (e.g. {"num_layers": 2} or '
            '{"attention": "luong-dot"}; docs/models.md), or a run\'s config.json. Options given here win.',
        ),
        click.option(
            "--mixed-precision",
            is_flag=True,
            default=False,
            show_default="off",
            help="Compute in float16 with float32 weights (Keras mixed_float16); for GPUs.",
        ),
        click.option(
            "--baseline/--no-baseline",
            default=True,
            show_default="on",
            help="Also fit TF-IDF + logistic regression (word 1-2 grams, and character 1-3 grams) on the same "
            "training split and report the better on validation beside the model.",
        ),
    ]


def _run_options():
    """The options that say where a run goes and how it runs, not what it trains."""
    return [
        click.option(
            "--output",
            type=click.Path(file_okay=False),
            default=None,
            show_default="runs/<model>-<dataset>-<time>",
            help="Run directory; never overwritten.",
        ),
        click.option(
            "--resume",
            type=click.Path(file_okay=False),
            default=None,
            metavar="RUN_DIR",
            show_default="off",
            help="Continue the interrupted run in RUN_DIR with what it recorded: its settings, and the data, "
            "columns and encoding left out here.",
        ),
        distribute_option,
    ]


def units_option(function):
    """--units auto|words|characters|subwords: what a table's run reads (`TextClassifier(text_units=)`)."""
    return click.option(
        "--units",
        "text_units",
        type=click.Choice(UNITS["choices"]),
        default=UNITS["units"],
        show_default=True,
        help="What the model reads: words, characters, or subwords learned from the training texts; auto: "
        "words for languages written with spaces, else the better of characters and subwords on training "
        "texts held out (docs/languages.md).",
    )(function)


def metric_option(function):
    """--metric accuracy|macro-f1: what a single-label run's decisions are for (`TextClassifier(decision_metric=)`)."""
    return click.option(
        "--metric",
        "decision_metric",
        type=click.Choice([metric.replace("_", "-") for metric in DECISION["metrics"]]),
        default=DECISION["metric"].replace("_", "-"),
        show_default=True,
        callback=lambda ctx, param, value: value.replace("-", "_"),
        help="What the decisions are for: accuracy (the most probable class), or macro-f1 (each class weighed "
        "by how rare it is, the weight chosen on the validation part; single-label runs).",
    )(function)


def distribute_option(function):
    return click.option(
        "--distribute",
        type=click.Choice(DISTRIBUTE),
        default="none",
        show_default=True,
        help="TensorFlow's MirroredStrategy (this machine's GPUs) or MultiWorkerMirroredStrategy "
        "(machines in TF_CONFIG; docs/distributed.md); the batch size is the global one.",
    )(function)


def encoding_option(function):
    return click.option(
        "--encoding",
        default=None,
        show_default="utf-8, or GB18030, Big5, Shift-JIS, EUC-KR where detected",
        help="Text encoding of the input files / standard input (e.g. latin-1, cp1252, utf-16); "
        "undecodable bytes are an error, never replaced.",
    )(function)


def run_option(function):
    return click.option(
        "--run",
        "run_dir",
        type=click.Path(),
        default=None,
        show_default="the latest under runs/",
        help="The run directory to use. Which run answers is said on standard error.",
    )(function)


def network_option(function):
    """--network auto|always: whether the network reads only the documents the n-gram part is not sure of."""
    return click.option(
        "--network",
        type=click.Choice(CASCADE["networks"]),
        default=CASCADE["network"],
        show_default=True,
        help="auto: the network reads only the texts the n-gram part is not sure of (the cut chosen on the run's "
        "validation texts); always: it reads every text (the whole combination).",
    )(function)


def min_confidence_option(help):
    """--min-confidence P: a decision less sure than P is no answer, left for a person."""
    return click.option(
        "--min-confidence",
        type=FiniteFloat(0.0, 1.0, min_open=False),
        default=None,
        metavar="P",
        help=help,
    )


def text_argument(function):
    """TEXT: one text, or `-` for standard input (or none, with --file)."""
    return click.argument("text", required=False)(function)


def text_column_option(function):
    return click.option("--text-column", default=None)(function)


def file_option(help):
    """--file FILE, with the command's own help."""
    return click.option("--file", "file_path", type=click.Path(), default=None, help=help)


# Option values into what the library takes ----------------------------------------------------------------------------


def check_text_or_file(text, file_path):
    if text is not None and file_path is not None:
        raise click.UsageError("give either a text (or - for standard input) or --file, not both")


def one_text(text):
    """The TEXT argument, refused when it is empty or holds bytes that are not UTF-8."""
    if not text.strip():
        raise HierattnError("the text is empty")
    try:
        text.encode("utf-8")
    except UnicodeEncodeError as error:  # undecodable bytes in the argument (kept as surrogates by Python)
        raise HierattnError(
            f"the text is not valid UTF-8 (a stray byte at character {error.start + 1}); pass it in a "
            "file with --file FILE --encoding ENCODING"
        ) from None
    return text


def stdin_if(text):
    """Standard input's bytes when TEXT is `-`, else None."""
    return sys.stdin.buffer if text == "-" else None


def refuse_existing(output):
    """Refuses an --output file that exists, or whose folder does not, before any work (`check_new_file`)."""
    if output and output != "-":
        check_new_file(output)


def given(name):
    """Whether the parameter `name` of the command running was given on the command line (not its default)."""
    source = click.get_current_context().get_parameter_source(name)
    return source is click.core.ParameterSource.COMMANDLINE


def interrupted_text(interrupt, distribute=None):
    """What to say when training is interrupted (Ctrl-C): the command that resumes the run, or that nothing can be.

    Args:
        interrupt: The `KeyboardInterrupt`: a
            `hierattn.runs.sources.TrainingInterrupted` says which run and
            whether it can be resumed; any other came before a run began.
        distribute: The `--distribute` the run was trained with, given again
            in the command.
    """
    run_dir = getattr(interrupt, "run_dir", None)
    if getattr(interrupt, "resumable", False):
        options = ["--distribute", distribute] if distribute not in (None, "none") else []
        return "interrupted: resume with " + command_line("train", "--resume", run_dir, *options)
    if run_dir is not None:
        return "interrupted before the run's first checkpoint: nothing to resume (its directory was removed)"
    return "interrupted before training began: nothing to resume"


def echo_err(line):
    """Prints a line of the library's log (which data, which run) on standard error."""
    click.echo(line, err=True)


def echo_rows(path, report, err=False):
    """Says how many rows of a table were used (`hierattn.data.tables.rows_text`), and on standard error how many not.

    With `err`, both go to standard error: for a command whose standard output
    is its answer, kept for piping (`evaluate`).
    """
    # imported when the command runs: --help, and refusing bad input, come before NumPy, pandas and TensorFlow load
    from hierattn.data.tables import rows_text

    used, skipped = rows_text(path, report)
    click.echo(used, err=err)
    if skipped:
        click.echo(skipped, err=True)
