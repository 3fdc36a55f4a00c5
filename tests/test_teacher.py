"""Tests for hierattn.teacher: out-of-fold soft targets for distillation."""

import numpy as np
import pytest

from hierattn.teacher import soft_targets, teacher_probabilities


def test_teacher_probabilities_are_out_of_fold_distributions():
    rng = np.random.default_rng(0)
    good, bad = ["great", "superb", "lovely"], ["awful", "dull", "boring"]
    texts, labels = [], []
    for i in range(60):
        label = i % 2
        words = list(rng.choice(good if label else bad, 3)) + list(rng.choice(["film", "plot", "actor"], 4))
        texts.append(" ".join(words))
        labels.append(label)
    # One review whose words occur nowhere else: a teacher that had seen it
    # would be sure of its label; out of fold it can only be unsure.
    texts.append("zzzz qqqq wwww")
    labels.append(1)
    messages = []
    p = teacher_probabilities(texts, np.array(labels), 2, folds=3, progress=messages.append)
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
