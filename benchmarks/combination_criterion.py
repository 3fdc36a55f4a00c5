"""Choose the n-gram part's recipe by the combination's validation log-loss instead of the part's own (#30 follow-up).

Validation only, on finished default runs, as `ngram_criterion.py`: every
recipe candidate of `NGRAMS["recipes"]` fitted alone on the run's training
part; the validation texts split in two halves (stratified, seed 0); on one
half a recipe and the weights are chosen, the other half is scored (both
ways round, averaged).

- ``part``: today's rule: the recipe with the smallest log-loss of the part
  alone (at its best temperature), then the weights for it;
- ``combination``: for every recipe the weights are chosen, and the recipe
  whose combination has the smallest log-loss is kept.

No test text is read.

    python benchmarks/combination_criterion.py RUN_DIR [RUN_DIR ...] --out combination.json
"""

import numpy as np
from ngram_criterion import candidates, run_studies, scores, split_run

from hierattn.data.dataset import stratified_split
from hierattn.ngrams import choose_mixing, combine, log_loss, scored_at_best_scale


def study(run_dir):
    classifier, x_fit, x_val, y_fit, y_val = split_run(run_dir)
    network = classifier.predict_ids(x_val, part="network")
    found = candidates(classifier, x_fit, y_fit, x_val)
    halves = stratified_split(y_val, 0.5, 0, classifier.label_names)
    result = {"run": str(run_dir), "validation_documents": len(y_val), "rules": {}}
    for rule in ("part", "combination"):
        rows = []
        for choose, judge in (halves, halves[::-1]):

            def combined_loss(item, choose=choose):
                a, b = choose_mixing(network[choose], item[1][choose], y_val[choose])[0]
                return log_loss(combine(network[choose], item[1][choose], a, b), y_val[choose])

            if rule == "part":
                best = min(found, key=lambda item: scored_at_best_scale(item[1][choose], y_val[choose]))
            else:
                best = min(found, key=combined_loss)
            (a, b), _ = choose_mixing(network[choose], best[1][choose], y_val[choose])
            combined = combine(network[judge], best[1][judge], a, b)
            part = combine(np.ones_like(network[judge]), best[1][judge], 0.0, 1.0)
            rows.append((*scores(combined, y_val[judge]), *scores(part, y_val[judge]), best[0]))
        means = np.mean([r[:4] for r in rows], axis=0)
        result["rules"][rule] = {
            "accuracy": round(float(means[0]), 4),
            "macro_f1": round(float(means[1]), 4),
            "part_accuracy": round(float(means[2]), 4),
            "part_macro_f1": round(float(means[3]), 4),
            "recipes": [r[4] for r in rows],
        }
        print(f"{rule}: {result['rules'][rule]}", flush=True)
    return result


if __name__ == "__main__":
    run_studies(study, __doc__)
