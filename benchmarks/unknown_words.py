"""Unknown words in the n-gram part: one shared feature (today) or breaks, as scikit-learn leaves them out.

Validation only (issue #30): for each finished default run, its n-gram part is
refitted on the run's training part with every recipe candidate
(`hierattn.ngrams.recipes.fit_recipes`) and chosen on the run's validation
texts, once on the ids as they are (a word outside the vocabulary is id 1, a
feature of its own, inside n-grams) and once with those ids set to 0 (no
feature, and no n-gram spans them). Prints the chosen part's validation
accuracy, macro-F1 and log-loss for both; no test text is read.

    python benchmarks/unknown_words.py RUN_DIR [RUN_DIR ...] --out unknown.json
"""

import json

import numpy as np
from ngram_criterion import run_studies, split_run
from sklearn.metrics import f1_score

from hierattn.ngrams.logits import NgramLogits
from hierattn.ngrams.mixing import ngram_logits, scored_at_best_scale
from hierattn.ngrams.recipes import fit_recipes


def study(run_dir):
    classifier, x_fit, x_val, y_fit, y_val = split_run(run_dir)
    x_fit, x_val = x_fit["ngram_ids"], x_val["ngram_ids"]
    layer = classifier.ngram_logits

    def make(ngram_max, tf, normalize):
        return NgramLogits(
            layer.vocabulary_size, layer.num_classes, ngram_max, layer.num_buckets, tf=tf, normalize=normalize
        )

    rows = []
    for mode in ("unknown as a feature", "unknown as a break"):
        fit_ids, val_ids = (
            (x_fit, x_val)
            if mode.endswith("feature")
            else (np.where(x_fit == 1, 0, x_fit), np.where(x_val == 1, 0, x_val))
        )
        fitted, report = fit_recipes(make, fit_ids, y_fit, (val_ids, y_val))
        logits = ngram_logits(fitted, val_ids)
        row = {
            "run": str(run_dir),
            "mode": mode,
            "recipe": report["recipe"],
            "val_accuracy": float((logits.argmax(1) == y_val).mean()),
            "val_macro_f1": float(f1_score(y_val, logits.argmax(1), average="macro")),
            "val_log_loss": scored_at_best_scale(logits, y_val),
        }
        print(json.dumps(row), flush=True)
        rows.append(row)
    return rows


def main():
    run_studies(study, __doc__)


if __name__ == "__main__":
    main()
