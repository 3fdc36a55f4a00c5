"""`hierattn explain`: texts onto `TextClassifier.explain`, a dataset onto `hierattn.explain.corpus.explain_corpus`."""

import pathlib

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
from hierattn.errors import HierattnError


@click.command()
@text_argument
@run_option
@file_option("Explain every text of a file (one per line, or a CSV/TSV/JSON-lines column).")
@click.option(
    "--dataset",
    default=None,
    help="Explain a whole dataset: imdb, or a CSV/TSV/JSON-lines/text file. Writes the most-attended "
    "words per predicted class to --output and each document's top-k to <output>.documents.csv.",
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
@click.option("--top-k", type=click.IntRange(1), default=10, show_default=True)
@click.option("--format", "fmt", type=click.Choice(["text", "json", "csv", "html"]), default="text", show_default=True)
@click.option("--output", type=click.Path(dir_okay=False), default=None, help="Write to this file (never overwritten).")
@click.option(
    "--check",
    is_flag=True,
    help="Also test faithfulness: delete each text's top 1/5/10 attended words and compare the drop in "
    "the predicted probability with random words and with gradient x input.",
)
@click.option(
    "--signed",
    is_flag=True,
    help="Also show each word's evidence for or against the prediction (gradient x input): json/csv "
    "columns, and a green/red view in html.",
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
    top_k,
    fmt,
    output,
    check,
    signed,
    random_draws,
    seed,
    encoding,
):
    """Explain predictions: explain "text" | --file FILE | - | --dataset imdb|FILE.

    Prints the predicted label and probabilities, the top-k most attended
    words (HAN: word weight x sentence weight) with their positions, and the
    sentence weights. json and csv list every word; html writes one
    self-contained page. With --dataset, the most-attended words of a whole
    corpus per predicted class. --check measures whether the weights matter.
    """
    check_text_or_file(text, file_path)
    refuse_existing(output)
    if dataset is not None:
        if text is not None or file_path is not None:
            raise click.UsageError("give either --dataset or texts (a text, --file or -), not both")
        from hierattn.explain.corpus import documents_path, open_corpus

        refuse_existing(output and str(documents_path(output)))
        refuse_existing(output and str(_check_path(output)) if check else None)
        source = open_corpus(dataset, split, data_path, text_column, limit, seed, encoding=encoding)
        _explain_dataset(load_run(run_dir), source, top_k, output, check, random_draws, seed)
        return
    if text is None and file_path is None:
        raise click.UsageError("give a text, --file FILE, - for standard input, or --dataset")
    texts, ids, labels = _texts(text, file_path, text_column, encoding)
    run = load_run(run_dir)
    kept = with_words(run.classifier, texts)
    texts, ids, labels = ([values[i] for i in kept] if values is not None else None for values in (texts, ids, labels))
    explanations = run.classifier.explain(texts, ids=ids, labels=labels, signed=signed)
    from hierattn.explain.report import render

    _emit(render(explanations, fmt, top_k), output)
    if check:
        from hierattn.explain.faithfulness import check_faithfulness

        report = check_faithfulness(
            run.classifier, texts, random_draws=random_draws, seed=seed, progress=len(texts) > 50
        )
        click.echo(report.to_markdown(), err=fmt != "text" and not output)


def _texts(text, file_path, text_column, encoding):
    """`(texts, ids, labels)`: the TEXT argument, or the non-blank rows of --file or standard input.

    `ids` and `labels` are None for one text, and hold None for a row without them.
    """
    if text is not None and text != "-":
        return [one_text(text)], None, None
    from hierattn.scoring import text_rows

    _, rows = text_rows(texts_from(text, file_path, text_column, encoding))
    rows = [row for row in rows if row[0].strip()]
    if not rows:
        raise HierattnError(f"no text to explain in {file_path or 'standard input'} (every line is blank)")
    return tuple(list(column) for column in zip(*rows))


def _check_path(output):
    """Where --check's report goes beside --output (`words.csv` -> `words.faithfulness.json`)."""
    output = pathlib.Path(output)
    return output.with_name(f"{output.stem}.faithfulness.json")


def _explain_dataset(run, source, top_k, output, check, random_draws, seed):
    from hierattn.explain import Explainer
    from hierattn.explain.corpus import explain_corpus
    from hierattn.explain.report import corpus_text

    if check:  # the check needs the texts a second time
        source.texts = list(source.texts)
    summary = explain_corpus(Explainer(run), source.texts, output, source.labels, source.ids, top_k, total=source.total)
    click.echo(corpus_text(summary))
    for path in summary.outputs:
        click.echo(f"wrote {path}")
    if check:
        from hierattn.explain.faithfulness import check_faithfulness
        from hierattn.jsonfile import save_json

        report = check_faithfulness(run.classifier, source.texts, random_draws=random_draws, seed=seed, progress=True)
        click.echo(report.to_markdown())
        if output:
            save_json(_check_path(output), "hierattn.faithfulness/1", report.to_dict(), indent=2, overwrite=False)
            click.echo(f"wrote {_check_path(output)}")


def _emit(rendered, output):
    """Prints, or writes a file atomically (the caller refused existing files)."""
    if not output:
        click.echo(rendered, nl=False)
        return
    from hierattn.atomic import write_text

    write_text(output, rendered, overwrite=False)
    click.echo(f"wrote {output}", err=True)
