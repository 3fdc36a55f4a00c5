"""The runtime's parts on IMDB test reviews: the graph of given bundles timed alone, and runs against their Keras path.

`bundles` mode (what compared tf2onnx's Loop with the fused GRU export, and
the batch sizes): for each bundle, tokenizing and the graph timed apart on
the first `--texts` test reviews (archive order), batches of `--batch-sizes`,
after a 200-review warm-up. `runs` mode: for each run directory (with its
`model.onnx`), reviews/s of the runtime's and the Keras classifier's
`predict` from raw text on a seeded sample of `--texts` test reviews.

Usage:
    python benchmarks/bench_runtime_graph.py bundles A.onnx [B.onnx ...] [--texts 4000] [--batch-sizes 32 64]
    python benchmarks/bench_runtime_graph.py runs RUN_DIR [RUN_DIR ...] [--texts 3000]
"""

import argparse
import pathlib
import time

import numpy as np

from hierattn import runtime
from hierattn.data import load_imdb

ROOT = pathlib.Path(__file__).resolve().parents[1]


def bundles(paths, texts, batch_sizes):
    for path in paths:
        predictor = runtime.load(path)
        predictor.predict_ids(predictor.preprocess(texts[:200]))
        started = time.perf_counter()
        ids = predictor.preprocess(texts)
        tokenized = time.perf_counter() - started
        for batch_size in batch_sizes:
            started = time.perf_counter()
            predictor.predict_ids(ids, batch_size=batch_size)
            graph = time.perf_counter() - started
            print(f"{path} batch {batch_size}: tokenize {tokenized:.2f} s, graph {graph:.2f} s", flush=True)


def runs(directories, texts):
    from hierattn.runs.run import load_run

    for run in directories:
        predictor = runtime.load(pathlib.Path(run) / "model.onnx")
        predictor.predict(texts[:200])
        started = time.perf_counter()
        predictor.predict(texts)
        fast = time.perf_counter() - started
        classifier = load_run(run).classifier
        classifier.predict(texts[:200], verbose=0)
        started = time.perf_counter()
        classifier.predict(texts, verbose=0)
        keras_seconds = time.perf_counter() - started
        print(
            f"{run}: runtime {len(texts) / fast:.0f} reviews/s, keras {len(texts) / keras_seconds:.0f} reviews/s, "
            f"ratio {keras_seconds / fast:.2f}",
            flush=True,
        )


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("mode", choices=("bundles", "runs"))
    parser.add_argument("paths", nargs="+")
    parser.add_argument("--texts", type=int, default=None)
    parser.add_argument("--batch-sizes", type=int, nargs="+", default=[32])
    parser.add_argument("--data", default=str(ROOT.parent / "shared/datasets/aclImdb_v1.tar.gz"))
    args = parser.parse_args()
    test = load_imdb(args.data, splits=("test",), download=False, progress=False)["test"]
    if args.mode == "bundles":
        bundles(args.paths, list(test.texts[: args.texts or 4000]), args.batch_sizes)
    else:
        count = args.texts or 3000
        texts = [test.texts[i] for i in np.random.default_rng(1).choice(len(test), count, replace=False)]
        runs(args.paths, texts)


if __name__ == "__main__":
    main()
