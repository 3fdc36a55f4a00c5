"""TensorFlow's CPU memory allocator: the default against the BFC allocator.

The `hierattn` program sets `TF_CPU_ALLOCATOR_USE_BFC=true` unless it is
already set (importing the library sets nothing). This script measures what
that changes, and reports which allocators TensorFlow actually created in
each process (read from its own log, `TF_CPP_VMODULE=bfc_allocator=1`): with
oneDNN on some CPUs TensorFlow creates a BFC allocator (`mklcpu`) whatever
the variable says, and then the setting changes less or nothing. For each model and each setting
(`false`, TensorFlow's default, then `true`), one fresh process trains the
model with the library defaults on a seeded subset of IMDB `train/` for one
epoch (no word2vec, to keep it short) and then predicts unlabelled reviews
(`unsup`, model only: already encoded) in the same process; a second fresh
process loads the saved run and predicts the same reviews. Reported per
process: training seconds, prediction reviews/s, the share of the
prediction's CPU time spent in the kernel, peak memory (max RSS), and whether
the probabilities equal those of the `false` setting.

Usage:
    python benchmarks/bench_allocator.py [--models transformer,han] [--train 4000] [--predict 5000] \
        [--data ../shared/datasets/aclImdb_v1.tar.gz]
"""

import argparse
import json
import os
import re
import subprocess
import sys
import tempfile


def measure(args):
    """Child process: train (or load) one run, then time prediction."""
    import resource
    import time

    import numpy as np

    from hierattn.data import load_imdb
    from hierattn.inference import predict_batches
    from hierattn.runs import load_run
    from hierattn.training import TrainConfig, train

    data = load_imdb(args.data, splits=("train", "unsup"), download=False, progress=False)
    result = {"model": args.models, "TF_CPU_ALLOCATOR_USE_BFC": os.environ["TF_CPU_ALLOCATOR_USE_BFC"]}
    if args.child == "train":
        config = TrainConfig(model=args.models, epochs=1, embeddings="none", limit=args.train)
        run = train(data["train"], None, config, args.run, log=lambda message: None, verbose=0)
        result.update(process="training, then prediction", train_seconds=run.metrics["training_seconds"])
    else:
        run = load_run(args.run)
        result.update(process="fresh, loads the run")
    x = run.classifier.preprocessor(data["unsup"].texts[: args.predict])
    predict_batches(run.classifier.backbone, x[:200])  # trace once
    before, start = os.times(), time.perf_counter()
    probabilities = predict_batches(run.classifier.backbone, x)
    seconds, after = time.perf_counter() - start, os.times()
    cpu = (after.user - before.user) + (after.system - before.system)
    np.save(args.probabilities, probabilities)
    result.update(predict_reviews_per_second=round(len(x) / seconds, 1),
                  kernel_share_of_cpu=round((after.system - before.system) / cpu, 2),
                  max_rss_mb=resource.getrusage(resource.RUSAGE_SELF).ru_maxrss // 1024)
    print(json.dumps(result), flush=True)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--models", default="transformer,han")
    parser.add_argument("--train", type=int, default=4000, help="Training reviews (a seeded subset of train/).")
    parser.add_argument("--predict", type=int, default=5000, help="Unlabelled reviews to predict.")
    parser.add_argument("--data", default="../shared/datasets/aclImdb_v1.tar.gz")
    parser.add_argument("--child", choices=("train", "load"), help=argparse.SUPPRESS)
    parser.add_argument("--run", help=argparse.SUPPRESS)
    parser.add_argument("--probabilities", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        sys.path.insert(0, os.path.join(os.path.dirname(__file__), ".."))
        return measure(args)

    import numpy as np

    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        for model in args.models.split(","):
            reference = None
            for setting in ("false", "true"):
                run = os.path.join(tmp, f"{model}-{setting}")
                for child in ("train", "load"):
                    saved = os.path.join(tmp, f"{model}-{setting}-{child}.npy")
                    env = dict(os.environ, TF_CPU_ALLOCATOR_USE_BFC=setting, TF_CPP_MIN_LOG_LEVEL="0",
                               TF_CPP_VMODULE="bfc_allocator=1")
                    result = subprocess.run(
                        [sys.executable, __file__, "--child", child, "--models", model, "--run", run,
                         "--probabilities", saved, "--train", str(args.train), "--predict", str(args.predict),
                         "--data", args.data], env=env, capture_output=True, text=True, check=True)
                    row = json.loads(result.stdout.strip().splitlines()[-1])
                    names = sorted(set(re.findall(r"Creating new BFCAllocator named: (\S+)", result.stderr)))
                    row["bfc_allocators"] = ", ".join(names) or "none"
                    probabilities = np.load(saved)
                    reference = probabilities if reference is None else reference
                    row["same_probabilities_as_default"] = bool(np.array_equal(probabilities, reference))
                    rows.append(row)
                    print(json.dumps(row), flush=True)
    print("\n| model | TF_CPU_ALLOCATOR_USE_BFC | BFC allocators created | process | training (s) | prediction "
          "reviews/s | kernel share of CPU | max RSS (MB) | same probabilities |\n"
          "| --- | --- | --- | --- | --- | --- | --- | --- | --- |")
    for r in rows:
        print(f"| {r['model']} | {r['TF_CPU_ALLOCATOR_USE_BFC']} | {r['bfc_allocators']} | {r['process']} | "
              f"{r.get('train_seconds', '')} | "
              f"{r['predict_reviews_per_second']:.0f} | {r['kernel_share_of_cpu']:.0%} | {r['max_rss_mb']:,} | "
              f"{'yes' if r['same_probabilities_as_default'] else 'no'} |")


if __name__ == "__main__":
    main()
