"""How long `explain` and `predict` take on one very long text, and how much `explain` prints (issue #28).

Writes a single-line text of SIZE megabytes (a 12-word sentence repeated
with a seeded word order), then runs the real program on it in a fresh
process, as a user would: `python cli.py explain --run RUN --file TEXT` and
`python cli.py predict --run RUN --file TEXT`. Prints the wall time of each
and the size of explain's output.

Usage:
    python benchmarks/bench_long_text.py RUN_DIR [--megabytes 50]
"""

import argparse
import pathlib
import random
import subprocess
import sys
import tempfile
import time

ROOT = pathlib.Path(__file__).resolve().parents[1]
WORDS = "the film was great and the acting superb but the plot dull".split()


def write_text(path, megabytes, seed=0):
    rng = random.Random(seed)
    size, sentences = 0, []
    while size < megabytes * 1_000_000:
        sentence = " ".join(rng.choice(WORDS) for _ in range(12)) + ". "
        sentences.append(sentence)
        size += len(sentence)
    path.write_text("".join(sentences) + "\n")
    return size


def timed(*args):
    started = time.perf_counter()
    result = subprocess.run(
        [sys.executable, str(ROOT / "cli.py"), *map(str, args)], capture_output=True, text=True, cwd=ROOT
    )
    seconds = time.perf_counter() - started
    if result.returncode:
        sys.exit(f"{args[0]} failed: {result.stderr.strip()[-500:]}")
    return seconds, result.stdout


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("run")
    parser.add_argument("--megabytes", type=float, default=50)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as folder:
        text = pathlib.Path(folder) / "long.txt"
        size = write_text(text, args.megabytes)
        explain_seconds, output = timed("explain", "--run", args.run, "--file", text)
        predict_seconds, _ = timed("predict", "--run", args.run, "--file", text)
    print(f"one text of {size:,} characters, run {args.run}")
    print(f"explain: {explain_seconds:.1f} s, {len(output.encode()):,} bytes printed")
    print(f"predict: {predict_seconds:.1f} s")
    note = [line for line in output.splitlines() if "longer than the model's limits" in line]
    print(note[0] if note else "(no note about the unread rest)")


if __name__ == "__main__":
    main()
