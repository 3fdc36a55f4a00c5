"""Two worker processes (MultiWorkerMirroredStrategy on 127.0.0.1) against one process, on real IMDB reviews.

Trains the same run twice with `python cli.py train imdb --limit N`: once as
a two-worker cluster (`--distribute multi-worker`, TF_CONFIG on free local
ports), once alone, with the same global batch and seed, and prints the
wall time, the validation and test accuracy of each, and the documents each
epoch consumed across the workers (history.csv's `examples`). On a machine
with few cores the cluster is slower (two processes share the cores and
exchange gradients over gRPC); the point is that it trains the same model.

    python benchmarks/bench_distribute.py [--limit 2000] [--epochs 3] [--archive PATH]
"""

import argparse
import csv
import json
import os
import pathlib
import subprocess
import sys
import tempfile
import time

from hierattn.distribute import local_cluster

ROOT = pathlib.Path(__file__).resolve().parent.parent


def summary(run):
    metrics = json.loads((run / "metrics.json").read_text())
    with open(run / "history.csv", newline="") as f:
        rows = list(csv.DictReader(f))
    return {
        "validation_accuracy": metrics["validation"]["accuracy"],
        "test_accuracy": metrics["test"]["accuracy"],
        "train_documents": metrics["train_documents"],
        "examples_per_epoch": [float(r["examples"]) for r in rows],
        "val_examples_per_epoch": [float(r["val_examples"]) for r in rows],
    }


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--limit", type=int, default=2000)
    parser.add_argument("--epochs", type=int, default=3)
    parser.add_argument("--archive", default=str(ROOT.parent / "shared" / "datasets" / "aclImdb_v1.tar.gz"))
    args = parser.parse_args()
    work = pathlib.Path(tempfile.mkdtemp(prefix="bench-distribute-"))
    command = [
        sys.executable,
        str(ROOT / "cli.py"),
        "train",
        "imdb",
        args.archive,
        "--limit",
        str(args.limit),
        "--epochs",
        str(args.epochs),
        "--seed",
        "0",
    ]
    results = {}

    started = time.perf_counter()
    workers = []
    for index, tf_config in enumerate(local_cluster(2)):
        log = open(work / f"worker{index}.log", "w")
        workers.append(
            subprocess.Popen(
                command + ["--output", str(work / "cluster"), "--distribute", "multi-worker"],
                env=dict(os.environ, TF_CONFIG=tf_config),
                stdout=log,
                stderr=subprocess.STDOUT,
            )
        )
    codes = [w.wait() for w in workers]
    if codes != [0, 0]:
        sys.exit(f"the cluster failed ({codes}); see {work}/worker*.log")
    results["two workers"] = {"seconds": round(time.perf_counter() - started, 1), **summary(work / "cluster")}

    started = time.perf_counter()
    with open(work / "single.log", "w") as log:
        subprocess.run(command + ["--output", str(work / "single")], check=True, stdout=log, stderr=subprocess.STDOUT)
    results["one process"] = {"seconds": round(time.perf_counter() - started, 1), **summary(work / "single")}

    print(json.dumps({"limit": args.limit, "epochs": args.epochs, "results": results}, indent=2))
    print(f"runs and logs: {work}")


if __name__ == "__main__":
    main()
