"""Issue #66's counts of the code's shape, for this checkout and another (main before the issue).

* modules whose code (not their comments or docstrings) names the cut, a temperature or the offsets: a name, an
  attribute, an argument or a string key `cut`, `temperature`, `temperature_always` or `offsets`;
* construction sites of `Cascade(` and `Decision(` (calls in the code, not in docstrings);
* `multi_label` branch lines outside the core: an `if`/`elif`/`while` test, or a conditional expression, that reads
  `multi_label`, outside the core: `decision.py`, `calibration.py`, `policy.py`, `tuning.py`, `cut.py` and `kinds.py`.

Read with Python's `ast`, so that prose does not count. Usage:

    python benchmarks/code_counts.py [--before /path/to/main-before] [--output counts.json]
"""

import argparse
import ast
import json
import pathlib

ROOT = pathlib.Path(__file__).resolve().parents[1]
KNOWN = {"cut", "temperature", "temperature_always", "offsets"}
CORE = {"decision.py", "calibration.py", "policy.py", "tuning.py", "cut.py", "kinds.py"}


def _docstrings(tree):
    """The ids of the string constants that are docstrings."""
    found = set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)) and node.body:
            first = node.body[0]
            if isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant):
                found.add(id(first.value))
    return found


def _names(node):
    """The names a node's code uses: names, attributes, arguments, keywords and string constants."""
    if isinstance(node, ast.Name):
        return {node.id}
    if isinstance(node, ast.Attribute):
        return {node.attr}
    if isinstance(node, ast.arg):
        return {node.arg}
    if isinstance(node, ast.keyword) and node.arg:
        return {node.arg}
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return {node.value}
    return set()


def _reads_multi_label(test):
    return any(_names(node) & {"multi_label"} for node in ast.walk(test))


def counts(tree_root):
    """The three counts for the package under `tree_root`."""
    package = tree_root / "hierattn"
    knowing, sites, branches = [], {"Cascade": [], "Decision": []}, []
    for path in sorted(package.rglob("*.py")):
        tree = ast.parse(path.read_text())
        docstrings = _docstrings(tree)
        relative = path.relative_to(tree_root).as_posix()
        names = set()
        for node in ast.walk(tree):
            if isinstance(node, ast.Constant) and id(node) in docstrings:
                continue
            names |= _names(node)
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in sites:
                sites[node.func.id].append(f"{relative}:{node.lineno}")
            if path.name not in CORE:
                if isinstance(node, (ast.If, ast.While, ast.IfExp)) and _reads_multi_label(node.test):
                    branches.append(f"{relative}:{node.lineno}")
        if names & KNOWN:
            knowing.append(relative)
    return {
        "modules_knowing_cut_temperature_offsets": len(knowing),
        "modules": knowing,
        "construction_sites": {name: len(found) for name, found in sites.items()},
        "sites": sites,
        "multi_label_branch_lines_outside_core": len(set(branches)),
        "branches": sorted(set(branches)),
    }


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--before", type=pathlib.Path, help="a checkout of main before the issue")
    parser.add_argument("--output", type=pathlib.Path)
    args = parser.parse_args()
    results = {"after": counts(ROOT)}
    if args.before:
        results["before"] = counts(args.before)
    for name, found in results.items():
        print(
            f"{name}: {found['modules_knowing_cut_temperature_offsets']} modules know the cut, a temperature or the "
            f"offsets; Cascade( {found['construction_sites']['Cascade']}, Decision( "
            f"{found['construction_sites']['Decision']}; {found['multi_label_branch_lines_outside_core']} "
            "multi_label branch lines outside the core"
        )
    if args.output:
        args.output.write_text(json.dumps(results, indent=2) + "\n")


if __name__ == "__main__":
    main()
