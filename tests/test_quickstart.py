"""Tests for `make quickstart`: the README's quick start, run as a new user runs it, on real IMDB reviews.

The Makefile's own recipe is run (with this interpreter, into a temporary
run folder), so the test cannot drift from what README tells users to type.
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


def readme_quick_start():
    """The README's "Quick start" section."""
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    return readme.split("## Quick start", 1)[1].split("\n## ", 1)[0]


@pytest.fixture(scope="module")
def quickstart(tmp_path_factory):
    """What `make quickstart` printed, and its run folder."""
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
            f"QUICKSTART_RUN='{run}'",
        ],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=1200,
    )
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-3000:]
    return result.stdout + result.stderr, run


@pytest.mark.slow
def test_the_quick_start_model_gives_its_network_weight(quickstart):
    _, run = quickstart
    metrics = json.loads((run / "metrics.json").read_text())
    assert metrics["parts"]["network_weight"] > 0
    # better than either part alone is not promised; better than a coin and than the baseline's floor is
    assert metrics["test"]["accuracy"] > 0.85


@pytest.mark.slow
def test_the_quick_start_explains_the_readme_example_as_the_readme_shows(quickstart):
    output, _ = quickstart
    shown = re.search(r"^predicted: (\w+), probability", readme_quick_start(), re.M)
    assert shown, "README's quick start shows no prediction"
    printed = re.search(r"^predicted: (\w+), probability", output, re.M)
    assert printed and printed.group(1) == shown.group(1)
    assert "where the network read" in output


@pytest.mark.slow
def test_the_quick_start_page_shows_attention_and_its_path_is_printed(quickstart):
    output, run = quickstart
    page = run / "quickstart.html"
    assert page.is_file()
    html = page.read_text(encoding="utf-8")
    assert "Where the network read" in html
    assert "the network has no weight" not in html
    assert page.resolve().as_uri() in output
