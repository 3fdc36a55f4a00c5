"""The n-gram reference every training run is compared with: TF-IDF + logistic regression (scikit-learn).

A neural classifier is only worth its cost if it beats a linear model over
word n-grams, which trains in seconds. `train` fits this baseline on the same
training split as the model and reports both side by side (metrics.json's
`baseline`, and the printed summary).
"""

import time

from hierattn.defaults import BASELINE
from hierattn.metrics import classification_metrics

NAME = "TF-IDF+LR"


def make_baseline():
    """An unfitted scikit-learn pipeline: TF-IDF of word 1-2 grams (sublinear tf, min_df 2) + logistic regression.

    Settings from `hierattn.defaults.BASELINE` (the devsuite's reference
    baseline: C=10, lbfgs).
    """
    # scikit-learn takes about a second to load; only fitting the baseline needs it here.
    from sklearn.feature_extraction.text import TfidfVectorizer
    from sklearn.linear_model import LogisticRegression
    from sklearn.pipeline import make_pipeline

    return make_pipeline(
        TfidfVectorizer(
            ngram_range=BASELINE["ngram_range"], min_df=BASELINE["min_df"], sublinear_tf=BASELINE["sublinear_tf"]
        ),
        LogisticRegression(C=BASELINE["C"], max_iter=BASELINE["max_iter"]),
    )


def run_baseline(texts, labels, names, evaluate):
    """Fits the baseline on `texts`/`labels` (class ids) and scores it on each evaluation split.

    Args:
        texts: Training texts (the model's training split).
        labels: Their class ids.
        names: Class names in id order.
        evaluate: `{split name: (texts, class ids)}`, e.g. validation and test.

    Returns:
        A JSON-ready dict: `model` (what it is), `train_documents`,
        `training_seconds`, and `classification_metrics` per split; or,
        when scikit-learn cannot fit it (no n-gram in two documents, one
        class), `skipped` with the reason instead of the scores.
    """
    result = {
        "model": f"{NAME}: TF-IDF of word 1-2 grams + logistic regression (C={BASELINE['C']:g})",
        "train_documents": len(texts),
    }
    started = time.perf_counter()
    try:
        model = make_baseline().fit(list(texts), list(labels))
    except ValueError as error:  # e.g. a corpus so small that no n-gram occurs twice
        result["skipped"] = " ".join(str(error).split())
        return result
    result["training_seconds"] = round(time.perf_counter() - started, 1)
    for split, (split_texts, split_labels) in evaluate.items():
        result[split] = classification_metrics(split_labels, model.predict(list(split_texts)), names)
    return result
