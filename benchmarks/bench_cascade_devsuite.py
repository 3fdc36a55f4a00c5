"""The cascade on every devsuite set and Reuters (issue #52): its test scores against the whole combination's.

Trains the default run of each (`python cli.py train csv DATA/train.csv --test DATA/test.csv`, Reuters with
`--multi-label`), one at a time, and reads what each run's metrics.json records: the test scores of the
classifier (the cascade, the network reading only what the n-gram part is not sure of, the cut chosen on the
run's validation part) and of the whole combination (`parts.whole`: the network reading every document), and
the share of validation and test documents the network read. Single-label: accuracy and macro-F1; Reuters:
micro- and macro-F1. Target: each within 0.1 points of the whole combination's.

Usage:
    python benchmarks/bench_cascade_devsuite.py [--root /tmp/cascade_devsuite] [--reuse] [--output results.json]
"""

import argparse
import json
import pathlib
import subprocess
import sys

ROOT = pathlib.Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "benchmarks"))

from bench_export_runtime import report  # noqa: E402

SHARED = ROOT.parent / "shared" / "datasets"
SETS = {name: (SHARED / "devsuite" / name, False) for name in ("20newsgroups", "trec6", "agnews", "airline_tweets")}
SETS["reuters"] = (SHARED / "multilabel" / "reuters", True)


def train(folder, multi_label, output):
    command = [sys.executable, str(ROOT / "cli.py"), "train", "csv", str(folder / "train.csv")]
    command += ["--test", str(folder / "test.csv"), "--output", str(output)]
    if multi_label:
        command.append("--multi-label")
    print(" ".join(command), flush=True)
    subprocess.run(command, check=True, stdout=subprocess.DEVNULL)


def summary(output, multi_label):
    metrics = json.loads((output / "metrics.json").read_text())
    metrics = metrics.get("metrics", metrics)
    names = ("micro_f1", "macro_f1") if multi_label else ("accuracy", "macro_f1")
    cascade, whole = metrics["test"], metrics["parts"]["whole"]["test"]
    return {
        "cascade": {name: round(cascade[name], 5) for name in names},
        "whole": {name: round(whole[name], 5) for name in names},
        "difference_points": {name: round(100 * (cascade[name] - whole[name]), 3) for name in names},
        "network_read": metrics["parts"]["network_read"],
        "cut": metrics["parts"]["cascade"]["cut"],
    }


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--root", default="/tmp/cascade_devsuite")
    parser.add_argument("--reuse", action="store_true", help="Read the runs already under --root.")
    parser.add_argument("--output")
    args = parser.parse_args()
    results = {}
    for name, (folder, multi_label) in SETS.items():
        output = pathlib.Path(args.root) / name
        if not (args.reuse and (output / "metrics.json").exists()):
            train(folder, multi_label, output)
        results[name] = summary(output, multi_label)
        print(name, json.dumps(results[name]), flush=True)
    report(results, args.output)


if __name__ == "__main__":
    main()
