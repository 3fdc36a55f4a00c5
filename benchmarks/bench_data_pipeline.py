"""Benchmark: read, clean, split, tokenize and encode all 50,000 labelled IMDB reviews.

Target (issue #3): at most 20 s wall time on 2 cores, peak memory under 2 GB.
The vocabulary and the padding sizes come from the training split only.

Usage:
    python benchmarks/bench_data_pipeline.py [--data ../shared/datasets/aclImdb_v1.tar.gz]
"""

import argparse
import json
import os
import platform
import resource
import sys
import time

import numpy as np

from hierattn.data import TextEncoder, load_imdb


def peak_rss_mb():
    own = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    children = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    return max(own, children) / 1024.0  # Linux reports KiB


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", default="../shared/datasets/aclImdb_v1.tar.gz")
    parser.add_argument("--workers", type=int, default=None)
    args = parser.parse_args()

    timings = {}
    start = time.perf_counter()
    data = load_imdb(args.data, splits=("train", "test"), download=False, progress=False)
    timings["read"] = time.perf_counter() - start

    t = time.perf_counter()
    encoder = TextEncoder.fit(data["train"].texts, min_count=2, workers=args.workers, progress=False)
    timings["fit (tokenize train, vocabulary, lengths)"] = time.perf_counter() - t

    t = time.perf_counter()
    arrays = {}
    for split in ("train", "test"):
        hierarchical, flat = encoder.encode(data[split].texts, mode=("hierarchical", "flat"), workers=args.workers)
        arrays[f"{split}_hierarchical"], arrays[f"{split}_flat"] = hierarchical, flat
    timings["encode (tokenize, both layouts)"] = time.perf_counter() - t
    total = time.perf_counter() - start

    real = {k: int(np.count_nonzero(v)) for k, v in arrays.items()}
    result = {
        "reviews": len(data["train"]) + len(data["test"]),
        "nonzero_ids": real,
        "vocabulary_size": len(encoder.vocabulary),
        "suggested_lengths": {
            "max_sentences": encoder.max_sentences,
            "max_words": encoder.max_words,
            "sequence_length": encoder.sequence_length,
        },
        "shapes": {k: list(v.shape) for k, v in arrays.items()},
        "seconds": {k: round(v, 2) for k, v in timings.items()},
        "total_seconds": round(total, 2),
        "peak_rss_mb": round(peak_rss_mb(), 1),
        "cpus": os.cpu_count(),
        "python": platform.python_version(),
    }
    print(json.dumps(result, indent=2))
    ok = total <= 20.0 and result["peak_rss_mb"] < 2048
    print(f"target (<= 20 s, < 2 GB): {'met' if ok else 'NOT met'}")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
