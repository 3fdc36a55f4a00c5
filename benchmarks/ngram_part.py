"""Which n-gram part? Hashed 1..n-grams of the preprocessor's ids + logistic regression, on validation only.

For each dataset: the stratified, seeded 10% validation split `train` uses;
the preprocessor adapted on the training part (as `TextClassifier.adapt`
does); `NgramLogits.feature_ids` features; TF-IDF weighting and logistic
regression from scikit-learn. Scores on the validation part only, beside
the TF-IDF+LR baseline fitted on the same texts.

    python benchmarks/ngram_part.py --datasets trec6,agnews --buckets 18,20 --ngrams 2,3 --C 3,10,30
"""

import argparse
import json
import pathlib
import sys
import time

import numpy as np

ROOT = pathlib.Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench_baseline import DEVSUITE, load  # noqa: E402

from hierattn.baseline import make_baseline  # noqa: E402
from hierattn.data.dataset import stratified_split  # noqa: E402
from hierattn.defaults import TRAINING  # noqa: E402
from hierattn.evaluation import classification_metrics  # noqa: E402
from hierattn.layers.ngram_logits import NgramLogits  # noqa: E402
from hierattn.ngrams import feature_matrix  # noqa: E402
from hierattn.preprocessor import TextPreprocessor  # noqa: E402
from hierattn.training import length_settings  # noqa: E402


def main():
    from sklearn.feature_extraction.text import TfidfTransformer
    from sklearn.linear_model import LogisticRegression

    parser = argparse.ArgumentParser()
    parser.add_argument("--datasets", default=",".join(("imdb",) + DEVSUITE))
    parser.add_argument("--mode", default="hierarchical")
    parser.add_argument("--buckets", default="20")
    parser.add_argument("--ngrams", default="3")
    parser.add_argument("--C", default="10")
    parser.add_argument("--length", default=None, help="the preprocessor's limit: SxW (hierarchical) or N (flat)")
    parser.add_argument("--min-count", type=int, default=2)
    parser.add_argument("--tf", default="binary", help="binary (the layer's), sublinear (1 + log count), or both")
    args = parser.parse_args()
    for name in args.datasets.split(","):
        train, _ = load(name)
        names = train.label_map.names
        fit_idx, val_idx = stratified_split(train.labels, TRAINING["validation_split"], TRAINING["seed"], names)
        fit_texts, val_texts = [train.texts[i] for i in fit_idx], [train.texts[i] for i in val_idx]
        y_fit, y_val = train.labels[fit_idx], train.labels[val_idx]
        base = make_baseline().fit(fit_texts, y_fit)
        b = classification_metrics(y_val, base.predict(val_texts), names)
        print(json.dumps({"dataset": name, "part": "baseline", "val_acc": b["accuracy"], "val_f1": b["macro_f1"]}),
              flush=True)
        limits = {}
        if args.length:
            limits = length_settings("han" if args.mode == "hierarchical" else "rnn", args.length)
        pre = TextPreprocessor(args.mode, min_count=args.min_count, **limits)
        pre.adapt(fit_texts, progress=False)
        x_fit, x_val = pre(fit_texts), pre(val_texts)
        tokens = sum(len(sentence) for text in fit_texts for sentence in pre.tokenizer.sentences(text))
        print(json.dumps({"dataset": name, "limits": [pre.max_sentences, pre.max_words, pre.sequence_length],
                          "tokens_kept": round(int((x_fit > 0).sum()) / tokens, 3)}), flush=True)
        for bits in map(int, args.buckets.split(",")):
            for n in map(int, args.ngrams.split(",")):
                layer = NgramLogits(len(pre.vocabulary), len(names), ngram_max=n, num_buckets=2**bits)
                for tf in args.tf.split(","):
                    started = time.perf_counter()
                    features = feature_matrix if tf == "binary" else count_matrix
                    f_fit, f_val = features(layer, x_fit), features(layer, x_val)
                    tfidf = TfidfTransformer(sublinear_tf=tf == "sublinear").fit(f_fit)
                    f_fit, f_val = tfidf.transform(f_fit), tfidf.transform(f_val)
                    feat_s = time.perf_counter() - started
                    seen = np.unique(f_fit.indices)
                    f_fit, f_val = f_fit[:, seen], f_val[:, seen]
                    for C in map(float, args.C.split(",")):
                        started = time.perf_counter()
                        lr = LogisticRegression(C=C, max_iter=2000).fit(f_fit, y_fit)
                        m = classification_metrics(y_val, lr.predict(f_val), names)
                        print(json.dumps({"dataset": name, "mode": args.mode, "length": args.length or "p95",
                                          "min_count": args.min_count, "tf": tf, "bits": bits, "n": n, "C": C,
                                          "val_acc": m["accuracy"], "val_f1": m["macro_f1"], "feat_s": round(feat_s, 1),
                                          "fit_s": round(time.perf_counter() - started, 1)}), flush=True)


def count_matrix(layer, x, batch_size=256):
    """The document x feature count matrix of id arrays `x` (every occurrence of each n-gram counted)."""
    import scipy.sparse as sp

    per_row = int(np.prod(x.shape[1:-1], dtype=int))  # rows (sentences) per document
    rows, columns = [], []
    for start in range(0, len(x), batch_size):
        for ids in layer.ngram_features(x[start:start + batch_size]):
            ids = np.asarray(ids)
            r, c = np.nonzero(ids >= 0)
            rows.append(r // per_row + start)
            columns.append(ids[r, c])
    rows, columns = np.concatenate(rows), np.concatenate(columns)
    return sp.csr_matrix((np.ones(len(rows), np.float32), (rows, columns)), shape=(len(x), layer.num_buckets))


if __name__ == "__main__":
    main()
