"""Which solver fits the multi-label n-gram part's one-vs-rest logistic regressions (issue #43).

The n-gram part of a multi-label classifier fits one binary logistic
regression per label and recipe. With scikit-learn's default solver (lbfgs)
this took most of the training time on Reuters. This study fits the part's
candidate recipes on the Reuters training part of a default run (the same
seeded 90/10 split `train csv --multi-label` makes; the test split is not
read) with lbfgs and with liblinear (dual form, as fits problems with many
more features than documents), and reports for each the fit time and the
validation micro-F1 (thresholds chosen on the same validation part) and
mean binary log-loss (at the best temperature), the criterion the recipe
is chosen by.

Usage:
    python benchmarks/multilabel_solvers.py [--data ../shared/datasets/multilabel/reuters] [--output results.json]
"""

import argparse
import json
import pathlib
import time

import numpy as np
from sklearn.linear_model import LogisticRegression

from hierattn.data.dataset import random_split
from hierattn.data.tables import load_table
from hierattn.decision import over_thresholds
from hierattn.defaults import NGRAMS, TRAINING
from hierattn.metrics import multilabel_metrics
from hierattn.models.text_preprocessor import TextPreprocessor
from hierattn.ngrams.logits import NgramLogits
from hierattn.ngrams.mixing import scored_at_best_scale
from hierattn.ngrams.recipes import _features, count_matrices
from hierattn.tuning import choose_thresholds

ROOT = pathlib.Path(__file__).resolve().parents[1]
SOLVERS = {
    "lbfgs": lambda c: LogisticRegression(C=c, max_iter=NGRAMS["max_iter"]),
    "liblinear-dual": lambda c: LogisticRegression(C=c, solver="liblinear", dual=True, max_iter=NGRAMS["max_iter"]),
}


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", default=str(ROOT.parent / "shared/datasets/multilabel/reuters"))
    parser.add_argument("--output", default=None)
    args = parser.parse_args()
    data, _ = load_table(pathlib.Path(args.data) / "train.csv", label_separator="|")
    fit, val = random_split(len(data), TRAINING["validation_split"], TRAINING["seed"])
    texts = [data.texts[i] for i in fit]
    y_fit, y_val = data.labels[fit], data.labels[val]
    preprocessor = TextPreprocessor("flat", sequence_length=1, ngram_length=NGRAMS["length"])
    preprocessor.adapt(texts)
    x_fit = preprocessor(texts)["ngram_ids"]
    x_val = preprocessor([data.texts[i] for i in val])["ngram_ids"]
    counter = NgramLogits(len(preprocessor.vocabulary), y_fit.shape[1], 3, NGRAMS["num_buckets"])
    train_counts, val_counts = count_matrices(counter, x_fit, (2, 3)), count_matrices(counter, x_val, (2, 3))
    results = []
    for recipe in NGRAMS["recipes"]:
        if recipe["weighting"] != "tfidf":
            continue
        counts = train_counts[recipe["ngram_max"]]
        df = np.bincount(counts.indices, minlength=counts.shape[1])
        kept = np.flatnonzero(df >= NGRAMS["min_df"])
        idf = (np.log((1.0 + len(y_fit)) / (1.0 + df[kept])) + 1.0).astype(np.float32)
        features = _features(counts[:, kept], recipe, idf)
        val_features = _features(val_counts[recipe["ngram_max"]][:, kept], recipe, idf)
        for c in recipe["C"]:
            for solver, make in SOLVERS.items():
                started = time.perf_counter()
                logits = np.zeros(y_val.shape, np.float32)
                for label in np.flatnonzero((y_fit.sum(0) > 0) & (y_fit.sum(0) < len(y_fit))):
                    model = make(c).fit(features, y_fit[:, label])
                    logits[:, label] = model.decision_function(val_features)
                seconds = time.perf_counter() - started
                probabilities = 1 / (1 + np.exp(-logits))
                thresholds, _ = choose_thresholds(probabilities, y_val)
                scores = multilabel_metrics(y_val, over_thresholds(probabilities, thresholds), data.label_map.names)
                row = {
                    "recipe": f"tfidf 1-{recipe['ngram_max']}",
                    "C": c,
                    "solver": solver,
                    "features": int(len(kept)),
                    "fit_seconds": round(seconds, 1),
                    "val_log_loss": round(scored_at_best_scale(logits, y_val), 5),
                    "val_micro_f1": round(scores["micro_f1"], 4),
                    "val_macro_f1": round(scores["macro_f1"], 4),
                }
                print(json.dumps(row), flush=True)
                results.append(row)
    if args.output:
        pathlib.Path(args.output).write_text(json.dumps(results, indent=2) + "\n")


if __name__ == "__main__":
    main()
