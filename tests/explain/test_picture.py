"""Tests for hierattn.explain.picture: the one picture of an explanation, as a page and as a notebook fragment."""

import doctest
import html
import re
import shutil
import subprocess

import numpy as np
import pytest

import hierattn.explain.picture
from hierattn.explain import Explanation, NgramContribution
from hierattn.explain.picture import ATTENTION, CLASS_COLOURS, ROOT, class_colour, evidence_colours, to_html
from hierattn.explain.summaries import margin_parts, margin_sentence

from conftest import SAMPLE_TEXT, sample_explanation

TEXT = SAMPLE_TEXT


def sample(network_weight=0.4):
    """Six words in two sentences, each with evidence, and a decision whose terms add up to its margin."""
    return sample_explanation(network_weight=network_weight)


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
    assert 'title="evidence +0.9000 (towards pos)"' in page and 'title="evidence -0.6000 (towards neg)"' in page
    assert "rgba(0,158,115,1.000)" in page and "rgba(213,94,0,0.816)" in page  # pos's colour, neg's colour
    order = ["1 of 6 words were cut", "pushes towards <b>pos</b>", "Margin of pos over neg", "Where the network read"]
    order.append("The n-grams")
    assert [page.index(part) for part in order] == sorted(page.index(part) for part in order)
    assert "beyond the network: read by the n-gram part only" in page and "Bad -0.30" in page
    assert "review" not in page  # any kind of text


def flipped():
    """`sample()` predicting neg: the same words, their evidence now measured from neg over pos."""
    e = sample()
    e.label, e.probabilities = "neg", {"neg": 0.9, "pos": 0.1}
    for w in e.words:
        w.evidence, w.network_evidence, w.ngram_evidence = -w.evidence, -w.network_evidence, -w.ngram_evidence
    for g in e.ngrams:
        g.contribution = -g.contribution
    # the words now pull towards pos by 0.675 in all: the constant terms carry neg's margin of 0.845
    e.decision.update(versus="pos", margin=0.845, network_baseline=1.52, integration_error=0.0, ngram_bias=0.0)
    parts = margin_parts(e)
    assert parts["network"] + parts["ngrams"] + parts["constant"] == pytest.approx(parts["margin"])
    return e


def test_each_class_keeps_its_colour_and_the_legend_names_it():
    pos, neg = CLASS_COLOURS[1], CLASS_COLOURS[0]  # by position among the labels: neg, pos
    assert evidence_colours(sample()) == (pos, neg) and evidence_colours(flipped()) == (neg, pos)
    for e in (sample(), flipped()):
        page = to_html([e])
        great = re.search(r'rgba\(([\d,]+),[\d.]+\)[^"]*" title="evidence [^"]*">Great<', page).group(1)
        assert great == pos  # "Great" pushes towards pos, whichever class is predicted
        bad = re.search(r'rgba\(([\d,]+),[\d.]+\)[^"]*" title="evidence [^"]*">Bad<', page).group(1)
        assert bad == neg
        runner_up = "neg" if e.label == "pos" else "pos"
        legend = (
            f'<span class="x-key x-first" style="background: rgb({class_colour(e, e.label)})"></span>pushes '
            f'towards <b>{e.label}</b> (the prediction)<span class="x-key" style="background: '
            f'rgb({class_colour(e, runner_up)})"></span>pushes towards <b>{runner_up}</b> (the runner-up)'
        )
        assert legend in page
        chips = dict(re.findall(r'class="x-gram" style="background: rgba\(([\d,]+),[^"]*"[^>]*>(\w+)', page))
        assert chips == {pos: "Great", neg: "Bad"}  # the n-grams in the same colours
    # Attention has a colour of its own, in no class's palette, and its own legend.
    assert ATTENTION not in CLASS_COLOURS and "Attention: where the network read" in to_html([sample()])
    assert len(set(CLASS_COLOURS)) == len(CLASS_COLOURS)


def test_classes_beyond_the_palette_never_share_a_colour_with_the_runner_up():
    names = [f"c{i}" for i in range(len(CLASS_COLOURS) + 2)]
    probabilities = dict.fromkeys(names, 0.0) | {"c0": 0.6, f"c{len(CLASS_COLOURS)}": 0.4}
    e = Explanation("Fine.", "c0", probabilities, [], [], 0, [])
    assert class_colour(e, "c0") == class_colour(e, f"c{len(CLASS_COLOURS)}") == CLASS_COLOURS[0]  # the palette repeats
    assert evidence_colours(e) == (CLASS_COLOURS[0], CLASS_COLOURS[1])  # but not on one page
    e.label = "c2"
    assert evidence_colours(e) == (CLASS_COLOURS[2], CLASS_COLOURS[0])


def with_parts(margin, network, ngrams):
    """`sample()` with its margin split as given (the constant terms take the rest)."""
    e = sample()
    for w in e.words:
        w.network_evidence, w.ngram_evidence = 0.0, 0.0
    e.words[0].network_evidence, e.words[0].ngram_evidence = network, ngrams
    e.decision.update(margin=margin, network_baseline=margin - network - ngrams, integration_error=0.0)
    e.decision.update(ngram_bias=0.0, not_shown=0.0)
    return e


def test_percentages_of_the_margin_only_where_they_mean_something():
    # the case: "-1280%" and "+1320%" (when percentages mean something: tests/explain/test_summaries.py)
    small = with_parts(0.05, -0.64, 0.66)
    page, text = to_html([small]), hierattn.explain.report.to_text(small)
    legend = re.search(r"Margin of pos over neg.*?</p>", page).group(0)
    assert "%" not in legend and "network's words -0.64" in legend and "n-gram words +0.66" in legend
    assert "no percentages: the parts pull against each other" in legend
    margin_line = next(line for line in text.splitlines() if line.startswith("margin of"))
    assert margin_line == (
        "margin of pos over neg: +0.0500 = network's words -0.6400, n-gram words +0.6600, constant terms +0.0300 "
        "(no percentages: the parts pull against each other)"
    )
    legend = re.search(r"Margin of pos over neg.*?</p>", to_html([with_parts(1.0, -1.51, 2.04)])).group(0)
    assert "%" not in legend  # "-151% / 204%"
    fine = with_parts(1.0, 0.8, 0.3)  # -10% constant: within the limit
    legend = re.search(r"Margin of pos over neg.*?</p>", to_html([fine])).group(0)
    assert "network's words +0.80 (80%)" in legend and "constant terms -0.10 (-10%)" in legend
    assert "no percentages" not in legend


def test_the_margin_bar_sets_what_pulls_against_the_decision_apart_from_what_pushes_for_it():
    page = to_html([with_parts(1.0, -0.5, 1.2)])  # the network pulls against pos; n-grams and constant push for it
    bar = re.search(r'<div class="x-bar">(.*?)</div>', page).group(1)
    spans = re.findall(r'<span class="x-(for|line|against)" style="([^"]*)"(?: title="([^"]*)")?', bar)
    assert [kind for kind, _, _ in spans] == ["for", "for", "line", "against"]
    assert "repeating-linear-gradient" in spans[3][1] and spans[3][2].endswith(": pulls against the decision")
    assert all("repeating" not in style for kind, style, _ in spans if kind == "for")
    assert "Striped, after the line: what pulls against the decision" in page
    agreeing = re.search(r'<div class="x-bar">(.*?)</div>', to_html([with_parts(1.0, 0.8, 0.3)])).group(1)
    assert "x-against" in agreeing and "x-line" in agreeing  # the constant term, -0.10, pulls against too
    pushing = re.search(r'<div class="x-bar">(.*?)</div>', to_html([with_parts(1.0, 0.6, 0.3)])).group(1)
    assert "x-against" not in pushing and "x-line" not in pushing


def test_lists_leave_out_entries_that_would_show_as_zero():
    e = sample()
    e.ngrams += [NgramContribution("film", 0, 7, 11, 0.004), NgramContribution("cast", 0, 16, 20, -0.00004)]
    e.ngrams.append(NgramContribution("end", 1, 33, 36, 0.0))
    assert [g.text for g in e.top_ngrams()] == ["Great", "Bad", "film", "cast"]  # exact zeros: never
    page = to_html([e])
    assert re.findall(r'class="x-gram"[^>]*>([^<]*)<', page) == ["Great +0.45", "Bad -0.30"]
    assert "0.00<" not in page
    e.words[2].evidence = 0.00004  # "cast": +0.0000 at the text's precision
    text = hierattn.explain.report.to_text(e)
    assert "  cast  " not in text.split("margin of")[0] and "+0.0000  " not in text and "-0.0000  " not in text
    assert "   +0.0040  film  [7:11]" in text and "cast  [16:20]" not in text


def test_one_plain_sentence_says_what_the_margin_and_the_constant_terms_are():
    e = sample()
    sentence = margin_sentence(e)  # its words: tests/explain/test_summaries.py
    for view in (to_html([e]), to_html([e], page=False)):
        assert html.escape(sentence) in view and view.count("log-odds") == 1
    text = hierattn.explain.report.to_text(e)
    assert " ".join(line.strip() for line in text.splitlines()[9:14]) == sentence
    assert html.escape(margin_sentence(flipped())) in to_html([flipped()])
    bare = sample()
    bare.decision = None
    assert "log-odds" not in to_html([bare])


def test_attention_is_left_out_when_the_network_has_no_weight():
    page = to_html([sample(network_weight=0.0)])
    assert "Where the network read" not in page and f"rgba({ATTENTION}" not in page
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

    pos, neg, attention = (tuple(map(int, rgb.split(","))) for rgb in (CLASS_COLOURS[1], CLASS_COLOURS[0], ATTENTION))
    assert close(pos).sum() > 100, "no word shaded in pos's colour (the prediction)"
    assert close(neg).sum() > 50, "no word shaded in neg's colour (the runner-up)"
    assert close(attention).sum() > 50, "no word shaded in attention's blue"
    # The attention layer's sentence bars start at its left edge: two per document, at 100% and 25% (0.8 / 0.2).
    blue = close(attention)
    left = int(np.flatnonzero(blue.any(0))[0])
    widths = [int(_runs(blue[bar[len(bar) // 2], left:])[0].size) for bar in _runs(blue[:, left])]
    assert len(widths) == 4 and widths[1] / widths[0] == pytest.approx(0.25, abs=0.05) and widths[2] == widths[0]
    # Nothing cut off: the content ends well above the window's bottom, and nothing reaches its right edge.
    ink = (image < 235).any(-1)
    assert not ink[-100:].any(), "the page runs past the screenshot's bottom"
    assert not ink[:, -8:].any(), "something runs off the page's right edge"
    assert ink[: height // 2].any(1).sum() > 200  # and there is a page to see
