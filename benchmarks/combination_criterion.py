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

from ngram_criterion import candidates, run_studies, split_run, two_fold

from hierattn.data.dataset import stratified_split
from hierattn.ngrams.mixing import choose_mixing, combine, log_loss, scored_at_best_scale


def study(run_dir):
    classifier, x_fit, x_val, y_fit, y_val = split_run(run_dir)
    network = classifier.predict_ids(x_val, part="network")
    found = candidates(classifier, x_fit, y_fit, x_val)
    halves = stratified_split(y_val, 0.5, 0, classifier.label_names)

    def weighed(item, indices):
        """`(name, logits, a, b)`: a candidate with the weights chosen for it on `indices`."""
        (a, b), _ = choose_mixing(network[indices], item[1][indices], y_val[indices])
        return (*item, a, b)

    def by_part(indices):
        return weighed(min(found, key=lambda item: scored_at_best_scale(item[1][indices], y_val[indices])), indices)

    def by_combination(indices):
        def loss(choice):
            return log_loss(combine(network[indices], choice[1][indices], *choice[2:]), y_val[indices])

        return min((weighed(item, indices) for item in found), key=loss)

    result = {"run": str(run_dir), "validation_documents": len(y_val), "rules": {}}
    for rule, choose in (("part", by_part), ("combination", by_combination)):
        result["rules"][rule] = two_fold(network, y_val, halves, choose)
        print(f"{rule}: {result['rules'][rule]}", flush=True)
    return result


if __name__ == "__main__":
    run_studies(study, __doc__)
