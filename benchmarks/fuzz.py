"""The long profile of the hostile-input properties (issue #67): 100,000 generated inputs per surface, and what broke.

The properties are the suite's own (`tests/hostile.py`): `make test` runs each with a few dozen derandomised
examples; this script runs the same tests with many, under Hypothesis's `fuzz` profile (`HIERATTN_FUZZ_EXAMPLES=N`:
N examples per property, and a case over 10 s fails as a hang), one pytest process per test file, and counts:

- cases: the examples each property ran (Hypothesis's statistics: passing + failing);
- failures: a property that failed (an exception other than the one documented, a traceback, a 5xx, a wrong
  answer, a hang over 10 s), with Hypothesis's smallest failing example;
- time, and the peak resident memory of the file's processes (its pytest and the servers it starts: the
  largest of them, `getrusage(RUSAGE_CHILDREN)`): a case that allocated over 2 GiB would show there;
- a file that runs past `--timeout` seconds is killed and counted as a hang.

Each surface gets at least `--target` cases: a file of `FIXED` runs that many examples per property at a target
of 100,000 (its cases are slow: a Keras model, a TensorFlow load, HTTP), in proportion at another; the others
share the rest equally per property.

    python benchmarks/fuzz.py                          # every surface, 100,000 cases each
    python benchmarks/fuzz.py --surface text --target 2000 --output /tmp/fuzz.json

Results: BENCHMARKS.md, "Hostile inputs".
"""

import argparse
import contextlib
import datetime
import json
import math
import os
import pathlib
import platform
import re
import resource
import subprocess
import sys
import tempfile
import time

ROOT = pathlib.Path(__file__).resolve().parent.parent

# The surfaces and their property files. A file in FIXED runs that many examples per property.
SURFACES = {
    "text": ["tests/data/test_text_properties.py", "tests/runtime/test_predictor_properties.py"],
    "tables": ["tests/data/test_tables_properties.py"],
    "bundles": ["tests/runtime/test_bundle_properties.py", "tests/models/test_loading_properties.py"],
    "http": ["tests/serve/test_schema.py"],
    "decision core": ["tests/test_policy_properties.py"],
}
FIXED = {
    "tests/runtime/test_predictor_properties.py": 1_000,
    "tests/models/test_loading_properties.py": 500,
    # Schemathesis's three operations with a body (predict, explain, the page's form) and two raw properties: about
    # five requests per example asked (its four GET routes without input stop after about 10 each).
    "tests/serve/test_schema.py": 20_000,
}
_STATISTICS = re.compile(r"^(\S+::\S+):\s*$")
_COUNTS = re.compile(r"- (\d+) passing, (\d+) failing, and (\d+) invalid")
# What tests/serve/test_schema.py says it sent: Hypothesis's statistics name only the last of Schemathesis's
# operations (they share one test), so the HTTP surface's cases are the requests counted there.
_SENT = re.compile(r"HTTP requests sent: total: (\d+)")


class _Properties:
    """A pytest plugin that keeps the node ids of the Hypothesis tests collected (each parameter its own)."""

    def __init__(self):
        self.ids = []

    def pytest_collection_modifyitems(self, items):
        self.ids += [item.nodeid for item in items if getattr(getattr(item, "obj", None), "is_hypothesis_test", False)]


def properties(path):
    """The node ids of a file's properties: its Hypothesis tests (each parameter its own); not its other tests."""
    import pytest

    found = _Properties()
    with open(os.devnull, "w") as quiet, contextlib.redirect_stdout(quiet):
        pytest.main(["-q", "--collect-only", "-p", "no:cacheprovider", "--rootdir", str(ROOT), path], plugins=[found])
    return found.ids


def plan(surface, target):
    """`{file: examples per property}` that gives `surface` at least `target` cases."""
    files = {path: properties(path) for path in SURFACES[surface] if (ROOT / path).exists()}
    scaled = {path: max(1, round(FIXED[path] * target / 100_000)) for path in files if path in FIXED}
    fixed = sum(scaled[path] * len(files[path]) for path in scaled)
    shared = sum(len(ids) for path, ids in files.items() if path not in FIXED)
    each = math.ceil(max(target - fixed, 0) / shared) if shared else 0
    return {path: scaled.get(path, each) for path in files}


def run_file(path, examples, timeout):
    """Runs one property file at `examples` per property: its counts, failures, seconds and peak memory."""
    environment = {**os.environ, "HIERATTN_FUZZ_EXAMPLES": str(examples), "PYTHONHASHSEED": "0"}
    command = [
        sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "--hypothesis-show-statistics",
        "-o", "console_output_style=classic", "--tb=short", path,
    ]  # fmt: skip
    started = time.perf_counter()
    with tempfile.TemporaryFile("w+") as log:
        process = subprocess.Popen(command, cwd=ROOT, env=environment, stdout=log, stderr=subprocess.STDOUT, text=True)
        hung = False
        while process.poll() is None:  # a line a minute, so that a long file is never silent
            try:
                process.wait(timeout=60)
            except subprocess.TimeoutExpired:
                elapsed = time.perf_counter() - started
                print(f"  ... {elapsed / 60:.0f} min", flush=True)
                if elapsed > timeout:
                    process.kill()
                    process.wait()
                    hung = True
        log.seek(0)
        output = log.read()
    seconds = time.perf_counter() - started
    peak = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 2**20  # GiB (ru_maxrss is in KiB on Linux)
    counts, current = {}, None
    for line in output.splitlines():
        named = _STATISTICS.match(line.strip())
        if named:
            current = named.group(1)
            continue
        numbers = _COUNTS.search(line)
        if numbers and current:
            passing, failing, invalid = map(int, numbers.groups())
            seen = counts.setdefault(current, [0, 0, 0])
            for i, value in enumerate((passing, failing, invalid)):
                seen[i] += value
    failed = sorted(
        {line.split(" ", 1)[1].split(" - ")[0] for line in output.splitlines() if line.startswith("FAILED ")}
    )
    falsifying = [line.strip() for line in output.splitlines() if "Falsifying" in line or line.startswith("E  ")]
    sent = [int(found.group(1)) for found in map(_SENT.search, output.splitlines()) if found]
    return {
        "file": path,
        "examples_per_property": examples,
        "cases": sent[-1] if sent else sum(passing + failing for passing, failing, _ in counts.values()),
        "properties": {name: dict(zip(("passing", "failing", "invalid"), c)) for name, c in counts.items()},
        "failed": failed,
        "hung": hung,
        "evidence": falsifying[:40],
        "seconds": round(seconds, 1),
        "peak_gib_so_far": round(peak, 2),
    }


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--surface", action="append", choices=sorted(SURFACES), help="the surfaces (default: all)")
    parser.add_argument("--target", type=int, default=100_000, help="cases per surface (default 100,000)")
    parser.add_argument("--timeout", type=float, default=4 * 3600, help="seconds a file may run (then: a hang)")
    parser.add_argument("--output", default=str(ROOT / "benchmarks" / "fuzz.json"), help="the JSON results")
    args = parser.parse_args()
    results = {
        "command": " ".join(["python", *sys.argv]),
        "date": datetime.date.today().isoformat(),
        "machine": f"{platform.machine()}, {os.cpu_count()} CPUs, Python {platform.python_version()}",
        "surfaces": {},
    }
    for surface in args.surface or list(SURFACES):
        files = []
        for path, examples in plan(surface, args.target).items():
            print(f"{surface}: {path} at {examples:,} examples per property", flush=True)
            found = run_file(path, examples, args.timeout)
            print(
                f"  {found['cases']:,} cases in {found['seconds']:,} s, {len(found['failed'])} failed"
                + (", HUNG" if found["hung"] else ""),
                flush=True,
            )
            files.append(found)
        results["surfaces"][surface] = {
            "cases": sum(f["cases"] for f in files),
            "failed": [name for f in files for name in f["failed"]],
            "hung": [f["file"] for f in files if f["hung"]],
            "seconds": round(sum(f["seconds"] for f in files), 1),
            "files": files,
        }
        pathlib.Path(args.output).write_text(json.dumps(results, indent=2) + "\n")
    results["peak_gib"] = round(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 2**20, 2)
    pathlib.Path(args.output).write_text(json.dumps(results, indent=2) + "\n")
    print("| surface | cases | failed | hangs | seconds |\n| --- | --- | --- | --- | --- |")
    for surface, found in results["surfaces"].items():
        print(
            f"| {surface} | {found['cases']:,} | {len(found['failed'])} | {len(found['hung'])} | {found['seconds']:,} |"
        )
    print(f"peak resident memory of any process: {results['peak_gib']} GiB")
    bad = any(found["failed"] or found["hung"] for found in results["surfaces"].values())
    sys.exit(1 if bad else 0)


if __name__ == "__main__":
    main()
