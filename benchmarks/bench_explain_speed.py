"""How fast `explain` is with word evidence (issue #31): one review, a whole dataset, and the CLI from a cold start.

- one review, the model loaded: `Explainer(classifier).explain([review])`
  on `--single` seeded IMDB test reviews, after one warm-up call (median and
  90th percentile; target: median at most 50 ms), and of that the network's
  integrated gradients alone (`integrated_gradients` with `EVIDENCE` on the
  same reviews' ids, timed apart);
- a dataset: `explain_corpus` (what `explain --dataset` runs) on `--corpus`
  reviews, in reviews per second (target: at least 100);
- the CLI from a cold start (a new Python process: imports, loading the run,
  one explanation printed), three times.

    python benchmarks/bench_explain_speed.py RUN_DIR [--single 100] [--corpus 500]
"""

import argparse
import os
import subprocess
import sys
import time

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")

import numpy as np  # noqa: E402

from hierattn.data import load_imdb, locate_imdb  # noqa: E402
from hierattn.data.dataset import sample  # noqa: E402
from hierattn.data.ids import token_ids  # noqa: E402
from hierattn.defaults import EVIDENCE  # noqa: E402
from hierattn.explain import Explainer, explain_corpus  # noqa: E402
from hierattn.explain.attributions import integrated_gradients  # noqa: E402
from hierattn.runs.run import load_run  # noqa: E402

REVIEW = "This movie was a complete waste of time. The acting was wooden and the plot made no sense."


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("run")
    parser.add_argument("--single", type=int, default=100)
    parser.add_argument("--corpus", type=int, default=500)
    parser.add_argument("--data", default="../shared/datasets/aclImdb_v1.tar.gz")
    args = parser.parse_args()
    test = load_imdb(locate_imdb(args.data, download=False), splits=("test",), progress=False)["test"]
    texts = sample(test, args.single + args.corpus, 3).texts
    explainer = Explainer(load_run(args.run).classifier)
    explainer.explain(texts[:1])
    times = []
    for text in texts[: args.single]:
        started = time.perf_counter()
        explainer.explain([text])
        times.append(time.perf_counter() - started)
    print(
        f"one review: median {np.median(times) * 1000:.1f} ms, p90 {np.quantile(times, 0.9) * 1000:.1f} ms", flush=True
    )
    classifier, gradients = explainer.classifier, []
    scale = float(np.asarray(classifier.combination.mixing)[0]) if classifier.ngram_logits is not None else 1.0
    for text in texts[: args.single]:
        x = classifier.preprocessor([text])
        order = np.argsort(-classifier.predict_ids(x), axis=1)
        started = time.perf_counter()
        integrated_gradients(classifier.backbone, token_ids(x), order[:, 0], order[:, 1], scale, **EVIDENCE)
        gradients.append(time.perf_counter() - started)
    print(f"  of which integrated gradients: median {np.median(gradients) * 1000:.1f} ms", flush=True)
    started = time.perf_counter()
    summary = explain_corpus(explainer, texts[args.single :], progress=False)
    seconds = time.perf_counter() - started
    print(f"a dataset: {summary.documents} reviews in {seconds:.1f} s, {summary.documents / seconds:.1f} reviews/s")
    cli = [sys.executable, "cli.py", "explain", "--run", args.run, REVIEW]
    for _ in range(3):
        started = time.perf_counter()
        subprocess.run(cli, check=True, capture_output=True)
        print(f"CLI, cold start: {time.perf_counter() - started:.2f} s", flush=True)


if __name__ == "__main__":
    main()
