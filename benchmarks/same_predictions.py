"""The same predictions before and after a change (issue #67): a saved run's, on IMDB's whole test split, within 1e-6.

A change that hardens the code against hostile input must not move any answer on valid input. This runs a saved
run's Keras classifier (`load_run(run).classifier.predict_texts`) and its bundle (`hierattn.runtime.load(...)
.predict_texts`) over the 25,000 test reviews, once with each checkout (`--before`, `--after`: folders with
hierattn's source; each in its own process with `PYTHONPATH=<tree>`, checked), and compares the probabilities.

    python benchmarks/same_predictions.py --before /work/base --after . --run /work/bench/imdb-default \\
        [--imdb ../shared/datasets/aclImdb_v1.tar.gz] [--output same_predictions.json]

Prints, per path (keras, bundle), the largest difference of any probability and whether it is within 1e-6.
"""

import argparse
import json
import os
import pathlib
import subprocess
import sys
import tempfile
import time

import numpy as np

ROOT = pathlib.Path(__file__).resolve().parent.parent
TOLERANCE = 1e-6

_PREDICT = """
import sys, time, numpy as np, hierattn
tree, run, imdb, out = sys.argv[1:5]
assert hierattn.__file__.startswith(tree), (hierattn.__file__, tree)
from hierattn import runtime
from hierattn.data import load_imdb
from hierattn.runs.run import load_run
texts = list(load_imdb(imdb, splits=("test",), progress=False)["test"].texts)
started = time.perf_counter()
np.save(out + "/keras.npy", load_run(run).classifier.predict_texts(texts, batch_size=64))
np.save(out + "/bundle.npy", runtime.load(run + "/model.onnx").predict_texts(texts, batch_size=64))
print(f"{len(texts)} texts, both paths, in {time.perf_counter() - started:.0f} s", flush=True)
"""


def predictions(tree, run, imdb, out):
    """Runs both paths with hierattn from `tree`; their probabilities as `{path: array}`."""
    tree = str(pathlib.Path(tree).resolve())
    environment = {**os.environ, "PYTHONPATH": tree, "PYTHONHASHSEED": "0", "TF_CPP_MIN_LOG_LEVEL": "3"}
    subprocess.run([sys.executable, "-c", _PREDICT, tree, run, imdb, out], env=environment, cwd=tree, check=True)
    return {name: np.load(f"{out}/{name}.npy") for name in ("keras", "bundle")}


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--before", required=True, help="the checkout before the change")
    parser.add_argument("--after", default=str(ROOT), help="the checkout after it (default: this one)")
    parser.add_argument("--run", required=True, help="a saved run with model.keras and model.onnx")
    parser.add_argument("--imdb", default=str(ROOT.parent / "shared" / "datasets" / "aclImdb_v1.tar.gz"))
    parser.add_argument("--output", default=None, help="a JSON file for the results")
    args = parser.parse_args()
    started = time.perf_counter()
    found = {}
    for side in ("before", "after"):
        out = tempfile.mkdtemp(prefix=f"same-{side}-")
        found[side] = predictions(getattr(args, side), str(pathlib.Path(args.run).resolve()), args.imdb, out)
    results = {"run": args.run, "before": args.before, "after": args.after, "paths": {}}
    for name in ("keras", "bundle"):
        before, after = found["before"][name], found["after"][name]
        same_nan = bool((np.isnan(before) == np.isnan(after)).all())
        difference = float(np.nanmax(np.abs(before - after))) if same_nan else float("inf")
        results["paths"][name] = {
            "texts": len(before),
            "largest_difference": difference,
            "same_labels": bool((np.nanargmax(before, 1) == np.nanargmax(after, 1)).all()),
            "within_tolerance": difference <= TOLERANCE,
        }
        print(f"{name}: {len(before):,} texts, largest difference {difference:.3g} (within {TOLERANCE:g}: "
              f"{difference <= TOLERANCE})")  # fmt: skip
    results["seconds"] = round(time.perf_counter() - started, 1)
    if args.output:
        pathlib.Path(args.output).write_text(json.dumps(results, indent=2) + "\n")
    sys.exit(0 if all(path["within_tolerance"] for path in results["paths"].values()) else 1)


if __name__ == "__main__":
    main()
