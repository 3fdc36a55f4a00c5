"""Faithfulness of attention explanations on IMDB test reviews (ERASER-style erasure).

For a seeded random sample of IMDB test reviews, deletes each review's top-k
words (k = 1, 5, 10) by the explanation's attention importance, by gradient x
input, and at random (averaged over several draws), and measures the mean drop
in the predicted class's probability and the share of flipped decisions (see
`hierattn.explain.faithfulness`). Target for the default HAN: the top-5 attention
deletion lowers the probability at least 3x as much as deleting 5 random words.

Usage:
    python benchmarks/bench_faithfulness.py RUN_DIR [--n 1000] [--draws 5] [--seed 0]
        [--data ../shared/datasets/aclImdb_v1.tar.gz]

Also times the Python API on single reviews (after loading) and prints a
Markdown table; the full report goes to benchmarks/output/faithfulness-*.json.
"""

import argparse
import json
import os
import pathlib
import sys
import time

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")

import numpy as np  # noqa: E402

from hierattn.explain import Explainer, check_faithfulness, open_corpus  # noqa: E402
from hierattn.runs import load_run  # noqa: E402


def time_single_reviews(run, texts, repeats=200):
    """Median and 95th percentile seconds per `Explainer.explain([text])`, after one warm-up call."""
    explainer = Explainer(run)
    explainer.explain(texts[:1])
    seconds = []
    for text in texts[:repeats]:
        start = time.perf_counter()
        explainer.explain([text])
        seconds.append(time.perf_counter() - start)
    return float(np.median(seconds)), float(np.percentile(seconds, 95))


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("run")
    parser.add_argument("--n", type=int, default=1000)
    parser.add_argument("--draws", type=int, default=5)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--data", default="../shared/datasets/aclImdb_v1.tar.gz")
    parser.add_argument("--out", default=os.path.join(os.path.dirname(__file__), "output"))
    args = parser.parse_args()

    run = load_run(args.run)
    source = open_corpus("imdb", "test", args.data, limit=args.n, seed=args.seed, progress=False)
    texts = list(source.texts)
    median, p95 = time_single_reviews(run, texts)
    start = time.perf_counter()
    report = check_faithfulness(run, texts, random_draws=args.draws, seed=args.seed, progress=True)
    seconds = time.perf_counter() - start
    print(f"\n{report.documents:,} IMDB test reviews (seeded sample, seed {args.seed}), run {args.run}")
    print(report.to_markdown())
    print(
        f"\nerasure check: {seconds:.0f} s; explain one review (API, loaded model): median {median * 1000:.1f} ms, "
        f"95th percentile {p95 * 1000:.1f} ms"
    )
    ratio = report.ratio_to_random(5)
    verdict = (
        "n/a (random deletions changed nothing)"
        if ratio is None
        else (f"{ratio:.1f}x -> {'met' if ratio >= 3 else 'NOT met'}")
    )
    print(f"target top-5 attention drop >= 3x random: {verdict}")
    out = pathlib.Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    path = out / f"faithfulness-{time.strftime('%Y%m%d-%H%M%S')}.json"
    path.write_text(
        json.dumps(
            {
                "run": args.run,
                "command": " ".join(sys.argv),
                "seconds": seconds,
                "explain_one_median_seconds": median,
                "explain_one_p95_seconds": p95,
                **report.to_dict(),
            },
            indent=2,
        )
    )
    print(f"wrote {path}")


if __name__ == "__main__":
    main()
