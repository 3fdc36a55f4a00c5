"""The n-gram part beside an already trained network: each part alone and combined, validation and test.

Loads a run's model.keras (a network trained without the n-gram part),
rebuilds the run's validation split, fits n-gram parts of several settings
on the training part, chooses the combination on validation (log-loss) and
scores everything on validation and test.

    python benchmarks/combine_trained.py RUN_DIR --dataset imdb --ngrams 2,3 --C 10,30
"""

import argparse
import json
import pathlib
import sys


ROOT = pathlib.Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench_baseline import load  # noqa: E402

from hierattn.data.dataset import stratified_split  # noqa: E402
from hierattn.defaults import TRAINING  # noqa: E402
from hierattn.evaluation import classification_metrics  # noqa: E402
from hierattn.layers import NgramLogits  # noqa: E402
from hierattn.ngrams import choose_mixing, combine, fit_ngram_logits, ngram_logits  # noqa: E402
from hierattn.preprocessor import TextPreprocessor  # noqa: E402
from hierattn.runs import load_classifier  # noqa: E402


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("run")
    parser.add_argument("--dataset", default="imdb")
    parser.add_argument("--ngrams", default="3")
    parser.add_argument("--C", default="10")
    parser.add_argument("--bits", default="20")
    parser.add_argument("--min-count", type=int, default=None,
                        help="the n-gram part reads a vocabulary of this cut-off (the network its own), same limits")
    args = parser.parse_args()
    clf = load_classifier(pathlib.Path(args.run) / "model.keras")
    train, test = load(args.dataset)
    names = train.label_map.names
    fit_idx, val_idx = stratified_split(train.labels, TRAINING["validation_split"], TRAINING["seed"], names)
    pre = clf.preprocessor
    x_fit = pre([train.texts[i] for i in fit_idx])
    x_val, x_test = pre([train.texts[i] for i in val_idx]), pre(test.texts)
    y_fit, y_val, y_test = train.labels[fit_idx], train.labels[val_idx], test.labels
    p_val, p_test = clf.predict_ids(x_val, part="network"), clf.predict_ids(x_test, part="network")
    if args.min_count is not None:
        config = dict(pre.get_config(), min_count=args.min_count, max_vocab=None)
        pre = TextPreprocessor.from_config(config)
        pre.adapt([train.texts[i] for i in fit_idx], progress=False)
        x_fit = pre([train.texts[i] for i in fit_idx])
        x_val, x_test = pre([train.texts[i] for i in val_idx]), pre(test.texts)
    for bits in map(int, args.bits.split(",")):
        for n in map(int, args.ngrams.split(",")):
            for c in map(float, args.C.split(",")):
                layer = NgramLogits(len(pre.vocabulary), len(names), ngram_max=n, num_buckets=2**bits)
                fit_ngram_logits(layer, x_fit, y_fit, c=c)
                z_val, z_test = ngram_logits(layer, x_val), ngram_logits(layer, x_test)
                (a, b), table = choose_mixing(p_val, z_val, y_val)
                row = {"dataset": args.dataset, "vocabulary": len(pre.vocabulary), "bits": bits, "n": n, "C": c,
                       "a": round(a, 4), "b": round(b, 4)}
                for split, p, z, y in (("val", p_val, z_val, y_val), ("test", p_test, z_test, y_test)):
                    for part, q in (("network", p), ("ngrams", z), ("combined", combine(p, z, a, b))):
                        m = classification_metrics(y, q.argmax(1), names)
                        row[f"{split}_{part}"] = [round(m["accuracy"], 4), round(m["macro_f1"], 4)]
                best_acc = max(table, key=lambda r: r["accuracy"])
                row["val_best_acc_share"] = [best_acc["share"], best_acc["accuracy"]]
                print(json.dumps(row), flush=True)


if __name__ == "__main__":
    main()
