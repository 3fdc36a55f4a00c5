"""Is an int8 bundle worth offering? onnxruntime's dynamic quantization of a run's bundle, on its validation texts.

Issue #40 keeps an int8 bundle only if it loses at most 0.1 points of accuracy
and is measurably faster or smaller. Measured on the run's own validation
split (the 10% of the IMDB training reviews it held out, seed 0), never
on the test split: accuracy, reviews/s from raw text (after a 200-review
warm-up) and file size, for the float32 bundle and its int8 copy.

Usage:
    python benchmarks/quantize_bundle.py RUN_DIR [--data ../shared/datasets/aclImdb_v1.tar.gz]
"""

import argparse
import json
import os
import pathlib
import tempfile
import time

import numpy as np
from onnxruntime.quantization import QuantType, quantize_dynamic

from hierattn import runtime
from hierattn.data import load_imdb
from hierattn.runs.run_context import RunData

ROOT = pathlib.Path(__file__).resolve().parents[1]


def measure(path, texts, labels):
    predictor = runtime.load(path)
    predictor.predict(texts[:200])
    started = time.perf_counter()
    probabilities = predictor.predict(texts)
    seconds = time.perf_counter() - started
    return {
        "mb": round(os.path.getsize(path) / 1e6, 2),
        "accuracy": float(np.mean(probabilities.argmax(1) == labels)),
        "reviews_per_second": round(len(texts) / seconds, 1),
    }, probabilities


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("run")
    parser.add_argument("--data", default=str(ROOT.parent / "shared/datasets/aclImdb_v1.tar.gz"))
    args = parser.parse_args()
    config = json.loads((pathlib.Path(args.run) / "config.json").read_text())
    train = load_imdb(args.data, splits=("train",), download=False, progress=False)["train"]
    split = RunData(train=train).split(config["validation_split"], config["classifier"]["seed"])
    bundle = pathlib.Path(args.run) / "model.onnx"
    results = {"run": args.run, "validation_texts": len(split.val_texts)}
    results["float32"], p32 = measure(bundle, split.val_texts, split.val_labels)
    with tempfile.TemporaryDirectory() as folder:
        quantized = pathlib.Path(folder) / "int8.onnx"
        quantize_dynamic(bundle, quantized, weight_type=QuantType.QUInt8)
        results["int8"], p8 = measure(quantized, split.val_texts, split.val_labels)
    results["max_abs_difference"] = float(np.abs(p32 - p8).max())
    print(json.dumps(results, indent=2))


if __name__ == "__main__":
    main()
