"""Tests for hierattn.explain.picture: the one picture of an explanation, as a page and as a notebook fragment."""

import doctest
import html
import re
import shutil
import subprocess

import numpy as np
import pytest

import hierattn.explain.picture
from hierattn.explain.picture import (
    ROOT,
    margin_parts,
    parts_words,
    prediction_words,
    shows_attention,
    to_html,
    top_evidence,
)

from conftest import SAMPLE_TEXT, sample_explanation

TEXT = SAMPLE_TEXT


def sample(network_weight=0.4):
    """Six words in two sentences, each with evidence, and a decision whose terms add up to its margin."""
    return sample_explanation(network_weight=network_weight)


def test_the_summaries_every_view_shares():
    e = sample()
    assert prediction_words(e) == "pos, probability 0.90 (runner-up: neg, 0.10)"
    assert [w.text for w in top_evidence(e, 3)] == ["Great", "Bad", "film"]  # by |evidence|
    assert [w.text for w in top_evidence(e)] == ["Great", "Bad", "film", "cast", "end"]  # none without evidence
    parts = margin_parts(e)
    assert parts["network"] + parts["ngrams"] + parts["constant"] == pytest.approx(parts["margin"])
    assert parts["constant"] == pytest.approx(0.17) and parts["versus"] == "neg"
    assert parts_words(parts, 2) == "network's words +0.35 (41%), n-gram words +0.33 (38%), constant terms +0.17 (20%)"
    assert shows_attention(e) and not shows_attention(sample(network_weight=0.0))
    bare = sample()
    bare.decision = None
    assert margin_parts(bare) is None and shows_attention(bare)


def test_the_page_is_self_contained_and_escapes_the_text():
    page = to_html([sample(), sample()])
    assert page.startswith("<!DOCTYPE html>") and page.count('class="x-doc"') == 2
    assert not re.search(r"<script|<link|src=|url\(|https?://", page)
    for w in sample().words:
        assert f">{html.escape(w.text)}</span>" in page
    assert "&lt;film&gt;" not in page and "<film>" not in page and "&lt;<span" in page
    assert 'class="w oov"' in page and 'class="w cut"' in page
    assert "<h3>Document 1</h3>" in page and "<h3>Document" not in to_html([sample()])


def test_the_picture_leads_with_evidence_then_the_parts_then_attention_then_ngrams():
    e = sample()
    e.doc_id, e.true_label = "tweet-17", "neg"
    page = to_html([e])
    assert "<h3>Document tweet-17</h3>" in page and "(true label: neg, wrong)" in page
    assert "Predicted <b>pos</b>, probability 0.90 (runner-up: neg, 0.10)" in page
    assert 'title="evidence +0.9000"' in page and 'title="evidence -0.6000"' in page
    assert "rgba(39,174,96,1.000)" in page and "rgba(192,57,43,0.816)" in page  # green for, red against
    order = ["1 of 6 words were cut", "Evidence: against pos", "Margin of pos over neg", "Where the network read"]
    order.append("The n-grams that weighed most")
    assert [page.index(part) for part in order] == sorted(page.index(part) for part in order)
    assert "beyond the network: read by the n-gram part only" in page and "Bad -0.30" in page
    assert "review" not in page  # any kind of text


def test_attention_is_left_out_when_the_network_has_no_weight():
    page = to_html([sample(network_weight=0.0)])
    assert "Where the network read" not in page and "rgba(41,128,185" not in page
    assert "Where the network read" in to_html([sample()])


def test_the_notebook_fragment_styles_only_its_own_div():
    fragment = to_html([sample()], page=False)
    assert fragment.startswith(f'<div class="{ROOT}">') and fragment.endswith("</div>")
    assert not re.search(r"<!DOCTYPE|<html|<head|<body|<script", fragment, re.IGNORECASE)
    styles = re.findall(r"<style>(.*?)</style>", fragment, re.DOTALL)
    assert styles
    for css in styles:
        selectors = [s.strip() for rule in re.findall(r"([^{}]+)\{[^{}]*\}", css) for s in rule.split(",")]
        assert selectors and all(s == f".{ROOT}" or s.startswith(f".{ROOT} ") for s in selectors), selectors
        assert "@" not in css  # no @import, @font-face or @media reaching outside
    assert re.findall(r"<style>.*?</style>", to_html([sample()]), re.DOTALL)[0].count("body") == 1  # pages only


def test_the_examples_run():
    assert doctest.testmod(hierattn.explain.picture).failed == 0


CHROMIUM = next(
    (shutil.which(name) for name in ("chromium", "chromium-browser", "google-chrome") if shutil.which(name)), None
)


def _chromium(tmp_path, page, *flags):
    command = [
        CHROMIUM,
        "--headless",
        "--no-sandbox",
        "--disable-gpu",
        "--disable-background-networking",
        "--disable-extensions",
        "--no-first-run",
        "--hide-scrollbars",
        f"--user-data-dir={tmp_path / 'profile'}",
        *flags,
        page.as_uri(),
    ]
    return subprocess.run(command, capture_output=True, text=True, timeout=120, cwd=tmp_path)


def _runs(mask):
    """The runs of consecutive indices where `mask` is true."""
    where = np.flatnonzero(mask)
    return np.split(where, np.flatnonzero(np.diff(where) > 1) + 1) if where.size else []


@pytest.mark.skipif(CHROMIUM is None, reason="Chromium not installed (Debian: apt-get install chromium)")
def test_the_page_renders_in_headless_chromium(tmp_path):
    from PIL import Image

    long = sample()
    long.text = TEXT + " " + "x" * 300  # an unbreakable token must wrap, not run off the page
    long.sentences[1]["end"] = len(long.text)
    page = tmp_path / "explanation.html"
    page.write_text(to_html([sample(), long]), encoding="utf-8")
    dom = _chromium(tmp_path, page, "--dump-dom")
    assert dom.returncode == 0, dom.stderr[-2000:]
    # The browser parsed the page as intended: every word a shaded span, the user's "<film>" text, not an element.
    assert dom.stdout.count('class="x-doc"') == 2 and dom.stdout.count('class="x-sentence"') == 4
    assert '&lt;<span class="w"' in dom.stdout and "<film>" not in dom.stdout

    width, height = 900, 2000
    shot = _chromium(tmp_path, page, "--screenshot=shot.png", f"--window-size={width},{height}")
    assert shot.returncode == 0 and (tmp_path / "shot.png").exists(), shot.stderr[-2000:]
    image = np.asarray(Image.open(tmp_path / "shot.png").convert("RGB")).astype(int)
    assert image.shape[:2] == (height, width)

    def close(rgb):
        return np.abs(image - rgb).sum(-1) < 30

    assert close((39, 174, 96)).sum() > 100, "no word shaded green (for the prediction)"
    assert close((192, 57, 43)).sum() > 50, "no word shaded red (against the prediction)"
    assert close((41, 128, 185)).sum() > 50, "no word shaded blue (attention)"
    # The attention layer's sentence bars start at its left edge: two per document, at 100% and 25% (0.8 / 0.2).
    blue = close((41, 128, 185))
    left = int(np.flatnonzero(blue.any(0))[0])
    widths = [int(_runs(blue[bar[len(bar) // 2], left:])[0].size) for bar in _runs(blue[:, left])]
    assert len(widths) == 4 and widths[1] / widths[0] == pytest.approx(0.25, abs=0.05) and widths[2] == widths[0]
    # Nothing cut off: the content ends well above the window's bottom, and nothing reaches its right edge.
    ink = (image < 235).any(-1)
    assert not ink[-100:].any(), "the page runs past the screenshot's bottom"
    assert not ink[:, -8:].any(), "something runs off the page's right edge"
    assert ink[: height // 2].any(1).sum() > 200  # and there is a page to see
