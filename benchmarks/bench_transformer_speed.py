"""Where the Transformer's prediction time goes: model-only throughput by shape.

Three measurements, model only (reviews already encoded; tokenizing excluded):

1. the saved run, on a seeded sample of IMDB test reviews, with inputs cut to
   several lengths and two batch sizes;
2. freshly built Transformers of several widths (untrained: speed only) on
   the same encoded reviews, at full length and cut to 256 tokens;
3. one `MultiHeadAttention` call, ours against `keras.layers.MultiHeadAttention`
   with the same sizes, on a batch of 32 x 220 x 128.

Usage:
    python benchmarks/bench_transformer_speed.py RUN_DIR [--n 2000] [--shapes 128/256/4,64/128/2] \
        [--data ../shared/datasets/aclImdb_v1.tar.gz]
"""

import argparse
import os
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(__file__), ".."))
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")

import numpy as np  # noqa: E402

from hierattn.explain import open_corpus  # noqa: E402
from hierattn.inference import predict_batches
from hierattn.runs import load_run  # noqa: E402

SHAPES = "128/256/4,128/256/2,128/128/2,96/192/4,64/128/4,64/128/2"  # d / FFN / heads


def reviews_per_second(model, x, batch_size=32):
    predict_batches(model, x[:64], batch_size)  # trace once
    start = time.perf_counter()
    predict_batches(model, x, batch_size)
    return len(x) / (time.perf_counter() - start)


def milliseconds_per_call(function, repeats=20):
    function()
    start = time.perf_counter()
    for _ in range(repeats):
        function()
    return (time.perf_counter() - start) / repeats * 1000


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("run")
    parser.add_argument("--n", type=int, default=2000)
    parser.add_argument("--shapes", default=SHAPES, help="Comma-separated d/FFN/heads of the fresh models.")
    parser.add_argument("--data", default="../shared/datasets/aclImdb_v1.tar.gz")
    args = parser.parse_args()
    shapes = [tuple(int(n) for n in shape.split("/")) for shape in args.shapes.split(",")]

    import keras
    import tensorflow as tf

    from hierattn.layers import MultiHeadAttention
    from hierattn.models import build_transformer

    run = load_run(args.run)
    x = run.classifier.preprocessor(list(open_corpus("imdb", "test", args.data, limit=args.n, progress=False).texts))
    print(f"{len(x):,} IMDB test reviews, mean {np.mean((x != 0).sum(1)):.0f} tokens, max_len {x.shape[1]}")

    print("\n1. saved run, reviews/s\n\n| max_len | batch 32 | batch 128 |\n| --- | --- | --- |")
    for length in (x.shape[1], 400, 256):
        cut = x[:, :length]
        print(f"| {length} | {reviews_per_second(run.classifier.backbone, cut, 32):.0f} | "
              f"{reviews_per_second(run.classifier.backbone, cut, 128):.0f} |", flush=True)

    print("\n2. fresh models (1 pre-norm block), reviews/s at batch 32\n")
    print(f"| d / FFN / heads | max_len {x.shape[1]} | max_len 256 |\n| --- | --- | --- |")
    for dim, ff, heads in shapes:
        model = build_transformer(len(run.classifier.preprocessor.vocabulary), 2, sequence_length=x.shape[1], embedding_dim=dim, intermediate_dim=ff,
                                  num_heads=heads, num_layers=1, normalize_first=True)
        print(f"| {dim} / {ff} / {heads} | {reviews_per_second(model, x):.0f} | "
              f"{reviews_per_second(model, x[:, :256]):.0f} |", flush=True)

    inputs = tf.constant(np.random.default_rng(0).normal(size=(32, 220, 128)).astype("float32"))
    mask = tf.ones((32, 220), bool)
    ours, theirs = MultiHeadAttention(4, 32), keras.layers.MultiHeadAttention(4, 32)
    ours_call = tf.function(lambda: ours(inputs, inputs, query_mask=mask, value_mask=mask))
    theirs_call = tf.function(lambda: theirs(inputs, inputs, query_mask=mask, value_mask=mask))
    print(f"\n3. one attention call on 32 x 220 x 128: hierattn {milliseconds_per_call(ours_call):.1f} ms, "
          f"keras.layers.MultiHeadAttention {milliseconds_per_call(theirs_call):.1f} ms")


if __name__ == "__main__":
    main()
