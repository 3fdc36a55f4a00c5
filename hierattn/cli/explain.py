"""`hierattn explain`: one text onto `hierattn.runs.explain.explain_texts`, a file or standard input onto `explain_file`, a dataset onto `explain_dataset`."""

import pathlib

import click

from hierattn.cli.options import (
    check_text_or_file,
    echo_err,
    encoding_option,
    file_option,
    friendly_errors,
    network_option,
    one_text,
    refuse_existing,
    run_option,
    stdin_if,
    text_argument,
    text_column_option,
)
from hierattn.utils.atomic import write_text


@click.command()
@text_argument
@run_option
@file_option("Explain every text of a file (one per line, or a CSV/TSV/JSON-lines column).")
@click.option(
    "--dataset",
    default=None,
    help="Explain a whole dataset: imdb, or a CSV/TSV/JSON-lines/text file. Writes each predicted class's "
    "words ranked by evidence and by attention to --output, and each document's top-k words by evidence to "
    "<output>.documents.csv.",
)
@click.option(
    "--split",
    type=click.Choice(["test", "train", "unsup"]),
    default="test",
    show_default=True,
    help="IMDB split for --dataset imdb.",
)
@click.option("--data", "data_path", type=click.Path(), default=None, help="IMDB archive or folder for --dataset imdb.")
@click.option(
    "--limit",
    type=click.IntRange(1),
    default=None,
    help="--dataset: only N documents (IMDB: a seeded random sample; a file: its first N).",
)
@text_column_option
@click.option(
    "--label",
    "label",
    multiple=True,
    help="Multi-label runs: explain this label (repeat for several) in every text, instead of each text's "
    "predicted labels; with --dataset, rank only this label's words.",
)
@click.option("--top-k", type=click.IntRange(1), default=10, show_default=True)
@click.option("--format", "fmt", type=click.Choice(["text", "json", "csv", "html"]), default="text", show_default=True)
@click.option("--output", type=click.Path(dir_okay=False), default=None, help="Write to this file (never overwritten).")
@click.option(
    "--check",
    is_flag=True,
    help="Also test faithfulness the ERASER way: rank each text's words by evidence, attention, gradient x "
    "input and at random, and rerun the whole classifier without the top 1/5/10/20/50% of them "
    "(comprehensiveness: the drop in the predicted class's probability; multi-label runs: the explained "
    "label's) and with only them (sufficiency). "
    "Ends with a one-line verdict.",
)
@click.option(
    "--random-draws",
    type=click.IntRange(1),
    default=5,
    show_default=True,
    help="Random orders per document for --check.",
)
@click.option(
    "--seed", type=int, default=0, show_default=True, help="Seed of --limit's sample and --check's random words."
)
@encoding_option
@network_option
@friendly_errors
def explain(
    text,
    run_dir,
    file_path,
    dataset,
    split,
    data_path,
    limit,
    text_column,
    label,
    top_k,
    fmt,
    output,
    check,
    random_draws,
    seed,
    encoding,
    network,
):
    """Explain predictions: explain "text" | --file FILE | - | --dataset imdb|FILE.

    Prints the prediction and its probability, the top-k words with most
    evidence for it and for the runner-up (each word's part of the margin
    between them), how much of that margin came from the network's words, the
    n-gram words and constant terms, then where the network read (the top-k
    attended words, sentence weights) and the top n-grams. json and csv list
    every word with its evidence; html writes one self-contained page. With
    --dataset, each predicted class's words with most evidence and most
    attention over a whole corpus. --check measures whether the explanations
    are faithful (ERASER comprehensiveness and sufficiency) and ends with a
    verdict.

    A multi-label run explains each predicted label of a text (none
    predicted: the most probable label), or those of --label: each word's
    part of the label's log-odds over its threshold; --dataset ranks the
    words of each label over the documents where it is predicted.
    """
    # imported when the command runs: --help, and refusing bad input, come before NumPy, pandas and TensorFlow load
    from hierattn.explain.report import render

    check_text_or_file(text, file_path)
    refuse_existing(output)
    options = {"check": check, "random_draws": random_draws, "seed": seed, "log": echo_err, "network": network}
    options.update(label=list(label) or None)
    if dataset is not None:
        if text is not None or file_path is not None:
            raise click.UsageError("give either --dataset or texts (a text, --file or -), not both")
        # imported when the command runs: --help, and refusing bad input, come before pandas and TensorFlow load
        from hierattn.runs.explain import explain_dataset

        summary, report = explain_dataset(
            dataset,
            run_dir,
            split,
            data_path,
            text_column,
            limit,
            encoding=encoding,
            top_k=top_k,
            output=output,
            **options,
        )
        _echo_dataset(summary, report, output)
        return
    if text is None and file_path is None:
        raise click.UsageError("give a text, --file FILE, - for standard input, or --dataset")
    # imported when the command runs: --help, and refusing bad input, come before pandas and TensorFlow load
    from hierattn.runs.explain import explain_file, explain_texts

    if text is not None and text != "-":
        explanations, report = explain_texts([one_text(text)], run_dir, **options)
    else:
        explanations, report = explain_file(file_path, run_dir, text_column, encoding, stdin_if(text), **options)

    _emit(render(explanations, fmt, top_k), output)
    if report is not None:
        click.echo(report.to_markdown(), err=fmt != "text" and not output)


def _echo_dataset(summary, report, output):
    """What `explain_dataset` found and wrote."""
    # imported when the command runs: --help, and refusing bad input, come before NumPy, pandas and TensorFlow load
    # imported when the command runs: --help, and refusing bad input, come before pandas and TensorFlow load
    from hierattn.cli.render import corpus_text
    from hierattn.runs.explain import faithfulness_path

    click.echo(corpus_text(summary))
    for path in summary.outputs:
        click.echo(f"wrote {path}")
    if report is not None:
        if output:
            click.echo(f"wrote {faithfulness_path(output)}")
        click.echo(report.to_markdown())  # last: the output ends with the verdict


def _emit(rendered, output):
    """Prints, or writes a file atomically (the caller refused existing files)."""
    if not output:
        click.echo(rendered, nl=False)
        return

    write_text(output, rendered, overwrite=False)
    page = pathlib.Path(output)
    # a page is for a browser: its file:// address can be opened (or clicked in a terminal) as it is
    click.echo(
        f"wrote {output}" + (f" (open {page.resolve().as_uri()})" if page.suffix.lower() in (".html", ".htm") else ""),
        err=True,
    )
