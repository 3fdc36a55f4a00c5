"""Tests for hierattn.metrics."""

import pytest

from hierattn.metrics import classification_metrics


def test_metrics_on_a_known_case():
    metrics = classification_metrics([0, 0, 1, 1, 2], [0, 1, 1, 1, 0], ["a", "b", "c"])
    assert metrics["accuracy"] == pytest.approx(0.6)
    assert metrics["confusion_matrix"] == [[1, 1, 0], [0, 2, 0], [1, 0, 0]]
    # F1: a = 0.5, b = 0.8, c = 0 -> macro 0.4333
    assert metrics["macro_f1"] == pytest.approx((0.5 + 0.8 + 0.0) / 3)
    assert metrics["report"]["b"]["recall"] == 1.0 and metrics["documents"] == 5


def test_multilabel_metrics_on_a_known_case():
    from hierattn.metrics import label_metrics, multilabel_metrics

    y_true = [[1, 0, 0], [1, 1, 0], [0, 0, 0], [0, 0, 1]]
    y_pred = [[1, 0, 0], [1, 0, 0], [0, 1, 0], [0, 0, 1]]
    metrics = multilabel_metrics(y_true, y_pred, ["earn", "grain", "wheat"])
    # true positives 3, predicted 4, true 4 -> micro-F1 6/8
    assert metrics["micro_f1"] == pytest.approx(0.75)
    # per label F1: earn 1, grain 0, wheat 1 -> macro 2/3
    assert metrics["macro_f1"] == pytest.approx(2 / 3)
    # per document F1: 1, 2/3, 0 (nothing true, one predicted), 1 -> samples 2/3
    assert metrics["samples_f1"] == pytest.approx((1 + 2 / 3 + 0 + 1) / 4)
    assert metrics["subset_accuracy"] == pytest.approx(0.5)
    assert metrics["hamming_loss"] == pytest.approx(2 / 12)
    assert metrics["report"]["grain"]["support"] == 1 and metrics["documents"] == 4
    assert label_metrics(y_true, y_pred, ["earn", "grain", "wheat"]) == metrics
    assert "accuracy" in label_metrics([0, 1], [0, 0], ["a", "b"])
