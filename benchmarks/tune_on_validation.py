"""Compare training settings on IMDB validation data only (never the test split).

Each call trains one setting with `hierattn.training.train(..., test_data=None)`:
the validation part is carved out of `train/` exactly as in `train imdb`, the
test split is not read at all. One JSON line per call is appended to
`benchmarks/output/tune.jsonl` (setting, validation accuracy per epoch, epoch
seconds), so a series of calls is a record of how the defaults were chosen.

Usage:
    python benchmarks/tune_on_validation.py --model transformer \
        [--set num_layers=2 --set learning_rate=5e-4 ...] [--limit N] [--epochs 3] [--no-unsup]

`--set KEY=VALUE` sets a `TrainConfig` field or a builder argument of the
model (e.g. `num_layers`, `pooling`, `position`, `normalize_first`), as
`train --config FILE.json` does. Values are parsed as JSON when they can be
(numbers, true/false), else kept as strings.
"""

import argparse
import csv
import json
import os
import pathlib
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(__file__), ".."))
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")

from hierattn.data import load_imdb  # noqa: E402
from hierattn.training import TrainConfig, train  # noqa: E402


def parse_settings(pairs):
    """`KEY=VALUE` strings as a dict; values are JSON when they parse, else strings."""
    settings = {}
    for pair in pairs:
        key, _, raw = pair.partition("=")
        try:
            settings[key] = json.loads(raw)
        except json.JSONDecodeError:
            settings[key] = raw
    return settings


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--model", default="transformer")
    parser.add_argument("--set", action="append", default=[], dest="settings", metavar="KEY=VALUE")
    parser.add_argument("--epochs", type=int, default=3)
    parser.add_argument("--limit", type=int, default=None, help="train on a seeded subset of train/")
    parser.add_argument("--no-unsup", action="store_true", help="word2vec on the training part only")
    parser.add_argument("--data", default="../shared/datasets/aclImdb_v1.tar.gz")
    parser.add_argument("--out", default=os.path.join(os.path.dirname(__file__), "output"))
    args = parser.parse_args()

    config = TrainConfig.from_dict({"model": args.model, "epochs": args.epochs, "limit": args.limit,
                                    **parse_settings(args.settings)}).validate()
    splits = ("train",) if args.no_unsup else ("train", "unsup")
    data = load_imdb(args.data, splits=splits)
    out = pathlib.Path(args.out)
    run_dir = out / f"tune-{args.model}-{time.strftime('%Y%m%d-%H%M%S')}"
    started = time.perf_counter()
    run = train(data["train"], None, config, run_dir, unlabeled=None if args.no_unsup else data["unsup"].texts,
                dataset_name="imdb", verbose=2)
    with open(run_dir / "history.csv", newline="") as f:
        history = list(csv.DictReader(f))
    record = {
        "date": time.strftime("%Y-%m-%d %H:%M"),
        "command": " ".join(sys.argv),
        "model": args.model,
        "settings": args.settings,
        "limit": args.limit,
        "unsup": not args.no_unsup,
        "val_accuracy_per_epoch": [round(float(row["val_accuracy"]), 4) for row in history],
        "val_accuracy_best_weights": run.metrics["validation"]["accuracy"],
        "seconds": round(time.perf_counter() - started, 1),
        "run": str(run_dir),
    }
    with open(out / "tune.jsonl", "a") as f:
        f.write(json.dumps(record) + "\n")
    print(json.dumps(record, indent=1))


if __name__ == "__main__":
    main()
