"""Multi-label classification on Reuters-21578 ApteMod with the default settings (issue #43).

Trains, in its own process as a user runs it,

    hierattn train csv reuters/train.csv --test reuters/test.csv --multi-label --model MODEL --output DIR

(every other setting the default: 10% of the training texts held out for
validation, on which the n-gram part's recipe, the two parts' weights and
each label's threshold are chosen; the test split is scored once at the
end), then reads the run's metrics.json: the classifier's test scores, the
network alone and the n-gram part alone (each with its own thresholds,
chosen on the same validation part) and the same-run baseline (TF-IDF of
word 1-2 grams + one-vs-rest logistic regression, C=10, its thresholds
chosen on the same validation part).

With `--explain N`, the run's explanations are checked the ERASER way on
the first N test documents (`hierattn.explain.check_faithfulness`, 5
random orders, seed 0): each predicted label (a document with none: its
most probable label) explained against its threshold, and that label's own
probability measured with the words of each ranking deleted
(comprehensiveness) or kept alone (sufficiency).

Targets (2 cores): test micro-F1 >= the same-run baseline's + 0.01 and
>= 0.86; macro-F1 >= the baseline's; the whole training <= 20 minutes;
with `--explain 300`, the evidence's comprehensiveness AOPC >= 2x random's.

Usage:
    python benchmarks/bench_multilabel.py [--data ../shared/datasets/multilabel/reuters] [--model han]
        [--work /tmp/bench_multilabel] [--output results.json] [--reuse] [--explain 300]
"""

import argparse
import json
import pathlib
import platform
import subprocess
import sys
import time

ROOT = pathlib.Path(__file__).resolve().parents[1]
SCORES = ("micro_f1", "macro_f1", "samples_f1", "subset_accuracy", "hamming_loss")


def train(data, model, run_dir):
    """Trains the default multi-label classifier in a subprocess; returns its wall seconds."""
    command = [
        sys.executable,
        str(ROOT / "cli.py"),
        "train",
        "csv",
        str(data / "train.csv"),
        "--test",
        str(data / "test.csv"),
        "--multi-label",
        "--model",
        model,
        "--output",
        str(run_dir),
    ]
    print("$", " ".join(command), flush=True)
    started = time.perf_counter()
    subprocess.run(command, check=True, cwd=ROOT)
    return time.perf_counter() - started


def faithfulness(run_dir, data, limit):
    """ERASER comprehensiveness and sufficiency AOPCs of each ranking on the first `limit` test documents."""
    import pandas as pd

    from hierattn.explain import check_faithfulness
    from hierattn.explain.erasure import MEASURES
    from hierattn.runs.run import load_run

    texts = pd.read_csv(data / "test.csv", keep_default_na=False)["text"].head(limit).tolist()
    started = time.perf_counter()
    report = check_faithfulness(load_run(run_dir).classifier, texts, random_draws=5, seed=0, progress=True)
    seconds = time.perf_counter() - started
    aopc = {m: {r: round(report.aopc(m, r), 4) for r in report.comprehensiveness} for m in MEASURES}
    print(report.verdict())
    return {"documents": limit, "explanations": report.documents, "seconds": round(seconds, 1), "aopc": aopc}


def scores(metrics):
    return {key: round(metrics[key], 4) for key in SCORES}


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", default=str(ROOT.parent / "shared/datasets/multilabel/reuters"))
    parser.add_argument("--model", default="han", choices=("han", "transformer", "rnn"))
    parser.add_argument("--work", default="/tmp/bench_multilabel")
    parser.add_argument("--output", default=None, help="write the results as JSON here")
    parser.add_argument("--reuse", action="store_true", help="read an existing run in --work instead of training")
    parser.add_argument("--explain", type=int, default=0, help="check the explanations of this many test documents")
    args = parser.parse_args()
    data, work = pathlib.Path(args.data), pathlib.Path(args.work)
    run_dir = work / f"run-{args.model}"
    wall = None
    if not args.reuse:
        if run_dir.exists():
            sys.exit(f"{run_dir} exists: remove it, or pass --reuse to read it")
        work.mkdir(parents=True, exist_ok=True)
        wall = train(data, args.model, run_dir)
    metrics = json.loads((run_dir / "metrics.json").read_text())
    parts, baseline = metrics["parts"], metrics["baseline"]
    results = {
        "command": " ".join(sys.argv),
        "date": time.strftime("%Y-%m-%d"),
        "machine": f"{platform.machine()}, {__import__('os').cpu_count()} CPUs",
        "model": args.model,
        "run": str(run_dir),
        "wall_seconds": None if wall is None else round(wall, 1),
        "network_training_seconds": metrics["training_seconds"],
        "epochs_trained": metrics["epochs_trained"],
        "stopped_by": metrics["stopped_by"],
        "ngram_recipe": parts["ngram_recipe"],
        "weights": [parts["network_weight"], parts["ngram_weight"]],
        "test": {
            "classifier": scores(metrics["test"]),
            "network alone": scores(parts["network"]["test"]),
            "n-gram part alone": scores(parts["ngrams"]["test"]),
            "baseline (TF-IDF + OvR LR, tuned thresholds)": scores(baseline["test"]),
        },
        "validation": {
            "classifier": scores(metrics["validation"]),
            "baseline": scores(baseline["validation"]),
        },
    }
    classifier, reference = metrics["test"], baseline["test"]
    results["targets"] = {
        "micro_f1 >= baseline + 0.01": classifier["micro_f1"] >= reference["micro_f1"] + 0.01,
        "micro_f1 >= 0.86": classifier["micro_f1"] >= 0.86,
        "macro_f1 >= baseline": classifier["macro_f1"] >= reference["macro_f1"],
        "training <= 20 min": wall is None or wall <= 1200,
    }
    print(f"\n{'test (3,019 documents)':<46}" + "".join(f"{key:>17}" for key in SCORES))
    for name, row in results["test"].items():
        print(f"{name:<46}" + "".join(f"{row[key]:>17.4f}" for key in SCORES))
    if wall is not None:
        print(
            f"\nwhole command: {wall / 60:.1f} min (network {metrics['training_seconds'] / 60:.1f} min, "
            f"{metrics['epochs_trained']} epochs, {metrics['stopped_by']})"
        )
    if args.explain:
        results["faithfulness"] = checked = faithfulness(run_dir, data, args.explain)
        c = checked["aopc"]["comprehensiveness"]
        results["targets"]["evidence comprehensiveness >= 2x random"] = c["evidence"] >= 2 * c["random"]
        print(f"comprehensiveness AOPC: {c} ({checked['explanations']} explanations, {checked['seconds']} s)")
    for target, met in results["targets"].items():
        print(f"{target}: {'met' if met else 'NOT met'}")
    if args.output:
        pathlib.Path(args.output).write_text(json.dumps(results, indent=2) + "\n")


if __name__ == "__main__":
    main()
