"""The multi-label n-gram part's fit, before and after issue #54: time and test micro-F1, on Reuters.

Fits the n-gram part of a default multi-label classifier
(`TextClassifier(multi_label=True).fit_ngrams`, the step `train csv
--multi-label` runs after the network) on the training part of Reuters'
train.csv, choosing its recipe on a seeded 10% validation part carved from
it, as `train csv` does; the test split is read only to score the chosen
part once. Each setting is fitted twice in the same process, one after the
other: "old" (the one-vs-rest fits of the code before issue #54, kept in this
script only and put in place of `hierattn.ngrams.onevsrest.fit_one_vs_rest`
for that fit: each label fitted from zero at each C, BLAS with its own
threads) and "new" (the product). For each: wall-clock and CPU seconds of
`fit_ngrams`, the recipe chosen, and the n-gram part's test micro- and
macro-F1 with its own per-label thresholds chosen on the validation part
(`hierattn.tuning.choose_thresholds`).

Modes: `old`, `new`, and `new-one-at-a-time` (the product's fit, one label
at a time instead of one per core side by side).

Settings: `all` (7,769 stories), `1500` (`train csv --limit 1500`'s sample),
and `many` (the first 600 stories of the 1,500-row sample with 1,000
made-up labels: story i has labels i, 600 + i mod 400 and (7i + 3) mod
1,000, so each label 1 to 4 stories; no test split, so time only).

Usage:
    python benchmarks/multilabel_ngram_fit.py [--settings all 1500 many] [--modes old new] [--output results.json]
"""

import argparse
import functools
import json
import os
import pathlib
import time

import numpy as np

from hierattn.data.dataset import random_split, sample
from hierattn.data.ids import ngram_ids
from hierattn.data.tables import load_table
from hierattn.decision import over_thresholds
from hierattn.defaults import NGRAMS, TRAINING
from hierattn.metrics import multilabel_metrics
from hierattn.ngrams import recipes
from hierattn.ngrams.mixing import ngram_logits
from hierattn.tuning import choose_thresholds

ROOT = pathlib.Path(__file__).resolve().parents[1]


def old_fit_one_vs_rest(features, labels, grid, num_classes, nb=False, bar=None):
    """The one-vs-rest fits before issue #54 (hierattn.ngrams.recipes._fit_one_vs_rest at f9ba2cd), unchanged."""
    from sklearn.linear_model import LogisticRegression

    counts = labels.sum(axis=0)
    for class_weight in grid["class_weights"]:
        for c in grid["C"]:
            started = time.perf_counter()
            kernel = np.zeros((features.shape[1], num_classes), np.float32)
            bias = np.log((counts + 0.5) / (len(labels) - counts + 0.5)).astype(np.float32)
            for label in np.flatnonzero((counts > 0) & (counts < len(labels))):
                positive = labels[:, label] > 0
                if nb:
                    ratios = recipes._nb_ratios(features, positive)
                    model = LogisticRegression(
                        C=c, solver="liblinear", max_iter=NGRAMS["max_iter"], class_weight=class_weight, random_state=0
                    )
                    model.fit(features.multiply(ratios).tocsr(), positive)
                    kernel[:, label] = model.coef_[0] * ratios
                else:
                    model = LogisticRegression(C=c, max_iter=NGRAMS["max_iter"], class_weight=class_weight)
                    model.fit(features, positive)
                    kernel[:, label] = model.coef_[0]
                bias[label] = model.intercept_[0]
            yield c, class_weight, (kernel, bias), time.perf_counter() - started


def splits(data_dir, setting):
    """`(train, validation, test)` datasets of a setting, as `train csv --multi-label` splits them."""
    train, _ = load_table(data_dir / "train.csv", label_separator="|")
    test, _ = load_table(data_dir / "test.csv", label_map=train.label_map, label_separator="|")
    if setting != "all":
        train, test = sample(train, 1500, TRAINING["seed"]), sample(test, 1500, TRAINING["seed"])
    if setting == "many":
        train = train.subset(range(600))
        rows = np.arange(600)
        train.labels = np.zeros((600, 1000), np.int8)
        for column in (rows, 600 + rows % 400, (rows * 7 + 3) % 1000):  # every one of the 1,000 labels used
            train.labels[rows, column] = 1
        test = None
    fit, val = random_split(len(train), TRAINING["validation_split"], TRAINING["seed"])
    return train.subset(fit), train.subset(val), test


def measure(setting, mode, data_dir):
    """One fit of the n-gram part: times, the recipe chosen, and the part's test scores."""
    import hierattn

    train, val, test = splits(data_dir, setting)
    names = [f"l{i}" for i in range(train.labels.shape[1])]
    clf = hierattn.TextClassifier(multi_label=True, embeddings="none", label_names=names)
    clf.adapt(train.texts, [[names[j] for j in np.flatnonzero(row)] for row in train.labels], verbose=0)
    x_fit, x_val = clf.preprocessor(train.texts), clf.preprocessor(val.texts)
    fits = {"old": old_fit_one_vs_rest, "new": NEW_FIT, "new-one-at-a-time": functools.partial(NEW_FIT, workers=1)}
    recipes.fit_one_vs_rest = fits[mode]
    load, wall, cpu = os.getloadavg()[0], time.perf_counter(), time.process_time()
    clf.fit_ngrams(x_fit, train.labels, validation_data=(x_val, val.labels), verbose=int(mode == "new"))
    row = {"setting": setting, "mode": mode, "documents": len(train), "labels": int(train.labels.shape[1])}
    row.update(fit_wall_s=round(time.perf_counter() - wall, 1), fit_cpu_s=round(time.process_time() - cpu, 1))
    row.update(load_before=round(load, 2), load_after=round(os.getloadavg()[0], 2), recipe=clf.ngram_report["recipe"])
    row["candidates"] = [
        {k: c[k] for k in ("weighting", "ngram_max", "C", "fit_seconds", "val_log_loss", "val_micro_f1")}
        for c in clf.ngram_report["candidates"]
    ]
    if test is not None:
        val_p = 1 / (1 + np.exp(-ngram_logits(clf.ngram_logits, ngram_ids(x_val))))
        thresholds, _ = choose_thresholds(val_p, val.labels)
        test_p = 1 / (1 + np.exp(-ngram_logits(clf.ngram_logits, ngram_ids(clf.preprocessor(test.texts)))))
        scores = multilabel_metrics(test.labels, over_thresholds(test_p, thresholds), names)
        row.update(test_micro_f1=round(scores["micro_f1"], 4), test_macro_f1=round(scores["macro_f1"], 4))
    return row


NEW_FIT = recipes.fit_one_vs_rest


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", default=str(ROOT.parent / "shared/datasets/multilabel/reuters"))
    parser.add_argument("--settings", nargs="+", default=["1500", "all", "many"], choices=["all", "1500", "many"])
    parser.add_argument("--modes", nargs="+", default=["old", "new"], choices=["old", "new", "new-one-at-a-time"])
    parser.add_argument("--output", default=None)
    args = parser.parse_args()
    results = []
    for setting in args.settings:
        for mode in args.modes:
            results.append(measure(setting, mode, pathlib.Path(args.data)))
            print(json.dumps(results[-1]), flush=True)
            if args.output:
                pathlib.Path(args.output).write_text(json.dumps(results, indent=2) + "\n")


if __name__ == "__main__":
    main()
