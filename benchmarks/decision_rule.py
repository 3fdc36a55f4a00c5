"""A decision rule for macro-F1 (#53): the offsets `train --metric macro-f1` chooses, against the most probable class.

For finished single-label runs, from each run's bundle: its validation part (the run's seeded split of its
training data) and its test split, scored as `calibration_study.scored` scores them (cached), the cascade's
probabilities as the bundle gives them (its cut, scales and temperature). Then, with everything chosen on the
validation part only:

* `argmax`: the most probable class (`--metric accuracy`, the default);
* `prior_weight`: offsets `-w log prior`, `w` chosen by validation macro-F1 (`hierattn.tuning`, what
  `--metric macro-f1` does);
* `per_class`: one offset per class, searched class by class (three rounds of a grid of [-2, 2] in steps of
  0.1, by validation macro-F1): the experiment that lost to `prior_weight` (kept here, out of the product).

Each: validation and test accuracy and macro-F1, and the test's class shares.

Usage:
    python benchmarks/decision_rule.py RUN_DIR [RUN_DIR ...] [--cache DIR] [--output results.json]
"""

import argparse
import json
import os
import pathlib
import sys

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")

import numpy as np  # noqa: E402

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))


GRID = np.round(np.linspace(-2.0, 2.0, 41), 2)  # the per-class experiment's offsets tried


def per_class_offsets(probabilities, labels, grid=GRID, rounds=3):
    """One offset per class, each in turn set to the grid value with the best macro-F1 (the experiment)."""
    from hierattn.decision import Decision
    from hierattn.tuning import macro_f1

    classes = probabilities.shape[1]
    offsets = np.zeros(classes)

    def scored(candidate):
        return macro_f1(Decision(range(classes), offsets=candidate).ids(probabilities), labels, classes)

    best = scored(offsets)
    for _ in range(rounds):
        changed = False
        for j in range(classes):
            for value in grid:
                candidate = offsets.copy()
                candidate[j] = value
                found = scored(candidate)
                if found > best + 1e-12:
                    best, offsets, changed = found, candidate, True
        if not changed:
            break
    return list(offsets)


def study(run_dir, cache):
    from calibration_study import scored

    from hierattn import runtime
    from hierattn.decision import Decision
    from hierattn.tuning import choose_offsets, macro_f1

    arrays = scored(run_dir, cache)
    predictor = runtime.load(pathlib.Path(run_dir) / "model.onnx")
    cascade = predictor.cascade  # the run's cut, scales and temperature, as its bundle gives them
    probabilities = {
        part: cascade.predict(arrays[part + "_z"], lambda index, part=part: arrays[part + "_whole"][index])
        for part in ("val", "test")
    }
    labels = {part: np.asarray(arrays[part + "_labels"]) for part in ("val", "test")}
    classes = probabilities["val"].shape[1]
    offsets, report = choose_offsets(probabilities["val"], labels["val"])
    rules = {
        "argmax": [0.0] * classes,
        "prior_weight": offsets,
        "per_class": per_class_offsets(probabilities["val"], labels["val"]),
    }
    found = {
        "classes": list(predictor.label_names),
        "test_shares": [
            round(float(s), 4) for s in np.bincount(labels["test"], minlength=classes) / len(labels["test"])
        ],
        "validation_documents": int(len(labels["val"])),
        "weight_chosen": report["prior_weight"],
    }
    for rule, rule_offsets in rules.items():
        decision = Decision(range(classes), offsets=rule_offsets)
        found[rule] = {"offsets": [round(float(o), 4) for o in rule_offsets]}
        for part in ("val", "test"):
            decided = decision.ids(probabilities[part])
            found[rule][part] = {
                "accuracy": round(float(np.mean(decided == labels[part])), 5),
                "macro_f1": round(macro_f1(decided, labels[part], classes), 5),
            }
    return found


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("runs", nargs="+")
    parser.add_argument("--cache", default="/tmp/calibration_study", help="calibration_study.py's cache of scores")
    parser.add_argument("--output", default=None)
    args = parser.parse_args()
    results = {}
    for run in args.runs:
        found = results[pathlib.Path(run).name] = study(run, args.cache)
        print(pathlib.Path(run).name, f"prior weight {found['weight_chosen']:g}", flush=True)
        for rule in ("argmax", "prior_weight", "per_class"):
            v, t = found[rule]["val"], found[rule]["test"]
            print(
                f"  {rule:13s} validation accuracy {v['accuracy']:.4f} macro-F1 {v['macro_f1']:.4f} | "
                f"test accuracy {t['accuracy']:.4f} macro-F1 {t['macro_f1']:.4f}",
                flush=True,
            )
    if args.output:
        pathlib.Path(args.output).write_text(json.dumps(results, indent=2) + "\n")


if __name__ == "__main__":
    main()
