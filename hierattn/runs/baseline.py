"""The n-gram reference every training run is compared with: TF-IDF + logistic regression (scikit-learn).

A neural classifier is only worth its cost if it beats a linear model over
n-grams, which trains in seconds. `train` fits this baseline on the same
training split as the model and reports both side by side (metrics.json's
`baseline`, and the printed summary). Two are fitted, over word 1-2 grams
and over character 1-3 grams (the reference of languages written without
spaces, where words are whole clauses), and the one with the better
validation accuracy is reported, so that no run is compared with a
strawman in any language.
"""

import time

import numpy as np

from hierattn.defaults import BASELINE
from hierattn.metrics import classification_metrics, multilabel_metrics

NAME = "TF-IDF+LR"


def make_baseline(features="words"):
    """An unfitted scikit-learn pipeline: TF-IDF (sublinear tf, min_df 2) + logistic regression.

    Args:
        features: `"words"` (word 1-2 grams, scikit-learn's token pattern)
            or `"characters"` (character 1-3 grams).

    Settings from `hierattn.defaults.BASELINE` (the devsuite's reference
    baseline: C=10, lbfgs).
    """
    # scikit-learn takes about a second to load; only fitting the baseline needs it here.
    from sklearn.feature_extraction.text import TfidfVectorizer
    from sklearn.linear_model import LogisticRegression
    from sklearn.pipeline import make_pipeline

    return make_pipeline(
        TfidfVectorizer(
            analyzer="word" if features == "words" else "char",
            ngram_range=BASELINE["ngram_range" if features == "words" else "char_ngram_range"],
            min_df=BASELINE["min_df"],
            sublinear_tf=BASELINE["sublinear_tf"],
        ),
        LogisticRegression(C=BASELINE["C"], max_iter=BASELINE["max_iter"]),
    )


def run_baseline(texts, labels, names, evaluate):
    """Fits the baseline on `texts`/`labels` (class ids) and scores it on each evaluation split.

    Multi-label data (multi-hot `labels`): one logistic regression per label
    (one-vs-rest; a label without positives, or without negatives, predicts
    its constant), each label's threshold chosen on the `"validation"` split
    as a multi-label classifier's are (`hierattn.tuning`).

    Args:
        texts: Training texts (the model's training split).
        labels: Their class ids (or multi-hot rows).
        names: Class names in id order.
        evaluate: `{split name: (texts, class ids)}`, e.g. validation and test.

    Both baselines (word and character n-grams) are fitted, and the one with
    the better validation accuracy (micro-F1 for multi-label) is reported;
    the other's validation score is kept in `candidates`.

    Returns:
        A JSON-ready dict: `model` (what it is), `features` (`"words"` or
        `"characters"`), `train_documents`, `training_seconds`, and
        `classification_metrics` per split; or, when scikit-learn cannot fit
        it (no n-gram in two documents, one class), `skipped` with the
        reason instead of the scores.
    """
    results = [_run_one(features, texts, labels, names, evaluate) for features in BASELINE["features"]]
    fitted = [r for r in results if "skipped" not in r]
    if not fitted:
        return results[0]
    key = "micro_f1" if np.ndim(labels) == 2 else "accuracy"
    best = max(fitted, key=lambda r: r["validation"][key] if "validation" in r else 0.0)
    best["candidates"] = {
        r["features"]: r["validation"][key] if "validation" in r else r.get("skipped") for r in results
    }
    best["training_seconds"] = round(sum(r.get("training_seconds", 0.0) for r in results), 1)
    return best


def _run_one(features, texts, labels, names, evaluate):
    grams = (
        f"word 1-{BASELINE['ngram_range'][1]}"
        if features == "words"
        else "character 1-{}".format(BASELINE["char_ngram_range"][1])
    )
    result = {
        "model": f"{NAME}: TF-IDF of {grams} grams + logistic regression (C={BASELINE['C']:g})",
        "features": features,
        "train_documents": len(texts),
    }
    started = time.perf_counter()
    multi_label = np.ndim(labels) == 2
    try:
        if multi_label:
            model = _one_vs_rest(texts, labels, features)
        else:
            model = make_baseline(features).fit(list(texts), list(labels))
    except ValueError as error:  # e.g. a corpus so small that no n-gram occurs twice
        result["skipped"] = " ".join(str(error).split())
        return result
    result["training_seconds"] = round(time.perf_counter() - started, 1)
    if not multi_label:
        for split, (split_texts, split_labels) in evaluate.items():
            result[split] = classification_metrics(split_labels, model.predict(list(split_texts)), names)
        return result
    from hierattn.decision import over_thresholds
    from hierattn.tuning import choose_thresholds

    probabilities = {split: model(list(split_texts)) for split, (split_texts, _) in evaluate.items()}
    thresholds, _ = choose_thresholds(probabilities["validation"], evaluate["validation"][1])
    result["model"] += ", one-vs-rest, thresholds chosen on validation"
    for split, (_, split_labels) in evaluate.items():
        result[split] = multilabel_metrics(split_labels, over_thresholds(probabilities[split], thresholds), names)
    return result


def _one_vs_rest(texts, labels, features="words"):
    """The baseline's TF-IDF and one logistic regression per label: a function of texts to label probabilities."""
    from sklearn.linear_model import LogisticRegression

    vectorizer = make_baseline(features).steps[0][1]
    matrix = vectorizer.fit_transform(list(texts))
    labels = np.asarray(labels)
    counts = labels.sum(axis=0)
    constant = np.where(counts > 0, 1.0, 0.0)  # a label all documents have, or none
    models = {}
    for label in np.flatnonzero((counts > 0) & (counts < len(labels))):
        models[label] = LogisticRegression(C=BASELINE["C"], max_iter=BASELINE["max_iter"]).fit(matrix, labels[:, label])

    def probabilities(new_texts):
        x = vectorizer.transform(new_texts)
        p = np.tile(constant, (len(new_texts), 1)).astype(np.float32)
        for label, model in models.items():
            p[:, label] = model.predict_proba(x)[:, 1]
        return p

    return probabilities
