"""`hierattn evaluate`: options onto `hierattn.scoring.evaluation_data` and `evaluate_classifier`."""

import click

from hierattn.cli.options import (
    echo_rows,
    encoding_option,
    friendly_errors,
    load_run,
    refuse_existing,
    run_option,
)


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
@click.option("--output", type=click.Path(dir_okay=False), default=None, help="Also write the metrics as JSON.")
@encoding_option
@friendly_errors
def evaluate(run_dir, split, data_path, text_column, label_column, output, encoding):
    """Evaluate a run (the latest by default) on labelled data."""
    from hierattn.runs import find_run
    from hierattn.scoring import evaluate_classifier, evaluation_data

    refuse_existing(output)
    path = find_run(run_dir)
    data = evaluation_data(
        path, data_path, split, text_column, label_column, encoding, log=lambda line: click.echo(line, err=True)
    )  # checked before TensorFlow loads
    run = load_run(path)
    dataset, report = data.load(run.classifier.label_names)
    if report is not None:
        echo_rows(data.path, report)
    metrics = evaluate_classifier(run.classifier, dataset)
    from hierattn.explain.report import evaluation_text

    click.echo(evaluation_text(metrics))
    if output:
        from hierattn.jsonfile import save_json

        save_json(output, "hierattn.metrics/1", metrics, indent=2, overwrite=False)
        click.echo(f"wrote {output}")
