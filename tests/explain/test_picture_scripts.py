"""The picture of an explanation in any script (issue #65): Chinese read in characters, Arabic right to left.

A classifier that reads Chinese in characters gives each character its own
shaded span: the page must show the text exactly as written (nothing put
between two adjacent characters, neither in the HTML nor in the layout), and
in a real browser the characters must come out as glyphs, not as the empty
boxes ("tofu") a browser draws for letters no installed font has. An Arabic
text must read right to left while the page's own English words do not.
"""

import html
import io
import os
import re
import shutil
import subprocess

import numpy as np
import pytest

import hierattn
from hierattn.explain import Explanation, NgramContribution, WordWeight
from hierattn.explain.picture import ROOT, to_html
from hierattn.explain.report import to_text

from conftest import TINY_OPTIONS, eagerly

POSITIVE = ["送餐很快", "味道不错", "很好吃", "服务热情", "分量很足"]
NEGATIVE = ["等了两个小时", "饭都凉了", "太难吃了", "服务很差", "送错了地址"]
REVIEW = "送餐很快，味道不错。但是饭都凉了！"  # two sentences, no space anywhere: as Chinese is written
ARABIC = "الفيلم رائع جدا. لكن النهاية مملة."

CHROMIUM = next(
    (shutil.which(name) for name in ("chromium", "chromium-browser", "google-chrome") if shutil.which(name)), None
)
NO_CHROMIUM = "Chromium not installed (Debian: apt-get install chromium)"
SCALE = 2  # device pixels per CSS pixel in the browser: glyphs large enough to tell apart


def _font_files(pattern):
    """The font files fontconfig finds for `pattern` (`fc-list`'s syntax), or `None` without fontconfig."""
    if shutil.which("fc-list") is None:
        return None
    listed = subprocess.run(["fc-list", pattern, "-f", "%{file}\n"], capture_output=True, text=True, timeout=60)
    return sorted({line for line in listed.stdout.splitlines() if line})


def make_chinese_reviews(n, seed=0):
    """A tiny generated Chinese review corpus: (texts, labels), two phrases of one side, sometimes a closing sentence."""
    rng = np.random.default_rng(seed)
    texts, labels = [], []
    for _ in range(n):
        positive = bool(rng.integers(0, 2))
        first, second = rng.choice(POSITIVE if positive else NEGATIVE, 2, replace=False)
        ending = ("下次再来！" if positive else "再也不点了！") if rng.random() < 0.5 else ""
        texts.append(f"{first}，{second}。{ending}")
        labels.append("好评" if positive else "差评")
    return texts, labels


@pytest.fixture(scope="module")
def chinese():
    """A tiny HAN that reads Chinese in characters, trained on 120 generated reviews, and its explanation of `REVIEW`."""
    texts, labels = make_chinese_reviews(120)
    clf = hierattn.TextClassifier("han", text_units="characters", embeddings="none", min_count=1, **TINY_OPTIONS["han"])
    with eagerly():
        clf.fit(texts, labels, epochs=1, batch_size=16, verbose=0)
    (explanation,) = clf.explain([REVIEW], attention=True)  # attention too: every view of the text is drawn
    return explanation


def arabic():
    """A hand-made explanation of `ARABIC` (read in words): two words with evidence, one n-gram."""
    words = [
        WordWeight("رائع", "رائع", 0, 1, 7, 11, 0.6, 0.7, 0.9, False, True, evidence=0.8),
        WordWeight("مملة", "مملة", 1, 2, 29, 33, 0.4, 0.6, 0.4, False, True, evidence=-0.5),
    ]
    sentences = [
        {"index": 0, "start": 0, "end": 16, "text": ARABIC[:16], "weight": 0.6, "used": True},
        {"index": 1, "start": 17, "end": len(ARABIC), "text": ARABIC[17:], "weight": 0.4, "used": True},
    ]
    e = Explanation(ARABIC, "pos", {"neg": 0.3, "pos": 0.7}, words, sentences, 0, [])
    e.ngrams = [NgramContribution("رائع", 0, 7, 11, 0.4)]
    return e


def _texts(page):
    """The user's text as each `.x-text` block of `page` shows it (tags dropped, entities read)."""
    return [
        html.unescape(re.sub(r"<[^>]*>", "", block)) for block in re.findall(r'class="x-text"[^>]*>(.*?)</div>', page)
    ]


@pytest.mark.keras  # `chinese` trains a classifier
def test_chinese_read_in_characters_is_shown_as_written(chinese):
    e = chinese
    assert [w.text for w in e.words] == [c for c in REVIEW if c not in "，。！"]  # every character a unit
    for view in (to_html([e]), e._repr_html_()):
        shown = _texts(view)
        assert shown[0] == REVIEW  # the text, its sentences one after the other: nothing put between characters
        assert shown[1:] == [s["text"] for s in e.sentences] or not shown[1:]  # where the network read, if it weighs
        units = re.findall(r'<span class="w[^"]*"[^>]*>([^<]*)</span>', view)
        assert units[: len(e.words)] == [w.text for w in e.words]  # each character its own shaded span
        assert view.count('class="x-text" dir="auto"') == len(shown) and shown
        chips = re.findall(r'<span class="x-gram"[^>]*dir="auto">([^<]*) [+-]\d', view)
        assert chips and all(g in REVIEW for g in chips)  # n-grams of adjacent characters, as written
    assert e._repr_html_().startswith('<div class="hierattn-x">')
    text = to_text(e)
    assert not re.search(r"[\u4e00-\u9fff] +[\u4e00-\u9fff]", text), text  # the terminal's view: no spaces put in
    assert all(s["text"] in text for s in e.sentences) or "sentences (weight)" not in text


def test_arabic_text_takes_its_own_direction_and_the_page_stays_english():
    page = to_html([arabic()])
    assert page.startswith('<!DOCTYPE html>\n<html lang="en">')
    assert _texts(page)[0] == ARABIC.replace(". ", ".")  # the sentences one after the other, each a paragraph
    blocks = re.findall(r'<div class="x-text"( dir="auto")?>', page)
    assert blocks and all(blocks), "a block of the user's text without dir=auto"
    assert re.search(r'<span class="x-gram"[^>]*dir="auto">رائع \+0\.40</span>', page)
    assert 'dir="auto"' not in re.sub(r'<(div|span) class="x-(text|gram)"[^>]*>', "", page)  # the page's own words: ltr


def _server_page(text, explanations):
    """The server's live page (`hierattn.serve.page`) holding `text` in its form and the picture of `explanations`."""
    pytest.importorskip("fastapi", reason="the serve extra is not installed (pip install 'hierattn[serve]')")
    from hierattn.serve.page import page

    return page("a tiny model", text, to_html(explanations, page=False))


def test_the_server_page_is_english_and_its_field_takes_the_text_s_direction():
    shown = _server_page(ARABIC, [arabic()])
    assert shown.startswith('<!DOCTYPE html>\n<html lang="en">')
    assert re.search(r'<textarea [^>]*dir="auto"[^>]*>' + re.escape(html.escape(ARABIC)) + "</textarea>", shown)
    assert shown.count('<div class="x-text" dir="auto">') == 3  # the text, and each sentence where the network read


def test_the_fonts_fall_back_to_faces_with_the_letters_of_other_scripts():
    css = re.search(r"<style>(.*?)</style>", to_html([arabic()], page=False), re.DOTALL).group(1)
    for selector, first, generic in (
        (f".{ROOT} ", "Helvetica", "sans-serif"),
        (f".{ROOT} .x-text ", "Georgia", "serif"),
    ):
        family = re.search(re.escape(selector) + r"\{ font-family: ([^;]*);", css).group(1)
        faces = [face.strip().strip('"') for face in family.split(",")]
        assert faces[0] == first and faces[-1] == generic, faces  # the look as before, where those faces are
        for script in ("CJK SC", "Thai", "Arabic"):
            assert any(script in face for face in faces), (script, faces)


@pytest.fixture(scope="module")
def driver():
    """Playwright, to drive the system's Chromium (one per module: Playwright's sync API does not nest)."""
    if CHROMIUM is None:
        pytest.skip(NO_CHROMIUM)
    sync_api = pytest.importorskip("playwright.sync_api", reason="playwright is not installed (pip install playwright)")
    with sync_api.sync_playwright() as driver:
        yield driver


@pytest.fixture(scope="module")
def browser(driver):
    browser = driver.chromium.launch(executable_path=CHROMIUM, args=["--no-sandbox", "--disable-gpu"])
    yield browser
    browser.close()


def _open(browser, tmp_path, page):
    """`page` (HTML) opened from a file, at `SCALE` device pixels per CSS pixel."""
    path = tmp_path / "explanation.html"
    path.write_text(page, encoding="utf-8")
    tab = browser.new_page(viewport={"width": 900, "height": 900}, device_scale_factor=SCALE)
    tab.goto(path.as_uri())
    return tab


# Each unit's glyph box (its text's, without the span's padding), in CSS pixels.
_GLYPH_BOXES = """() => [...document.querySelectorAll('.x-doc > .x-text .w')].map(span => {
  const range = document.createRange(); range.selectNodeContents(span.firstChild);
  const r = range.getBoundingClientRect(); return [span.textContent, r.x, r.y, r.width, r.height];
})"""


def _glyphs(tab):
    """Each unit of the page's text and its glyph as black ink (`bool` array trimmed to the ink), shades taken off."""
    from PIL import Image

    tab.add_style_tag(content=".hierattn-x .w { background: none !important; color: #000 !important; }")
    boxes = tab.evaluate(_GLYPH_BOXES)
    image = np.asarray(Image.open(io.BytesIO(tab.screenshot(full_page=True))).convert("L")) < 128
    glyphs = []
    for text, x, y, width, height in boxes:
        top, bottom, left, right = (round(SCALE * v) for v in (y, y + height, x, x + width))
        ink = image[top:bottom, left:right]
        rows, columns = np.nonzero(ink)
        trimmed = ink[rows.min() : rows.max() + 1, columns.min() : columns.max() + 1] if rows.size else ink[:0, :0]
        glyphs.append((text, trimmed))
    return glyphs


def _alike(a, b):
    """How alike two glyphs are: the least share of either's ink within a pixel of the other's (top-left aligned).

    A pixel of slack either way, as the same box drawn at two fractions of a pixel comes out a pixel wider or
    lower: two tofu boxes score 1, two different characters of a real face well under (at most about 0.8 here).
    """
    shape = np.maximum(a.shape, b.shape)
    A, B = np.zeros(shape, bool), np.zeros(shape, bool)
    A[: a.shape[0], : a.shape[1]], B[: b.shape[0], : b.shape[1]] = a, b

    def near(ink):  # the ink grown by a pixel up, down, left and right
        grown = ink.copy()
        grown[1:] |= ink[:-1]
        grown[:-1] |= ink[1:]
        grown[:, 1:] |= ink[:, :-1]
        grown[:, :-1] |= ink[:, 1:]
        return grown

    return min((A & near(B)).sum() / max(A.sum(), 1), (B & near(A)).sum() / max(B.sum(), 1))


def _lookalikes(glyphs):
    """The pairs of different characters whose glyphs look the same (tofu boxes are all one box)."""
    pairs = [(s, t, _alike(a, b)) for i, (s, a) in enumerate(glyphs) for t, b in glyphs[i + 1 :] if s != t]
    return [(s, t, round(float(alike), 2)) for s, t, alike in pairs if alike > 0.95]


def _without_chinese_fonts(tmp_path):
    """A fontconfig setup (the `FONTCONFIG_FILE` to launch with) of this machine's fonts less all that draw `REVIEW`."""
    everything = _font_files(":")
    chinese = set()
    for character in set(REVIEW):
        chinese.update(_font_files(f":charset={ord(character):x}") or [])
    rest = [path for path in everything or [] if path not in chinese]
    if not rest:
        return None
    folder = tmp_path / "fonts"
    folder.mkdir()
    for number, path in enumerate(rest):
        (folder / f"{number}-{os.path.basename(path)}").symlink_to(path)
    config = tmp_path / "fonts.conf"
    config.write_text(
        f'<?xml version="1.0"?><fontconfig><dir>{folder}</dir><cachedir>{tmp_path / "cache"}</cachedir></fontconfig>'
    )
    return config


@pytest.mark.keras
@pytest.mark.skipif(
    not _font_files(":lang=zh"),
    reason="no Chinese font (fc-list :lang=zh finds none; Debian: apt-get install fonts-noto-cjk)",
)
def test_chinese_is_drawn_as_glyphs_not_boxes_in_headless_chromium(chinese, driver, browser, tmp_path):
    page = to_html([chinese])
    tab = _open(browser, tmp_path, page)
    glyphs = _glyphs(tab)
    tab.close()
    assert [text for text, _ in glyphs] == [w.text for w in chinese.words]
    assert all(glyph.sum() > 20 for _, glyph in glyphs), "a character drew no ink"
    assert not _lookalikes(glyphs), f"different characters drawn alike (tofu?): {_lookalikes(glyphs)}"
    # The check sees boxes where there is no font: the same page with this machine's Chinese fonts hidden from Chromium.
    config = _without_chinese_fonts(tmp_path)
    if config is None:
        return  # only Chinese fonts here: nothing to draw the page without them
    bare = driver.chromium.launch(
        executable_path=CHROMIUM,
        args=["--no-sandbox", "--disable-gpu"],
        env={**os.environ, "FONTCONFIG_FILE": str(config)},
    )
    try:
        boxes = _glyphs(_open(bare, tmp_path, page))
    finally:
        bare.close()
    assert _lookalikes(boxes), "with no Chinese font the check above should see lookalikes (the same box)"


# The width from the first character's left to the last's right edge: of the text's first sentence, as drawn with its
# shaded spans, and of the same sentence as plain text in a paragraph beside it (same fonts, no spans).
_WIDTHS = """() => {
  const block = document.querySelector('.x-doc > .x-text'), shaded = block.querySelector('p');
  const plain = document.createElement('p'); plain.textContent = shaded.textContent; block.append(plain);
  const width = paragraph => {
    const walk = document.createTreeWalker(paragraph, NodeFilter.SHOW_TEXT), nodes = [];
    while (walk.nextNode()) if (walk.currentNode.length) nodes.push(walk.currentNode);
    const edge = (node, at) => { const r = document.createRange(); r.setStart(node, at); r.setEnd(node, at + 1);
                                 return r.getBoundingClientRect(); };
    const last = nodes[nodes.length - 1];
    return edge(last, last.length - 1).right - edge(nodes[0], 0).left;
  };
  return [shaded.textContent, width(shaded), width(plain)];
}"""


@pytest.mark.keras
def test_adjacent_characters_are_laid_out_as_in_the_text(chinese, browser, tmp_path):
    tab = _open(browser, tmp_path, to_html([chinese]))
    sentence, shaded, plain = tab.evaluate(_WIDTHS)
    tab.close()
    assert sentence == chinese.sentences[0]["text"]
    assert shaded == pytest.approx(plain, abs=1.0), "the shaded spans put room between the characters"


@pytest.mark.parametrize("view", ["page", "server"])
def test_arabic_reads_right_to_left_in_headless_chromium(view, browser, tmp_path):
    selectors = [".x-doc > .x-text", ".x-sentence .x-text", ".x-gram", ".x-legend", ".x-pred"]
    if view == "server":
        shown, selectors = _server_page(ARABIC, [arabic()]), [*selectors, "textarea", "h1"]
    else:
        shown = to_html([arabic()])
    tab = _open(browser, tmp_path, shown)
    directions = tab.evaluate(
        "selectors => selectors.map(selector => getComputedStyle(document.querySelector(selector)).direction)",
        selectors,
    )
    tab.close()
    users = {".x-doc > .x-text", ".x-sentence .x-text", ".x-gram", "textarea"}  # the user's text: right to left
    assert dict(zip(selectors, directions)) == {s: "rtl" if s in users else "ltr" for s in selectors}
