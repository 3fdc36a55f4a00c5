"""The server's page in a real browser: headless Chromium (the system's, driven by Playwright) types, submits, sees.

A person opens `/`, pastes a text, presses Explain and sees the text with
its words shaded in the classes' colours (checked in the DOM and on a
screenshot). Markup in the text is shown as text: no script runs, no
element is made from it.
"""

import shutil

import numpy as np
import pytest

playwright = pytest.importorskip("playwright.sync_api", reason="playwright is not installed (pip install playwright)")

CHROMIUM = next(
    (shutil.which(name) for name in ("chromium", "chromium-browser", "google-chrome") if shutil.which(name)), None
)
pytestmark = pytest.mark.skipif(CHROMIUM is None, reason="Chromium not installed (Debian: apt-get install chromium)")

TEXT = "A great film with a great cast. The plot was bad and the ending awful, but I loved it."
HOSTILE = 'A great film <script>alert("script")</script> and <img src=x onerror="alert(1)"> a bad plot.'


@pytest.fixture(scope="module")
def browser():
    with playwright.sync_playwright() as driver:
        browser = driver.chromium.launch(executable_path=CHROMIUM, args=["--no-sandbox", "--disable-gpu"])
        yield browser
        browser.close()


@pytest.fixture
def page(browser):
    page = browser.new_page(viewport={"width": 1000, "height": 1000})
    page.dialogs = []
    page.on("dialog", lambda dialog: (page.dialogs.append(dialog.message), dialog.dismiss()))
    yield page
    page.close()


def _tinted_pixels(png):
    """How many pixels of a screenshot are clearly coloured (neither white, grey nor black)."""
    import io

    from PIL import Image

    image = np.asarray(Image.open(io.BytesIO(png)).convert("RGB")).astype(int)
    return int(((image.max(-1) - image.min(-1)) > 40).sum())


def _explain(page, server, text):
    page.goto(server.url)
    page.fill("textarea#text", text)
    page.click("button[type=submit]")
    page.wait_for_selector(".hierattn-x .x-text .w", timeout=60_000)


def test_a_person_pastes_a_text_and_sees_its_words_shaded(page, server, tmp_path):
    page.goto(server.url)
    assert page.title() == "hierattn: explain a text"
    before = _tinted_pixels(page.screenshot(full_page=True))
    _explain(page, server, TEXT)
    assert page.input_value("textarea#text") == TEXT  # the text stays in the form, to edit and submit again
    shown = page.inner_text(".hierattn-x .x-text")
    assert "great cast" in shown and "awful" in shown
    backgrounds = page.eval_on_selector_all(
        ".hierattn-x .x-text .w", "spans => spans.map(s => getComputedStyle(s).backgroundColor)"
    )
    assert sum(colour not in ("rgba(0, 0, 0, 0)", "transparent") for colour in backgrounds) >= 5, backgrounds
    label = server.client.post("/v1/predict", json={"text": TEXT}).json()["predictions"][0]["label"]
    assert label in page.inner_text(".hierattn-x .x-pred")  # the prediction in words
    shot = page.screenshot(full_page=True, path=str(tmp_path / "page.png"))
    assert _tinted_pixels(shot) > max(500, 10 * before), "the screenshot shows no shaded words"
    assert page.dialogs == []


def test_markup_in_a_text_is_shown_as_text_and_never_runs(page, server):
    _explain(page, server, HOSTILE)
    assert page.dialogs == []  # neither the script nor the onerror handler ran
    assert page.evaluate("document.querySelectorAll('body script, .hierattn-x img, img[src=x]').length") == 0
    assert page.input_value("textarea#text") == HOSTILE
    assert "alert" in page.inner_text(".hierattn-x .x-text")  # the markup is there, as text
    raw = server.client.post("/", data={"text": HOSTILE}).text
    assert "<script>alert" not in raw and "<img src=x" not in raw and "&lt;script&gt;" in raw
