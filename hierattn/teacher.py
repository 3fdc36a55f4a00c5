"""Soft training targets from an n-gram teacher (knowledge distillation).

A Transformer trained on IMDB's 22,500 training reviews memorises them within
two epochs. Training it on a mix of the true labels and the class
probabilities of a TF-IDF (1-2 grams) + logistic regression teacher
(Hinton et al. 2015, "Distilling the Knowledge in a Neural Network") gives it
targets that say how sure a review's wording makes the label, rather than
one-hot targets it can only fit by memorising.

The teacher's probabilities for the training texts are out-of-fold: each text
is scored by a teacher fitted on the other folds, so the student never learns
the teacher's own memorisation of a text. Only training texts are used.
"""

import numpy as np


def tfidf_vectorizer():
    """The teacher's features: TF-IDF of 1-2 grams (also the benchmarks' baseline)."""
    from sklearn.feature_extraction.text import TfidfVectorizer

    return TfidfVectorizer(ngram_range=(1, 2), min_df=2, max_df=0.9, sublinear_tf=True)


def teacher_probabilities(texts, labels, num_classes, folds=5, seed=0, c=4.0, progress=None):
    """Out-of-fold class probabilities of a TF-IDF + logistic regression teacher.

    Args:
        texts: Training texts.
        labels: Their integer labels `(n,)`.
        num_classes: Number of classes.
        folds: Number of folds (each text is scored by a teacher that did not
            see it).
        seed: Seed of the fold assignment.
        c: Inverse regularisation strength of the logistic regression.
        progress: Optional callable receiving a one-line message per fold.

    Returns:
        A float32 array `(n, num_classes)` of probabilities.
    """
    from sklearn.linear_model import LogisticRegression
    from sklearn.model_selection import StratifiedKFold

    labels = np.asarray(labels)
    out = np.zeros((len(texts), num_classes), np.float32)
    splitter = StratifiedKFold(n_splits=folds, shuffle=True, random_state=seed)
    for k, (fit, held_out) in enumerate(splitter.split(np.zeros(len(labels)), labels), 1):
        vectorizer = tfidf_vectorizer()
        features = vectorizer.fit_transform([texts[i] for i in fit])
        model = LogisticRegression(C=c, max_iter=2000).fit(features, labels[fit])
        scores = model.predict_proba(vectorizer.transform([texts[i] for i in held_out]))
        out[np.ix_(held_out, model.classes_)] = scores
        if progress:
            accuracy = np.mean(model.classes_[scores.argmax(1)] == labels[held_out])
            progress(f"teacher fold {k}/{folds}: {accuracy:.1%} accuracy on its held-out fold")
    return out


def soft_targets(labels, probabilities, weight):
    """`(1 - weight) * one_hot(labels) + weight * probabilities`, float32."""
    if not 0.0 <= weight <= 1.0:
        raise ValueError(f"weight must be in [0, 1]. Received: weight={weight!r}.")
    one_hot = np.eye(probabilities.shape[1], dtype=np.float32)[np.asarray(labels)]
    return ((1.0 - weight) * one_hot + weight * probabilities).astype(np.float32)
