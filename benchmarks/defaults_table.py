"""The BENCHMARKS.md table of default `train` runs: each run's model, its parts alone and the baseline.

Reads the metrics.json (and config.json) of finished run directories, as
written by default runs such as

    python cli.py train csv ../shared/datasets/devsuite/$D/train.csv --test ../shared/datasets/devsuite/$D/test.csv --model $M --output runs/dev-$D-$M
    python cli.py train imdb --output runs/imdb-han

and prints one Markdown row per run (test accuracy / macro-F1 of the whole
classifier, of the network alone and of the n-gram part alone, the
TF-IDF+LR baseline fitted in the same run, validation accuracy and
macro-F1 of the same four, the network's share, the n-gram recipe chosen,
the epochs trained, training seconds).

    python benchmarks/defaults_table.py RUN_DIR [RUN_DIR ...]
"""

import argparse
import json
import pathlib

from hierattn.runs.config import read_config

HEADER = (
    "| dataset | model | test acc. / macro-F1 | network alone | n-gram part alone | TF-IDF+LR baseline "
    "| model − baseline (points, acc. / F1) | val. acc. (model / network / n-grams / baseline) "
    "| val. macro-F1 (same) | network share | n-gram recipe | epochs | training s |"
)


def cell(metrics):
    return f"{metrics['accuracy']:.4f} / {metrics['macro_f1']:.4f}" if metrics else "—"


def row(run):
    run = pathlib.Path(run)
    metrics = json.loads((run / "metrics.json").read_text())
    config = read_config(run)  # either format of config.json
    data = config.get("data", {})
    dataset = (
        "imdb" if "imdb" in data else pathlib.Path(next(iter(data.values()), {}).get("path", run.name)).parent.name
    )
    parts, baseline = metrics.get("parts", {}), metrics.get("baseline", {})
    test, base = metrics.get("test"), baseline.get("test")
    diff = (
        f"{100 * (test['accuracy'] - base['accuracy']):+.2f} / {100 * (test['macro_f1'] - base['macro_f1']):+.2f}"
        if test and base
        else "—"
    )
    val, val_f1 = (
        " / ".join(
            f"{m['validation'][key]:.4f}" if m and "validation" in m else "—"
            for m in (metrics, parts.get("network"), parts.get("ngrams"), baseline)
        )
        for key in ("accuracy", "macro_f1")
    )
    recipe = parts.get("ngram_recipe")
    recipe = (
        f"{recipe['weighting']} 1-{recipe['ngram_max']} C={recipe['C']:g}{' bal.' if recipe['class_weight'] else ''}"
        if recipe
        else "—"
    )
    epochs = metrics.get("epochs_trained", "—")
    return (
        f"| {dataset} | {config['classifier']['backbone']} | {cell(test)} | {cell(parts.get('network', {}).get('test'))} "
        f"| {cell(parts.get('ngrams', {}).get('test'))} | {cell(base)} | {diff} | {val} "
        f"| {val_f1} | {round(parts['network_share'], 2) if 'network_share' in parts else '—'} | {recipe} | {epochs} | {metrics['training_seconds']:.0f} |"
    )


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("runs", nargs="+", metavar="RUN_DIR")
    args = parser.parse_args()
    print(HEADER)
    print("|" + " --- |" * HEADER.count(" | ") + " --- |")
    for run in args.runs:
        print(row(run))


if __name__ == "__main__":
    main()
