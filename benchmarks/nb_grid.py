"""A wider C grid for the n-gram part's NB-LR recipe (issue #30), validation only.

For each finished default run: every candidate of `NGRAMS["recipes"]` plus
NB-weighted binarised 1-3 grams at the extra `C` values below, each fitted
alone on the run's training part (`ngram_criterion.candidates`). Reported
per candidate: the part alone on the whole validation split (accuracy,
macro-F1, log-loss at its best temperature), and the combination with the
run's own network, its weights chosen on one half of the validation split
and scored on the other (2-fold, stratified, seed 0; the halves averaged).
Then what the default criterion (the part's validation log-loss) chooses
from today's grid and from the wider one, scored the same way. No test text
is read.

    python benchmarks/nb_grid.py RUN_DIR [RUN_DIR ...] --out nb_grid.json
"""

import numpy as np
from ngram_criterion import candidates, run_studies, scores, split_run, two_fold

from hierattn.data.dataset import stratified_split
from hierattn.ngrams.mixing import choose_mixing, combine, log_loss, scored_at_best_scale

EXTRA_C = (0.1, 0.3, 3.0)


def study(run_dir):
    classifier, x_fit, x_val, y_fit, y_val = split_run(run_dir)
    names = classifier.label_names
    network = classifier.predict_ids(x_val, part="network")
    today = candidates(classifier, x_fit, y_fit, x_val)
    extra = candidates(classifier, x_fit, y_fit, x_val, [{"weighting": "nb", "ngram_max": 3, "C": EXTRA_C}])
    halves = stratified_split(y_val, 0.5, 0, names)

    def combination(logits):
        """The combination's held-out accuracy and macro-F1, the weights chosen on the other half."""
        found = two_fold(
            network, y_val, halves, lambda i: (None, logits, *choose_mixing(network[i], logits[i], y_val[i])[0])
        )
        return [found["accuracy"], found["macro_f1"]]

    result = {"run": str(run_dir), "validation_documents": len(y_val), "candidates": {}}
    for name, logits in today + extra:
        part = combine(np.ones_like(network), logits, 0.0, 1.0)
        row = {
            "part": [round(v, 4) for v in scores(part, y_val)],
            "part_log_loss": round(scored_at_best_scale(logits, y_val), 4),
            "combination": combination(logits),
        }
        result["candidates"][name] = row
        print(f"  {name}: {row}", flush=True)
    for grid, found in (("today", today), ("wider", today + extra)):
        name, logits = min(found, key=lambda item: scored_at_best_scale(item[1], y_val, log_loss))
        result[grid] = {"chosen": name, "combination": combination(logits)}
        print(f"{grid}: {result[grid]}", flush=True)
    return result


if __name__ == "__main__":
    run_studies(study, __doc__)
