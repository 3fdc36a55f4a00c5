"""The README's picture: one short review explained by a run, as HTML, screenshotted in headless Chromium.

    python benchmarks/explanation_picture.py RUN_DIR [--output examples/explanation.png]

Prints the explanation's margin and its parts (the numbers README and
docs/explanations.md quote) and records them beside the PNG
(examples/explanation.json: tests/test_doc_examples.py checks the docs quote
them), writes the HTML page beside the PNG, and takes the screenshot with
`chromium --headless` (installed separately: Debian's `chromium`).
"""

import argparse
import json
import pathlib
import shutil
import subprocess
import tempfile

from hierattn.explain.summaries import margin_parts
from hierattn.runs.run import load_run

TEXT = "The plot was thin and the ending made no sense. The acting, though, was superb, and the music is wonderful."


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("run")
    parser.add_argument("--output", default="examples/explanation.png")
    parser.add_argument("--window", default="820,540", help="width,height of the screenshot in pixels")
    args = parser.parse_args()
    run = load_run(args.run)
    explanation = run.classifier.explain(TEXT)
    parts = {k: round(v, 4) if isinstance(v, float) else v for k, v in margin_parts(explanation).items()}
    print(repr(explanation), parts)
    print(", ".join(f"{w.text} {w.evidence:+.2f}" for w in explanation.top(5)))
    output = pathlib.Path(args.output).resolve()
    record = {
        "run": pathlib.Path(args.run).resolve().name,
        "test_accuracy": run.metrics["test"]["accuracy"],
        "text": TEXT,
        "label": explanation.label,
        "probability": round(float(explanation.probabilities[explanation.label]), 4),
        "parts": parts,
        "words": [
            [w.text, w.start, round(float(w.evidence), 4)] for w in sorted(explanation.words, key=lambda w: w.start)
        ],
    }
    output.with_suffix(".json").write_text(json.dumps(record, indent=2) + "\n", encoding="utf-8")
    page = output.with_suffix(".html")
    page.write_text(explanation.to_html("hierattn explanation: one IMDB review"), encoding="utf-8")
    chromium = shutil.which("chromium") or shutil.which("chromium-browser") or shutil.which("google-chrome")
    with tempfile.TemporaryDirectory() as profile:
        subprocess.run(
            [chromium, "--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars", f"--user-data-dir={profile}",
             f"--screenshot={output}", f"--window-size={args.window}", page.as_uri()],
            check=True, capture_output=True,
        )  # fmt: skip
    print(f"wrote {output} and {page}")


if __name__ == "__main__":
    main()
