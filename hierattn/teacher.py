"""Soft training targets from an n-gram teacher (knowledge distillation).

A Transformer trained on IMDB's 22,500 training reviews memorises them within
two epochs. Two ways of giving it better targets (Hinton et al. 2015,
"Distilling the Knowledge in a Neural Network"):

* Mix the true labels with the class probabilities of an n-gram teacher. The
  teacher's probabilities for the training texts are out-of-fold: each text
  is scored by a teacher fitted on the other folds, so the student never
  learns the teacher's own memorisation of a text.
* Train on unlabelled texts too (IMDB's 50,000 `unsup` reviews), with the
  probabilities a teacher fitted on the whole training part gives them as
  targets. The student then sees three times as many reviews; the teacher
  never saw these texts, so its probabilities are honest.

Teachers (`make_teacher`): `"tfidf"`, TF-IDF of 1-2 grams + logistic
regression; `"nblr"`, logistic regression on naive-Bayes-weighted binary 1-3
gram features (the NBSVM idea of Wang & Manning, ACL 2012, with logistic
loss). Both are also the baselines of `benchmarks/bench_imdb_models.py`.
Only training (and unlabelled) texts are ever used.
"""

import numpy as np

TEACHERS = ("tfidf", "nblr")


def tfidf_vectorizer():
    """The teacher's features: TF-IDF of 1-2 grams (also the benchmarks' baseline)."""
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


def make_teacher(kind, c=None):
    """An unfitted teacher with scikit-learn's `fit(texts, labels)` / `predict_proba(texts)`.

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
    raise ValueError(f"unknown teacher {kind!r}: choose one of {', '.join(TEACHERS)}")


def _probabilities(teacher, texts, num_classes):
    """A fitted teacher's probabilities as `(n, num_classes)` float32 (columns by label id)."""
    out = np.zeros((len(texts), num_classes), np.float32)
    out[:, teacher.classes_] = teacher.predict_proba(texts)
    return out


def teacher_probabilities(texts, labels, num_classes, kind="tfidf", folds=5, seed=0, progress=None):
    """Out-of-fold class probabilities of an n-gram teacher for its training texts.

    Args:
        texts: Training texts.
        labels: Their integer labels `(n,)`.
        num_classes: Number of classes.
        kind: The teacher (`make_teacher`).
        folds: Number of folds (each text is scored by a teacher that did not
            see it).
        seed: Seed of the fold assignment.
        progress: Optional callable receiving a one-line message per fold.

    Returns:
        A float32 array `(n, num_classes)` of probabilities.
    """
    from sklearn.model_selection import StratifiedKFold

    labels = np.asarray(labels)
    out = np.zeros((len(texts), num_classes), np.float32)
    splitter = StratifiedKFold(n_splits=folds, shuffle=True, random_state=seed)
    for k, (fit, held_out) in enumerate(splitter.split(np.zeros(len(labels)), labels), 1):
        teacher = make_teacher(kind).fit([texts[i] for i in fit], labels[fit])
        out[held_out] = _probabilities(teacher, [texts[i] for i in held_out], num_classes)
        if progress:
            accuracy = np.mean(out[held_out].argmax(1) == labels[held_out])
            progress(f"teacher fold {k}/{folds}: {accuracy:.1%} accuracy on its held-out fold")
    return out


def unlabeled_probabilities(texts, labels, unlabeled, num_classes, kind="tfidf"):
    """Class probabilities for unlabelled texts from a teacher fitted on all of `texts`.

    Args:
        texts: Training texts.
        labels: Their integer labels `(n,)`.
        unlabeled: Texts to label (never seen by the teacher).
        num_classes: Number of classes.
        kind: The teacher (`make_teacher`).

    Returns:
        A float32 array `(len(unlabeled), num_classes)` of probabilities.
    """
    teacher = make_teacher(kind).fit(list(texts), np.asarray(labels))
    return _probabilities(teacher, list(unlabeled), num_classes)


def soft_targets(labels, probabilities, weight):
    """`(1 - weight) * one_hot(labels) + weight * probabilities`, float32."""
    if not 0.0 <= weight <= 1.0:
        raise ValueError(f"weight must be in [0, 1]. Received: weight={weight!r}.")
    one_hot = np.eye(probabilities.shape[1], dtype=np.float32)[np.asarray(labels)]
    return ((1.0 - weight) * one_hot + weight * probabilities).astype(np.float32)
