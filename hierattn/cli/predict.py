"""`hierattn predict`: one text onto `hierattn.runs.predict.predict_one`, a file or standard input onto `predict_file`, files on Ray onto `hierattn.batch.predict_files`."""

import click

from hierattn.cli.options import (
    check_text_or_file,
    echo_err,
    encoding_option,
    file_option,
    friendly_errors,
    given,
    min_confidence_option,
    network_option,
    one_text,
    refuse_existing,
    run_option,
    stdin_if,
    text_argument,
    text_column_option,
)
from hierattn.defaults import BATCH

RAY_OPTIONS = ("address", "workers", "output_format")


@click.command()
@text_argument
@run_option
@file_option(
    "Score a text file (one text per line) or a CSV/TSV/JSON-lines/Parquet file (--text-column); "
    "with --engine ray, also a folder or a glob of them."
)
@text_column_option
@click.option(
    "--output",
    type=click.Path(),
    default=None,
    help="CSV of predictions for --file / - (default: print to standard output); with --engine ray, a new folder of parts.",
)
@encoding_option
@click.option(
    "--top-k",
    type=click.IntRange(1),
    default=None,
    metavar="K",
    help="Also rank the K most probable classes with their probabilities (a multi-label run: its labels, by their "
    "own probabilities): printed instead of every class; with --file (and --engine ray), columns top_1, p_top_1, "
    "... after the others. A K beyond the number of classes ranks them all, as Python's predict_top_k and the "
    "server's top_k do.",
)
@click.option(
    "--engine",
    type=click.Choice(["local", "ray"]),
    default="local",
    show_default=True,
    help="local: this process. ray: Ray Data workers, each holding the run's bundle (the ray extra).",
)
@click.option(
    "--address",
    default=None,
    help="With --engine ray: the cluster (auto, HOST:PORT, ray://HOST:PORT; refused within seconds where nothing "
    "answers); default: RAY_ADDRESS's, else a new local one.",
)
@click.option(
    "--workers",
    type=click.IntRange(1),
    default=None,
    help="With --engine ray: workers that score (default and most: one per CPU of the cluster).",
)
@click.option(
    "--output-format",
    type=click.Choice(["parquet", "csv"]),
    default=BATCH["output_format"],
    show_default=True,
    help="With --engine ray: the parts' format.",
)
@network_option
@min_confidence_option(
    "Answer only where the decision is at least this sure (its probability of being right, 0-1): the others get no "
    "label (with --file, an empty predicted cell and a confidence column), their probabilities still given, and "
    "a summary on standard error says how many were left for a person."
)
@friendly_errors
def predict(
    text,
    run_dir,
    file_path,
    text_column,
    output,
    encoding,
    top_k,
    engine,
    address,
    workers,
    output_format,
    network,
    min_confidence,
):
    """Classify text: predict "text", predict --file FILE, predict - (standard input), or predict --file ... --engine ray --output DIR.

    A multi-label run predicts each text's label set (the labels over their
    thresholds; with --file, joined by the run's label separator).
    """
    check_text_or_file(text, file_path)
    if engine == "ray":
        settings = {"top_k": top_k, "network": network, "min_confidence": min_confidence}
        _predict_on_ray(
            text, run_dir, file_path, text_column, output, encoding, address, workers, output_format, settings
        )
        return
    named = [f"--{name.replace('_', '-')}" for name in RAY_OPTIONS if given(name)]
    if named:
        raise click.UsageError(f"only with --engine ray: {', '.join(named)}")
    # imported when the command runs: --help, and refusing bad input, come before NumPy, pandas and TensorFlow load
    from hierattn.cli.render import answer_text
    from hierattn.policy import PredictOptions
    from hierattn.runs.predict import predict_file, predict_one

    options = PredictOptions(top_k, min_confidence, network)  # checked once, here
    refuse_existing(output)
    if text is None and file_path is None:
        raise click.UsageError("give a text, --file FILE, or - for standard input")
    if text is not None and text != "-":
        answer = predict_one(one_text(text), run_dir, log=echo_err, options=options)
        click.echo(answer_text(answer))
        return
    count = predict_file(
        file_path,
        output or click.open_file("-", "w"),
        run_dir,
        text_column,
        encoding,
        stream=stdin_if(text),
        progress=bool(output),
        log=echo_err,
        options=options,
    )
    if output:
        click.echo(f"scored {count:,} texts into {output}")


def _predict_on_ray(text, run_dir, file_path, text_column, output, encoding, address, workers, output_format, settings):
    if text is not None or file_path is None or not output:
        raise click.UsageError("--engine ray scores files: give --file PATH_OR_GLOB and --output DIR")
    from hierattn.batch.on_ray import import_ray, predict_files

    import_ray()  # one line saying how to install it, before any other check
    count = predict_files(
        file_path,
        output,
        run_dir,
        text_column,
        encoding,
        workers,
        address,
        output_format,
        log=echo_err,
        **settings,
    )
    click.echo(f"scored {count:,} rows into {output}")
