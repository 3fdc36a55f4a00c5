"""How to choose the combination's weights? Criteria compared by 2-fold cross-validation inside the validation split.

Loads trained runs (each with its n-gram part fitted), rebuilds the run's
validation split, and for each criterion chooses `(a, b)` of
`softmax(a log p_network + b z)` on one half of the validation texts and
scores it on the other half (and the other way round): the mean of the two
is the criterion's honest validation accuracy. Criteria:

- `loss`: the default before this comparison, `a + b = 1`, the validation log-loss.
- `loss-scaled`: the share `a / (a + b)` and a scale `a + b` together, by log-loss (the
  default since this comparison: `hierattn.ngrams.choose_mixing`).
- `accuracy`: `a + b = 1`, the validation accuracy (ties: the smaller log-loss).

The choice made on the whole validation split is then scored on the test
split, for the record only.

    python benchmarks/share_criterion.py /tmp/s14/dev_trec6_han:trec6 /tmp/s14/imdb_default:imdb
"""

import argparse
import json
import pathlib
import sys

import numpy as np

ROOT = pathlib.Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench_baseline import load  # noqa: E402

from hierattn.data.dataset import stratified_split  # noqa: E402
from hierattn.defaults import TRAINING  # noqa: E402
from hierattn.evaluation import classification_metrics  # noqa: E402
from hierattn.ngrams import SHARES, choose_mixing, combine, log_loss, ngram_logits  # noqa: E402
from hierattn.runs import load_classifier  # noqa: E402


def choose(criterion, p, z, y):
    """The weights `(a, b)` a criterion picks on `(p, z, y)`."""
    if criterion == "loss":
        candidates = [(s, 1.0 - s) for s in SHARES]
        return min(candidates, key=lambda ab: log_loss(combine(p, z, *ab), y))
    if criterion == "loss-scaled":  # the default (`hierattn.ngrams.choose_mixing`)
        return choose_mixing(p, z, y)[0]
    if criterion == "accuracy":
        candidates = [(s, 1.0 - s) for s in SHARES]
        scored = [(ab, combine(p, z, *ab)) for ab in candidates]
        return min(scored, key=lambda item: (-(item[1].argmax(1) == y).mean(), log_loss(item[1], y)))[0]
    raise ValueError(criterion)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("runs", nargs="+", help="RUN_DIR:DATASET")
    parser.add_argument("--criteria", default="loss,loss-scaled,accuracy")
    args = parser.parse_args()
    for item in args.runs:
        run, dataset = item.rsplit(":", 1)
        clf = load_classifier(pathlib.Path(run) / "model.keras")
        train, test = load(dataset)
        names = train.label_map.names
        _, val_idx = stratified_split(train.labels, TRAINING["validation_split"], TRAINING["seed"], names)
        x_val, x_test = clf.preprocessor([train.texts[i] for i in val_idx]), clf.preprocessor(test.texts)
        y_val, y_test = train.labels[val_idx], test.labels
        p_val, p_test = clf.predict_ids(x_val, part="network"), clf.predict_ids(x_test, part="network")
        z_val, z_test = ngram_logits(clf.ngram_logits, x_val), ngram_logits(clf.ngram_logits, x_test)
        halves = np.random.default_rng(0).permutation(len(y_val)) % 2 == 0
        for criterion in args.criteria.split(","):
            folds = []
            for chosen_on in (halves, ~halves):
                a, b = choose(criterion, p_val[chosen_on], z_val[chosen_on], y_val[chosen_on])
                scored = ~chosen_on
                folds.append(float((combine(p_val[scored], z_val[scored], a, b).argmax(1) == y_val[scored]).mean()))
            a, b = choose(criterion, p_val, z_val, y_val)
            m = classification_metrics(y_test, combine(p_test, z_test, a, b).argmax(1), names)
            print(json.dumps({"run": run, "dataset": dataset, "criterion": criterion,
                              "val_2fold_acc": round(float(np.mean(folds)), 4), "a": round(a, 3), "b": round(b, 3),
                              "share": round(a / (a + b), 3),
                              "test": [round(m["accuracy"], 4), round(m["macro_f1"], 4)]}), flush=True)


if __name__ == "__main__":
    main()
