"""Tests for hierattn.explain.report: text, CSV rows, JSON and HTML renderings."""

import html
import json
import re
import shutil
import subprocess

import numpy as np
import pytest

from hierattn.explain import Explanation, NgramContribution, WordWeight
from hierattn.explain.report import (
    CSV_COLUMNS,
    corpus_text,
    evaluation_text,
    metrics_text,
    prediction_text,
    render,
    rows_text,
    to_csv,
    to_html,
    to_json,
    to_rows,
    to_text,
)

TEXT = 'Great <film> & "cast". Bad zzyzx end!'


def sample():
    def word(text, sentence, index, weight, oov=False, used=True):
        start = TEXT.index(text)
        return WordWeight(text, text.lower(), sentence, index, start, start + len(text), weight, weight, 1.0, oov, used)

    words = [
        word("Great", 0, 0, 0.5),
        word("film", 0, 1, 0.2),
        word("cast", 0, 2, 0.1),
        word("Bad", 1, 0, 0.15),
        word("zzyzx", 1, 1, 0.05, oov=True),
        word("end", 1, 2, 0.0, used=False),
    ]
    cut = TEXT.index(".") + 1
    sentences = [
        {"index": 0, "start": 0, "end": cut, "text": TEXT[:cut], "weight": 0.8, "used": True},
        {"index": 1, "start": cut + 1, "end": len(TEXT), "text": TEXT[cut + 1 :], "weight": 0.2, "used": True},
    ]
    return Explanation(TEXT, "pos", {"neg": 0.1, "pos": 0.9}, words, sentences, 1, ["1 of 6 words were cut"])


def test_text_output_lists_top_words_and_sentences():
    out = to_text(sample(), top_k=2)
    assert out.splitlines()[0] == "predicted: pos"
    assert "0.5000  Great  s0:w0  [0:5]" in out and "film" in out and "cast" not in out.split("sentences")[0]
    assert "note: 1 of 6 words were cut" in out


def with_ngram_account():
    e = sample()
    e.network_probabilities = {"neg": 0.3, "pos": 0.7}
    e.ngrams = [
        NgramContribution("Great", 0, 0, 5, 0.8),
        NgramContribution("Bad", 1, 23, 26, -0.5),
        NgramContribution("Great <film", 0, 0, 11, 0.1),
    ]
    e.decision = {
        "versus": "neg",
        "margin": 1.2,
        "network": 0.75,
        "ngram_bias": 0.05,
        "ngrams": 0.4,
        "network_weight": 0.4,
        "ngram_weight": 1.6,
    }
    return e


def test_the_ngram_account_in_text_json_and_html():
    e = with_ngram_account()
    out = to_text(e, top_k=2)
    assert (
        "decision: score margin of pos over neg = +1.2000 = network +0.7500 + n-gram bias +0.0500 + "
        "n-grams +0.4000 (weights 0.40 / 1.60)"
    ) in out
    assert "   +0.8000  Great  [0:5]\n   -0.5000  Bad  [23:26]\nnote:" in out  # the top 2 only
    data = json.loads(to_json([e], top_k=2))[0]
    assert data["decision"] == e.decision and data["network_probabilities"] == {"neg": 0.3, "pos": 0.7}
    assert [g["text"] for g in data["top_ngrams"]] == ["Great", "Bad"]
    page = to_html([e])
    assert "decision: score margin of pos over neg" in page and "Great &lt;film" in page
    assert "decision" not in to_text(sample())


def test_rows_and_json_hold_every_word():
    rows = list(to_rows([sample(), sample()]))
    assert len(rows) == 12 and list(rows[0]) == CSV_COLUMNS and rows[6]["document"] == 1
    data = json.loads(to_json([sample()], top_k=1))
    assert len(data[0]["words"]) == 6 and [w["text"] for w in data[0]["top_words"]] == ["Great"]
    assert set(data[0]) == {
        "id",
        "true_label",
        "label",
        "probabilities",
        "top_words",
        "sentences",
        "words",
        "cut_words",
        "unshown_characters",
        "warnings",
    }


def test_html_is_self_contained_and_shows_every_word():
    page = to_html([sample(), sample()])
    assert page.startswith("<!DOCTYPE html>") and page.count('class="doc"') == 2
    assert not re.search(r"<script|<link|src=|url\(|https?://", page)
    for w in sample().words:
        assert f">{html.escape(w.text)}</span>" in page
    assert "&lt;film&gt;" in page or "&lt;" in page  # the user's text is escaped, not interpreted
    assert "<film>" not in page
    assert 'class="w oov"' in page and 'class="w cut"' in page


def test_html_names_the_document_its_true_label_the_colour_scale_and_the_cut_first():
    explanation = sample()
    explanation.doc_id, explanation.true_label = "review-17", "neg"
    page = to_html([explanation])
    assert "<h2>Document review-17</h2>" in page and "(true label: neg, wrong)" in page
    assert 'class="scale"' in page and "most important" in page  # the legend of the colour scale
    doc = page[page.index('class="doc"') :]
    assert doc.index("1 of 6 words were cut") < doc.index('class="sentence"')  # the notice comes before the text
    assert "<h2>Document 1</h2>" in to_html([sample()]) and "true label" not in to_html([sample()])


def test_html_signed_view_shows_evidence_for_and_against():
    explanation = sample()
    for w, value in zip(explanation.words, [0.4, -0.2, 0.1, -0.05, 0.0, 0.0]):
        w.evidence = value
    page = to_html([explanation])
    assert "Evidence for (green) and against (red) the prediction" in page and "against the prediction" in page
    assert "rgba(39,174,96,1.000)" in page and 'title="-0.2000"' in page and "rgba(192,57,43," in page
    assert "evidence +0.4000" in to_text(explanation) and list(to_rows([explanation]))[1]["evidence"] == -0.2


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


@pytest.mark.skipif(CHROMIUM is None, reason="Chromium not installed (Debian: apt-get install chromium)")
def test_html_renders_in_headless_chromium(tmp_path):
    from PIL import Image

    page = tmp_path / "explanation.html"
    page.write_text(to_html([sample()]), encoding="utf-8")
    dom = _chromium(tmp_path, page, "--dump-dom")
    assert dom.returncode == 0, dom.stderr[-2000:]
    # The browser parsed the page as intended: every word is a shaded span, the
    # user's "<film>" is text (not an element), one document, both sentences.
    assert dom.stdout.count('class="sentence"') == 2 and dom.stdout.count('class="doc"') == 1
    for w in sample().words:
        assert f">{html.escape(w.text)}</span>" in dom.stdout
    assert '&lt;<span class="w"' in dom.stdout and ">film</span>&gt;" in dom.stdout and "<film>" not in dom.stdout

    shot = _chromium(tmp_path, page, "--screenshot=shot.png", "--window-size=900,500")
    assert shot.returncode == 0 and (tmp_path / "shot.png").exists(), shot.stderr[-2000:]
    image = np.asarray(Image.open(tmp_path / "shot.png").convert("RGB")).astype(int)
    red = np.abs(image - (192, 57, 43)).sum(-1) < 30  # the sentence bars (#c0392b)
    blue = np.abs(image - (41, 128, 185)).sum(-1) < 30  # the most important word ("Great", full shade)
    assert blue.sum() > 50, "no fully shaded word rendered"
    rows = np.flatnonzero(red.any(1))
    assert rows.size, "no sentence bar rendered"
    bars = np.split(rows, np.flatnonzero(np.diff(rows) > 1) + 1)  # vertical runs of red = one bar each
    assert len(bars) == 2
    widths = [int(red[bar].sum(1).max()) for bar in bars]
    # sentence weights 0.8 and 0.2: bars drawn at 100% and 25% of the same box
    assert widths[1] / widths[0] == pytest.approx(0.25, abs=0.03)


# The results of commands, as text ---------------------------------------------------------------------------------


def test_render_is_each_format_s_own_function():
    explanations = [sample(), sample()]
    texts = [to_text(e, 3) for e in explanations]
    assert render(explanations, "text", 3) == texts[0] + "\n\n" + texts[1] + "\n"
    assert render(explanations, "json", 3) == to_json(explanations, 3) + "\n"
    assert render(explanations, "html") == to_html(explanations)
    table = render(explanations, "csv")
    assert table == to_csv(explanations) and table.splitlines()[0] == ",".join(CSV_COLUMNS)
    assert len(table.splitlines()) == 1 + 2 * 6 and table.splitlines()[1].startswith("0,,,pos,0,0,0,5,Great,0.5,")
    with pytest.raises(ValueError, match="unknown format 'pdf': choose one of text, json, csv, html"):
        render(explanations, "pdf")


def test_prediction_text():
    assert prediction_text(["neg", "pos"], np.array([0.25, 0.75])) == "predicted: pos\n  neg: 0.2500\n  pos: 0.7500"


METRICS = {
    "validation": {"accuracy": 0.9, "macro_f1": 0.85, "documents": 1234},
    "test": {"accuracy": 0.8, "macro_f1": 0.75, "documents": 40},
    "parts": {
        "network_weight": 1.0,
        "ngram_weight": 0.5,
        "network_share": 0.66667,
        "network": {"test": {"accuracy": 0.7, "macro_f1": 0.6}},
        "ngrams": {},
    },
    "baseline": {"validation": {"accuracy": 0.5, "macro_f1": 0.4}},
}


def test_metrics_text_puts_parts_and_baseline_beside_each_split():
    assert metrics_text(METRICS).splitlines() == [
        (
            "the network and the n-gram part combined with weights 1.00 and 0.50 (network share 0.67, chosen on "
            "validation)"
        ),
        (
            "validation: accuracy 0.9000, macro-F1 0.8500 (1,234 documents) | TF-IDF+LR baseline: accuracy 0.5000, "
            "macro-F1 0.4000"
        ),
        "test: accuracy 0.8000, macro-F1 0.7500 (40 documents) | network alone: accuracy 0.7000, macro-F1 0.6000",
    ]
    trained = {"epochs_trained": 12, "epoch_budget": 38, "time_budget_seconds": 1200, "stopped_by": "time budget"}
    assert metrics_text(trained) == "the network trained 12 epochs of at most 38 (or 20 min); stopped: time budget"
    trained.update(epochs_trained=1, time_budget_seconds=None, stopped_by="epochs setting")
    assert metrics_text(trained) == "the network trained 1 epoch of at most 38; stopped: epochs setting"
    skipped = metrics_text({"baseline": {"skipped": "one class"}})
    assert skipped == "no baseline: scikit-learn could not fit it (one class)"
    assert metrics_text({}) == ""


def test_evaluation_text_and_rows_text():
    metrics = {
        "accuracy": 0.5,
        "macro_f1": 0.25,
        "documents": 2000,
        "labels": ["neg", "pos"],
        "confusion_matrix": [[1000, 0], [1000, 0]],
    }
    assert evaluation_text(metrics) == (
        "accuracy 0.5000, macro-F1 0.2500 on 2,000 documents\n"
        "confusion matrix (rows: true, columns: predicted; neg, pos):\n"
        "     1000       0\n"
        "     1000       0"
    )
    report = {
        "rows": 1200,
        "used": 1200,
        "text_column": "text",
        "label_column": "label",
        "skipped_missing_text": 0,
        "skipped_missing_label": 0,
    }
    assert rows_text("t.csv", report) == (
        "t.csv: 1,200 of 1,200 rows used (text column 'text', label column 'label')",
        None,
    )
    report.update(used=1197, skipped_missing_text=1, skipped_missing_label=2)
    assert rows_text("t.csv", report)[1] == "  skipped 1 without text, 2 without a label (empty, NaN, NA, null, ...)"


def test_corpus_text_names_the_top_words_of_each_predicted_class():
    from hierattn.explain.corpus import CorpusSummary, CorpusWords

    words = CorpusWords(top_k=2, min_count=3)
    for _ in range(3):
        words.add(sample())
    summary = CorpusSummary(documents=3, skipped_empty=1, correct=2, labelled=3, words=words, outputs=[])
    ranked = words.top("pos", 2), words.top("pos", 2, by="attention")
    assert corpus_text(summary, 2) == (
        "explained 3 documents (skipped 1 empty); accuracy 0.6667\n  pos (3 documents)\n"
        f"    most evidence for it: {', '.join(ranked[0])}\n"
        f"    most attention, relative to uniform: {', '.join(ranked[1])}"
    )
    assert ranked[1] == ["great", "film"]  # sample()'s top two by weight, read in every document
