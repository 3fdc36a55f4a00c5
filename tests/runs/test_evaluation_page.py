"""`hierattn.runs.evaluation_page`: an evaluation as one self-contained page with its two pictures."""

import doctest
import html
import re
import subprocess
import sys
from xml.etree import ElementTree

import numpy as np
import pytest

import hierattn.runs.evaluation_page
from hierattn.calibration import calibrated, calibration_report
from hierattn.cli.render import evaluation_text, metrics_text
from hierattn.runs.evaluation_page import MIN_BIN_DOCUMENTS, evaluation_html, split_page_metrics, write_evaluation_html


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


def _bin(low, documents, confidence, accuracy):
    return {
        "low": low,
        "high": round(low + 1 / 15, 4),
        "documents": documents,
        "confidence": confidence,
        "accuracy": accuracy,
    }


def _calibration(multi=False):
    """A calibration report as `calibration_report` gives it: most documents in the surest bin, two bins of 1 and 3."""
    before = [
        _bin(0.5333, 1, 0.55, 0.0),
        _bin(0.6, 40, 0.63, 0.7),
        _bin(0.8, 3, 0.81, 0.0),
        _bin(0.9333, 956, 0.99, 1.0),
    ]
    after = [
        _bin(0.5333, 1, 0.56, 0.0),
        _bin(0.6, 42, 0.66, 0.69),
        _bin(0.7333, 3, 0.75, 1.0),
        _bin(0.9333, 954, 0.98, 0.99),
    ]
    coverage = {"1": 0.9712, "0.9": 0.98888, "0.8": 0.99125, "0.5": 0.998}
    curve = [[round((k + 1) / 20, 4), round(1.0 - 0.0015 * k, 5)] for k in range(20)]
    return {
        "temperature": [0.91, 1.2, 0.84] if multi else 1.3,
        "before": {
            "ece": 0.0312,
            "log_loss": 0.1234,
            "brier": 0.0567,
            "coverage": coverage,
            "reliability": before,
            "coverage_curve": curve,
        },
        "after": {
            "ece": 0.0123,
            "log_loss": 0.1111,
            "brier": 0.0555,
            "coverage": coverage,
            "reliability": after,
            "coverage_curve": curve,
        },
    }


def _single():
    """What `evaluate` measures of a run with a cascade: the scores, the network's share and whole, calibration."""
    return {
        "documents": 1000,
        "accuracy": 0.9712,
        "macro_f1": 0.96543,
        "labels": ["neg", "pos"],
        "confusion_matrix": [[480, 20], [9, 491]],
        "network_read": 0.2345,
        "whole": {"accuracy": 0.9801, "macro_f1": 0.97777},
        "calibration": _calibration(),
    }


def _multi():
    """A multi-label evaluation: full scores, each label's report (scikit-learn's), the cascade, calibration."""
    report = {
        "earn": {"precision": 0.98765, "recall": 0.97, "f1-score": 0.97878, "support": 1087},
        "<grain>": {"precision": 0.9, "recall": 0.8123, "f1-score": 0.85391, "support": 149},
        "acq": {"precision": 0.95, "recall": 0.9432, "f1-score": 0.94659, "support": 719.0},
        "micro avg": {"precision": 0.9, "recall": 0.9, "f1-score": 0.9, "support": 1955},
    }
    return {
        "documents": 3019,
        "micro_f1": 0.8765,
        "macro_f1": 0.54321,
        "samples_f1": 0.8888,
        "subset_accuracy": 0.8123,
        "hamming_loss": 0.00432,
        "labels": ["earn", "<grain>", "acq"],
        "report": report,
        "network_read": 0.4567,
        "whole": {"micro_f1": 0.8801, "macro_f1": 0.55556},
        "calibration": _calibration(multi=True),
    }


def _svgs(page):
    return [ElementTree.fromstring(svg) for svg in re.findall(r"<svg.*?</svg>", page, re.S)]


def _tag(element):
    return element.tag.rsplit("}", 1)[-1]


def _text(page):
    """The page's words as a reader sees them (tags dropped, entities read)."""
    return html.unescape(re.sub(r"<[^>]+>", "", page))


@pytest.mark.parametrize("make", [_single, _multi])
def test_every_dot_stays_inside_the_frame_and_off_the_tick_labels(make):
    for svg in _svgs(evaluation_html(make(), "a run")):
        frame = next(e for e in svg.iter() if _tag(e) == "rect")
        left, top = float(frame.get("x")), float(frame.get("y"))
        right, bottom = left + float(frame.get("width")), top + float(frame.get("height"))
        circles = [e for e in svg.iter() if _tag(e) == "circle"]
        assert circles
        for circle in circles:
            x, y, r = (float(circle.get(key)) for key in ("cx", "cy", "r"))
            assert left <= x - r and x + r <= right and top <= y - r and y + r <= bottom, circle.find("*").text
        ticks = [e for e in svg.iter() if _tag(e) == "text" and re.fullmatch(r"[\d.]+", e.text)]
        assert len(ticks) == 6
        for tick in ticks:  # below the frame (their 11px) or left of it (anchored at their end)
            below = float(tick.get("y")) - 11 > bottom
            assert below or (tick.get("text-anchor") == "end" and float(tick.get("x")) < left)


@pytest.mark.parametrize("make", [_single, _multi])
def test_bins_of_too_few_documents_are_hollow_and_left_out_of_the_line(make):
    metrics = make()
    page = evaluation_html(metrics, "a run")
    reliability = _svgs(page)[0]
    lines = [e for e in reliability.iter() if _tag(e) == "polyline"]
    circles = [e for e in reliability.iter() if _tag(e) == "circle"]
    for report, line in zip(("before", "after"), lines):
        bins = metrics["calibration"][report]["reliability"]
        points = [tuple(map(float, p.split(","))) for p in line.get("points").split()]
        assert len(points) == sum(b["documents"] >= MIN_BIN_DOCUMENTS for b in bins) == 2
        drawn, circles = circles[: len(bins)], circles[len(bins) :]
        for b, circle in zip(bins, drawn):
            centre = (float(circle.get("cx")), float(circle.get("cy")))
            small = b["documents"] < MIN_BIN_DOCUMENTS
            assert (centre in points) is not small  # the line joins the large bins only
            assert (circle.get("fill") == "none") is small  # the small ones hollow
            assert ("too few to judge" in circle.find("*").text) is small
    assert f"Hollow dots: bins of fewer than {MIN_BIN_DOCUMENTS}" in page


def test_without_small_bins_the_caption_says_nothing_of_them(rng):
    assert "Hollow dots" not in evaluation_html(_metrics(rng), "a run")


def test_the_page_shows_the_networks_share_its_whole_scores_and_the_surest_shares_as_the_text_does():
    metrics = _single()
    text, page = evaluation_text(metrics), _text(evaluation_html(metrics, "a run"))
    assert "accuracy 0.9712, macro-F1 0.9654 on 1,000 documents" in page
    assert (
        "The network read 23.4% of them; with the network on every document: accuracy 0.9801, macro-F1 0.9778" in page
    )
    assert "The accuracy of the surest 90% / 80% / 50% of documents: 98.89% / 99.12% / 99.80% (all: 97.12%)" in page
    assert "temperature 1.3" in page and "3.12% → 1.23%" in page
    for line in text.splitlines()[:4]:  # the scores, the network's share, calibration: each number the text shows
        for number in re.findall(r"\d[\d,]*\.\d+%?", line):
            assert number in page, (number, line)


def test_a_multi_label_page_shows_every_score_and_each_labels_row_most_frequent_first():
    metrics = _multi()
    text, raw = evaluation_text(metrics), evaluation_html(metrics, "reuters")
    page = _text(raw)
    assert (
        "micro-F1 0.8765, macro-F1 0.5432, samples-F1 0.8888, subset accuracy 0.8123, Hamming loss 0.0043 "
        "on 3,019 documents" in page
    )
    assert "with the network on every document: micro-F1 0.8801, macro-F1 0.5556" in page
    assert "The micro-F1 of the surest 90% / 80% / 50% of documents: 98.89% / 99.12% / 99.80%" in page
    assert "temperature per label, 0.84 to 1.2" in page and "Confusion matrix" not in page
    rows = [
        [html.unescape(re.sub(r"<[^>]+>", "", cell)) for cell in re.findall(r"<t[hd][^>]*>(.*?)</t[hd]>", row)]
        for row in re.findall(r"<tr>(.*?)</tr>", raw)
    ]
    assert rows == [
        ["label", "documents", "precision", "recall", "F1"],
        ["earn", "1,087", "0.9877", "0.9700", "0.9788"],
        ["acq", "719", "0.9500", "0.9432", "0.9466"],
        ["<grain>", "149", "0.9000", "0.8123", "0.8539"],
    ]
    assert "&lt;grain&gt;" in raw and "<grain>" not in raw
    lines = text.splitlines()
    per_label = lines[lines.index("per label:") + 2 :][: len(metrics["labels"])]
    assert [line.split() for line in per_label] == rows[1:]  # the text's table, alike formatted


def test_a_runs_test_split_page_has_its_networks_share_and_whole_scores():
    run = {
        "test": {k: v for k, v in _single().items() if k not in ("network_read", "whole", "calibration")},
        "calibration": {"validation": {}, "test": _calibration()},
        "parts": {
            "network_weight": 0.6,
            "ngram_weight": 0.4,
            "network_share": 0.6,
            "network_read": {"validation": 0.3, "test": 0.2345},
            "whole": {
                "validation": {"accuracy": 0.5, "macro_f1": 0.5},
                "test": dict(_single()["whole"], documents=1000),
            },
        },
    }
    page = _text(evaluation_html(split_page_metrics(run), "run: test split"))
    assert (
        "The network read 23.4% of them; with the network on every document: accuracy 0.9801, macro-F1 0.9778" in page
    )
    text = metrics_text(run)
    assert "the network read 30.0% of validation documents, 23.4% of test documents" in text  # the text's numbers
    assert "network on every document: accuracy 0.9801, macro-F1 0.9778" in text
    assert split_page_metrics({"test": {"accuracy": 1.0}}) == {"accuracy": 1.0}  # a run without an n-gram part


def test_the_page_imports_no_tensorflow_and_its_examples_run():
    code = "import sys, hierattn.runs.evaluation_page; print(sorted({'tensorflow', 'keras', 'sklearn'} & set(sys.modules)))"
    assert subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout == "[]\n"
    assert doctest.testmod(hierattn.runs.evaluation_page).failed == 0
