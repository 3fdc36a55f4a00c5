"""Prediction throughput of a saved run on the IMDB test split, from raw text.

Loads the run (as `predict` does), then times what the classifier's
`predict` does on all 25,000 test reviews: tokenizing and encoding, then the model (each
also reported on its own), on 2 CPU cores.
Targets (issue #4): >= 500 reviews/s for HAN, >= 1,000 for the Transformer.

With `--split unsup` it times 25,000 of the unlabelled reviews instead and
reports no accuracy: a speed check for runs still being compared on
validation data, which must not look at the test split.

Usage:
    python benchmarks/bench_predict.py RUN_DIR [--split test|unsup] [--data ../shared/datasets/aclImdb_v1.tar.gz]
"""

import argparse
import json
import os
import time

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")

import numpy as np  # noqa: E402

from hierattn.data import load_imdb  # noqa: E402
from hierattn.runs.run import load_run  # noqa: E402


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("run")
    parser.add_argument("--split", choices=("test", "unsup"), default="test")
    parser.add_argument("--data", default="../shared/datasets/aclImdb_v1.tar.gz")
    args = parser.parse_args()
    test = load_imdb(args.data, splits=(args.split,), download=False, progress=False)[args.split]
    if args.split == "unsup":
        test = test.subset(np.arange(25000))
    run = load_run(args.run)
    run.classifier.predict(test.texts[:200], verbose=0)  # warm-up: trace the model once
    # The two halves of `run.classifier.predict`, timed apart: tokenizing + encoding, then the model.
    start = time.perf_counter()
    ids = run.classifier.preprocessor(test.texts)
    encoded = time.perf_counter()
    probabilities = run.classifier.predict_ids(ids)  # the whole classifier (n-gram part included)
    end = time.perf_counter()
    seconds = end - start
    accuracy = float(np.mean(probabilities.argmax(1) == test.labels)) if args.split == "test" else None
    print(
        json.dumps(
            {
                "run": args.run,
                "model": run.config["classifier"]["backbone"],
                "split": args.split,
                "reviews": len(test),
                "seconds": round(seconds, 1),
                "encode_seconds": round(encoded - start, 1),
                "model_seconds": round(end - encoded, 1),
                "reviews_per_second": round(len(test) / seconds, 1),
                "accuracy": accuracy,
            }
        )
    )


if __name__ == "__main__":
    main()
