"""n-gram baselines for the benchmarks: scikit-learn models trained in the same run as hierattn's.

* `"tfidf"`: TF-IDF of 1-2 grams + logistic regression;
* `"nblr"`: logistic regression on naive-Bayes-weighted binary 1-3 gram
  features (the NBSVM idea of Wang & Manning, ACL 2012, with logistic loss).

(They were also the teachers of a distillation experiment, `hierattn.teacher`,
removed because it did not beat the defaults; BENCHMARKS.md keeps the record.)
"""

import numpy as np

BASELINES = ("tfidf", "nblr")


def tfidf_vectorizer():
    """TF-IDF of 1-2 grams."""
    from sklearn.feature_extraction.text import TfidfVectorizer

    return TfidfVectorizer(ngram_range=(1, 2), min_df=2, max_df=0.9, sublinear_tf=True)


class NBLogisticRegression:
    """Logistic regression on naive-Bayes-weighted binary n-gram features.

    Each binary n-gram feature is scaled by its log-count ratio
    `log((p / |p|_1) / (q / |q|_1))`, where p and q count the feature in the
    documents of the class and of the other classes (plus `alpha`), and a
    logistic regression is fitted on the scaled features (Wang & Manning,
    "Baselines and Bigrams", ACL 2012, with logistic instead of hinge loss).
    With more than two classes there is one such model per class (one vs
    rest) and their probabilities are normalised to sum to 1.

    Args:
        ngram_range: Word n-gram sizes.
        min_df: Minimum number of documents of an n-gram.
        c: Inverse regularisation strength of the logistic regressions.
        alpha: Smoothing count of the ratios.
    """

    def __init__(self, ngram_range=(1, 3), min_df=2, c=2.0, alpha=1.0):
        self.ngram_range = ngram_range
        self.min_df = min_df
        self.c = c
        self.alpha = alpha

    def fit(self, texts, labels):
        """Fits the vocabulary, the ratios and the regressions; returns self."""
        from sklearn.feature_extraction.text import CountVectorizer

        labels = np.asarray(labels)
        self.classes_ = np.unique(labels)
        if len(self.classes_) < 2:
            raise ValueError(f"NBLogisticRegression needs two or more classes. Received: {self.classes_.tolist()}.")
        self.vectorizer_ = CountVectorizer(ngram_range=self.ngram_range, min_df=self.min_df, binary=True)
        features = self.vectorizer_.fit_transform(texts).tocsr()
        positives = self.classes_[1:] if len(self.classes_) == 2 else self.classes_
        self.ratios_, self.models_ = [], []
        for positive in positives:
            self._fit_one(features, labels == positive)
        return self

    def _fit_one(self, features, is_positive):
        from sklearn.linear_model import LogisticRegression

        p = np.asarray(features[is_positive].sum(0)).ravel() + self.alpha
        q = np.asarray(features[~is_positive].sum(0)).ravel() + self.alpha
        ratio = np.log((p / p.sum()) / (q / q.sum()))
        model = LogisticRegression(C=self.c, max_iter=2000).fit(features.multiply(ratio).tocsr(), is_positive)
        self.ratios_.append(ratio)
        self.models_.append(model)

    def predict_proba(self, texts):
        """Class probabilities `(len(texts), len(classes_))`."""
        features = self.vectorizer_.transform(texts).tocsr()
        positive = np.stack(
            [m.predict_proba(features.multiply(r).tocsr())[:, 1] for r, m in zip(self.ratios_, self.models_)], 1
        )
        if len(self.classes_) == 2:
            return np.concatenate([1.0 - positive, positive], 1)
        return positive / np.maximum(positive.sum(1, keepdims=True), 1e-12)

    def predict(self, texts):
        """Predicted class labels."""
        return self.classes_[self.predict_proba(texts).argmax(1)]


def make_baseline(kind, c=None):
    """An unfitted baseline with scikit-learn's `fit(texts, labels)` / `predict_proba(texts)`.

    Args:
        kind: `"tfidf"` or `"nblr"` (see the module docstring).
        c: Inverse regularisation strength (default 4 for tfidf, 2 for nblr,
            the values chosen on IMDB validation data in BENCHMARKS.md).
    """
    if kind == "tfidf":
        from sklearn.linear_model import LogisticRegression
        from sklearn.pipeline import make_pipeline

        return make_pipeline(tfidf_vectorizer(), LogisticRegression(C=4.0 if c is None else c, max_iter=2000))
    if kind == "nblr":
        return NBLogisticRegression(c=2.0 if c is None else c)
    raise ValueError(f"unknown baseline {kind!r}: choose one of {', '.join(BASELINES)}")
