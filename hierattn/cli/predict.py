"""`hierattn predict`: one text onto `TextClassifier.predict`, a file or standard input onto `score_to_csv`."""

import click

from hierattn.cli.options import (
    check_text_or_file,
    encoding_option,
    file_option,
    friendly_errors,
    load_run,
    one_text,
    refuse_existing,
    run_option,
    text_argument,
    text_column_option,
    texts_from,
    with_words,
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
    from hierattn.scoring import score_to_csv

    check_text_or_file(text, file_path)
    refuse_existing(output)
    if text is None and file_path is None:
        raise click.UsageError("give a text, --file FILE, or - for standard input")
    if text is not None and text != "-":
        text = one_text(text)
        run = load_run(run_dir)
        with_words(run.classifier, [text])
        from hierattn.explain.report import prediction_text

        click.echo(prediction_text(run.classifier.label_names, run.classifier.predict([text], verbose=0)[0]))
        return
    chunks = texts_from(text, file_path, text_column, encoding)
    run = load_run(run_dir)
    count = score_to_csv(run.classifier, chunks, output or click.open_file("-", "w"), progress=bool(output))
    if output:
        click.echo(f"scored {count:,} texts into {output}")
