"""How many quadrature points the network's integrated gradients need (the default `EVIDENCE["steps"]`, issue #31).

Validation only: for each finished default run, up to `--limit` texts of its
validation split (re-made from config.json, as `ngram_criterion.split_run`
does; no test text is read), the network's share of the margin of the
whole classifier's prediction over its runner-up, by integrated gradients
at 64 points (the reference), at 4, 6, 8 and 16, and as the explainer
computes it (`EVIDENCE`: 8 points, doubled for a text whose error is over 1%).
Reported per row: milliseconds per text, the completeness error (|the words' terms −
the term's change from the baseline| as a share of that change: median,
99th percentile, largest, texts over 1%), and the L1 distance of the words'
terms to the reference's.

    python benchmarks/evidence_points.py RUN_DIR [RUN_DIR ...] [--limit 200]
"""

import argparse
import time

import numpy as np
from ngram_criterion import run_data

from hierattn.data.dataset import stratified_split
from hierattn.data.ids import token_ids
from hierattn.defaults import EVIDENCE
from hierattn.explain.attributions import integrated_gradients
from hierattn.runs.run import load_run

POINTS = (64, 4, 6, 8, 16)  # the reference first


def study(run_dir, limit):
    run = load_run(run_dir)
    classifier, config = run.classifier, run.config
    train = run_data(run)
    _, val_idx = stratified_split(train.labels, config["validation_split"], config["classifier"]["seed"],
                                  classifier.label_names)  # fmt: skip
    chosen = np.random.default_rng(0).permutation(val_idx)[:limit]
    x = classifier.preprocessor([train.texts[i] for i in chosen])
    order = np.argsort(-classifier.predict_ids(x), axis=1, kind="stable")
    scale = float(np.asarray(classifier.combination.mixing)[0]) if classifier.ngram_logits is not None else 1.0
    ids = token_ids(x)
    integrated_gradients(classifier.backbone, ids[:8], order[:8, 0], order[:8, 1], scale, 4)  # traced once
    print(f"== {run_dir}: {len(ids)} validation texts")
    print("| points | ms per text | error median | error p99 | error max | texts over 1% | L1 to 64 points |")
    print("| --- | --- | --- | --- | --- | --- | --- |")
    reference = None
    for points in (*POINTS, "default"):
        settings = EVIDENCE if points == "default" else {"steps": points}
        started = time.perf_counter()
        scores, margin, baseline = integrated_gradients(
            classifier.backbone, ids, order[:, 0], order[:, 1], scale, **settings
        )
        seconds = time.perf_counter() - started
        change = margin - baseline
        error = np.abs(scores.reshape(len(ids), -1).sum(1) - change) / np.maximum(np.abs(change), 1e-9)
        reference = scores if reference is None else reference
        distance = np.abs(scores - reference).sum() / np.abs(reference).sum()
        print(
            f"| {points} | {1000 * seconds / len(ids):.1f} | {np.median(error):.2%} | {np.quantile(error, 0.99):.2%} "
            f"| {error.max():.2%} | {(error > 0.01).sum()} | {distance:.2%} |",
            flush=True,
        )


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("runs", nargs="+", metavar="RUN_DIR")
    parser.add_argument("--limit", type=int, default=200)
    args = parser.parse_args()
    for run_dir in args.runs:
        study(run_dir, args.limit)


if __name__ == "__main__":
    main()
