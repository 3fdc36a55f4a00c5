"""`hierattn evaluate`: options onto `hierattn.runs.evaluate.evaluate_run`.

Standard output holds the scores alone; which run, which rows of the data, and progress go to standard error.
"""

import functools

import click

from hierattn.cli.options import (
    echo_err,
    echo_rows,
    encoding_option,
    friendly_errors,
    min_confidence_option,
    network_option,
    refuse_existing,
    run_option,
)
from hierattn.utils.jsonfile import save_json


@click.command()
@run_option
@click.option(
    "--split",
    type=click.Choice(["test", "train"]),
    default="test",
    show_default=True,
    help="IMDB split, for runs trained on IMDB.",
)
@click.option(
    "--data",
    "data_path",
    type=click.Path(),
    default=None,
    help="A labelled CSV/TSV/JSON-lines file, or for IMDB runs the IMDB archive/folder (default: the "
    "run's own test file or IMDB source, from its config.json).",
)
@click.option("--text-column", default=None)
@click.option("--label-column", default=None)
@click.option(
    "--output",
    type=click.Path(dir_okay=False),
    default=None,
    help="Also write the metrics: as JSON, or, for a name ending in .html, as a page with the reliability diagram "
    "and the accuracy-coverage curve.",
)
@encoding_option
@network_option
@min_confidence_option(
    "Also report what answering only decisions at least this sure (0-1) gives: the share answered, "
    "and their accuracy (micro-F1 for a multi-label run)."
)
@friendly_errors
def evaluate(run_dir, split, data_path, text_column, label_column, output, encoding, network, min_confidence):
    """Evaluate a run (the latest by default) on labelled data."""
    # imported when the command runs: --help, and refusing bad input, come before NumPy, pandas and TensorFlow load
    from hierattn.cli.render import evaluation_text

    # imported when the command runs: --help, and refusing bad input, come before pandas and TensorFlow load
    from hierattn.runs.evaluate import evaluate_run
    from hierattn.runs.run import METRICS_FORMAT, Run

    refuse_existing(output)
    run = Run.open(run_dir)  # found once: the evaluation and its page name the same run
    metrics = evaluate_run(
        run,
        data_path,
        split,
        text_column,
        label_column,
        encoding,
        log=echo_err,
        on_table=functools.partial(echo_rows, err=True),
        network=network,
        min_confidence=min_confidence,
    )

    click.echo(evaluation_text(metrics))
    if output and output.lower().endswith((".html", ".htm")):
        from hierattn.runs.evaluation_page import write_evaluation_html

        write_evaluation_html(output, metrics, f"{run.path.name}: evaluation")
        click.echo(f"wrote {output}")
    elif output:
        save_json(output, METRICS_FORMAT, metrics, indent=2, overwrite=False)
        click.echo(f"wrote {output}")
