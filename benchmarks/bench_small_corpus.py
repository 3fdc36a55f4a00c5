"""Do the defaults converge on a small corpus? Most epochs against early stopping, on validation only.

Trains `train`'s defaults on a seeded sample of N training documents of
each dataset (the validation part carved from the sample, as `train` does)
with different most-epochs settings (early stopping on the validation loss
stays on, patience from the defaults unless given), and prints, per run,
the epochs run, the best epoch, and the validation accuracy of the network
alone, of the n-gram part alone and of the whole classifier. No test split
is read.

    python benchmarks/bench_small_corpus.py --datasets agnews,airline_tweets,imdb --models rnn,han --n 1900 --epochs 8,40
    python benchmarks/bench_small_corpus.py --epochs 8 --pretrain-epochs 5,20
"""

import argparse
import csv
import json
import pathlib
import tempfile

from bench_baseline import load

from hierattn.runs.config import TrainConfig
from hierattn.runs.train import train


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--datasets", default="agnews,airline_tweets,imdb")
    parser.add_argument("--models", default="rnn,han")
    parser.add_argument("--n", type=int, default=1900)
    parser.add_argument("--epochs", default="8,40")
    parser.add_argument("--patience", default="")
    parser.add_argument("--pretrain-epochs", default="", help="word2vec epochs to try (default: the default)")
    args = parser.parse_args()
    patiences = [int(p) for p in args.patience.split(",")] if args.patience else [None]
    pretrain = [int(p) for p in args.pretrain_epochs.split(",")] if args.pretrain_epochs else [None]
    for name in args.datasets.split(","):
        train_data, _ = load(name)
        for model in args.models.split(","):
            for epochs in map(int, args.epochs.split(",")):
                for patience, word2vec in ((p, w) for p in patiences for w in pretrain):
                    settings = {"model": model, "epochs": epochs, "limit": args.n, "baseline": False}
                    if patience:
                        settings["patience"] = patience
                    if word2vec:
                        settings["pretrain_epochs"] = word2vec
                    with tempfile.TemporaryDirectory() as folder:
                        run = train(
                            train_data,
                            None,
                            TrainConfig.from_dict(settings),
                            pathlib.Path(folder) / "run",
                            log=lambda m: None,
                            verbose=0,
                        )
                        with open(pathlib.Path(folder) / "run" / "history.csv") as f:
                            history = list(csv.DictReader(f))
                    losses = [float(row["val_loss"]) for row in history]
                    parts = run.metrics["parts"]
                    print(
                        json.dumps(
                            {
                                "dataset": name,
                                "model": model,
                                "most_epochs": epochs,
                                "patience": patience,
                                "pretrain_epochs": word2vec,
                                "train_documents": run.metrics["train_documents"],
                                "epochs_run": len(history),
                                "best_epoch": losses.index(min(losses)) + 1,
                                "first_epoch_val_acc": round(float(history[0]["val_accuracy"]), 4),
                                "val_network": round(parts["network"]["validation"]["accuracy"], 4),
                                "val_ngrams": round(parts["ngrams"]["validation"]["accuracy"], 4),
                                "val_combined": round(run.metrics["validation"]["accuracy"], 4),
                                "network_share": parts["network_share"],
                                "training_seconds": run.metrics["training_seconds"],
                            }
                        ),
                        flush=True,
                    )


if __name__ == "__main__":
    main()
