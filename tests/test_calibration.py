"""`hierattn.calibration`: measures of calibration, and temperatures fitted on validation texts."""

import numpy as np
import pytest
from sklearn.metrics import brier_score_loss
from sklearn.metrics import log_loss as sklearn_log_loss

from hierattn.calibration import (
    brier_score,
    calibrated,
    calibration_report,
    choose_temperature,
    confidence,
    coverage_scores,
    expected_calibration_error,
    fit_temperature,
    log_loss,
)


def _softmax(scores):
    e = np.exp(scores - scores.max(axis=1, keepdims=True))
    return e / e.sum(axis=1, keepdims=True)


def _drawn(rng, n, classes=3, sharpness=3.0):
    """True probabilities, labels drawn from them, and an over-confident model's (their scores times `sharpness`)."""
    scores = rng.normal(size=(n, classes))
    truth = _softmax(scores)
    labels = np.array([rng.choice(classes, p=p) for p in truth])
    return truth, labels, _softmax(sharpness * scores)


def _decide(probabilities):
    return np.asarray(probabilities).argmax(1)


def _ece(probabilities, labels):
    return expected_calibration_error(probabilities, labels, _decide(probabilities))


def test_a_temperature_changes_probabilities_not_decisions(rng):
    p = _softmax(rng.normal(size=(50, 4)) * 3)
    for t in (0.3, 1.0, 2.5):
        found = calibrated(p, t)
        np.testing.assert_array_equal(found.argmax(1), p.argmax(1))
        np.testing.assert_allclose(found.sum(1), 1.0, atol=1e-6)
        if t >= 1.0:  # T then 1/T: back where it was (where no probability went under the 1e-7 floor)
            np.testing.assert_allclose(calibrated(found, 1.0 / t), p, atol=1e-5)
    decided = p.argmax(1)
    assert (confidence(calibrated(p, 2.0), decided) <= confidence(p, decided) + 1e-7).all()  # warmer: less sure
    p_label = rng.random((20, 3))
    warm = calibrated(p_label, 2.0, multi_label=True)
    np.testing.assert_array_equal(warm > 0.5, p_label > 0.5)  # each label on the same side of 0.5
    np.testing.assert_allclose(warm, 1 / (1 + np.exp(-np.log(p_label / (1 - p_label)) / 2.0)), atol=1e-6)
    assert np.isnan(calibrated(np.full((1, 2), np.nan), 2.0)).all()


def test_the_measures_are_scikit_learns_and_the_textbooks(rng):
    truth, labels, _ = _drawn(rng, 300)
    assert log_loss(truth, labels) == pytest.approx(sklearn_log_loss(labels, truth, labels=[0, 1, 2]))
    assert brier_score(truth, labels) == pytest.approx(np.sum((truth - np.eye(3)[labels]) ** 2, 1).mean())
    rows = (rng.random((40, 3)) < 0.4).astype(int)
    p = rng.random((40, 3))
    assert brier_score(p, rows, multi_label=True) == pytest.approx(brier_score_loss(rows.ravel(), p.ravel()))
    assert log_loss(p, rows, multi_label=True) == pytest.approx(sklearn_log_loss(rows.ravel(), p.ravel()))
    # Two documents at confidence 0.9 (one right), two at 0.6 (both right): |0.5 - 0.9| and |1 - 0.6|, weighted.
    p = np.array([[0.9, 0.1], [0.9, 0.1], [0.4, 0.6], [0.6, 0.4]])
    assert _ece(p, np.array([0, 1, 1, 0])) == pytest.approx(0.4)
    # Drawn from their own probabilities: calibrated, within sampling noise.
    truth, labels, sharp = _drawn(rng, 4000)
    assert _ece(truth, labels) < 0.03 < _ece(sharp, labels)
    assert expected_calibration_error(p, np.eye(2, dtype=int)[[0, 1, 1, 0]], multi_label=True) > 0  # label by label


def test_a_temperature_fitted_on_validation_calibrates_an_over_confident_model(rng):
    _, val_labels, val_sharp = _drawn(rng, 1500, sharpness=3.0)
    _, test_labels, test_sharp = _drawn(rng, 1500, sharpness=3.0)
    t = fit_temperature(val_sharp, val_labels)
    assert 2.0 < t < 4.5  # about the sharpness that made it over-confident
    before, after = _ece(test_sharp, test_labels), _ece(calibrated(test_sharp, t), test_labels)
    assert after < before / 2 and after < 0.04
    assert log_loss(calibrated(test_sharp, t), test_labels) < log_loss(test_sharp, test_labels)
    _, labels, soft = _drawn(rng, 1500, sharpness=0.5)  # under-confident: a temperature under 1
    assert fit_temperature(soft, labels) < 0.8
    assert fit_temperature(soft[:0], labels[:0]) == 1.0
    rows = (rng.random((300, 2)) < 0.5).astype(int)
    assert fit_temperature(np.where(rows, 0.99, 0.01), rows, multi_label=True)[0] < 1.0  # always right: sharper
    assert fit_temperature(rng.random((30, 1)), np.ones((30, 1), int), multi_label=True) == [1.0]  # no negative


def test_coverage_keeps_the_surest_documents(rng):
    p = np.array([[0.99, 0.01], [0.6, 0.4], [0.2, 0.8], [0.55, 0.45]])
    labels = np.array([0, 1, 1, 0])  # the surest two right, the least sure right, the other wrong
    found = coverage_scores(p, labels, _decide, coverages=(1.0, 0.5, 0.25))
    assert found == {"1": 0.75, "0.5": 1.0, "0.25": 1.0}
    report = calibration_report(p, labels, _decide)
    assert set(report) == {"ece", "log_loss", "brier", "coverage", "reliability", "coverage_curve"}
    assert report["coverage"]["1"] == 0.75
    # the pictures' numbers: the reliability bins weigh up to the ECE, the curve ends at every document's accuracy
    bins = report["reliability"]
    assert sum(b["documents"] for b in bins) == 4
    gaps = sum(b["documents"] * abs(b["accuracy"] - b["confidence"]) for b in bins) / 4
    assert gaps == pytest.approx(report["ece"], abs=1e-4)
    assert report["coverage_curve"][-1] == [1.0, 0.75] and report["coverage_curve"][9] == [0.5, 1.0]
    rows = np.array([[1, 0], [0, 1]])
    assert confidence(np.array([[0.9, 0.3], [0.6, 0.95]]), np.array([[1, 0], [1, 1]]), True).tolist() == [0.7, 0.6]
    # A label on under 0.5 (its threshold lower) is as sure as its probability: the decision's confidence.
    assert confidence(np.array([[0.3, 0.1]]), np.array([[1, 0]]), True).tolist() == [0.3]
    p = np.array([[0.9, 0.3], [0.6, 0.95]])  # the first the surer (0.7 against 0.6); its label 0 on, 1 off: right
    assert coverage_scores(p, rows, lambda q: (q > 0.5).astype(int), True, (0.5, 1.0)) == {"0.5": 1.0, "1": 0.8}


def test_a_label_its_validation_texts_separate_keeps_a_temperature_of_at_least_one_half():
    """At the bound, its threshold and its probabilities stay apart in float32: no decision changes."""
    from hierattn.decision import thresholds_at

    p = np.array([[0.995, 0.3], [0.999, 0.6], [0.02, 0.4], [0.01, 0.7]])
    labels = np.array([[1, 0], [1, 1], [0, 0], [0, 1]])
    temperatures = fit_temperature(p, labels, multi_label=True)
    assert temperatures[0] == pytest.approx(0.5)  # separable: the smallest allowed
    moved = thresholds_at([0.99, 0.5], temperatures)
    assert np.float32(moved[0]) < 1.0
    raw = np.array([[0.9999, 0.5], [0.9991, 0.5]])  # over 0.99, both: still over it once calibrated
    assert (calibrated(raw, temperatures, multi_label=True)[:, 0] > np.float32(moved[0])).all()


def test_a_temperature_is_kept_where_it_helps_held_out_documents(rng):
    truth, labels, sharp = _drawn(rng, 3000)
    temperature, note = choose_temperature(sharp, labels)
    assert note["kept"] and note["reason"] is None and note["held_out_gain"] > 0
    assert temperature == pytest.approx(3.0, rel=0.1)  # the over-confidence undone, as the plain fit does
    assert temperature == pytest.approx(fit_temperature(sharp, labels), rel=0.01)
    # calibrated already: a fitted temperature is no better on held-out documents, and 1 is kept
    temperature, note = choose_temperature(truth, labels)
    assert temperature == 1.0 and not note["kept"] and note["fitted"] == pytest.approx(1.0, abs=0.05)


def test_a_temperature_is_shrunk_toward_one_by_how_few_documents_there_are():
    # 48 documents, 5 of 8 right, each said with 99.9%: strong evidence of over-confidence, yet only 48 documents.
    labels = np.array([0, 1] * 24)
    right = np.arange(48) % 8 < 5
    p = np.where(np.eye(2)[np.where(right, labels, 1 - labels)] > 0, 0.999, 0.001)
    plain, (temperature, note) = fit_temperature(p, labels), choose_temperature(p, labels)
    assert note["kept"] and note["fitted"] == temperature and 1.0 < temperature < 0.7 * plain
    # the same documents eight times over: the evidence outweighs the prior, and the temperature nears the plain fit
    many = choose_temperature(np.tile(p, (8, 1)), np.tile(labels, 8))[0]
    assert temperature < many and many == pytest.approx(plain, rel=0.1)
    # 7 of 8 right at 90%: nearly calibrated, and a fitted temperature does not help on held-out documents
    right = np.arange(48) % 8 < 7
    p = np.where(np.eye(2)[np.where(right, labels, 1 - labels)] > 0, 0.9, 0.1)
    temperature, note = choose_temperature(p, labels)
    assert temperature == 1.0 and not note["kept"] and note["held_out_gain"] < 0 and "held-out" in note["reason"]
    # and on fewer documents than the least the rule fits on, none at all
    assert choose_temperature(p[:20], labels[:20])[1]["reason"] == "too few to fit one on (fewer than 30)"


def test_labels_are_calibrated_alone_and_a_rare_one_keeps_one(rng):
    n = 2000
    scores = rng.normal(size=(n, 3))
    truth = 1.0 / (1.0 + np.exp(-scores))
    labels = (rng.random((n, 3)) < truth).astype(int)
    labels[:, 2] = 0
    labels[:3, 2] = 1  # three positives: too few to fit on
    sharp = 1.0 / (1.0 + np.exp(-3.0 * scores))
    temperatures, note = choose_temperature(sharp, labels, multi_label=True)
    assert temperatures[0] == pytest.approx(3.0, rel=0.15) and temperatures[1] == pytest.approx(3.0, rel=0.15)
    assert temperatures[2] == 1.0
    assert (note["labels_kept"], note["labels_too_few"], note["labels_no_gain"]) == (2, 1, 0)


def test_a_temperature_is_not_kept_on_one_class_nor_where_a_row_has_no_probabilities(rng):
    # every validation document of one class: each fold agrees on a sharp temperature that unseen classes would regret
    p = np.tile([[0.6, 0.4]], (100, 1))
    temperature, note = choose_temperature(p, np.zeros(100, int))
    assert temperature == 1.0 and note["reason"] == "fewer than two classes with 5 documents"
    truth, labels, sharp = _drawn(rng, 300)
    sharp[7] = np.nan  # a row without probabilities (a text without words): nothing is shown to help
    temperature, note = choose_temperature(sharp, labels)
    assert temperature == 1.0 and not note["kept"]


def test_a_label_its_documents_separate_keeps_one_not_the_bound_of_the_search(rng):
    labels = (rng.random((300, 1)) < 0.3).astype(int)
    p = np.where(labels > 0, 0.7, 0.3).astype(np.float64)  # right every time, shy: sharper without end
    temperatures, note = choose_temperature(p, labels, multi_label=True)
    assert temperatures == [1.0] and note["labels_no_gain"] == 1
