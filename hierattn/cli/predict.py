"""`hierattn predict`: one text onto `hierattn.runs.predict.predict_text`, a file or standard input onto `predict_file`."""

import click

from hierattn.cli.options import (
    check_text_or_file,
    echo_err,
    encoding_option,
    file_option,
    friendly_errors,
    one_text,
    refuse_existing,
    run_option,
    stdin_if,
    text_argument,
    text_column_option,
)


@click.command()
@text_argument
@run_option
@file_option("Score a text file (one text per line) or a CSV/TSV/JSON-lines file (--text-column).")
@text_column_option
@click.option(
    "--output",
    type=click.Path(dir_okay=False),
    default=None,
    help="CSV of predictions for --file / - (default: print to standard output).",
)
@encoding_option
@friendly_errors
def predict(text, run_dir, file_path, text_column, output, encoding):
    """Classify text: predict "text", predict --file FILE, or predict - (standard input)."""
    # imported when the command runs: --help, and refusing bad input, come before NumPy, pandas and TensorFlow load
    from hierattn.cli.render import prediction_text

    # imported when the command runs: --help, and refusing bad input, come before pandas and TensorFlow load
    from hierattn.runs.predict import predict_file, predict_text

    check_text_or_file(text, file_path)
    refuse_existing(output)
    if text is None and file_path is None:
        raise click.UsageError("give a text, --file FILE, or - for standard input")
    if text is not None and text != "-":
        probabilities = predict_text(one_text(text), run_dir, log=echo_err)

        click.echo(prediction_text(list(probabilities), list(probabilities.values())))
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
    )
    if output:
        click.echo(f"scored {count:,} texts into {output}")
