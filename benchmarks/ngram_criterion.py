"""Which validation criterion should choose the n-gram part's recipe and the combination's weights (issue #30).

Validation only: for each finished default run, the run's own network and its
validation split (re-made from config.json: the same seeded, stratified
split), every recipe candidate of `NGRAMS["recipes"]` fitted on the run's
training part (each alone, `hierattn.ngrams.recipes.fit_recipes`), then a
2-fold split of the validation texts (stratified, seed 0): each criterion
chooses the recipe (the part alone, at its best temperature) and the weights
on one half, and the other half is scored (accuracy and macro-F1 of the
combination, and of the chosen part alone); the two halves' scores are
averaged. No test text is read.

Criteria (lower is better):

- ``log-loss``: the mean log-loss;
- ``mixed``: the mean of the log-loss and the class-balanced log-loss (each
  class's mean log-loss, averaged over classes);
- ``balanced``: the class-balanced log-loss alone;
- ``errors``: 1 - (accuracy + macro-F1) / 2, ties broken by the log-loss.

    python benchmarks/ngram_criterion.py RUN_DIR [RUN_DIR ...] --out criteria.json
"""

import argparse
import json
import time

import numpy as np
from sklearn.metrics import f1_score

from hierattn.data import load_imdb, load_table, locate_imdb
from hierattn.data.dataset import stratified_split
from hierattn.defaults import NGRAMS
from hierattn.ngrams.logits import NgramLogits
from hierattn.ngrams.mixing import choose_mixing, combine, log_loss, ngram_logits, scored_at_best_scale
from hierattn.ngrams.recipes import _class_weights, fit_recipes
from hierattn.runs.run import load_run


def balanced_log_loss(probabilities, labels):
    picked = -np.log(np.maximum(probabilities[np.arange(len(labels)), labels], 1e-12))
    return float(np.mean([picked[labels == c].mean() for c in np.unique(labels)]))


def errors(probabilities, labels):
    predicted = probabilities.argmax(1)
    accuracy = float((predicted == labels).mean())
    f1 = float(f1_score(labels, predicted, average="macro"))
    return 1.0 - (accuracy + f1) / 2 + 1e-6 * log_loss(probabilities, labels)


CRITERIA = {
    "log-loss": log_loss,
    "mixed": lambda p, y: (log_loss(p, y) + balanced_log_loss(p, y)) / 2,
    "balanced": balanced_log_loss,
    "errors": errors,
}


def scores(probabilities, labels):
    predicted = probabilities.argmax(1)
    return float((predicted == labels).mean()), float(f1_score(labels, predicted, average="macro"))


def run_data(run):
    """The run's training data, as its config.json says (IMDB or a table)."""
    data = run.config["data"]
    if "imdb" in data:
        return load_imdb(locate_imdb(data["imdb"]["path"]), splits=("train",))["train"]
    return load_table(data["train"]["path"])[0]


def candidates(classifier, x_fit, y_fit, x_val, recipes=None):
    """Every recipe candidate (of `recipes`, default `NGRAMS["recipes"]`) fitted alone: `[(description, validation logits)]`."""
    layer = classifier.ngram_logits
    make = lambda n, tf, norm: NgramLogits(  # noqa: E731
        layer.vocabulary_size, layer.num_classes, n, layer.num_buckets, tf=tf, normalize=norm
    )
    found = []
    for recipe in recipes or NGRAMS["recipes"]:
        for c in recipe["C"]:
            for weight in _class_weights(y_fit):
                single = dict(recipe, C=(c,), class_weights=(weight,))
                started = time.perf_counter()
                fitted, _ = fit_recipes(make, x_fit["ngram_ids"], y_fit, None, [single])
                name = f"{recipe['weighting']} 1-{recipe['ngram_max']} C={c:g}{' balanced' if weight else ''}"
                found.append((name, ngram_logits(fitted, x_val["ngram_ids"])))
                print(f"  {name}: {time.perf_counter() - started:.1f} s", flush=True)
    return found


def split_run(run_dir):
    """A finished run's classifier and its training and validation parts as the run split them: ids and class ids."""
    run = load_run(run_dir)
    classifier, config = run.classifier, run.config
    train = run_data(run)
    names = classifier.label_names
    fit_idx, val_idx = stratified_split(train.labels, config["validation_split"], config["classifier"]["seed"], names)
    x_fit = classifier.preprocessor([train.texts[i] for i in fit_idx])
    x_val = classifier.preprocessor([train.texts[i] for i in val_idx])
    return classifier, x_fit, x_val, np.asarray(train.labels)[fit_idx], np.asarray(train.labels)[val_idx]


def two_fold(network, labels, halves, choose):
    """Chosen on one half, scored on the other, both ways round: the mean scores.

    Args:
        network: The network's validation probabilities.
        labels: The validation class ids.
        halves: Two arrays of validation indices.
        choose: `choose(indices)` -> `(recipe name, validation logits, a, b)`,
            chosen on those texts.

    Returns:
        The mean accuracy and macro-F1 of the combination and of the chosen
        part alone on the held-out halves, and the recipe and share chosen
        on each half.
    """
    rows = []
    for chosen, judged in (halves, halves[::-1]):
        name, logits, a, b = choose(chosen)
        combined = combine(network[judged], logits[judged], a, b)
        part = combine(np.ones_like(network[judged]), logits[judged], 0.0, 1.0)
        rows.append((*scores(combined, labels[judged]), *scores(part, labels[judged]), name, a / max(a + b, 1e-9)))
    means = np.mean([r[:4] for r in rows], axis=0)
    return {
        "accuracy": round(float(means[0]), 4),
        "macro_f1": round(float(means[1]), 4),
        "part_accuracy": round(float(means[2]), 4),
        "part_macro_f1": round(float(means[3]), 4),
        "recipes": [r[4] for r in rows],
        "shares": [round(float(r[5]), 2) for r in rows],
    }


def study(run_dir):
    classifier, x_fit, x_val, y_fit, y_val = split_run(run_dir)
    network = classifier.predict_ids(x_val, part="network")
    found = candidates(classifier, x_fit, y_fit, x_val)
    halves = stratified_split(y_val, 0.5, 0, classifier.label_names)
    result = {"run": str(run_dir), "validation_documents": len(y_val), "criteria": {}}
    for criterion, score in CRITERIA.items():

        def choose(indices, score=score):
            name, logits = min(found, key=lambda item: scored_at_best_scale(item[1][indices], y_val[indices], score))
            (a, b), _ = choose_mixing(network[indices], logits[indices], y_val[indices], score=score)
            return name, logits, a, b

        result["criteria"][criterion] = two_fold(network, y_val, halves, choose)
        print(f"{criterion}: {result['criteria'][criterion]}", flush=True)
    return result


def run_studies(study, doc):
    """The command line of a study of finished runs: `study(run_dir)` for each RUN_DIR, the results to `--out`."""
    parser = argparse.ArgumentParser(description=doc, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("runs", nargs="+", metavar="RUN_DIR")
    parser.add_argument("--out", default=None, help="write the results here as JSON")
    args = parser.parse_args()
    results = []
    for run_dir in args.runs:
        print(f"== {run_dir}", flush=True)
        results.append(study(run_dir))
    if args.out:
        with open(args.out, "w") as handle:
            json.dump(results, handle, indent=2)


def main():
    run_studies(study, __doc__)


if __name__ == "__main__":
    main()
