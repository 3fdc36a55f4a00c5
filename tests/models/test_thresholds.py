"""Per-label thresholds of multi-label classifiers, chosen on validation probabilities."""

import numpy as np

from hierattn.decision import over_thresholds
from hierattn.models.thresholds import choose_thresholds


def test_each_label_takes_the_threshold_of_its_best_validation_f1():
    p = np.array([[0.9, 0.2], [0.6, 0.45], [0.3, 0.1], [0.2, 0.35], [0.7, 0.05]])
    y = np.array([[1, 0], [1, 1], [0, 0], [0, 1], [1, 0]])
    thresholds, report = choose_thresholds(p, y, grid=(0.1, 0.3, 0.5, 0.7), min_positives=2)
    # label 0: 0.3 and 0.5 both separate perfectly, the tie goes to 0.5; label 1: only 0.3 gets both positives
    assert thresholds == [0.5, 0.3]
    assert report["tuned"] == 2 and report["min_positives"] == 2
    assert over_thresholds(p, thresholds).tolist() == y.tolist()


def test_a_label_too_rare_to_tune_takes_the_shared_threshold():
    p = np.array([[0.9, 0.2, 0.15], [0.6, 0.45, 0.1], [0.3, 0.1, 0.02], [0.2, 0.35, 0.01]])
    y = np.array([[1, 0, 1], [1, 1, 0], [0, 0, 0], [0, 1, 0]])
    thresholds, report = choose_thresholds(p, y, grid=(0.1, 0.3, 0.5), min_positives=2)
    assert report["tuned"] == 2
    assert thresholds[2] == report["shared"]  # one positive: not tuned alone
    # the shared value is the grid value with the best micro-F1 over every label
    micro = []
    for t in (0.1, 0.3, 0.5):
        over = p > t
        micro.append(2 * (over & (y > 0)).sum() / (over.sum() + y.sum()))
    assert report["shared"] == (0.1, 0.3, 0.5)[int(np.argmax(micro))]


def test_a_label_without_validation_positives_is_not_tuned_alone():
    p = np.array([[0.9, 0.2], [0.1, 0.6]])
    y = np.array([[1, 0], [0, 0]])
    thresholds, report = choose_thresholds(p, y, min_positives=1)
    assert report["tuned"] == 1 and thresholds[1] == report["shared"]


def test_over_thresholds_is_strictly_above():
    assert over_thresholds(np.array([[0.5, 0.51]]), [0.5, 0.5]).tolist() == [[0, 1]]
    assert over_thresholds(np.array([[0.5, 0.51]]), [0.5, 0.5]).dtype == np.int8
