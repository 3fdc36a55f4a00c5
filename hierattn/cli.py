"""The `hierattn` command line (also run as `python cli.py`).

The CLI only parses options and calls the library; errors a user can fix are
printed as one line with a non-zero exit code. Process-wide settings (the
TensorFlow allocator, its C++ logging, warnings) are chosen here, by the
application, and only when it runs as a program (`main`), never on import.
"""

import functools
import math
import os
import pathlib
import sys
import warnings

import click

from hierattn import __version__
from hierattn.defaults import LABEL_COLUMNS, TEXT_COLUMNS
from hierattn.errors import HierattnError


def configure_process(verbose=False):
    """The process-wide settings of the `hierattn` program (not of the library).

    * `TF_CPU_ALLOCATOR_USE_BFC=true` unless set: TensorFlow pools freed CPU
      tensor memory instead of handing large blocks back to the operating
      system (BENCHMARKS.md, "CPU memory allocator").
    * Without `verbose`: TensorFlow's C++ log lines (written straight to file
      descriptor 2, e.g. `failed call to cuInit` on a machine without a GPU)
      are discarded, Python's own `sys.stderr` keeps the real standard error,
      and library warnings are not shown (the CLI reports what matters itself).
    """
    os.environ.setdefault("TF_CPU_ALLOCATOR_USE_BFC", "true")
    if verbose:
        return
    os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
    warnings.simplefilter("ignore")
    import logging

    logging.getLogger("tensorflow").setLevel(logging.ERROR)
    try:
        sys.stderr.flush()
        saved = os.dup(2)
        devnull = os.open(os.devnull, os.O_WRONLY)
    except (OSError, AttributeError, ValueError):  # no real file descriptor 2 (embedded use)
        return
    os.dup2(devnull, 2)
    os.close(devnull)
    sys.stderr = open(saved, "w", encoding=getattr(sys.stderr, "encoding", None) or "utf-8",
                      errors="backslashreplace", buffering=1, closefd=True)


def friendly_errors(command):
    """Turns library errors, and files that cannot be read or written, into one `Error: ...` line and exit code 1."""

    @functools.wraps(command)
    def wrapper(*args, **kwargs):
        try:
            return command(*args, **kwargs)
        except HierattnError as error:
            raise click.ClickException(str(error)) from None
        except OSError as error:  # permissions, a full disk, a name too long, a path under /proc, ...
            from hierattn.atomic import reason

            raise click.ClickException((f"{error.filename}: " if error.filename else "") + reason(error)) from None
        except MemoryError:
            raise click.ClickException("out of memory: the data does not fit in this machine's memory; try --limit "
                                       "N") from None
        except KeyboardInterrupt:
            click.echo("\nError: interrupted", err=True)
            sys.exit(130)

    return wrapper


class FiniteFloat(click.ParamType):
    """A finite float within `minimum` and `maximum` (NaN and infinities are refused)."""

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


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="hierattn")
@click.option("-v", "--verbose", is_flag=True,
              help="Also show TensorFlow's own log lines and library warnings.")
@click.pass_context
def cli(ctx, verbose):
    """hierattn: attention-based document classification you can explain."""
    if ctx.obj and ctx.obj.get("program"):
        configure_process(verbose)


def main(args=None):
    """The `hierattn` program: the CLI with the program's process settings."""
    cli.main(args=args, obj={"program": True}, prog_name="hierattn")


def _shown(name):
    """How --help shows a default that depends on the model or on the data (hierattn.defaults)."""
    from hierattn.defaults import BACKBONES, PREPROCESSING

    if name in PREPROCESSING:
        return "95th percentile of the training texts"
    values = {}
    for model, defaults in BACKBONES.items():
        values.setdefault(defaults[name], []).append(model)
    return ", ".join(f"{value} for {'/'.join(models)}" for value, models in values.items())


class Embeddings(click.ParamType):
    """word2vec, none, or an existing word-vector file."""

    name = "word2vec|none|FILE"

    def convert(self, value, param, ctx):
        if value in ("word2vec", "none"):
            return value
        return click.Path(exists=True, dir_okay=False).convert(value, param, ctx)


def train_options(function):
    from hierattn.defaults import DISTRIBUTE, MODELS, TRAINING

    options = [
        click.option("--model", type=click.Choice(MODELS), default="han", show_default=True),
        click.option("--epochs", type=click.IntRange(1), default=TRAINING["epochs"], show_default=True,
                     help="Most epochs (early stopping on the validation loss)."),
        click.option("--batch-size", type=click.IntRange(1), default=TRAINING["batch_size"], show_default=True),
        click.option("--learning-rate", type=FiniteFloat(), default=TRAINING["learning_rate"], show_default=True),
        click.option("--max-length", default=None, metavar="SxW|N", show_default=_shown("max_sentences"),
                     help="How much of each document is read: sentences x words per sentence for han (e.g. 30x40), "
                          "words for transformer and rnn (e.g. 400)."),
        click.option("--embedding-dim", type=click.IntRange(1), default=None, show_default=_shown("embedding_dim")),
        click.option("--embeddings", type=Embeddings(), default=TRAINING["embeddings"], show_default=True,
                     help="Start the word embeddings from word2vec trained on the training (and unlabelled) texts, "
                          "from random, or from a word2vec/GloVe text file."),
        click.option("--seed", type=int, default=TRAINING["seed"], show_default=True),
        click.option("--limit", type=click.IntRange(4), default=None, show_default="all",
                     help="Train and test on a random sample of N documents each."),
        click.option("--config", "config_file", type=click.Path(exists=True, dir_okay=False), default=None,
                     show_default="none",
                     help='JSON object of any other setting: training ones (patience, validation_split, min_count, '
                          'max_vocab, pretrain_epochs, ngrams) or the model builder\'s (e.g. {"num_layers": 2} or '
                          '{"attention": "luong-dot"}; README, Models). Options given here win.'),
        click.option("--output", type=click.Path(file_okay=False), default=None,
                     show_default="runs/<model>-<dataset>-<time>", help="Run directory; never overwritten."),
        click.option("--resume", type=click.Path(file_okay=False), default=None, metavar="RUN_DIR",
                     show_default="off", help="Continue the interrupted run in RUN_DIR, with its own settings."),
        click.option("--distribute", type=click.Choice(DISTRIBUTE), default="none", show_default=True,
                     help="TensorFlow's MirroredStrategy (this machine's GPUs) or MultiWorkerMirroredStrategy "
                          "(machines in TF_CONFIG; README, More than one machine); the batch size is the global one."),
        click.option("--mixed-precision", is_flag=True, default=False, show_default="off",
                     help="Compute in float16 with float32 weights (Keras mixed_float16); for GPUs."),
        click.option("--baseline/--no-baseline", default=True, show_default="on",
                     help="Also fit TF-IDF (1-2 grams) + logistic regression on the same training split and report "
                          "it beside the model."),
    ]
    for option in reversed(options):
        function = option(function)
    return function


def encoding_option(function):
    return click.option("--encoding", default="utf-8", show_default=True,
                        help="Text encoding of the input files / standard input (e.g. latin-1, cp1252, utf-16); "
                             "undecodable bytes are an error, never replaced.")(function)


SETTINGS = ("model", "epochs", "batch_size", "learning_rate", "max_length", "embedding_dim", "embeddings", "seed",
            "limit", "mixed_precision", "baseline")


def _config(options):
    """The `TrainConfig` the options (and --config FILE) describe, checked before any data is read."""
    from hierattn.jsonfile import read_json_object
    from hierattn.training import TrainConfig, length_settings

    context = click.get_current_context()
    given = {name: options[name] for name in SETTINGS
             if context.get_parameter_source(name) is click.core.ParameterSource.COMMANDLINE}
    if options["resume"]:
        if given or options["config_file"] or options["output"]:
            raise click.UsageError("--resume continues a run with its own settings: give no other training option")
        return None
    values = read_json_object(options["config_file"]) if options["config_file"] else {}
    if "max_length" in given:
        given.update(length_settings({**values, **given}.get("model", "han"), given.pop("max_length")))
    return TrainConfig.from_dict({**values, **given}).validate()


def _with_data(config, options, data):
    """The config to train with, its `data` set; resuming, the run's own config, refused if the data changed."""
    from hierattn.runs import check_same_data
    from hierattn.training import load_config

    if config is None:
        config = load_config(options["resume"]).validate()
        check_same_data(options["resume"], config.data, data)  # before any data is read
    config.data = data
    return config


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
    from hierattn.runs import new_run_dir
    from hierattn.training import train

    resume = options["resume"]
    output = pathlib.Path(resume or options["output"] or new_run_dir("runs", config.model, dataset_name))
    click.echo(f"run directory: {output}")
    run = train(train_data, test_data, config, output, unlabeled=unlabeled, resume=bool(resume),
                dataset_name=dataset_name, log=click.echo, distribute=options["distribute"])
    _print_metrics(run.metrics)
    if not run.chief:
        click.echo(f"\nthis worker wrote nothing; the chief wrote {output}/")
        return
    click.echo(f"\nwrote {output}/: model.keras (the whole classifier), config.json, history.csv, metrics.json, "
               f"logs/ (TensorBoard: tensorboard --logdir {output}/logs)")
    click.echo(f'explain a prediction: python cli.py explain "your text" --run {output} '
               "[--format html --output page.html]")


def _print_metrics(metrics):
    from hierattn.baseline import NAME

    baseline, parts = metrics.get("baseline", {}), metrics.get("parts", {})
    if parts:
        click.echo(f"the network and the n-gram part combined with weights {parts['network_weight']:.2f} and "
                   f"{parts['ngram_weight']:.2f} (network share {parts['network_share']:.2f}, chosen on validation)")
    if "skipped" in baseline:
        click.echo(f"no baseline: scikit-learn could not fit it ({baseline['skipped']})")
    for split in ("validation", "test"):
        if split in metrics:
            m = metrics[split]
            line = f"{split}: accuracy {m['accuracy']:.4f}, macro-F1 {m['macro_f1']:.4f} ({m['documents']:,} documents)"
            for part, label in (("network", "network alone"), ("ngrams", "n-gram part alone")):
                if split in parts.get(part, {}):
                    p = parts[part][split]
                    line += f" | {label}: accuracy {p['accuracy']:.4f}, macro-F1 {p['macro_f1']:.4f}"
            if split in baseline:
                b = baseline[split]
                line += f" | {NAME} baseline: accuracy {b['accuracy']:.4f}, macro-F1 {b['macro_f1']:.4f}"
            click.echo(line)


@cli.group()
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

    config = _config(options)
    _check_output(options)
    located = locate_imdb(source)
    config = _with_data(config, options, {"imdb": describe_source(located)})
    splits = ("train", "test", "unsup") if config.uses_unlabeled else ("train", "test")
    datasets = load_imdb(located, splits=splits)  # train() cuts every part to --limit
    unlabeled = datasets["unsup"].texts if "unsup" in datasets else None
    _run_training(options, config, "imdb", datasets["train"], datasets["test"], unlabeled)


@train.command("csv")
@click.argument("path", type=click.Path())
@click.option("--test", "test_path", type=click.Path(exists=True, dir_okay=False), default=None, show_default="none",
              help="Labelled test file, evaluated once at the end.")
@click.option("--text-column", default=None, show_default="the first of " + ", ".join(TEXT_COLUMNS),
              help="Column of the texts.")
@click.option("--label-column", default=None, show_default="the first of " + ", ".join(LABEL_COLUMNS),
              help="Column of the labels.")
@click.option("--unlabeled", "unlabeled_path", type=click.Path(exists=True, dir_okay=False), default=None,
              show_default="none",
              help="Unlabelled texts for word2vec (a text file, one per line, or a table's --text-column).")
@encoding_option
@train_options
@friendly_errors
def train_csv(path, test_path, text_column, label_column, unlabeled_path, encoding, **options):
    """Train on any CSV / TSV / JSON-lines file of texts and labels."""
    from hierattn.data import load_table
    from hierattn.runs import describe_source
    from hierattn.scoring import read_texts

    config = _config(options)
    _check_output(options)
    files = {"train": path, "test": test_path, "unlabeled": unlabeled_path}
    config = _with_data(config, options, {name: describe_source(file) for name, file in files.items() if file})
    if unlabeled_path and not config.uses_unlabeled:
        raise click.UsageError("--unlabeled texts would go unused: they feed word2vec (--embeddings word2vec)")
    train_data, report = load_table(path, text_column, label_column, encoding=encoding)
    _report_rows(path, report)
    test_data = None
    if test_path:
        test_data, test_report = load_table(test_path, text_column, label_column, label_map=train_data.label_map,
                                            encoding=encoding)
        _report_rows(test_path, test_report)
    unlabeled = read_texts(unlabeled_path, text_column, encoding=encoding) if unlabeled_path else None
    if unlabeled:
        click.echo(f"{unlabeled_path}: {len(unlabeled):,} unlabelled texts")
    config.data.update(text_column=report["text_column"], label_column=report["label_column"], encoding=encoding)
    _run_training(options, config, pathlib.Path(path).stem, train_data, test_data, unlabeled)


def _report_rows(path, report):
    click.echo(f"{path}: {report['used']:,} of {report['rows']:,} rows used "
               f"(text column {report['text_column']!r}, label column {report['label_column']!r})")
    if report["used"] < report["rows"]:
        click.echo(f"  skipped {report['skipped_missing_text']} without text, "
                   f"{report['skipped_missing_label']} without a label (empty, NaN, NA, null, ...)", err=True)


def _import_tensorflow():
    """Imports TensorFlow without the scikit-learn import Keras makes on the way.

    Keras imports scikit-learn (about 0.8 s of a ~5 s cold start here) only
    for its `keras.wrappers` scikit-learn estimators, and falls back quietly
    when it is missing. The commands that load a run never use those
    wrappers, so scikit-learn is hidden while TensorFlow loads and is
    importable normally right after (for `evaluate`'s metrics).
    """
    if "tensorflow" in sys.modules or "sklearn" in sys.modules:
        return
    sys.modules["sklearn"] = None
    try:
        import tensorflow  # noqa: F401
    finally:
        del sys.modules["sklearn"]


def run_option(function):
    return click.option("--run", "run_dir", type=click.Path(), default=None, show_default="the latest under runs/",
                        help="The run directory to use.")(function)


def _load(run_dir):
    from hierattn.runs import find_run, load_run

    path = find_run(run_dir)  # a wrong path is reported before TensorFlow loads
    _import_tensorflow()
    run = load_run(path)
    click.echo(f"run: {run.path}", err=True)
    return run


@cli.command()
@run_option
@click.option("--split", type=click.Choice(["test", "train"]), default="test", show_default=True,
              help="IMDB split, for runs trained on IMDB.")
@click.option("--data", "data_path", type=click.Path(), default=None,
              help="A labelled CSV/TSV/JSON-lines file, or for IMDB runs the IMDB archive/folder (default: the "
                   "run's own test file or IMDB source, from its config.json).")
@click.option("--text-column", default=None)
@click.option("--label-column", default=None)
@click.option("--output", type=click.Path(dir_okay=False), default=None, help="Also write the metrics as JSON.")
@encoding_option
@friendly_errors
def evaluate(run_dir, split, data_path, text_column, label_column, output, encoding):
    """Evaluate a run (the latest by default) on labelled data."""
    from hierattn.data import load_imdb, load_table, locate_imdb, read_table
    from hierattn.data.dataset import LabelMap
    from hierattn.data.tables import LABEL_COLUMNS, TEXT_COLUMNS, pick_column
    from hierattn.runs import find_run, read_status, recorded_data
    from hierattn.scoring import TABLE_SUFFIXES, evaluate_classifier

    _refuse_existing(output)
    path = find_run(run_dir)
    recorded = recorded_data(path)
    if data_path is None and "test" in recorded:  # the run's own test file, with its columns and encoding
        _check_recorded(recorded, "test")
        data_path = recorded["test"]["path"]
        text_column, label_column = text_column or recorded.get("text_column"), label_column or recorded.get(
            "label_column")
        encoding = recorded.get("encoding", encoding)
        click.echo(f"data: {data_path} (the run's test file)", err=True)
    is_table = data_path and pathlib.Path(data_path).suffix.lower() in TABLE_SUFFIXES
    if is_table:
        frame = read_table(data_path, encoding=encoding)  # file and column errors come before TensorFlow's import
        pick_column(frame.columns, text_column, TEXT_COLUMNS, "text")
        pick_column(frame.columns, label_column, LABEL_COLUMNS, "label")
    elif read_status(path).get("dataset") == "imdb":
        if data_path is None and "imdb" in recorded:
            _check_recorded(recorded, "imdb")
        source = locate_imdb(data_path or recorded.get("imdb", {}).get("path"))
    elif data_path:
        raise HierattnError(f"--data {data_path}: give a labelled {'/'.join(TABLE_SUFFIXES)} file (this run was not "
                            "trained on IMDB)")
    else:
        raise HierattnError("this run was trained without a test file: pass labelled data with --data FILE")
    run = _load(path)
    if is_table:
        dataset, report = load_table(frame, text_column, label_column, label_map=LabelMap(run.classifier.label_names))
        _report_rows(data_path, report)
    else:
        dataset = load_imdb(source, splits=(split,))[split]
    metrics = evaluate_classifier(run.classifier, dataset)
    click.echo(f"accuracy {metrics['accuracy']:.4f}, macro-F1 {metrics['macro_f1']:.4f} on {metrics['documents']:,} documents")
    click.echo(f"confusion matrix (rows: true, columns: predicted; {', '.join(map(str, metrics['labels']))}):")
    for row in metrics["confusion_matrix"]:
        click.echo("  " + " ".join(f"{v:7d}" for v in row))
    if output:
        from hierattn.jsonfile import save_json

        save_json(output, "hierattn.metrics/1", metrics, indent=2, overwrite=False)
        click.echo(f"wrote {output}")


def _check_recorded(recorded, name):
    """Refuses to evaluate on a recorded data file that changed since the run was trained."""
    from hierattn.runs import data_changes

    change = data_changes({name: recorded[name]}).get(name)
    if change:
        file = recorded[name]["path"]
        remedy = (f"to evaluate on it as it is now, pass it with --data {file}" if pathlib.Path(file).exists() else
                  "pass labelled data with --data FILE")
        raise HierattnError(f"{change}; {remedy}")


def _refuse_existing(output):
    """Refuses an --output file that exists, or whose folder does not, before any work."""
    if not output or output == "-":
        return
    path = pathlib.Path(output)
    if path.exists():
        raise HierattnError(f"{output} already exists; choose another --output (nothing was overwritten)")
    folder = path.parent
    if not folder.is_dir():
        raise HierattnError(f"the folder of --output {output} " + ("is a file" if folder.exists() else
                                                                  "does not exist; create it first"))


def _texts_from(text, file_path, text_column, encoding):
    """Chunks of texts from a file or standard input (`text == "-"`), checked before the model loads."""
    from hierattn.scoring import iter_text_chunks

    stream = sys.stdin.buffer if text == "-" else None
    return iter_text_chunks(file_path, text_column, stream=stream, encoding=encoding)


def _one_text(text):
    if not text.strip():
        raise HierattnError("the text is empty")
    try:
        text.encode("utf-8")
    except UnicodeEncodeError as error:  # undecodable bytes in the argument (kept as surrogates by Python)
        raise HierattnError(f"the text is not valid UTF-8 (a stray byte at character {error.start + 1}); pass it in a "
                            "file with --file FILE --encoding ENCODING") from None
    return text


def _check_words(run, texts):
    """The positions of the texts that have words; refuses when none has."""
    wordless = [i for i, text in enumerate(texts) if not run.classifier.preprocessor.has_words(text)]
    if len(wordless) == len(texts):
        raise HierattnError(("the text has no word" if len(texts) == 1 else "none of the texts has a word") +
                            " to read (only markup, symbols or spaces)")
    if wordless:
        click.echo(f"skipped {len(wordless)} text(s) without words (only markup or spaces)", err=True)
    skipped = set(wordless)
    return [i for i in range(len(texts)) if i not in skipped]


@cli.command()
@click.argument("text", required=False)
@run_option
@click.option("--file", "file_path", type=click.Path(), default=None,
              help="Score a text file (one text per line) or a CSV/TSV/JSON-lines file (--text-column).")
@click.option("--text-column", default=None)
@click.option("--output", type=click.Path(dir_okay=False), default=None,
              help="CSV of predictions for --file / - (default: print to standard output).")
@encoding_option
@friendly_errors
def predict(text, run_dir, file_path, text_column, output, encoding):
    """Classify text: predict "text", predict --file FILE, or predict - (standard input)."""
    from hierattn.scoring import score_to_csv

    _check_text_or_file(text, file_path)
    _refuse_existing(output)
    if text is None and file_path is None:
        raise click.UsageError('give a text, --file FILE, or - for standard input')
    if text is not None and text != "-":
        text = _one_text(text)
        run = _load(run_dir)
        _check_words(run, [text])
        names = run.classifier.label_names
        probabilities = run.classifier.predict([text], verbose=0)[0]
        click.echo(f"predicted: {names[int(probabilities.argmax())]}")
        for name, p in zip(names, probabilities):
            click.echo(f"  {name}: {p:.4f}")
        return
    chunks = _texts_from(text, file_path, text_column, encoding)
    run = _load(run_dir)
    count = score_to_csv(run.classifier, chunks, output or click.open_file("-", "w"), progress=bool(output))
    if output:
        click.echo(f"scored {count:,} texts into {output}")


@cli.command()
@click.argument("text", required=False)
@run_option
@click.option("--file", "file_path", type=click.Path(), default=None,
              help="Explain every text of a file (one per line, or a CSV/TSV/JSON-lines column).")
@click.option("--dataset", default=None,
              help="Explain a whole dataset: imdb, or a CSV/TSV/JSON-lines/text file. Writes the most-attended "
                   "words per predicted class to --output and each document's top-k to <output>.documents.csv.")
@click.option("--split", type=click.Choice(["test", "train", "unsup"]), default="test", show_default=True,
              help="IMDB split for --dataset imdb.")
@click.option("--data", "data_path", type=click.Path(), default=None, help="IMDB archive or folder for --dataset imdb.")
@click.option("--limit", type=click.IntRange(1), default=None,
              help="--dataset: only N documents (IMDB: a seeded random sample; a file: its first N).")
@click.option("--text-column", default=None)
@click.option("--top-k", type=click.IntRange(1), default=10, show_default=True)
@click.option("--format", "fmt", type=click.Choice(["text", "json", "csv", "html"]), default="text", show_default=True)
@click.option("--output", type=click.Path(dir_okay=False), default=None, help="Write to this file (never overwritten).")
@click.option("--check", is_flag=True,
              help="Also test faithfulness: delete each text's top 1/5/10 attended words and compare the drop in "
                   "the predicted probability with random words and with gradient x input.")
@click.option("--signed", is_flag=True,
              help="Also show each word's evidence for or against the prediction (gradient x input): json/csv "
                   "columns, and a green/red view in html.")
@click.option("--random-draws", type=click.IntRange(1), default=5, show_default=True,
              help="Random orders per document for --check.")
@click.option("--seed", type=int, default=0, show_default=True, help="Seed of --limit's sample and --check's random words.")
@encoding_option
@friendly_errors
def explain(text, run_dir, file_path, dataset, split, data_path, limit, text_column, top_k, fmt, output, check, signed,
            random_draws, seed, encoding):
    """Explain predictions: explain "text" | --file FILE | - | --dataset imdb|FILE.

    Prints the predicted label and probabilities, the top-k most attended
    words (HAN: word weight x sentence weight) with their positions, and the
    sentence weights. json and csv list every word; html writes one
    self-contained page. With --dataset, the most-attended words of a whole
    corpus per predicted class. --check measures whether the weights matter.
    """
    _check_text_or_file(text, file_path)
    _refuse_existing(output)
    if dataset is not None:
        if text is not None or file_path is not None:
            raise click.UsageError("give either --dataset or texts (a text, --file or -), not both")
        from hierattn.explain import documents_path

        _refuse_existing(output and str(documents_path(output)))
        _refuse_existing(output and str(_check_path(output)) if check else None)
        from hierattn.explain import open_corpus

        source = open_corpus(dataset, split, data_path, text_column, limit, seed, encoding=encoding)
        run = _load(run_dir)
        _explain_dataset(run, source, top_k, output, check, random_draws, seed)
        return
    if text is None and file_path is None:
        raise click.UsageError('give a text, --file FILE, - for standard input, or --dataset')
    ids = labels = None
    if text is not None and text != "-":
        texts = [_one_text(text)]
    else:
        from hierattn.scoring import text_rows

        _, rows = text_rows(_texts_from(text, file_path, text_column, encoding))
        rows = [row for row in rows if row[0].strip()]
        if not rows:
            raise HierattnError(f"no text to explain in {file_path or 'standard input'} (every line is blank)")
        texts, ids, labels = (list(column) for column in zip(*rows))
    run = _load(run_dir)
    kept = _check_words(run, texts)
    texts, ids, labels = ([values[i] for i in kept] if values is not None else None for values in (texts, ids, labels))
    explanations = run.classifier.explain(texts, ids=ids, labels=labels, signed=signed)
    _emit(_render(explanations, fmt, top_k), output)
    if check:
        from hierattn.explain import check_faithfulness

        report = check_faithfulness(run.classifier, texts, random_draws=random_draws, seed=seed, progress=len(texts) > 50)
        click.echo(report.to_markdown(), err=fmt != "text" and not output)


def _render(explanations, fmt, top_k):
    from hierattn.explain import to_html, to_json, to_text

    if fmt == "text":
        return "\n\n".join(to_text(e, top_k) for e in explanations) + "\n"
    if fmt == "json":
        return to_json(explanations, top_k) + "\n"
    if fmt == "html":
        return to_html(explanations)
    return _csv_text(explanations)


def _check_path(output):
    output = pathlib.Path(output)
    return output.with_name(f"{output.stem}.faithfulness.json")


def _explain_dataset(run, source, top_k, output, check, random_draws, seed):
    from hierattn.explain import Explainer, explain_corpus

    if check:  # the check needs the texts a second time
        source.texts = list(source.texts)
    summary = explain_corpus(Explainer(run), source.texts, output, source.labels, source.ids, top_k, total=source.total)
    click.echo(f"explained {summary.documents:,} documents" +
               (f" (skipped {summary.skipped_empty} empty)" if summary.skipped_empty else "") +
               (f"; accuracy {summary.accuracy:.4f}" if summary.labelled else ""))
    for label, count in sorted(summary.class_documents.items(), key=lambda item: str(item[0])):
        click.echo(f"  {label} ({count:,} documents): {', '.join(summary.words.top(label, 10))}")
    for path in summary.outputs:
        click.echo(f"wrote {path}")
    if check:
        from hierattn.explain import check_faithfulness
        from hierattn.jsonfile import save_json

        report = check_faithfulness(run.classifier, source.texts, random_draws=random_draws, seed=seed, progress=True)
        click.echo(report.to_markdown())
        if output:
            save_json(_check_path(output), "hierattn.faithfulness/1", report.to_dict(), indent=2, overwrite=False)
            click.echo(f"wrote {_check_path(output)}")


def _csv_text(explanations):
    import csv
    import io

    from hierattn.explain import CSV_COLUMNS, to_rows

    buffer = io.StringIO()
    writer = csv.DictWriter(buffer, fieldnames=CSV_COLUMNS)
    writer.writeheader()
    writer.writerows(to_rows(explanations))
    return buffer.getvalue()


def _emit(rendered, output):
    """Prints, or writes a file atomically (the caller refused existing files)."""
    if not output:
        click.echo(rendered, nl=False)
        return
    from hierattn.atomic import write_text

    write_text(output, rendered, overwrite=False)
    click.echo(f"wrote {output}", err=True)


def _check_text_or_file(text, file_path):
    if text is not None and file_path is not None:
        raise click.UsageError("give either a text (or - for standard input) or --file, not both")


if __name__ == "__main__":
    main()

