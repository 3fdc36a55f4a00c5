"""Tests for `make quickstart`: the README's quick start, run as a new user runs it, on real IMDB reviews.

The Makefile's own recipe is run (with this interpreter, into a temporary
run folder), so the test cannot drift from what README tells users to type:
its three commands, on a small sample (`SMALL`) instead of its 5,000 reviews
and 4 epochs, which take about two minutes. What the real run promises (the
network's weight, its accuracy, the README example's label, the page's
attention view) is checked by `benchmarks/quickstart.py` (BENCHMARKS.md, "The
quick start").
"""

import json
import os
import pathlib
import re
import shutil
import subprocess
import sys

import pytest

from conftest import IMDB_ARCHIVE

ROOT = pathlib.Path(__file__).resolve().parents[1]
# The quick start's own settings but a sample of 600 reviews and one epoch: seconds of training instead of minutes.
SMALL = "--limit 600 --epochs 1 --max-length 15x30"


def readme_quick_start():
    """The README's "Quick start" section."""
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    return readme.split("## Quick start", 1)[1].split("\n## ", 1)[0]


@pytest.fixture(scope="module")
def quickstart(tmp_path_factory):
    """What `make quickstart` printed (on `SMALL`), and its run folder."""
    if not os.path.exists(IMDB_ARCHIVE):
        pytest.skip(f"real IMDB archive not found at {os.path.normpath(IMDB_ARCHIVE)}")
    if shutil.which("make") is None:
        pytest.skip("make is not installed")
    run = tmp_path_factory.mktemp("quickstart") / "my run"  # a space: every command printed must paste back
    result = subprocess.run(
        [
            "make",
            "--no-print-directory",
            "quickstart",
            f"RUN={sys.executable} cli.py",
            "INSTALLED=",  # this interpreter's environment, not a new .venv
            f"IMDB={IMDB_ARCHIVE}",
            f"QUICKSTART_SETTINGS={SMALL}",
            f"QUICKSTART_RUN='{run}'",
        ],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=1200,
    )
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-3000:]
    return result.stdout + result.stderr, run


def test_the_quick_start_trains_and_tests_a_run_on_the_sample(quickstart):
    _, run = quickstart
    settings = re.search(r"^QUICKSTART_SETTINGS = (.+)$", (ROOT / "Makefile").read_text(), re.M).group(1)
    assert settings in readme_quick_start()  # README shows the recipe's settings (SMALL replaces them here)
    metrics = json.loads((run / "metrics.json").read_text())
    assert metrics["test"]["documents"] == 600 and 0 <= metrics["parts"]["network_weight"] <= 1
    assert metrics["test"]["accuracy"] > 0.5  # a coin's is 0.5; the real run's (> 0.85): benchmarks/quickstart.py


def test_the_quick_start_explains_the_readme_example_in_the_form_readme_shows(quickstart):
    output, _ = quickstart
    shown = re.search(r"^predicted: (\w+), probability [0-9.]+ \(runner-up: (\w+)", readme_quick_start(), re.M)
    assert shown, "README's quick start shows no prediction"
    printed = re.search(r"^predicted: (\w+), probability [0-9.]+ \(runner-up: (\w+)", output, re.M)
    assert printed and set(printed.groups()) == set(shown.groups()) == {"pos", "neg"}
    assert "evidence for" in output


def test_the_quick_start_page_is_written_and_its_path_is_printed(quickstart):
    output, run = quickstart
    page = run / "quickstart.html"
    assert page.is_file()
    assert "<html" in page.read_text(encoding="utf-8").lower()
    assert page.resolve().as_uri() in output
