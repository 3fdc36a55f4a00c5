"""Settings for `make quickstart`, chosen on validation texts (a study for issue #38).

The quick start trains a small IMDB run in about two minutes on 2 CPU cores,
then explains one review. This script tries candidate settings (sample size,
epochs, length limits) and scores each run on reviews of IMDB's *train*
split that the run never saw (the reviews outside its seeded sample), so no
choice looks at the test split or at the README's example. For each candidate
it prints and records:

- `fit_seconds`: the classifier's fit (network, n-gram part, weights), as the
  run's metrics.json records it, and `command_seconds`: the whole
  `train imdb` call (reading, word2vec, test, baseline);
- the network weight and share chosen on the run's own validation part;
- accuracy on the held-out train reviews of the whole classifier, the network
  alone and the n-gram part alone.

Command (results in BENCHMARKS.md, "The quick start"):

    python benchmarks/quickstart_settings.py --out quickstart.json

Candidates are `LIMIT:EPOCHS:MAX_LENGTH` (MAX_LENGTH `auto` for the 95th
percentile), e.g. `--candidates 2000:3:auto 3000:3:15x30`.
"""

import argparse
import json
import pathlib
import sys
import tempfile
import time

import numpy as np

REPO = pathlib.Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from hierattn.data import load_imdb  # noqa: E402
from hierattn.runs import sources as train_sources  # noqa: E402

IMDB = REPO.parent / "shared" / "datasets" / "aclImdb_v1.tar.gz"
CANDIDATES = ["1000:1:auto", "2000:3:auto", "2000:3:15x30", "3000:3:15x30", "4000:2:15x30", "3000:4:10x30"]


def held_out(train, limit, seed, size):
    """`size` reviews of the train split outside the run's seeded sample of `limit` (IMDB's train is class-ordered)."""
    # the indices `hierattn.data.dataset.sample` takes for the run
    taken = set(np.random.default_rng(seed).permutation(len(train))[:limit].tolist())
    rest = np.array([i for i in range(len(train)) if i not in taken])
    chosen = np.sort(np.random.default_rng(seed + 1).permutation(rest)[:size])
    return [train.texts[i] for i in chosen], [train.label_map.names[train.labels[i]] for i in chosen]


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--imdb", default=str(IMDB))
    parser.add_argument("--candidates", nargs="+", default=CANDIDATES)
    parser.add_argument("--held-out", type=int, default=2000, help="held-out train reviews scored per candidate")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--out", default=None)
    args = parser.parse_args()

    train = load_imdb(args.imdb, splits=("train",))["train"]
    rows = []
    for candidate in args.candidates:
        limit, epochs, max_length = candidate.split(":")
        settings = {"limit": int(limit), "epochs": int(epochs), "seed": args.seed}
        if max_length != "auto":
            settings["max_length"] = max_length
        texts, labels = held_out(train, int(limit), args.seed, args.held_out)
        with tempfile.TemporaryDirectory() as scratch:
            started = time.perf_counter()
            run = train_sources.train_imdb(
                args.imdb, settings, output=f"{scratch}/run", log=lambda message: None, verbose=0
            )
            command_seconds = time.perf_counter() - started
        clf, parts = run.classifier, run.metrics["parts"]
        ids = clf.preprocessor(texts)
        truth = np.array([clf.label_names.index(label) for label in labels])
        accuracy = {
            name: float((clf.predict_ids(ids, part=part).argmax(1) == truth).mean())
            for name, part in (("classifier", None), ("network", "network"), ("ngrams", "ngrams"))
        }
        row = {
            "candidate": candidate,
            "fit_seconds": run.metrics["training_seconds"],
            "command_seconds": round(command_seconds, 1),
            "limits": (
                f"{clf.preprocessor.max_sentences}x{clf.preprocessor.max_words}"
                if clf.architecture == "han"
                else clf.preprocessor.sequence_length
            ),
            "network_weight": round(parts["network_weight"], 3),
            "network_share": round(parts["network_share"], 3),
            "held_out_accuracy": {name: round(value, 4) for name, value in accuracy.items()},
            "run_validation_accuracy": run.metrics["validation"]["accuracy"],
        }
        rows.append(row)
        print(json.dumps(row), flush=True)
    if args.out:
        pathlib.Path(args.out).write_text(json.dumps(rows, indent=2) + "\n")


if __name__ == "__main__":
    main()
