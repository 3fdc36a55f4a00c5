"""Faithfulness of a run's explanations on IMDB test reviews, the ERASER way.

For a seeded random sample of IMDB test reviews, measures comprehensiveness
and sufficiency (AOPC over 1/5/10/20/50% of each review's words) of four
rankings of the words, evidence, attention, gradient x input and random, on
the whole classifier (`hierattn.explain.faithfulness`), and prints a
Markdown table, the verdict and the time taken. Targets (1,000 reviews, the
default model): evidence's comprehensiveness AOPC at least attention's and
at least 10x random's; its sufficiency AOPC at most attention's.

Usage:
    python benchmarks/bench_faithfulness.py RUN_DIR [--limit 1000] [--draws 5] [--seed 0]
        [--data ../shared/datasets/aclImdb_v1.tar.gz] [--chunk-size 64]

The full report goes to benchmarks/output/faithfulness-*.json.
"""

import argparse
import json
import os
import pathlib
import platform
import sys
import time

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")

import numpy as np  # noqa: E402

from hierattn.data import load_imdb, locate_imdb  # noqa: E402
from hierattn.explain import Explainer, check_faithfulness  # noqa: E402
from hierattn.runs.run import load_run  # noqa: E402


def sample_reviews(data, limit, seed):
    """`limit` IMDB test reviews drawn without replacement with `seed`, in file order."""
    test = load_imdb(locate_imdb(data, download=False), splits=("test",), download=False, progress=False)["test"]
    indices = np.sort(np.random.default_rng(seed).choice(len(test), size=min(limit, len(test)), replace=False))
    return [test.texts[i] for i in indices]


def targets(report):
    """The issue's targets, each with whether it is met."""
    c = {r: report.aopc("comprehensiveness", r) for r in report.comprehensiveness}
    s = {r: report.aopc("sufficiency", r) for r in report.sufficiency}
    ratio = c["evidence"] / c["random"] if c["random"] > 0 else float("inf")
    return [
        (
            f"evidence comprehensiveness {c['evidence']:.3f} >= attention's {c['attention']:.3f}",
            c["evidence"] >= c["attention"],
        ),
        (f"evidence comprehensiveness >= 10x random's: {ratio:.1f}x", ratio >= 10),
        (
            f"evidence sufficiency {s['evidence']:.3f} <= attention's {s['attention']:.3f}",
            s["evidence"] <= s["attention"],
        ),
    ]


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("run")
    parser.add_argument("--limit", type=int, default=1000)
    parser.add_argument("--draws", type=int, default=5)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--chunk-size", type=int, default=64)
    parser.add_argument("--data", default="../shared/datasets/aclImdb_v1.tar.gz")
    parser.add_argument("--out", default=os.path.join(os.path.dirname(__file__), "output"))
    args = parser.parse_args()

    run = load_run(args.run)
    texts = sample_reviews(args.data, args.limit, args.seed)
    explainer = Explainer(run)
    start = time.perf_counter()
    explainer.explain(texts[:1])  # warm-up: the first call traces the graphs
    warm_up = time.perf_counter() - start
    start = time.perf_counter()
    explanations = []
    for i in range(0, len(texts), args.chunk_size):
        explanations += explainer.explain(texts[i : i + args.chunk_size], attention=True)  # attention is ranked too
    explain_seconds = time.perf_counter() - start
    start = time.perf_counter()
    report = check_faithfulness(
        run,
        explanations=explanations,
        random_draws=args.draws,
        seed=args.seed,
        chunk_size=args.chunk_size,
        progress=True,
    )
    check_seconds = time.perf_counter() - start
    print(f"\n{report.documents:,} IMDB test reviews (seeded sample, seed {args.seed}), run {args.run}")
    print(f"command: python {' '.join(sys.argv)}")
    print(
        f"machine: {platform.machine()}, {os.cpu_count()} CPU cores, {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}\n"
    )
    print(report.to_markdown())
    print(
        f"\ntime: explaining {explain_seconds:.0f} s (after a {warm_up:.0f} s warm-up), erasure check "
        f"{check_seconds:.0f} s ({report.documents / check_seconds:.1f} reviews/s)"
    )
    for line, met in targets(report):
        print(f"target {line}: {'met' if met else 'NOT met'}")
    out = pathlib.Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    path = out / f"faithfulness-{time.strftime('%Y%m%d-%H%M%S')}.json"
    record = {
        "run": args.run,
        "command": " ".join(sys.argv),
        "explain_seconds": explain_seconds,
        "check_seconds": check_seconds,
        **report.to_dict(),
    }
    path.write_text(json.dumps(record, indent=2))
    print(f"wrote {path}")


if __name__ == "__main__":
    main()
