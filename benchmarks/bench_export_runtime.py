"""The exported bundle on hierattn.runtime against the Keras path and a TF-IDF + LR pipeline (issue #40).

On one run (the default IMDB run), in one process, on 2 CPU cores:

* export: the run exported again (`hierattn.runs.export.export_run`): seconds and size;
* cold start: `python cli.py predict --run RUN "text"` in a fresh process, five times: median wall
  seconds and the largest resident memory of those processes (they hold the runtime and the model);
* throughput from raw text on the same `--texts` IMDB test reviews (a seeded sample), each after a
  200-review warm-up on training reviews: the runtime (`Predictor.predict`), the Keras classifier
  (`TextClassifier.predict`), and a scikit-learn pipeline (TF-IDF of 1-2 grams, sublinear tf, min_df 2,
  + logistic regression, fitted on the 25,000 training reviews; fitting not timed);
* parity: max |p_runtime - p_keras| on the first 1,000 reviews of the sample, for RUN and for every
  `--parity-run`; the runtime's accuracy on the whole test split.

Usage:
    python benchmarks/bench_export_runtime.py RUN_DIR [--parity-run RUN ...] [--texts 10000]
        [--data ../shared/datasets/aclImdb_v1.tar.gz] [--output results.json]
"""

import argparse
import json
import os
import pathlib
import resource
import statistics
import subprocess
import sys
import tempfile
import time

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")

import numpy as np  # noqa: E402

ROOT = pathlib.Path(__file__).resolve().parents[1]


def cold_starts(run, times=5, text="A moving film with a superb cast."):
    """Median wall seconds of `python cli.py predict --run RUN TEXT` and the largest RSS (MB) of those processes."""
    seconds = []
    for _ in range(times):
        started = time.perf_counter()
        subprocess.run(
            [sys.executable, str(ROOT / "cli.py"), "predict", "--run", str(run), text],
            check=True,
            capture_output=True,
        )
        seconds.append(time.perf_counter() - started)
    # Only these children have ended so far: the largest resident set among them (Linux reports KiB).
    rss_mb = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024
    return {
        "median_seconds": round(statistics.median(seconds), 3),
        "seconds": [round(s, 3) for s in seconds],
        "max_rss_mb": round(rss_mb, 1),
    }


def timed(function, texts):
    started = time.perf_counter()
    result = function(texts)
    seconds = time.perf_counter() - started
    return result, {"seconds": round(seconds, 2), "reviews_per_second": round(len(texts) / seconds, 1)}


def report(results, output=None):
    """Prints the results as JSON, and writes them to `output` too when given."""
    text = json.dumps(results, indent=2)
    print(text)
    if output:
        pathlib.Path(output).write_text(text + "\n")


def tfidf_lr(train):
    from sklearn.feature_extraction.text import TfidfVectorizer
    from sklearn.linear_model import LogisticRegression
    from sklearn.pipeline import make_pipeline

    pipeline = make_pipeline(
        TfidfVectorizer(ngram_range=(1, 2), sublinear_tf=True, min_df=2), LogisticRegression(C=10.0, max_iter=1000)
    )
    return pipeline.fit(train.texts, train.labels)


def parity(run, texts):
    """Max |Δp| between a run's bundle on the runtime and its Keras classifier on `texts`."""
    from hierattn import runtime
    from hierattn.runs.run import load_run

    classifier = load_run(run).classifier
    bundle = pathlib.Path(run) / "model.onnx"
    if not bundle.is_file():
        classifier.export(bundle, verbose=False)
    found = runtime.load(bundle).predict(texts)
    return {
        "run": str(run),
        "model": classifier.architecture,
        "max_abs_difference": float(np.abs(found - classifier.predict(texts, verbose=0)).max()),
    }


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("run")
    parser.add_argument("--parity-run", action="append", default=[])
    parser.add_argument("--texts", type=int, default=10000)
    parser.add_argument("--data", default=str(ROOT.parent / "shared/datasets/aclImdb_v1.tar.gz"))
    parser.add_argument("--output")
    args = parser.parse_args()
    results = {"run": args.run, "cpus": os.cpu_count()}
    results["cold_start"] = cold_starts(args.run)  # first: before this process has any other child

    from hierattn import runtime
    from hierattn.data import load_imdb
    from hierattn.runs.export import export_run
    from hierattn.runs.run import load_run

    data = load_imdb(args.data, splits=("train", "test"), download=False, progress=False)
    train, test = data["train"], data["test"]
    sample = [test.texts[i] for i in np.random.default_rng(0).choice(len(test), args.texts, replace=False)]
    warm = train.texts[:200]

    with tempfile.TemporaryDirectory() as folder:
        started = time.perf_counter()
        path = export_run(args.run, os.path.join(folder, "model.onnx"))
        results["export"] = {
            "seconds": round(time.perf_counter() - started, 1),
            "bytes": os.path.getsize(path),
            "mb": round(os.path.getsize(path) / 1e6, 2),
            "mib": round(os.path.getsize(path) / 2**20, 2),
        }

    predictor = runtime.load(pathlib.Path(args.run) / "model.onnx")
    predictor.predict(warm)
    p_runtime, results["runtime"] = timed(predictor.predict, sample)
    started = time.perf_counter()
    ids = predictor.preprocess(sample)
    encoded = time.perf_counter()
    predictor.predict_ids(ids)
    results["runtime"]["parts"] = {
        "tokenize_seconds": round(encoded - started, 2),
        "model_seconds": round(time.perf_counter() - encoded, 2),
    }

    classifier = load_run(args.run).classifier
    classifier.predict(warm, verbose=0)
    p_keras, results["keras"] = timed(lambda t: classifier.predict(t, verbose=0), sample)

    pipeline = tfidf_lr(train)
    pipeline.predict_proba(warm)
    _, results["tfidf_lr"] = timed(pipeline.predict_proba, sample)

    speed = results["runtime"]["reviews_per_second"]
    results["ratios"] = {
        "runtime_over_tfidf_lr": round(speed / results["tfidf_lr"]["reviews_per_second"], 2),
        "runtime_over_keras": round(speed / results["keras"]["reviews_per_second"], 2),
    }
    results["parity"] = [
        {
            "run": args.run,
            "model": classifier.architecture,
            "max_abs_difference": float(np.abs(p_runtime[:1000] - p_keras[:1000]).max()),
        }
    ]
    results["parity"] += [parity(run, sample[:1000]) for run in args.parity_run]
    probabilities = predictor.predict(test.texts)
    results["runtime_test_accuracy"] = float(np.mean(probabilities.argmax(1) == test.labels))
    report(results, args.output)


if __name__ == "__main__":
    main()
