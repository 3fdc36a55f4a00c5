"""IMDB benchmark: hierattn models against scikit-learn baselines, same run.

For each model: train with the defaults (`TrainConfig.from_dict({"model": ...})`, as `train imdb`) on the
official train split, with validation carved out of it; evaluate once on the
25,000 test reviews; time training and prediction (raw text in, including
tokenization, via the saved run). Baselines trained in the same run on the
same training part (the validation part is used to pick C):

* TF-IDF of 1-2 grams + logistic regression;
* NB-weighted logistic regression on 1-3 gram presence features (the NBSVM
  idea of Wang & Manning, ACL 2012, with logistic loss).

Usage:
    python benchmarks/bench_imdb_models.py --models han,transformer,rnn \
        [--data ../shared/datasets/aclImdb_v1.tar.gz] [--out benchmarks/output]

Results: a run directory per model and one JSON file of all results (both in
`--out`), and a Markdown table on standard output.
"""

import argparse
import json
import os
import pathlib
import platform
import time

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")

import numpy as np  # noqa: E402

from hierattn.data import load_imdb, stratified_split  # noqa: E402
from hierattn.metrics import classification_metrics  # noqa: E402


def fit_best(kind, values, train_texts, y_train, val_texts, y_val):
    """The baseline of `kind` (benchmarks/baselines.py) with the C (of `values`) best on validation."""
    from baselines import make_baseline

    fitted = [make_baseline(kind, c=c).fit(train_texts, y_train) for c in values]
    scores = [np.mean(m.predict(val_texts) == y_val) for m in fitted]
    best = int(np.argmax(scores))
    return fitted[best].predict, {"C": values[best]}


def baseline_tfidf(train_texts, y_train, val_texts, y_val):
    return fit_best("tfidf", (1.0, 4.0, 16.0), train_texts, y_train, val_texts, y_val)


def baseline_nblr(train_texts, y_train, val_texts, y_val):
    return fit_best("nblr", (0.1, 0.5, 2.0), train_texts, y_train, val_texts, y_val)


def run_baseline(name, fit, data, fit_idx, val_idx):
    train_texts = [data["train"].texts[i] for i in fit_idx]
    y = data["train"].labels
    start = time.perf_counter()
    predict, chosen = fit(train_texts, y[fit_idx], [data["train"].texts[i] for i in val_idx], y[val_idx])
    seconds = time.perf_counter() - start
    start = time.perf_counter()
    predicted = predict(data["test"].texts)
    predict_seconds = time.perf_counter() - start
    metrics = classification_metrics(data["test"].labels, predicted, data["test"].label_map.names)
    return {
        "model": name,
        "settings": chosen,
        "accuracy": metrics["accuracy"],
        "macro_f1": metrics["macro_f1"],
        "train_seconds": seconds,
        "train_reviews_per_second": len(fit_idx) / seconds,
        "predict_reviews_per_second": len(predicted) / predict_seconds,
    }


def run_model(model, data, out, epochs=None):
    from hierattn.runs.config import TrainConfig
    from hierattn.runs.run import load_run
    from hierattn.runs.train import train

    config = TrainConfig.from_dict({"model": model, **({"epochs": epochs} if epochs else {})})
    run_dir = pathlib.Path(out) / f"run-{model}-{time.strftime('%Y%m%d-%H%M%S')}"
    start = time.perf_counter()
    run = train(
        data["train"], data["test"], config, run_dir, unlabeled=data["unsup"].texts, dataset_name="imdb", verbose=2
    )
    total_seconds = time.perf_counter() - start
    reloaded = load_run(run_dir).classifier
    start = time.perf_counter()
    probabilities = reloaded.predict(data["test"].texts, verbose=0)
    predict_seconds = time.perf_counter() - start
    metrics = classification_metrics(data["test"].labels, probabilities.argmax(1), data["test"].label_map.names)
    history = (run_dir / "history.csv").read_text().strip().splitlines()
    return {
        "model": f"hierattn {model}",
        "run": str(run_dir),
        "settings": run.config,
        "validation_accuracy": run.metrics["validation"]["accuracy"],
        "accuracy": metrics["accuracy"],
        "macro_f1": metrics["macro_f1"],
        "epochs_run": len(history) - 1,
        "fit_seconds": run.metrics["training_seconds"],
        "train_seconds": total_seconds,
        "train_reviews_per_second": run.metrics["train_documents"]
        * (len(history) - 1)
        / run.metrics["training_seconds"],
        "predict_reviews_per_second": len(probabilities) / predict_seconds,
    }


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", default="../shared/datasets/aclImdb_v1.tar.gz")
    parser.add_argument("--models", default="han,transformer,rnn")
    parser.add_argument("--baselines", default="tfidf,nblr")
    parser.add_argument("--epochs", type=int, default=None, help="Override the default maximum epochs.")
    parser.add_argument("--out", default="benchmarks/output")
    args = parser.parse_args()
    pathlib.Path(args.out).mkdir(parents=True, exist_ok=True)
    data = load_imdb(args.data, splits=("train", "test", "unsup"), download=False, progress=False)
    fit_idx, val_idx = stratified_split(data["train"].labels, 0.1, seed=0)  # same split as TrainConfig's default
    results = []
    baselines = {"tfidf": ("TF-IDF 1-2 grams + LR", baseline_tfidf), "nblr": ("NB-LR 1-3 grams", baseline_nblr)}
    for key in filter(None, args.baselines.split(",")):
        name, fit = baselines[key]
        results.append(run_baseline(name, fit, data, fit_idx, val_idx))
        print(json.dumps(results[-1]), flush=True)
    for model in filter(None, args.models.split(",")):
        results.append(run_model(model, data, args.out, args.epochs))
        print(json.dumps(results[-1], default=str), flush=True)
    stamp = time.strftime("%Y%m%d-%H%M%S")
    with open(pathlib.Path(args.out) / f"imdb-{stamp}.json", "w") as f:
        json.dump(
            {"machine": {"cpus": os.cpu_count(), "python": platform.python_version()}, "results": results},
            f,
            indent=2,
            default=str,
        )
    print("\n| model | test accuracy | macro-F1 | training time (s) | training reviews/s | prediction reviews/s |")
    print("| --- | --- | --- | --- | --- | --- |")
    for r in results:
        print(
            f"| {r['model']} | {r['accuracy']:.4f} | {r['macro_f1']:.4f} | {r['train_seconds']:.0f} | "
            f"{r['train_reviews_per_second']:.0f} | {r['predict_reviews_per_second']:.0f} |"
        )


if __name__ == "__main__":
    main()
