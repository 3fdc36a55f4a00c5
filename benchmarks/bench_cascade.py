"""The cascade on one run (issue #52): the network reads only the reviews its n-gram part is not sure of.

On one run (the default IMDB run), in one process, on 2 CPU cores, every figure from this run:

* throughput from raw text on `--texts` seeded IMDB test reviews (the sample of
  bench_export_runtime.py), each after a 200-review warm-up on training reviews: the runtime's
  `Predictor.predict` with `network="auto"` (the cascade) and `"always"` (the whole combination), and
  the TF-IDF + LR pipeline of bench_export_runtime.py (fitted on the 25,000 training reviews, not timed);
  the cascade's time split into tokenizing for the n-gram part, the n-gram part, and the network's share;
* accuracy and macro-F1 on the whole test split (25,000) of the cascade and of the whole combination
  (the runtime, both settings), and the share of test reviews the network read;
* parity: max |p_runtime - p_keras| on the first 1,000 reviews of the sample, both settings;
* one explanation, the model loaded (`Explainer.explain([review])` on `--single` seeded test reviews
  after a warm-up): median over all, over those the network decided and over those the n-gram part
  decided; the largest completeness error relative to the network's term, of those the network decided;
* a dataset: `explain_corpus` (what `explain --dataset` runs) on `--corpus` reviews, reviews per second.

Usage:
    python benchmarks/bench_cascade.py RUN_DIR [--texts 10000] [--single 100] [--corpus 1000]
        [--data ../shared/datasets/aclImdb_v1.tar.gz] [--output results.json] [--throughput-only]
"""

import argparse
import os
import pathlib
import sys
import time

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")

import numpy as np  # noqa: E402

ROOT = pathlib.Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "benchmarks"))

from bench_export_runtime import report, tfidf_lr, timed  # noqa: E402


def scores(probabilities, labels):
    from sklearn.metrics import f1_score

    predicted = probabilities.argmax(1)
    return {
        "accuracy": round(float(np.mean(predicted == labels)), 5),
        "macro_f1": round(float(f1_score(labels, predicted, average="macro")), 5),
    }


def cascade_parts(predictor, texts):
    """The cascade's time, step by step, one after another (`predict` overlaps the network with the next chunk's
    tokenizing): tokenizing for the n-gram part, the n-gram part, the network's share."""
    cascade = predictor.cascade
    started = time.perf_counter()
    whole = predictor.encoder.encode(texts, mode="whole", whole_length=predictor._ngram_length, workers=1)
    tokenized = time.perf_counter()
    logits = predictor._ngram_logits(whole)
    scored = time.perf_counter()
    read = np.flatnonzero(cascade.needs_network(logits))
    ids = predictor.encoder.encode([texts[i] for i in read], mode=predictor._mode, workers=1)
    network_tokenized = time.perf_counter()
    predictor._run(predictor._session, {"token_ids": ids, "ngram_ids": whole[read]}, predictor._output, 32)
    done = time.perf_counter()
    return {
        "tokenize_for_ngrams_seconds": round(tokenized - started, 2),
        "ngram_part_seconds": round(scored - tokenized, 2),
        "tokenize_for_network_seconds": round(network_tokenized - scored, 2),
        "network_seconds": round(done - network_tokenized, 2),
        "network_read": round(len(read) / len(texts), 4),
    }


def explanations(classifier, texts):
    from hierattn.explain import Explainer

    explainer = Explainer(classifier)
    explainer.explain(texts[:1])
    times, read, errors = [], [], []
    for text in texts:
        started = time.perf_counter()
        (explanation,) = explainer.explain([text])
        times.append(time.perf_counter() - started)
        d = explanation.decision
        read.append(d["network_read"])
        if d["network_read"]:
            errors.append(abs(d["integration_error"]) / max(abs(d["network"] - d["network_baseline"]), 1e-12))
    times, read = np.array(times) * 1000, np.array(read)
    return {
        "median_ms": round(float(np.median(times)), 1),
        "p90_ms": round(float(np.quantile(times, 0.9)), 1),
        "network_decided": int(read.sum()),
        "median_ms_network_decided": round(float(np.median(times[read])), 1) if read.any() else None,
        "median_ms_ngrams_decided": round(float(np.median(times[~read])), 1) if (~read).any() else None,
        "largest_relative_completeness_error": float(max(errors)) if errors else None,
    }


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("run")
    parser.add_argument("--texts", type=int, default=10000)
    parser.add_argument("--single", type=int, default=100)
    parser.add_argument("--corpus", type=int, default=1000)
    parser.add_argument("--data", default=str(ROOT.parent / "shared/datasets/aclImdb_v1.tar.gz"))
    parser.add_argument("--output")
    parser.add_argument(
        "--throughput-only",
        action="store_true",
        help="only the throughput figures (e.g. the same script on two "
        "versions of hierattn: PYTHONPATH=/path/to/other/checkout)",
    )
    args = parser.parse_args()

    from hierattn import runtime
    from hierattn.data import load_imdb
    from hierattn.data.dataset import sample as seeded
    from hierattn.explain import explain_corpus
    from hierattn.runs.run import load_run

    data = load_imdb(args.data, splits=("train", "test"), download=False, progress=False)
    train, test = data["train"], data["test"]
    sample = [test.texts[i] for i in np.random.default_rng(0).choice(len(test), args.texts, replace=False)]
    warm = train.texts[:200]
    results = {"run": args.run, "cpus": os.cpu_count(), "texts": len(sample)}

    auto = runtime.load(pathlib.Path(args.run) / "model.onnx")
    always = runtime.load(pathlib.Path(args.run) / "model.onnx", network="always")
    results["cut"] = auto.cascade.cut
    for name, predictor in (("runtime_auto", auto), ("runtime_always", always)):
        predictor.predict(warm)
        results[name] = timed(predictor.predict, sample)[1]
    results["runtime_auto"]["parts"] = cascade_parts(auto, sample)
    pipeline = tfidf_lr(train)
    pipeline.predict_proba(warm)
    results["tfidf_lr"] = timed(pipeline.predict_proba, sample)[1]
    speed = {name: results[name]["reviews_per_second"] for name in ("runtime_auto", "runtime_always", "tfidf_lr")}
    results["ratios"] = {
        "auto_over_tfidf_lr": round(speed["runtime_auto"] / speed["tfidf_lr"], 2),
        "always_over_tfidf_lr": round(speed["runtime_always"] / speed["tfidf_lr"], 2),
        "auto_over_always": round(speed["runtime_auto"] / speed["runtime_always"], 2),
    }
    if args.throughput_only:
        return report(results, args.output)

    logits = auto._ngram_logits(auto.encoder.encode(test.texts, mode="whole", whole_length=auto._ngram_length))
    results["test"] = {
        "documents": len(test),
        "cascade": scores(auto.predict(test.texts), test.labels),
        "whole": scores(always.predict(test.texts), test.labels),
        "network_read": round(float(auto.cascade.needs_network(logits).mean()), 4),
    }
    results["test"]["accuracy_difference_points"] = round(
        100 * (results["test"]["cascade"]["accuracy"] - results["test"]["whole"]["accuracy"]), 3
    )

    classifier = load_run(args.run).classifier
    results["parity"] = {}
    for network, predictor in (("auto", auto), ("always", always)):
        classifier.network = network
        expected = classifier.predict(sample[:1000], verbose=0)
        results["parity"][network] = float(np.abs(predictor.predict(sample[:1000]) - expected).max())
    classifier.network = "auto"
    results["validation"] = classifier.cascade_report

    texts = seeded(test, args.single + args.corpus, 3).texts
    results["explain_one"] = explanations(classifier, texts[: args.single])
    from hierattn.explain import Explainer

    started = time.perf_counter()
    summary = explain_corpus(Explainer(classifier), texts[args.single :], progress=False)
    seconds = time.perf_counter() - started
    results["explain_dataset"] = {
        "reviews": summary.documents,
        "seconds": round(seconds, 1),
        "reviews_per_second": round(summary.documents / seconds, 1),
    }
    report(results, args.output)


if __name__ == "__main__":
    main()
