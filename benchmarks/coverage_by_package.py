"""Line coverage of the whole suite per package, before and after a change (issue #66), from two coverage JSON files.

Each file comes from the whole suite run as `make test` runs it, with pytest-cov (not a test extra:
`.venv/bin/pip install pytest-cov`; coverage 7.10 or later), in a checkout of its own, subprocesses included
(coverage's `patch = subprocess`):

    cat > /tmp/cov.rc <<EOF
    [run]
    source = hierattn
    parallel = true
    patch = subprocess
    data_file = /tmp/cov/before/.coverage
    EOF
    cd /path/to/checkout && PYTHONPATH=$PWD .venv/bin/python -m pytest -q -n 2 --dist loadfile \\
        --no-loadscope-reorder -p no:cacheprovider --cov --cov-config=/tmp/cov.rc --cov-report=json:/tmp/before.json

then (the same with `after`):

    python benchmarks/coverage_by_package.py /tmp/before.json /tmp/after.json [--output table.md]

A package is `hierattn/<part>/`; the modules at the top of `hierattn/` are one row (`hierattn/*.py`).
"""

import argparse
import collections
import json
import pathlib


def by_package(path):
    """`{package: [covered, statements]}` of a coverage JSON report, with a `total` row."""
    files = json.loads(pathlib.Path(path).read_text())["files"]
    rows = collections.defaultdict(lambda: [0, 0])
    for name, found in files.items():
        parts = pathlib.PurePosixPath(name).parts
        package = "/".join(parts[:2]) + "/" if len(parts) > 2 else "hierattn/*.py"
        for key in (package, "total"):
            rows[key][0] += found["summary"]["covered_lines"]
            rows[key][1] += found["summary"]["num_statements"]
    return rows


def _percent(row):
    return f"{100 * row[0] / row[1]:.2f}% ({row[0]:,} of {row[1]:,})" if row and row[1] else "-"


def table(before, after):
    """A Markdown table: each package's line coverage before and after, and the change in points."""
    lines = ["| package | before | after | change |", "| --- | --- | --- | --- |"]
    for package in sorted(set(before) | set(after), key=lambda p: (p == "total", p)):
        b, a = before.get(package), after.get(package)
        change = (
            f"{100 * a[0] / a[1] - 100 * b[0] / b[1]:+.2f}" if a and b and a[1] and b[1] else "new" if a else "gone"
        )
        lines.append(f"| {package} | {_percent(b)} | {_percent(a)} | {change} |")
    return "\n".join(lines)


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("before", type=pathlib.Path)
    parser.add_argument("after", type=pathlib.Path)
    parser.add_argument("--output", type=pathlib.Path)
    args = parser.parse_args()
    found = table(by_package(args.before), by_package(args.after))
    print(found)
    if args.output:
        args.output.write_text(found + "\n")


if __name__ == "__main__":
    main()
