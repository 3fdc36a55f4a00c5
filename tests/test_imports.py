"""Tests for the import graph of hierattn: no module imports itself back, directly or through others (issue #29).

The graph is read from the source with `ast`, not by importing: every
`import hierattn...` and `from hierattn... import ...` counts, at module level
and inside functions alike (a function-level import that closes a cycle only
fails later, when the function first runs). `from package import name` is an
edge to the module `package.name` when that is a module, else to `package`.

A package's `__init__` is a module like any other, with its own edges (a
re-export of its submodules is an edge to each of them). Importing
`package.sub` also runs `package/__init__.py` first, but that implicit edge
is not counted: Python has put the package in `sys.modules` by then, so a
package whose `__init__` re-exports submodules that import each other is not
a cycle. A submodule that imports its own package by name (`from package
import name`) is one, since it reads a half-initialised package: it is an
explicit edge back to the `__init__` that imports it. `hierattn/__init__.py`
loads its exports through `importlib.import_module` strings, which are not
import statements and so no edges.
"""

import ast
import pathlib
import textwrap

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[1] / "hierattn"


def module_names(root):
    """`{dotted name: path}` of every module under the package folder `root`; a package is named by its `__init__`."""
    modules = {}
    for path in sorted(root.rglob("*.py")):
        parts = (root.name,) + path.relative_to(root).with_suffix("").parts
        if parts[-1] == "__init__":
            parts = parts[:-1]
        modules[".".join(parts)] = path
    return modules


def _resolve(name, modules):
    """The longest prefix of the dotted `name` that is a module (None: none is, e.g. a third-party import)."""
    parts = name.split(".")
    for end in range(len(parts), 0, -1):
        if ".".join(parts[:end]) in modules:
            return ".".join(parts[:end])
    return None


def imported_modules(name, path, modules):
    """The modules of `modules` that the module `name` (at `path`) imports, anywhere in its code."""
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    found = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), str(path))):
        if isinstance(node, ast.Import):
            found.update(_resolve(alias.name, modules) for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            source = node.module or ""
            if node.level:  # relative: `from . import x` in package p is `from p import x`
                base = package.split(".")[: len(package.split(".")) - (node.level - 1)]
                source = ".".join(base + ([source] if source else []))
            for alias in node.names:
                submodule = f"{source}.{alias.name}"
                found.add(submodule if submodule in modules else _resolve(source, modules))
    found.discard(None)
    return found


def import_graph(root):
    """`{module: set of the modules it imports}` for the package folder `root`."""
    modules = module_names(root)
    return {name: imported_modules(name, path, modules) for name, path in modules.items()}


def import_cycles(graph):
    """One cycle `[a, b, ..., a]` per group of modules that import each other (Tarjan's strong components)."""
    index, low, stack, on_stack, groups = {}, {}, [], set(), []

    def visit(node):  # recursion depth is bounded by the number of modules
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for target in sorted(graph.get(node, ())):
            if target not in index:
                visit(target)
                low[node] = min(low[node], low[target])
            elif target in on_stack:
                low[node] = min(low[node], index[target])
        if low[node] == index[node]:
            group = []
            while True:
                member = stack.pop()
                on_stack.discard(member)
                group.append(member)
                if member == node:
                    break
            if len(group) > 1 or node in graph.get(node, ()):
                groups.append(set(group))

    for node in sorted(graph):
        if node not in index:
            visit(node)
    return [_cycle_in(group, graph) for group in groups]


def _cycle_in(group, graph):
    """A shortest cycle through the first module of `group` (by name), staying inside the group."""
    start = min(group)
    paths = {start: [start]}
    frontier = [start]
    while frontier:
        following = []
        for node in frontier:
            for target in sorted(graph[node] & group):
                if target == start:
                    return paths[node] + [start]
                if target not in paths:
                    paths[target] = paths[node] + [target]
                    following.append(target)
        frontier = following
    raise AssertionError(f"{sorted(group)} is not strongly connected")  # pragma: no cover


def _describe(cycles):
    return "import cycles:\n" + "\n".join("  " + " -> ".join(cycle) for cycle in cycles)


def _fake_package(tmp_path, files):
    for relative, source in files.items():
        path = tmp_path / "fake" / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(source))
    return tmp_path / "fake"


# The real package -----------------------------------------------------------------------------------------------------


def test_hierattn_has_no_import_cycle():
    cycles = import_cycles(import_graph(ROOT))
    assert not cycles, _describe(cycles)


# hierattn.models is not in the list: `TextClassifier.explain` calls into hierattn.explain (imported when called),
# which imports nothing of hierattn.models back; the cycle test above keeps it that way.
@pytest.mark.parametrize("package", ["hierattn.layers", "hierattn.data"])
def test_the_model_and_data_packages_do_not_import_the_explaining_code(package):
    graph = import_graph(ROOT)
    imports = {
        (name, target)
        for name, targets in graph.items()
        if name == package or name.startswith(package + ".")
        for target in targets
        if target == "hierattn.explain" or target.startswith("hierattn.explain.")
    }
    assert not imports, f"{package} imports the explaining code: {sorted(imports)}"


def test_the_graph_holds_every_module_and_its_imports():
    graph = import_graph(ROOT)
    assert {"hierattn", "hierattn.explain", "hierattn.explain.explainer", "hierattn.data.encoding"} <= set(graph)
    # it loads its exports through importlib strings; keras_hook registers its classes when Keras loads
    assert graph["hierattn"] == {"hierattn.utils.keras_hook", "hierattn.utils.lazy"}
    assert (
        graph["hierattn.utils.keras_hook"] == set()
    )  # it names hierattn.models by a string, imported when Keras loads
    assert "hierattn.explain.explainer" in graph["hierattn.explain"]  # a re-export is an edge
    assert "hierattn.errors" in graph["hierattn.explain.explainer"]  # from hierattn.errors import HierattnError


# The checker, on small fake packages ----------------------------------------------------------------------------------


def test_a_cycle_through_a_function_level_import_is_found_and_named(tmp_path):
    root = _fake_package(
        tmp_path,
        {
            "__init__.py": "",
            "a.py": "from fake.b import g\n",
            "b.py": "def g():\n    from fake import c\n",
            "c.py": "import fake.a\nimport numpy\n",
            "d.py": "from fake.a import f\n",  # imports into the cycle, not part of it
        },
    )
    graph = import_graph(root)
    assert graph["fake.b"] == {"fake.c"} and graph["fake.c"] == {"fake.a"}
    cycles = import_cycles(graph)
    assert cycles == [["fake.a", "fake.b", "fake.c", "fake.a"]]
    assert "fake.a -> fake.b -> fake.c -> fake.a" in _describe(cycles)


def test_a_submodule_importing_its_own_package_is_a_cycle_but_a_re_export_alone_is_not(tmp_path):
    files = {
        "__init__.py": "",
        "pkg/__init__.py": "from fake.pkg.one import f\nfrom fake.pkg.two import g\n",
        "pkg/one.py": "def f():\n    pass\n",
        "pkg/two.py": "from fake.pkg.one import f\n",
    }
    assert import_cycles(import_graph(_fake_package(tmp_path / "clean", files))) == []
    files["pkg/two.py"] = "from fake.pkg import f\n"  # reads the half-initialised package that is importing it
    assert import_cycles(import_graph(_fake_package(tmp_path / "cyclic", files))) == [
        ["fake.pkg", "fake.pkg.two", "fake.pkg"]
    ]


def test_relative_imports_and_self_imports_are_resolved(tmp_path):
    root = _fake_package(
        tmp_path,
        {
            "__init__.py": "",
            "pkg/__init__.py": "from . import one\n",
            "pkg/one.py": "from .two import g\nfrom .. import top\n",
            "pkg/two.py": "from ..top import h\n",
            "top.py": "import fake.top\n",
        },
    )
    graph = import_graph(root)
    assert graph["fake.pkg"] == {"fake.pkg.one"}
    assert graph["fake.pkg.one"] == {"fake.pkg.two", "fake.top"}
    assert graph["fake.pkg.two"] == {"fake.top"}
    assert import_cycles(graph) == [["fake.top", "fake.top"]]
