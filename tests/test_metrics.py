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
