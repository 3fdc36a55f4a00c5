"""The baseline every `train` run reports (`hierattn.runs.baseline`), on IMDB and the four devsuite datasets.

For each dataset, fits TF-IDF (word 1-2 grams) + logistic regression as
`train` does: on the training part left after the stratified, seeded 10%
validation split, scored on that validation part and on the test split. With
`--full-train` it fits on the whole training file instead, as the devsuite
README's reference baseline does, so its figures can be compared with that
README's table.

    python benchmarks/bench_baseline.py [--full-train] [--datasets imdb,trec6,...]
"""

import argparse
import json
import pathlib
import time

from hierattn.data import load_imdb, load_table
from hierattn.data.dataset import stratified_split
from hierattn.defaults import TRAINING
from hierattn.runs.baseline import run_baseline

ROOT = pathlib.Path(__file__).resolve().parent.parent

SHARED = ROOT.parent / "shared" / "datasets"
DEVSUITE = ("20newsgroups", "trec6", "agnews", "airline_tweets")


def load(name):
    if name == "imdb":
        splits = load_imdb(SHARED / "aclImdb_v1.tar.gz", splits=("train", "test"), download=False, progress=False)
        return splits["train"], splits["test"]
    train, _ = load_table(SHARED / "devsuite" / name / "train.csv")
    test, _ = load_table(SHARED / "devsuite" / name / "test.csv", label_map=train.label_map)
    return train, test


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--full-train", action="store_true", help="fit on the whole training file (no validation)")
    parser.add_argument("--datasets", default=",".join(("imdb",) + DEVSUITE))
    args = parser.parse_args()
    rows = []
    for name in args.datasets.split(","):
        train, test = load(name)
        names = train.label_map.names
        evaluate = {"test": (test.texts, test.labels)}
        if args.full_train:
            fit_texts, fit_labels = train.texts, train.labels
        else:
            fit_idx, val_idx = stratified_split(train.labels, TRAINING["validation_split"], TRAINING["seed"], names)
            fit_texts, fit_labels = [train.texts[i] for i in fit_idx], train.labels[fit_idx]
            evaluate["validation"] = ([train.texts[i] for i in val_idx], train.labels[val_idx])
        started = time.perf_counter()
        result = run_baseline(fit_texts, fit_labels, names, evaluate)
        row = {
            "dataset": name,
            "train_documents": result["train_documents"],
            "seconds_fit_and_score": round(time.perf_counter() - started, 1),
            "fit_seconds": result["training_seconds"],
        }
        for split in ("validation", "test"):
            if split in result:
                row[f"{split}_accuracy"] = round(result[split]["accuracy"], 4)
                row[f"{split}_macro_f1"] = round(result[split]["macro_f1"], 4)
        rows.append(row)
        print(json.dumps(row), flush=True)


if __name__ == "__main__":
    main()
