"""Tests for hierattn.teacher: out-of-fold soft targets for distillation."""

import numpy as np
import pytest

from hierattn.teacher import (
    NBLogisticRegression,
    make_teacher,
    soft_targets,
    teacher_probabilities,
    unlabeled_probabilities,
)


def sentiment_corpus(n=60, classes=(("great", "superb", "lovely"), ("awful", "dull", "boring")), seed=0):
    """Texts whose label is decided by one of its words; filler words shared by all."""
    rng = np.random.default_rng(seed)
    texts, labels = [], []
    for i in range(n):
        label = i % len(classes)
        words = list(rng.choice(classes[label], 3)) + list(rng.choice(["film", "plot", "actor"], 4))
        texts.append(" ".join(words))
        labels.append(label)
    return texts, np.array(labels)


@pytest.mark.parametrize("kind", ["tfidf", "nblr"])
def test_teacher_probabilities_are_out_of_fold_distributions(kind):
    texts, labels = sentiment_corpus(classes=(("awful", "dull", "boring"), ("great", "superb", "lovely")))
    texts, labels = list(texts), list(labels)
    # One review whose words occur nowhere else: a teacher that had seen it
    # would be sure of its label; out of fold it can only be unsure.
    texts.append("zzzz qqqq wwww")
    labels.append(1)
    messages = []
    p = teacher_probabilities(texts, np.array(labels), 2, kind=kind, folds=3, progress=messages.append)
    assert p.shape == (61, 2) and p.dtype == np.float32
    np.testing.assert_allclose(p.sum(1), 1.0, atol=1e-6)
    assert (p[:60].argmax(1) == np.array(labels[:60])).mean() == 1.0  # the sentiment words decide
    assert abs(p[60, 1] - 0.5) < 0.1
    assert len(messages) == 3 and "teacher fold 1/3" in messages[0]


def test_soft_targets_mix_labels_and_teacher():
    probabilities = np.array([[0.2, 0.8], [0.6, 0.4]], np.float32)
    np.testing.assert_allclose(soft_targets([0, 0], probabilities, 0.5), [[0.6, 0.4], [0.8, 0.2]])
    np.testing.assert_allclose(soft_targets([1, 0], probabilities, 0.0), [[0, 1], [1, 0]])
    with pytest.raises(ValueError, match="weight must be in"):
        soft_targets([0, 1], probabilities, 1.5)


def test_nblr_weights_features_by_their_log_count_ratio():
    texts = ["good fun", "good plot", "bad plot", "bad acting"]
    labels = np.array([1, 1, 0, 0])
    model = NBLogisticRegression(ngram_range=(1, 1), min_df=1).fit(texts, labels)
    vocabulary = model.vectorizer_.vocabulary_
    ratio = model.ratios_[0]
    # Documents containing good / fun / plot / bad / acting, per class, + alpha 1.
    p = np.array([2, 1, 1, 0, 0]) + 1.0
    q = np.array([0, 0, 1, 2, 1]) + 1.0
    expected = np.log((p / p.sum()) / (q / q.sum()))
    for word, value in zip(["good", "fun", "plot", "bad", "acting"], expected):
        np.testing.assert_allclose(ratio[vocabulary[word]], value, rtol=1e-6)


def test_nblr_classifies_two_and_three_classes():
    two = sentiment_corpus()
    model = NBLogisticRegression(ngram_range=(1, 2)).fit(*two)
    assert (model.predict(two[0]) == two[1]).all()
    three = sentiment_corpus(90, (("great", "superb"), ("awful", "dull"), ("okay", "average")))
    model = NBLogisticRegression().fit(*three)
    p = model.predict_proba(three[0])
    assert p.shape == (90, 3) and len(model.models_) == 3  # one vs rest
    np.testing.assert_allclose(p.sum(1), 1.0, atol=1e-6)
    assert (model.classes_[p.argmax(1)] == three[1]).all()
    with pytest.raises(ValueError, match="two or more classes"):
        NBLogisticRegression().fit(["a b", "b c"], [1, 1])


def test_make_teacher_knows_its_kinds():
    assert make_teacher("nblr", c=0.5).c == 0.5
    assert make_teacher("tfidf")[-1].C == 4.0
    with pytest.raises(ValueError, match="unknown teacher 'bert'"):
        make_teacher("bert")


def test_unlabeled_probabilities_come_from_a_teacher_of_the_labelled_texts():
    texts, labels = sentiment_corpus(classes=(("awful", "dull", "boring"), ("great", "superb", "lovely")))
    # Label ids 0 and 2 of three classes: the columns follow the ids.
    labels = labels * 2
    unlabeled = ["a great superb film", "dull boring plot", "never seen words"]
    p = unlabeled_probabilities(texts, labels, unlabeled, 3, kind="nblr")
    assert p.shape == (3, 3) and p.dtype == np.float32
    np.testing.assert_allclose(p[:, 1], 0.0)
    assert p[0, 2] > 0.8 and p[1, 0] > 0.8 and abs(p[2, 2] - 0.5) < 0.2
