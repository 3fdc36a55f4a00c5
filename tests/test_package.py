"""The package's shape: a library under an application under the command line, imports only going down.

(`tests/test_imports.py` checks that no module imports itself back.)

Every `import` of a hierattn module is read from the source (at the top of
a module and inside functions alike, and `importlib.import_module` of a
literal name), so an import that climbs a layer cannot hide in a function.
"""

import ast
import pathlib

import pytest

PACKAGE = pathlib.Path(__file__).resolve().parents[1] / "hierattn"

# Lowest first. A module may import its own part and any part on a lower layer, never a higher one.
LAYERS = [
    {"errors", "defaults", "utils", "calibration", "kinds"},  # shared leaves
    {"metrics", "callbacks", "distribute", "decision", "cut"},  # shared leaves that use the ones above
    {"layers"},  # the library: Keras layers,
    {"data"},  # datasets, tokenizer, encoding,
    {"ngrams"},  # the n-gram part,
    {"policy"},  # how part outputs become answers (NumPy, held by every path),
    {"tuning"},  # the policy tuned on validation scores,
    {"explain"},  # explanations of a classifier,
    {"runtime"},  # an exported classifier run without TensorFlow,
    {"export"},  # a trained classifier written as the runtime's bundle (converter, fused RNNs, checks),
    {"models"},  # the classifier, its preprocessor and backbones
    {"runs"},  # the application: training runs and what is done with them,
    {"batch"},  # a run's bundle over large tables (Ray Data, Spark)
    {"serve"},  # a run's classifier over HTTP
    {"cli"},  # the command line, one application call per command
    {"__init__", "__main__"},  # the package's front
]
RANK = {part: rank for rank, parts in enumerate(LAYERS) for part in parts}
# What every layer may read from the front: the version. (`utils/keras_hook.py` names the module that registers
# hierattn's Keras classes by a string it imports once Keras loads: the front's job, not an import this test sees.)
FROM_THE_FRONT = {"hierattn", "hierattn.__version__"}


def part_of(module):
    """The part of the package a dotted module name belongs to: `hierattn.runs.train` → `runs`; a front name → `__init__`."""
    names = module.split(".")
    return names[1] if len(names) > 1 and names[1] in RANK else "__init__"


def module_name(path, root=PACKAGE):
    relative = path.relative_to(root.parent).with_suffix("")
    names = list(relative.parts)
    if names[-1] == "__init__" and len(names) > 1:
        names.pop()
    return ".".join(names)


def imported_modules(path, root=PACKAGE):
    """`(line, module)` for every hierattn module that `path` imports, anywhere in it."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    name = module_name(path, root)
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found += [(node.lineno, alias.name) for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                base = ".".join(
                    package.split(".")[: len(package.split(".")) - node.level + 1] + ([base] if base else [])
                )
            found.append((node.lineno, base))
            found += [(node.lineno, f"{base}.{alias.name}") for alias in node.names]
        elif (
            isinstance(node, ast.Call)
            and getattr(node.func, "attr", getattr(node.func, "id", None)) == "import_module"
            and node.args
            and isinstance(node.args[0], ast.Constant)
        ):
            found.append((node.lineno, node.args[0].value))
    return [(line, name) for line, name in found if name == "hierattn" or name.startswith("hierattn.")]


MODULES = sorted(PACKAGE.rglob("*.py"))


def test_every_part_has_a_layer():
    parts = {path.relative_to(PACKAGE).parts[0].removesuffix(".py") for path in MODULES}
    assert parts <= set(RANK), f"parts of hierattn/ on no layer: {sorted(parts - set(RANK))}"


@pytest.mark.parametrize("path", MODULES, ids=lambda p: str(p.relative_to(PACKAGE)))
def test_imports_go_down(path):
    own = part_of(module_name(path))
    climbs = []
    for line, name in imported_modules(path):
        target = part_of(name)
        if name not in FROM_THE_FRONT and RANK[target] > RANK[own]:
            climbs.append(f"{path.relative_to(PACKAGE.parent)}:{line} ({own}) imports {name} ({target})")
    assert not climbs, "imports that go up a layer:\n" + "\n".join(climbs)


def test_no_loose_module_at_the_top():
    loose = {path.stem for path in PACKAGE.glob("*.py")}
    core = {"policy", "tuning"}  # the decision core every path holds (NumPy only), above the n-gram part it combines
    leaves = set().union(*LAYERS[:2]) | core | LAYERS[-1]
    assert loose <= leaves, f"modules at the top of hierattn/ that belong in a package: {sorted(loose - leaves)}"


def test_the_check_sees_imports_hidden_in_functions_relative_or_by_name(tmp_path):
    root = tmp_path / "hierattn"
    module = root / "layers" / "sneaky.py"
    module.parent.mkdir(parents=True)
    module.write_text(
        "import importlib\n\n\ndef f():\n    from hierattn.runs.train import train\n    from ..cli import main\n"
        "    return train, main, importlib.import_module('hierattn.models')\n"
    )
    found = imported_modules(module, root)
    assert {name for _, name in found} >= {"hierattn.runs.train", "hierattn.cli", "hierattn.models"}
    assert all(RANK[part_of(name)] > RANK["layers"] for _, name in found)


def test_the_license_is_an_spdx_expression_so_installing_prints_no_deprecation():
    """setuptools 77 warns (three times, ~45 lines) on `license = {text = ...}`; an SPDX string is its form (PEP 639)."""
    import tomllib

    project = tomllib.loads((PACKAGE.parent / "pyproject.toml").read_text())
    assert isinstance(project["project"]["license"], str)
    assert project["build-system"]["requires"] == ["setuptools>=77"]
