"""Which use of unlabelled texts beats a trained run's n-gram part, chosen on validation only.

Takes a finished run (its `model.keras`, its seeded validation split carved
out of the training texts) and unlabelled texts, and refits the run's
n-gram recipe on the labelled training texts plus the unlabelled ones
labelled by the run's own classifier (the teacher: the whole combination,
the network reading every text). Variants:

- `base`: the labelled texts only (the run's part, refitted here);
- `hard`: every unlabelled text with the teacher's most probable class;
- `hard>=t`: only those the teacher gives at least `t`;
- `soft`: every unlabelled text once per class, weighted by the
  teacher's probability of it;
- `... ,vocab=labelled`: the features kept are those of the labelled
  texts only (by default those of all texts fitted);
- `round2`: `hard` again, taught by the combination with the `hard` part.

For each variant the combination's weights are chosen on one half of the
validation texts and scored on the other, both ways round (`val_2fold`),
and chosen on the whole validation split for the test split's figures
(`test`, reported, never used to choose). The test split is read only to
report.

    python benchmarks/unlabeled_study.py imdb RUN --imdb ../shared/datasets/aclImdb_v1.tar.gz --out study.json
    python benchmarks/unlabeled_study.py csv RUN --train labelled.csv --unlabeled unlabeled.csv --test test.csv --out study.json
"""

import argparse
import json
import pathlib
import time

import numpy as np
import pandas as pd

from hierattn.data.dataset import LabelMap, TextDataset
from hierattn.data.ids import ngram_ids, token_ids
from hierattn.data.imdb import load_imdb
from hierattn.defaults import NGRAMS
from hierattn.models.loading import load_classifier
from hierattn.ngrams.logits import NgramLogits
from hierattn.ngrams.mixing import choose_mixing, combine, ngram_logits
from hierattn.ngrams.recipes import _as_tables, _features, count_matrices
from hierattn.runs.run_context import RunData


def _data(args, label_names):
    """`(fit texts, fit labels, val texts, val labels, test texts, test labels, unlabelled texts)`."""
    config = json.loads((args.run / "config.json").read_text())
    share, seed = config.get("validation_split", 0.1), config["classifier"].get("seed", 0)
    if args.source == "imdb":
        parts = load_imdb(args.imdb, splits=("train", "test", "unsup"), progress=False)
        train, test, unlabeled = parts["train"], parts["test"], parts["unsup"].texts
    else:
        names = LabelMap(label_names)

        def table(path):
            frame = pd.read_csv(path, keep_default_na=False)
            labels = np.array([label_names.index(str(v)) for v in frame["label"]])
            return TextDataset(list(frame["text"]), labels, names, list(range(len(frame))))

        train, test = table(args.train), table(args.test)
        unlabeled = list(pd.read_csv(args.unlabeled, keep_default_na=False)["text"])
    split = RunData(train, test, unlabeled).split(share, seed)
    return split, test, unlabeled


def _weighted_ratios(features, positive, weights, alpha=NGRAMS["nb_alpha"]):
    p = alpha + np.asarray(features[positive].T @ weights[positive]).ravel()
    q = alpha + np.asarray(features[~positive].T @ weights[~positive]).ravel()
    return np.log((p / p.sum()) / (q / q.sum())).astype(np.float32)


def _fit(counts, labels, weights, recipe, num_classes, kept_rows, fit_rows=None):
    """The run's recipe fitted with sample weights: `(kept, transform, kernel, bias)`.

    NB-LR's ratios come from every row; its logistic regression is fitted on
    `fit_rows` only (default every row).
    """
    from sklearn.linear_model import LogisticRegression

    df = np.bincount(counts[kept_rows].indices, minlength=counts.shape[1])
    kept = np.flatnonzero(df >= NGRAMS["min_df"])
    idf = (np.log((1.0 + len(kept_rows)) / (1.0 + df[kept])) + 1.0).astype(np.float32)

    def transform(matrix):
        return _features(matrix[:, kept], recipe, idf)

    features = transform(counts)
    c, class_weight = recipe["C"], recipe["class_weight"]
    if recipe["weighting"] == "tfidf":
        model = LogisticRegression(C=c, max_iter=NGRAMS["max_iter"], class_weight=class_weight)
        model.fit(features, labels, sample_weight=weights)
        return kept, transform, *_as_tables(model.coef_, model.intercept_, model.classes_, num_classes)
    classes = np.unique(labels)
    modelled = classes[1:] if len(classes) == 2 else classes
    coefficients, intercepts = [], []
    for label in modelled:
        positive = labels == label
        ratios = _weighted_ratios(features, positive, weights)
        model = LogisticRegression(
            C=c, solver="liblinear", max_iter=NGRAMS["max_iter"], class_weight=class_weight, random_state=0
        )
        rows = slice(None) if fit_rows is None else fit_rows
        model.fit(features[rows].multiply(ratios).tocsr(), positive[rows], sample_weight=weights[rows])
        coefficients.append(model.coef_[0] * ratios)
        intercepts.append(model.intercept_[0])
    return kept, transform, *_as_tables(np.array(coefficients), np.array(intercepts), modelled, num_classes)


def _scores(net, logits, labels, a, b):
    combined = combine(net, logits, a, b)
    predicted = combined.argmax(1)
    from sklearn.metrics import f1_score

    return float((predicted == labels).mean()), float(f1_score(labels, predicted, average="macro"))


def _evaluate(net, logits, labels, seed=0):
    """Held-out accuracy on validation (weights chosen on one half, scored on the other) and the whole-split weights."""
    rng = np.random.default_rng(seed)
    order = rng.permutation(len(labels["val"]))
    halves = (order[: len(order) // 2], order[len(order) // 2 :])
    hits, f1 = [], []
    for choose, score in (halves, halves[::-1]):
        (a, b), _ = choose_mixing(net["val"][choose], logits["val"][choose], labels["val"][choose])
        acc, macro = _scores(net["val"][score], logits["val"][score], labels["val"][score], a, b)
        hits.append(acc * len(score))
        f1.append(macro)
    (a, b), _ = choose_mixing(net["val"], logits["val"], labels["val"])
    row = {"val_2fold_accuracy": sum(hits) / len(labels["val"]), "val_2fold_macro_f1": float(np.mean(f1))}
    row["weights"] = [round(float(a), 4), round(float(b), 4)]
    row["val_accuracy"], row["val_macro_f1"] = _scores(net["val"], logits["val"], labels["val"], a, b)
    row["test_accuracy"], row["test_macro_f1"] = _scores(net["test"], logits["test"], labels["test"], a, b)
    neutral = np.full_like(logits["val"], 0.5)
    row["part_val_accuracy"] = _scores(neutral, logits["val"], labels["val"], 0.0, 1.0)[0]
    row["part_test_accuracy"] = _scores(np.full_like(logits["test"], 0.5), logits["test"], labels["test"], 0.0, 1.0)[0]
    return row


def with_third_part(net, base_logits, third, labels):
    """`(weight, logits)`: the third part's logits added to the n-gram part's at the weight (0.25 to 2) best on validation.

    Best: the smallest validation log-loss of the combination, its weights
    chosen as `fit` chooses them (`choose_mixing`).
    """
    from hierattn.ngrams.mixing import log_loss

    best = None
    for weight in (0.25, 0.5, 1.0, 2.0):
        logits = {s: base_logits[s] + weight * third[s] for s in ("val", "test")}
        (a, b), _ = choose_mixing(net["val"], logits["val"], labels["val"])
        loss = log_loss(combine(net["val"], logits["val"], a, b), labels["val"])
        if best is None or loss < best[0]:
            best = (loss, weight, logits)
    return best[1], best[2]


def _lsa(counts, labels, net, base_logits, dims=256):
    """A third part: logistic regression on LSA document vectors learnt on the labelled and unlabelled texts.

    Sublinear TF-IDF of the 1-3 grams seen in 5 or more of those texts,
    truncated SVD to `dims`, rows scaled to unit length; its logits are
    added to the n-gram part's at the weight (0.25 to 2) with the smallest
    validation log-loss of the combination.
    """
    import scipy.sparse as sp
    from sklearn.decomposition import TruncatedSVD
    from sklearn.linear_model import LogisticRegression

    learnt = sp.vstack([counts["fit"], counts["unl"]]).tocsr()
    df = np.bincount(learnt.indices, minlength=learnt.shape[1])
    kept = np.flatnonzero(df >= 5)
    idf = (np.log((1.0 + learnt.shape[0]) / (1.0 + df[kept])) + 1.0).astype(np.float32)

    def tfidf(matrix):
        return _features(matrix[:, kept], {"weighting": "tfidf"}, idf)

    svd = TruncatedSVD(dims, algorithm="randomized", n_iter=4, random_state=0).fit(tfidf(learnt))

    def vectors(matrix):
        z = svd.transform(tfidf(matrix))
        return z / np.maximum(np.linalg.norm(z, axis=1, keepdims=True), 1e-12)

    model = LogisticRegression(C=10.0, max_iter=2000).fit(vectors(counts["fit"]), labels["fit"])
    lsa = {s: model.decision_function(vectors(counts[s])) for s in ("val", "test")}
    lsa = {s: np.stack([-v / 2, v / 2], 1) if v.ndim == 1 else v for s, v in lsa.items()}
    weight, logits = with_third_part(net, base_logits, lsa, labels)
    row = _evaluate(net, logits, labels)
    neutral = {s: np.full_like(lsa[s], 0.5) for s in lsa}
    row.update(
        lsa_weight=weight,
        lsa_val_accuracy=_scores(neutral["val"], lsa["val"], labels["val"], 0.0, 1.0)[0],
        lsa_test_accuracy=_scores(neutral["test"], lsa["test"], labels["test"], 0.0, 1.0)[0],
        features=len(kept),
    )
    return row


def _inputs(args, classifier, texts, recipe, started):
    """The network's probabilities, the teacher's on the unlabelled texts and the count matrices (cached in `--cache`)."""
    import scipy.sparse as sp

    cache = args.cache
    if cache is not None and (cache / "probabilities.npz").exists():
        saved = np.load(cache / "probabilities.npz")
        net = {name: saved[name] for name in ("val", "test", "unl")}
        counts = {name: sp.load_npz(cache / f"counts_{name}.npz") for name in texts}
        return net, saved["teacher"], counts
    ids = {name: classifier.preprocessor(part) for name, part in texts.items()}
    print(f"encoded in {time.perf_counter() - started:.0f} s", flush=True)
    net = {
        name: classifier.predict_ids(token_ids(ids[name]), batch_size=64, part="network")
        for name in ("val", "test", "unl")
    }
    print(f"network probabilities in {time.perf_counter() - started:.0f} s", flush=True)
    layer = classifier.ngram_logits
    a, b = (float(w) for w in np.asarray(classifier.combination.mixing))
    teacher = combine(net["unl"], ngram_logits(layer, ngram_ids(ids["unl"])), a, b)
    n = recipe["ngram_max"]
    counter = NgramLogits(layer.vocabulary_size, layer.num_classes, n, layer.num_buckets, tf="binary")
    counts = {name: count_matrices(counter, ngram_ids(ids[name]), (n,))[n] for name in texts}
    print(f"counted in {time.perf_counter() - started:.0f} s; recipe {recipe}", flush=True)
    if cache is not None:
        cache.mkdir(parents=True, exist_ok=True)
        for name, matrix in counts.items():
            sp.save_npz(cache / f"counts_{name}.npz", matrix, compressed=False)
        np.savez(cache / "probabilities.npz", teacher=teacher, **net)
    return net, teacher, counts


def add_data_arguments(parser):
    """The arguments naming a run and its data, as `_data` reads them (shared with the other unlabelled studies)."""
    parser.add_argument("source", choices=("imdb", "csv"))
    parser.add_argument("run", type=pathlib.Path)
    parser.add_argument("--imdb", type=pathlib.Path, help="the IMDB archive (source imdb)")
    parser.add_argument("--train", type=pathlib.Path, help="the run's labelled table (source csv)")
    parser.add_argument("--unlabeled", type=pathlib.Path, help="a table of unlabelled texts, column text (source csv)")
    parser.add_argument("--test", type=pathlib.Path, help="the labelled test table (source csv)")


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    add_data_arguments(parser)
    parser.add_argument("--variants", default="base,hard,hard>=0.9,soft,hard;vocab=labelled,round2")
    parser.add_argument("--cache", type=pathlib.Path, help="folder keeping the probabilities and counts between runs")
    parser.add_argument("--out", type=pathlib.Path, required=True)
    args = parser.parse_args()

    started = time.perf_counter()
    classifier = load_classifier(args.run / "model.keras")
    split, test, unlabeled = _data(args, list(classifier.label_names))
    texts = {"fit": split.fit_texts, "val": split.val_texts, "test": test.texts, "unl": unlabeled}
    labels = {"fit": np.asarray(split.fit_labels), "val": np.asarray(split.val_labels), "test": test.labels}
    recipe = dict(classifier.ngram_report["recipe"])
    net, teacher, counts = _inputs(args, classifier, texts, recipe, started)
    import scipy.sparse as sp

    results = {"run": str(args.run), "recipe": recipe, "documents": {k: len(v) for k, v in texts.items()}}
    results["teacher_on_unlabeled_confidence"] = float(teacher.max(1).mean())
    results["variants"] = {}
    k = classifier.ngram_logits.num_classes
    base_logits = None
    for variant in args.variants.split(","):
        name, _, option = variant.partition(";")
        t0 = time.perf_counter()
        source = teacher
        if name == "round2":
            source = results.setdefault("_teacher2", None)
            if source is None:
                continue
            name = "hard"
        n_fit, n_unl = len(labels["fit"]), len(texts["unl"])
        if name == "lsa":
            row = _lsa(counts, labels, net, base_logits)
            row["seconds"] = round(time.perf_counter() - t0, 1)
            results["variants"][variant] = row
            print(variant, json.dumps(row), flush=True)
            continue
        if name == "base":
            rows, y, w = counts["fit"], labels["fit"], np.ones(n_fit)
        elif name.startswith("hard"):
            confident = source.max(1) >= (float(name.split(">=")[1]) if ">=" in name else 0.0)
            rows = sp.vstack([counts["fit"], counts["unl"][confident]]).tocsr()
            y = np.concatenate([labels["fit"], source.argmax(1)[confident]])
            w = np.ones(len(y))
        elif name == "ratios":  # NB ratios from the gold and pseudo-labels, the regression on the gold ones
            rows = sp.vstack([counts["fit"], counts["unl"]]).tocsr()
            y = np.concatenate([labels["fit"], source.argmax(1)])
            w = np.ones(len(y))
        elif name == "soft":
            rows = sp.vstack([counts["fit"]] + [counts["unl"]] * k).tocsr()
            y = np.concatenate([labels["fit"]] + [np.full(n_unl, c) for c in range(k)])
            w = np.concatenate([np.ones(n_fit)] + [source[:, c] for c in range(k)])
        kept_rows = (
            np.arange(n_fit) if option == "vocab=labelled" or name in ("base", "ratios") else np.arange(rows.shape[0])
        )
        fit_rows = np.arange(n_fit) if name == "ratios" else None
        kept, transform, kernel, bias = _fit(rows, y, w, recipe, k, kept_rows, fit_rows)
        logits = {s: np.asarray(transform(counts[s]) @ kernel) + bias for s in ("val", "test", "unl")}
        row = _evaluate(net, logits, labels)
        row.update(features=len(kept), fitted_rows=int(rows.shape[0]), seconds=round(time.perf_counter() - t0, 1))
        results["variants"][variant] = row
        print(variant, json.dumps(row), flush=True)
        if variant == "base":
            base_logits = logits
        if variant == "hard":
            (a2, b2), _ = choose_mixing(net["val"], logits["val"], labels["val"])
            results["_teacher2"] = combine(net["unl"], logits["unl"], a2, b2)
    results.pop("_teacher2", None)
    results["seconds"] = round(time.perf_counter() - started, 1)
    args.out.write_text(json.dumps(results, indent=1))


if __name__ == "__main__":
    main()
