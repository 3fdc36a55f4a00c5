"""Pseudo-labels for the network: a trained run's network trained further on unlabelled texts its classifier labelled.

The run's whole classifier (the network reading every text) labels the
unlabelled texts (its most probable class, optionally only where it gives
at least `--confidence`); the run's network is then trained on the
labelled training texts plus those for `--epochs` more epochs (Keras `fit`,
early stopping on the run's validation split, the best epoch kept), and the
n-gram part is refitted on the labelled texts only and weighted again on
validation. Validation and test figures of the network alone and of the
whole combination are printed; the test split is read only to report.

    python benchmarks/unlabeled_network.py imdb /tmp/imdb-run --imdb ../shared/datasets/aclImdb_v1.tar.gz --out net.json
"""

import argparse
import json
import pathlib
import time

import numpy as np
import unlabeled_study as study

from hierattn.data.ids import ngram_ids
from hierattn.metrics import classification_metrics
from hierattn.models.loading import load_classifier
from hierattn.ngrams.mixing import combine, ngram_logits


def _figures(classifier, texts, labels):
    """Accuracy and macro-F1 of the network, the n-gram part and the whole combination (the network reading every text)."""
    names = list(range(len(classifier.label_names)))
    x = classifier.preprocessor(texts)
    network = classifier.predict_ids(x, batch_size=64, part="network")
    logits = ngram_logits(classifier.ngram_logits, ngram_ids(x))
    a, b = (float(w) for w in np.asarray(classifier.combination.mixing))
    parts = {"network": network, "ngrams": logits, "whole": combine(network, logits, a, b)}
    row = {}
    for part, values in parts.items():
        metrics = classification_metrics(labels, values.argmax(1), names)
        row[part] = {"accuracy": metrics["accuracy"], "macro_f1": metrics["macro_f1"]}
    return row


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    study.add_data_arguments(parser)
    parser.add_argument("--epochs", type=int, default=1)
    parser.add_argument("--confidence", type=float, default=0.0)
    parser.add_argument("--learning-rate", type=float, default=5e-4)
    parser.add_argument("--teacher", type=pathlib.Path, help="probabilities.npz of unlabeled_study.py --cache")
    parser.add_argument("--out", type=pathlib.Path, required=True)
    args = parser.parse_args()

    started = time.perf_counter()
    classifier = load_classifier(args.run / "model.keras")
    split, test, unlabeled = study._data(args, list(classifier.label_names))
    names = list(classifier.label_names)
    if args.teacher is not None:  # unlabeled_study.py's cache: the same classifier's probabilities
        teacher = np.load(args.teacher)["teacher"]
    else:
        teacher = classifier.predict_ids(classifier.preprocessor(unlabeled), batch_size=64, part="whole")
    keep = teacher.max(1) >= args.confidence
    taught = [unlabeled[i] for i in np.flatnonzero(keep)]
    print(f"teacher: {keep.sum():,} of {len(unlabeled):,} texts in {time.perf_counter() - started:.0f} s", flush=True)
    result = {"run": str(args.run), "args": {k: str(v) for k, v in vars(args).items()}, "taught": int(keep.sum())}
    if not args.teacher:
        result["before"] = {
            "validation": _figures(classifier, split.val_texts, split.val_labels),
            "test": _figures(classifier, test.texts, test.labels),
        }
        print(json.dumps(result["before"]), flush=True)

    import keras

    from hierattn.models.task import default_optimizer

    classifier.compile(optimizer=default_optimizer(args.learning_rate))
    fit_labels = [names[i] for i in split.fit_labels] + [names[i] for i in teacher.argmax(1)[keep]]
    val = (split.val_texts, [names[i] for i in split.val_labels])
    t0 = time.perf_counter()
    layer, classifier.ngram_logits = classifier.ngram_logits, None  # fit's n-gram steps skipped: refitted below
    classifier.fit(
        split.fit_texts + taught,
        fit_labels,
        validation_data=val,
        epochs=args.epochs,
        callbacks=[keras.callbacks.EarlyStopping(patience=1, restore_best_weights=True)],
        verbose=2,
    )
    classifier.ngram_logits = layer
    classifier.fit_ngrams(split.fit_texts, [names[i] for i in split.fit_labels], validation_data=val)
    classifier.tune(val)
    result["train_seconds"] = round(time.perf_counter() - t0, 1)
    result["after"] = {
        "validation": _figures(classifier, split.val_texts, split.val_labels),
        "test": _figures(classifier, test.texts, test.labels),
    }
    result["seconds"] = round(time.perf_counter() - started, 1)
    print(json.dumps(result["after"]), flush=True)
    args.out.write_text(json.dumps(result, indent=1))


if __name__ == "__main__":
    main()
