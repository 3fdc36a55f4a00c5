"""Linear n-gram recipes scored on validation texts only (a study for issue #30).

For each devsuite set, a stratified 10% validation split is carved out of
``train.csv`` (seed 0); ``test.csv`` is never read. Every recipe is fit on the
other 90% and scored on the validation texts: accuracy, macro-F1 and fit
seconds (the vectorizer's fit on the 90%, shared by the recipes that use it,
plus the classifier's fit). The recipes:

- ``baseline``: the run's reference, TF-IDF 1-2 grams, ``min_df=2``, sublinear
  TF, ``LogisticRegression(C=10)``;
- ``tfidf``: sublinear TF-IDF 1-2 and 1-3 grams, ``min_df`` in ``--min-df``,
  ``C`` in {3, 10, 30}, with and without ``class_weight="balanced"``;
- ``nblr``: NB-weighted binarised 1-3 grams (Wang & Manning 2012), one binary
  logistic regression per class on ``x * r`` (one model for two classes),
  prediction by the largest decision value, ``C`` in {1, 3, 10}, ``min_df=1``.

Command (results in BENCHMARKS.md):

    python benchmarks/linear_recipes.py --out recipes.json
"""

import argparse
import json
import time
from pathlib import Path

import numpy as np
import pandas as pd
from sklearn.feature_extraction.text import CountVectorizer, TfidfVectorizer
from sklearn.linear_model import LogisticRegression
from sklearn.metrics import accuracy_score, f1_score
from sklearn.model_selection import train_test_split

# ../shared beside the repository, as on the development and CI machines.
DEVSUITE = Path(__file__).resolve().parents[2] / "shared" / "datasets" / "devsuite"
DATASETS = ["trec6", "agnews", "airline_tweets", "20newsgroups"]


def nb_lr_fit_predict(x_train, y_train, x_val, classes, c, alpha=1.0):
    """Fits NB-LR one-vs-rest on binarised counts; returns validation labels."""
    models = classes[1:] if len(classes) == 2 else classes
    scores = []
    for cls in models:
        positive = y_train == cls
        p = alpha + np.asarray(x_train[positive].sum(axis=0)).ravel()
        q = alpha + np.asarray(x_train[~positive].sum(axis=0)).ravel()
        r = np.log((p / p.sum()) / (q / q.sum()))
        model = LogisticRegression(C=c, solver="liblinear", max_iter=1000)
        model.fit(x_train.multiply(r).tocsr(), positive)
        scores.append(model.decision_function(x_val.multiply(r).tocsr()))
    if len(classes) == 2:
        return np.where(scores[0] > 0, classes[1], classes[0])
    return classes[np.argmax(np.stack(scores, axis=1), axis=1)]


def score(name, y_val, predicted, seconds):
    """Returns one result row and prints its progress line."""
    row = {
        "recipe": name,
        "val_accuracy": float(accuracy_score(y_val, predicted)),
        "val_macro_f1": float(f1_score(y_val, predicted, average="macro")),
        "fit_seconds": round(seconds, 2),
    }
    print(f"  {name}: acc {row['val_accuracy']:.4f} F1 {row['val_macro_f1']:.4f} {seconds:.1f}s", flush=True)
    return row


def timed(function, *args):
    """Calls ``function(*args)``; returns its result and the seconds it took."""
    start = time.perf_counter()
    result = function(*args)
    return result, time.perf_counter() - start


def run_dataset(name, min_dfs, c_values):
    """Scores every recipe on one set's validation split."""
    frame = pd.read_csv(DEVSUITE / name / "train.csv", keep_default_na=False)
    texts, labels = frame["text"].astype(str).to_numpy(), frame["label"].to_numpy()
    x_tr, x_val, y_tr, y_val = train_test_split(texts, labels, test_size=0.1, stratify=labels, random_state=0)
    rows = []
    configs = [((1, 2), 2, 10, None, "baseline")]
    for ngrams in [(1, 2), (1, 3)]:
        for min_df in min_dfs:
            for c in c_values:
                for weight in [None, "balanced"]:
                    tag = f"tfidf 1-{ngrams[1]} min_df={min_df} C={c:g}"
                    configs.append((ngrams, min_df, c, weight, tag + (" balanced" if weight else "")))
    vectors = {}
    for ngrams, min_df, c, weight, tag in configs:
        if (ngrams, min_df) not in vectors:
            vectorizer = TfidfVectorizer(ngram_range=ngrams, min_df=min_df, sublinear_tf=True)
            train, seconds = timed(vectorizer.fit_transform, x_tr)
            vectors[ngrams, min_df] = (train, vectorizer.transform(x_val), seconds)
        train, val, vec_seconds = vectors[ngrams, min_df]
        model = LogisticRegression(C=c, max_iter=2000, class_weight=weight)
        _, seconds = timed(model.fit, train, y_tr)
        rows.append(score(tag, y_val, model.predict(val), vec_seconds + seconds))
    vectors.clear()
    counts = CountVectorizer(ngram_range=(1, 3), min_df=1, binary=True)
    train, vec_seconds = timed(counts.fit_transform, x_tr)
    val = counts.transform(x_val)
    classes = np.unique(y_tr)
    for c in [1, 3, 10]:
        predicted, seconds = timed(nb_lr_fit_predict, train, y_tr, val, classes, c)
        rows.append(score(f"nblr 1-3 C={c}", y_val, predicted, vec_seconds + seconds))
    return {"train": len(x_tr), "validation": len(x_val), "results": rows}


def main():
    """Parses the arguments, runs every set and writes the JSON after each."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--datasets", default=",".join(DATASETS))
    parser.add_argument("--out", required=True, help="JSON file to write.")
    parser.add_argument("--min-df", default="1,2", help="TF-IDF min_df grid.")
    parser.add_argument("--c", default="3,10,30", help="TF-IDF C grid.")
    args = parser.parse_args()
    names = args.datasets.split(",")
    unknown = [name for name in names if name not in DATASETS]
    if unknown:
        parser.exit(2, f"Error: unknown dataset(s): {', '.join(unknown)}\n")
    min_dfs = [int(value) for value in args.min_df.split(",")]
    c_values = [float(value) for value in args.c.split(",")]
    report = {}
    for name in names:
        print(name, flush=True)
        report[name] = run_dataset(name, min_dfs, c_values)
        Path(args.out).write_text(json.dumps(report, indent=2))
        print(f"\n### {name}\n\n| recipe | val accuracy | val macro-F1 | fit s |")
        print("| --- | --- | --- | --- |")
        for row in report[name]["results"]:
            print(
                f"| {row['recipe']} | {row['val_accuracy']:.4f} | "
                f"{row['val_macro_f1']:.4f} | {row['fit_seconds']:.1f} |"
            )
        print(flush=True)


if __name__ == "__main__":
    main()
