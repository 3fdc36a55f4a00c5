"""Issue #66: what a run does after Keras's `fit`, before and after one-pass tuning: the network's passes and the time.

Both trees load the same trained run (its `model.keras`) and take, on the same validation split
(`RunData.split(share, seed)`, as `train` makes it) and the same test split, the steps a run takes after the
network is trained, the n-gram part's fit left out (the same scikit-learn fit in both):

* before (`--before`, a checkout of main before the issue): `choose_weights` then `choose_cut` on the validation
  texts (`fit`'s steps: with thresholds or offsets where the classifier has them), then `train`'s validation score
  and its `_evaluate` (the test split, each part alone, calibration; no baseline);
* after (this checkout): `tune` on the validation texts, then the same run steps.

It counts the backbone's passes (calls of `predict_batches` on the backbone, and the documents they read) and
times each tree, in its own process, alternating `--repeat` times. The probabilities the two give are compared
by `benchmarks/compare_outputs.py`; here only the figures of the test split are checked to be the same.

Usage:
    python benchmarks/post_fit_passes.py --run RUN_DIR --before /path/to/main-before
        [--imdb ../shared/datasets/aclImdb_v1.tar.gz] [--repeat 2] [--output results.json]
"""

import argparse
import json
import os
import pathlib
import subprocess
import sys
import time

ROOT = pathlib.Path(__file__).resolve().parents[1]

STEPS = r"""
import json, sys, time, types
import numpy as np
import hierattn.models.task as task
from hierattn.data import load_imdb
from hierattn.runs.run import load_run
from hierattn.runs.run_context import RunData
import hierattn.runs.train as train

run_dir, imdb, share, seed, after = sys.argv[1], sys.argv[2], float(sys.argv[3]), int(sys.argv[4]), sys.argv[5] == "1"
splits = load_imdb(imdb, splits=("train", "test"), progress=False)
data = RunData(splits["train"], splits["test"], name="imdb")
split = data.split(share, seed)
classifier = load_run(run_dir).classifier
passes = []
original = task.predict_batches

def counted(model, x, batch_size, progress=False):
    if model is classifier.backbone:
        passes.append(len(x))
    return original(model, x, batch_size, progress)

task.predict_batches = counted
validation = (split.val_texts, [data.train.label_map.names[i] for i in split.val_labels])
config = types.SimpleNamespace(baseline=False)
context = types.SimpleNamespace(log=lambda line: None, verbose=0)
started = time.perf_counter()
if after:
    classifier.tune(validation)
else:
    classifier.choose_weights(validation)
    if classifier.multi_label:
        classifier.choose_thresholds(validation)
    classifier.choose_cut(validation)
tuned = time.perf_counter()
classifier.ngram_report.setdefault("training_seconds", None)  # a saved report keeps only the choices
metrics = {}
if after:
    found = train._validation_outputs(classifier, split)
    metrics["validation"] = train.label_metrics(split.val_labels, classifier.policy.ids(found.probabilities),
                                                data.train.label_map.names)
else:
    found = classifier.preprocessor(split.val_texts)
    metrics["validation"] = train.label_metrics(split.val_labels, classifier.decision.ids(classifier.predict_ids(found)),
                                                data.train.label_map.names)
train._evaluate(classifier, data, split, config, context, metrics, found)
ended = time.perf_counter()
test = {key: metrics["test"][key] for key in ("accuracy", "macro_f1")}
print(json.dumps({"tune_seconds": tuned - started, "run_seconds": ended - tuned, "seconds": ended - started,
                  "passes": len(passes), "documents_read": int(sum(passes)), "test": test,
                  "whole": metrics["parts"]["whole"]["test"]["accuracy"], "validation": metrics["validation"]["accuracy"]}))
"""


def measure(tree, after, args):
    """One tree's steps in a fresh process (`PYTHONPATH` first: its `hierattn`), and what they took."""
    environment = dict(os.environ, PYTHONPATH=str(tree), TF_CPP_MIN_LOG_LEVEL="3")
    command = [sys.executable, "-c", STEPS, str(args.run), str(args.imdb), str(args.share), str(args.seed)]
    done = subprocess.run([*command, "1" if after else "0"], env=environment, capture_output=True, text=True, cwd=tree)
    if done.returncode:
        raise SystemExit(done.stderr[-3000:])
    return json.loads(done.stdout.strip().splitlines()[-1])


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--run", type=pathlib.Path, required=True, help="a trained run directory (its model.keras)")
    parser.add_argument("--before", type=pathlib.Path, required=True, help="a checkout of main before the issue")
    parser.add_argument("--imdb", type=pathlib.Path, default=ROOT.parent / "shared/datasets/aclImdb_v1.tar.gz")
    parser.add_argument("--share", type=float, default=0.1, help="the validation share (train's default)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--repeat", type=int, default=2)
    parser.add_argument("--output", type=pathlib.Path)
    args = parser.parse_args()
    results = {"before": [], "after": []}
    for _ in range(args.repeat):
        for name, tree, after in (("before", args.before, False), ("after", ROOT, True)):
            found = measure(tree, after, args)
            results[name].append(found)
            print(name, json.dumps(found), flush=True)
    best = {name: min(row["seconds"] for row in rows) for name, rows in results.items()}
    results["summary"] = {
        "seconds": best,
        "saved_seconds": round(best["before"] - best["after"], 1),
        "ratio": round(best["after"] / best["before"], 3),
        "passes": {name: rows[0]["passes"] for name, rows in results.items() if name != "summary"},
        "same_test_figures": results["before"][0]["test"] == results["after"][0]["test"],
        "date": time.strftime("%Y-%m-%d"),
    }
    print(json.dumps(results["summary"], indent=2))
    if args.output:
        args.output.write_text(json.dumps(results, indent=2) + "\n")


if __name__ == "__main__":
    main()
