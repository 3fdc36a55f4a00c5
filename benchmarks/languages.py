"""Every language (issue #65): one default run on a table written without spaces, against character n-grams + LR.

On one run of `train csv` with the defaults (units "auto") on a table with a `test.csv` beside its
`train.csv` (default: ../shared/datasets/multilingual/waimai_10k, Chinese reviews), in one process,
2 CPU cores:

* the run's test scores (accuracy, macro-F1; the network alone too) from its metrics.json, and the units it chose;
* the reference: TF-IDF of character 1-3 grams (sublinear, min_df 2) + logistic regression, C chosen among
  (1, 3, 10, 30, 100) on a stratified 10% of train.csv held out (seed 0), refitted on all of train.csv, and scored
  on test.csv; and the same with word 1-2 grams (scikit-learn's token pattern);
* parity: max |p_runtime - p_keras| over the whole test split (the bundle on onnxruntime against the `.keras`
  classifier, both reading raw text);
* throughput from raw text on the test split, after a warm-up on 200 training texts: the runtime's
  `Predictor.predict` against the character TF-IDF + LR pipeline (fitted before, not timed), in this process,
  and the runtime's time step by step (bench_cascade.py's `cascade_parts`);
* cold start: `python cli.py predict --run RUN TEXT` in a fresh process, five times (median).

Usage:
    python cli.py train csv ../shared/datasets/multilingual/waimai_10k/train.csv \\
        --test ../shared/datasets/multilingual/waimai_10k/test.csv --output runs/waimai
    python benchmarks/languages.py runs/waimai [--data ../shared/datasets/multilingual/waimai_10k]
        [--output results.json]
"""

import argparse
import json
import os
import pathlib
import sys

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")

import numpy as np  # noqa: E402

ROOT = pathlib.Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "benchmarks"))

from bench_export_runtime import report, timed  # noqa: E402

C_GRID = (1.0, 3.0, 10.0, 30.0, 100.0)


def reference(train, test, analyzer, ngram_range):
    """TF-IDF + LR of `analyzer` n-grams, C chosen on 10% of `train` held out, refitted on all of it: test scores."""
    from sklearn.feature_extraction.text import TfidfVectorizer
    from sklearn.linear_model import LogisticRegression
    from sklearn.metrics import f1_score
    from sklearn.model_selection import train_test_split
    from sklearn.pipeline import make_pipeline

    def pipeline(c):
        vectorizer = TfidfVectorizer(analyzer=analyzer, ngram_range=ngram_range, sublinear_tf=True, min_df=2)
        return make_pipeline(vectorizer, LogisticRegression(C=c, max_iter=2000))

    fit, held = train_test_split(train, test_size=0.1, random_state=0, stratify=train["label"])
    accuracy = {c: pipeline(c).fit(fit["text"], fit["label"]).score(held["text"], held["label"]) for c in C_GRID}
    best = max(C_GRID, key=lambda c: (accuracy[c], -c))
    model = pipeline(best).fit(train["text"], train["label"])
    predicted = model.predict(test["text"])
    return model, {
        "features": f"{analyzer} {ngram_range[0]}-{ngram_range[1]} grams",
        "C": best,
        "held_out_accuracy": {f"{c:g}": round(a, 5) for c, a in accuracy.items()},
        "accuracy": round(float(np.mean(predicted == test["label"])), 5),
        "macro_f1": round(float(f1_score(test["label"], predicted, average="macro")), 5),
    }


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("run")
    parser.add_argument("--data", default=str(ROOT.parent / "shared" / "datasets" / "multilingual" / "waimai_10k"))
    parser.add_argument("--output", default=None)
    args = parser.parse_args()

    import pandas as pd
    from bench_export_runtime import cold_starts

    from hierattn import runtime
    from hierattn.runs.run import load_run

    train = pd.read_csv(pathlib.Path(args.data) / "train.csv")
    test = pd.read_csv(pathlib.Path(args.data) / "test.csv")
    metrics = json.loads((pathlib.Path(args.run) / "metrics.json").read_text())
    body = metrics.get("metrics", metrics)
    results = {
        "run": args.run,
        "units": body.get("units"),
        "default": {key: body["test"][key] for key in ("accuracy", "macro_f1")},
        "network_alone": {key: body["parts"]["network"]["test"][key] for key in ("accuracy", "macro_f1")},
        "in_run_baseline": {
            "features": body["baseline"].get("features"),
            **{key: body["baseline"]["test"][key] for key in ("accuracy", "macro_f1")},
        },
    }
    characters, results["characters_lr"] = reference(train, test, "char", (1, 3))
    _, results["words_lr"] = reference(train, test, "word", (1, 2))
    print(json.dumps(results, indent=2), flush=True)

    texts = list(test["text"])
    classifier = load_run(args.run).classifier
    bundle = pathlib.Path(args.run) / "model.onnx"
    if not bundle.is_file():
        classifier.export(bundle, verbose=False)
    predictor = runtime.load(bundle)
    found = predictor.predict(texts)
    results["parity_max_abs_difference"] = float(np.abs(found - classifier.predict(texts, verbose=0)).max())

    warm = list(train["text"][:200])
    predictor.predict(warm)
    characters.predict_proba(warm)
    _, runtime_speed = timed(predictor.predict, texts)
    _, lr_speed = timed(characters.predict_proba, texts)
    results["throughput"] = {
        "texts": len(texts),
        "runtime": runtime_speed,
        "characters_lr": lr_speed,
        "ratio": round(runtime_speed["reviews_per_second"] / lr_speed["reviews_per_second"], 2),
    }
    from bench_cascade import cascade_parts

    results["throughput"]["steps"] = cascade_parts(predictor, texts)  # one after another: where the time goes
    results["cold_start"] = cold_starts(args.run, text=texts[0])
    report(results, args.output)


if __name__ == "__main__":
    main()
