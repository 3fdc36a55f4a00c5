"""`hierattn.runs.evaluation_page`: an evaluation as one self-contained page with its two pictures."""

import numpy as np

from hierattn.calibration import calibrated, calibration_report
from hierattn.runs.evaluation_page import evaluation_html, write_evaluation_html


def _metrics(rng):
    labels = rng.integers(0, 2, 500)
    p = np.clip(0.5 + 0.3 * (2 * labels - 1) + rng.normal(0, 0.25, 500), 0.01, 0.99)
    probabilities = np.stack([1 - p, p], axis=1)
    decide = lambda q: q.argmax(1)  # noqa: E731
    return {
        "accuracy": 0.9,
        "macro_f1": 0.89,
        "documents": 500,
        "labels": ["<neg>", "pos"],
        "confusion_matrix": [[240, 10], [40, 210]],
        "calibration": {
            "temperature": 0.8,
            "before": calibration_report(probabilities, labels, decide),
            "after": calibration_report(calibrated(probabilities, 0.8), labels, decide),
        },
        "abstention": {"min_confidence": 0.9, "answered": 300, "left": 200, "coverage": 0.6, "accuracy": 0.98},
    }


def test_the_page_draws_the_reliability_diagram_and_the_coverage_curve(rng, tmp_path):
    metrics = _metrics(rng)
    page = evaluation_html(metrics, "run <1>: evaluation")
    assert page.count("<svg") == 2 and "<script" not in page and "http" not in page.replace("http://www.w3.org", "")
    bins = metrics["calibration"]["after"]["reliability"]
    assert page.count("<circle") == len(bins) + len(metrics["calibration"]["before"]["reliability"]) + 20
    assert "&lt;neg&gt;" in page and "run &lt;1&gt;" in page  # names are escaped
    assert "with a minimum confidence of 0.9" in page.lower() and "200 left for a person" in page
    assert f"{metrics['calibration']['after']['ece']:.2%}" in page
    write_evaluation_html(tmp_path / "report.html", metrics, "a run")
    assert (tmp_path / "report.html").read_text().startswith("<!doctype html>")
