"""The runtime's steps, old way against new (issue #52, second pass): what each change to the prediction path gained.

On one run's bundle (the default IMDB run), on `--texts` seeded IMDB test reviews (the sample of
bench_cascade.py), in one process, each timing the best of `--repeat`:

* tokens: the token expression over each cleaned, lower-cased ASCII review (`_TOKEN.findall`, the old
  path) against `_ascii_tokens` (chunks between spaces), and whether they give the same tokens;
* ids: `encode_flat` against the per-document loop it replaced (`_encode_flat_per_document` here);
* n-gram part: its logits by binary search (`twin.contributions` per batch, as `twin.logits` did) against
  `twin.logits` (rows by rank);
* threads: `Predictor.predict` (the overlap of the network with the next chunk's tokenizing) with
  onnxruntime on 1 thread, on 2 without spinning, on 2 spinning (its default), with `network="auto"` on every
  review and `"always"` on the first `--always-texts`, the settings taking turns in each of `--repeat` rounds;
* same_tokens (`--same-tokens`): the two token paths compared on every ASCII text of IMDB (train, test,
  unsup), the devsuite and Reuters, raw and with HTML entities unescaped.

Usage:
    python benchmarks/bench_runtime_steps.py RUN_DIR [--texts 10000] [--always-texts 2000] [--repeat 2]
        [--same-tokens] [--data ../shared/datasets/aclImdb_v1.tar.gz] [--output results.json]
"""

import argparse
import glob
import html
import os
import pathlib
import sys
import tarfile
import time

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")

import numpy as np  # noqa: E402

ROOT = pathlib.Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "benchmarks"))

from bench_export_runtime import report  # noqa: E402


def best(function, repeat):
    """The shortest of `repeat` timings of `function()`, in seconds, and its result."""
    times = []
    for _ in range(repeat):
        started = time.perf_counter()
        result = function()
        times.append(time.perf_counter() - started)
    return round(min(times), 3), result


def _encode_flat_per_document(documents, vocabulary, sequence_length):
    """`encode_flat` as it was: a lookup and an assignment per document."""
    out = np.zeros((len(documents), sequence_length), dtype=np.int32)
    get = vocabulary.index.get
    for i, document in enumerate(documents):
        tokens = [t for sentence in document for t in sentence][:sequence_length]
        out[i, : len(tokens)] = [get(t, 1) for t in tokens]
    return out


def _logits_by_binary_search(tables, ids, batch_size=256):
    """`twin.logits` as it was: each batch's distinct features found by `numpy.searchsorted`, summed per row."""
    from hierattn.data.batching import sort_batches_by_length, trim_padding
    from hierattn.ngrams.twin import ngram_features

    assert tables.tf == "binary" and not tables.normalize, "the baseline is written for the default IMDB run's settings"
    found = np.zeros((len(ids), tables.num_classes), np.float32)
    for index in sort_batches_by_length(ids, batch_size):
        batch = trim_padding(ids[index])
        flat = np.sort(np.concatenate(ngram_features(tables, batch), axis=-1).reshape(len(batch), -1), axis=-1)
        firsts = np.concatenate([np.ones((len(batch), 1), bool), flat[:, 1:] != flat[:, :-1]], axis=-1)
        features = np.where(firsts, flat, -1)
        rows = np.searchsorted(tables._ids, features)
        rows = np.where(tables._ids[np.minimum(rows, len(tables._ids) - 1)] == features, rows, tables.num_kept)
        values = np.where(features >= 0, tables._idf[rows], 0.0).astype(np.float32)  # binary tf, not normalized
        found[index] = (tables._kernel[rows] * values[..., None]).sum(axis=1) + tables._bias
    return found


def steps(predictor, texts, repeat):
    from hierattn.data.encoding import encode_flat
    from hierattn.data.text import _TOKEN, _ascii_tokens, clean

    lowered = [text for text in (clean(t).lower() for t in texts) if text.isascii()]
    old, expected = best(lambda: [_TOKEN.findall(text) for text in lowered], repeat)
    new, found = best(lambda: [_ascii_tokens(text) for text in lowered], repeat)
    results = {"tokens": {"texts": len(lowered), "expression_s": old, "chunks_s": new, "same": found == expected}}
    documents = [[predictor.tokenizer.words(t, max_tokens=predictor._ngram_length)] for t in texts]
    width = max(len(d[0]) for d in documents)
    vocabulary = predictor.encoder.vocabulary
    old, expected = best(lambda: _encode_flat_per_document(documents, vocabulary, width), repeat)
    new, found = best(lambda: encode_flat(documents, vocabulary, width), repeat)
    results["ids"] = {"per_document_s": old, "one_pass_s": new, "same": bool((found == expected).all())}
    whole = predictor.encoder.encode(texts, mode="whole", whole_length=predictor._ngram_length, workers=1)
    predictor._ngram_logits(whole[:2])  # the tables, read from the graph
    old, expected = best(lambda: _logits_by_binary_search(predictor._tables, whole), repeat)
    new, found = best(lambda: predictor._ngram_logits(whole), repeat)
    results["ngram_part"] = {
        "binary_search_s": old,
        "rank_s": new,
        "max_difference": float(np.abs(found - expected).max()),
    }
    return results


def threads(path, texts, always_texts, repeat):
    """Each setting's best of `repeat` rounds, the settings taking turns within a round (the machine drifts)."""
    import onnxruntime

    from hierattn import runtime

    settings, predictors = ((1, "1"), (2, "0"), (2, "1")), []
    for count, spinning in settings:
        predictor = runtime.load(path)
        options = onnxruntime.SessionOptions()
        options.intra_op_num_threads = count
        options.add_session_config_entry("session.intra_op.allow_spinning", spinning)
        options.log_severity_level = 3
        predictor._session = onnxruntime.InferenceSession(path, options, providers=["CPUExecutionProvider"])
        predictor.predict(texts[:200])
        predictors.append(predictor)
    times = {(setting, network): [] for setting in settings for network in ("auto", "always")}
    for _ in range(repeat):
        for setting, predictor in zip(settings, predictors):
            for network, some in (("auto", texts), ("always", texts[:always_texts])):
                asked = predictor.with_network(network)
                times[setting, network].append(best(lambda p=asked, t=some: p.predict(t), 1)[0])
        print(times, flush=True)
    return [
        {
            "threads": count,
            "spinning": spinning == "1",
            "auto_reviews_per_second": round(len(texts) / min(times[(count, spinning), "auto"]), 1),
            "always_reviews_per_second": round(always_texts / min(times[(count, spinning), "always"]), 1),
            "auto_seconds": times[(count, spinning), "auto"],
            "always_seconds": times[(count, spinning), "always"],
        }
        for count, spinning in settings
    ]


def same_tokens(data):
    """The two token paths on every ASCII text of IMDB, the devsuite and Reuters, raw and unescaped."""
    import pandas as pd

    from hierattn.data.text import _TOKEN, _ascii_tokens, clean

    texts = []
    shared = pathlib.Path(data).parent
    for name in glob.glob(str(shared / "devsuite/*/*.csv")) + glob.glob(str(shared / "multilabel/reuters/*.csv")):
        texts += pd.read_csv(name)["text"].astype(str).tolist()
    with tarfile.open(data) as archive:
        for member in archive:
            if member.isfile() and member.name.endswith(".txt") and member.name.count("/") == 3:
                texts.append(archive.extractfile(member).read().decode("utf-8"))
    compared = different = 0
    for text in texts:
        for cleaned in {clean(text).lower(), html.unescape(clean(text)).lower()}:
            if cleaned.isascii():
                compared += 1
                different += _TOKEN.findall(cleaned) != _ascii_tokens(cleaned)
    return {"texts": len(texts), "ascii_texts_compared": compared, "different": different}


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("run")
    parser.add_argument("--texts", type=int, default=10000)
    parser.add_argument("--always-texts", type=int, default=2000)
    parser.add_argument("--repeat", type=int, default=2)
    parser.add_argument("--same-tokens", action="store_true")
    parser.add_argument("--data", default=str(ROOT.parent / "shared/datasets/aclImdb_v1.tar.gz"))
    parser.add_argument("--output")
    args = parser.parse_args()

    from hierattn import runtime
    from hierattn.data import load_imdb

    test = load_imdb(args.data, splits=("test",), download=False, progress=False)["test"]
    sample = [test.texts[i] for i in np.random.default_rng(0).choice(len(test), args.texts, replace=False)]
    path = str(pathlib.Path(args.run) / "model.onnx")
    results = {"run": args.run, "cpus": os.cpu_count(), "texts": len(sample)}
    results.update(steps(runtime.load(path), sample, args.repeat))
    print(results, flush=True)
    results["threads"] = threads(path, sample, args.always_texts, args.repeat)
    if args.same_tokens:
        results["same_tokens"] = same_tokens(args.data)
    report(results, args.output)


if __name__ == "__main__":
    main()
