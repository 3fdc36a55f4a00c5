"""The cascade's cut and the temperatures, chosen as before and as now (issue #64), on finished single-label runs.

Before: the cut is the cheapest share of documents read whose validation accuracy and macro-F1 (and every
larger share's) stay within `CASCADE["tolerance"]` of the whole combination's, as measured (`z = 0`); the
whole combination's temperature is fitted by log-loss on the validation documents the network reads (and on
every validation document for `network="always"`), whatever their number. Now: the cut must also keep an
upper confidence bound on the loss within the tolerance (`hierattn.cut.harm_bound`), and a
temperature is fitted with a prior on its log and kept only where cross-fitting shows it helps on held-out
documents (`hierattn.calibration.choose_temperature`); the documents the network reads take every validation
document's temperature where they are too few to fit one on.

Each run's validation part (its seeded split, rebuilt from config.json) and test split are scored once from
its bundle (`calibration_study.scored`, cached); everything after is NumPy. The test split is only reported.

Usage:
    python benchmarks/safe_cut_calibration.py RUN_DIR [RUN_DIR ...] [--cache DIR] [--output results.json]
"""

import argparse
import os
import pathlib
import sys

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")

import numpy as np  # noqa: E402

ROOT = pathlib.Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "benchmarks"))
sys.path.insert(0, str(ROOT))

from bench_export_runtime import report  # noqa: E402


def macro_f1(decided, labels, classes):
    scores = []
    for c in range(classes):
        tp = np.sum((decided == c) & (labels == c))
        denominator = np.sum(decided == c) + np.sum(labels == c)
        scores.append(2.0 * tp / denominator if denominator else 0.0)
    return float(np.mean(scores))


def choose(arrays, rule):
    """The cut and temperatures a rule chooses on the validation part: `"before"` or `"now"`."""
    from hierattn.calibration import fit_temperature
    from hierattn.cut import choose_cut
    from hierattn.decision import Cascade
    from hierattn.defaults import CASCADE
    from hierattn.tuning import _whole_temperatures, ngram_scale

    z, whole, labels = arrays["val_z"], arrays["val_whole"], arrays["val_labels"]
    b = float(arrays["b"])
    s = ngram_scale(z, labels)
    margins = Cascade(None, b, ngram_scale=s).margins(z)
    cut, found = choose_cut(margins, whole.argmax(1), z.argmax(1), labels, z=0.0 if rule == "before" else CASCADE["z"])
    read = np.ones(len(margins), bool) if cut is None else margins < cut
    read = read if read.any() else np.ones(len(margins), bool)
    if rule == "before":
        t_read, t_all, notes = fit_temperature(whole[read], labels[read]), fit_temperature(whole, labels), {}
    else:  # as `TextClassifier.choose_cut` chooses them
        temperatures, notes = _whole_temperatures(whole, labels, read)
        t_read, t_all = temperatures["temperature"], temperatures["temperature_always"]
    return {
        "cut": cut,
        "s": s,
        "validation_share": found["validation_share"],
        "validation_read": int(read.sum()),
        "temperature": t_read,
        "temperature_always": t_all,
        "notes": notes,
    }


def on_test(arrays, chosen):
    from hierattn.calibration import calibrated, expected_calibration_error, log_loss
    from hierattn.decision import Cascade

    z, whole, labels = arrays["test_z"], arrays["test_whole"], arrays["test_labels"]
    classes = whole.shape[1]
    b = float(arrays["b"])
    found = {}
    for name, cut, temperature in (
        ("cascade", chosen["cut"], chosen["temperature"]),
        ("always", None, chosen["temperature_always"]),
    ):
        cascade = Cascade(cut, b, ngram_scale=chosen["s"], temperature=temperature)
        before = Cascade(cut, b, ngram_scale=chosen["s"]).predict(z, lambda index: whole[index])
        after = cascade.predict(z, lambda index: whole[index]) if cut is not None else calibrated(whole, temperature)
        if cut is None:
            before = whole
        decided = after.argmax(1)
        found[name] = {
            "accuracy": round(float(np.mean(decided == labels)), 5),
            "macro_f1": round(macro_f1(decided, labels, classes), 5),
            "share": round(float(cascade.needs_network(z).mean()), 4) if cut is not None else 1.0,
            "ece_before": round(expected_calibration_error(before, labels, before.argmax(1)), 5),
            "ece_after": round(expected_calibration_error(after, labels, decided), 5),
            "log_loss_before": round(log_loss(before, labels), 5),
            "log_loss_after": round(log_loss(after, labels), 5),
        }
    found["difference_points"] = round(100 * (found["cascade"]["accuracy"] - found["always"]["accuracy"]), 3)
    return found


def main():
    from calibration_study import scored

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("runs", nargs="+")
    parser.add_argument("--cache", default="/tmp/calibration_study")
    parser.add_argument("--output")
    args = parser.parse_args()
    results = {}
    for run in args.runs:
        arrays = scored(run, args.cache)
        results[run] = {"validation_documents": len(arrays["val_labels"]), "test_documents": len(arrays["test_labels"])}
        for rule in ("before", "now"):
            chosen = choose(arrays, rule)
            results[run][rule] = dict(chosen, test=on_test(arrays, chosen))
            t = results[run][rule]["test"]
            print(
                f"{pathlib.Path(run).name} {rule}: read {chosen['validation_share']:.1%} of validation, "
                f"{t['cascade']['share']:.1%} of test; T {chosen['temperature']:.4g} / {chosen['temperature_always']:.4g}; "
                f"test accuracy {t['cascade']['accuracy']:.4%} vs {t['always']['accuracy']:.4%} "
                f"({t['difference_points']:+.2f}); ECE {t['cascade']['ece_before']:.2%} -> {t['cascade']['ece_after']:.2%}",
                flush=True,
            )
    report(results, args.output)


if __name__ == "__main__":
    main()
