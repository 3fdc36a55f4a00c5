"""Tests for hierattn.errors: an `ArgumentError` names its argument as the caller names it, and library messages name no option."""

import ast
import pathlib
import pickle
import re

import pytest

from hierattn.errors import (
    ArgumentError,
    DataError,
    ExportError,
    HierattnError,
    ResourceError,
    RunError,
    TrainingDiverged,
    WriteError,
)


def test_argument_error_names_the_argument_as_the_library_or_as_the_caller_does():
    error = ArgumentError("{argument} for the han model is SENTENCESxWORDS; got '5'", argument="max_length")
    assert isinstance(error, HierattnError) and isinstance(error, ValueError)
    assert str(error) == "max_length for the han model is SENTENCESxWORDS; got '5'"
    assert error.naming("--max-length") == "--max-length for the han model is SENTENCESxWORDS; got '5'"
    with pytest.raises(ArgumentError, match="^max_length for"):
        raise error


def test_argument_error_survives_pickling():
    again = pickle.loads(pickle.dumps(ArgumentError("pass labelled data with {argument} FILE", argument="data")))
    assert (again.argument, str(again), again.naming("--data")) == (
        "data",
        "pass labelled data with data FILE",
        "pass labelled data with --data FILE",
    )


@pytest.mark.parametrize(
    "kind, argument",
    [(DataError, "encoding"), (RunError, "output"), (TrainingDiverged, "learning_rate"), (ResourceError, "batch_size")],
)
def test_every_kind_names_an_argument_the_same_way_and_survives_pickling(kind, argument):
    error = kind("try another {argument}", argument=argument)
    assert isinstance(error, HierattnError) and error.argument == argument
    assert (str(error), error.naming("--x")) == (f"try another {argument}", "try another --x")
    again = pickle.loads(pickle.dumps(error))
    assert (type(again), again.argument, str(again)) == (kind, argument, f"try another {argument}")


def test_one_base_class_and_each_kind_with_one_parent_of_hierattn():
    kinds = [ArgumentError, DataError, RunError, TrainingDiverged, ResourceError, WriteError, ExportError]
    assert all(
        [base for base in kind.__bases__ if issubclass(base, HierattnError)] == [HierattnError] for kind in kinds
    )
    assert {cls.__name__ for cls in HierattnError.__subclasses__()} == {kind.__name__ for kind in kinds}


def test_an_error_about_an_argument_must_say_where_it_is_named_and_keeps_its_attributes_when_pickled():
    with pytest.raises(TypeError, match="must say where with {argument}"):
        ArgumentError("max_length", "{argument} must be SxW")  # the order of old releases: a mistake, not a message
    error = RunError("stopped; resume {argument}", argument="run_dir")
    error.run_dir = "runs/a"
    again = pickle.loads(pickle.dumps(error))
    assert (again.run_dir, str(again)) == ("runs/a", "stopped; resume run_dir")
    written = pickle.loads(pickle.dumps(WriteError("disk full while writing x", 28)))
    assert (str(written), written.errno) == ("disk full while writing x", 28)


def test_an_error_without_an_argument_keeps_its_braces():
    error = DataError("{not an argument}")
    assert (str(error), error.naming("--x"), error.argument) == ("{not an argument}", "{not an argument}", None)


# The library names arguments; only hierattn.cli names the program's options and commands.
LIBRARY = pathlib.Path(__file__).resolve().parents[1] / "hierattn"
FLAG = re.compile(r"(?<![\w-])--[a-z]")


def _docstrings(tree):
    """The string constants that are docstrings (of the module, a class or a function)."""
    owners = [
        tree,
        *(n for n in ast.walk(tree) if isinstance(n, (ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef))),
    ]
    return {
        id(owner.body[0].value)
        for owner in owners
        if owner.body and isinstance(owner.body[0], ast.Expr) and isinstance(owner.body[0].value, ast.Constant)
    }


def library_strings(path):
    """`(line, text)` of each string literal in the module at `path` that is not a docstring.

    An f-string is read whole, with `x` for each of its fields: `f"--{role}-column"` reads `--x-column`.
    """
    tree = ast.parse(path.read_text(encoding="utf-8"), str(path))
    docstrings = _docstrings(tree)
    inside = {id(part) for node in ast.walk(tree) if isinstance(node, ast.JoinedStr) for part in node.values}
    for node in ast.walk(tree):
        if isinstance(node, ast.JoinedStr):
            text = "".join(part.value if isinstance(part, ast.Constant) else "x" for part in node.values)
            yield node.lineno, text
        elif isinstance(node, ast.Constant) and isinstance(node.value, str):
            if id(node) not in docstrings and id(node) not in inside:
                yield node.lineno, node.value


def naming_the_cli(path):
    return [
        f"{path.relative_to(LIBRARY.parent)}:{line}: {text!r}"
        for line, text in library_strings(path)
        if FLAG.search(text) or "cli.py" in text
    ]


def test_library_strings_name_no_option_or_program_of_the_command_line():
    modules = [path for path in sorted(LIBRARY.rglob("*.py")) if LIBRARY / "cli" not in path.parents]
    assert len(modules) > 40
    assert [found for path in modules for found in naming_the_cli(path)] == []


def test_the_scan_finds_options_in_messages_and_f_strings_but_not_in_docstrings(tmp_path):
    module = tmp_path / "module.py"
    module.write_text(
        '"""Run `python cli.py train --output DIR`."""\n'
        "def f(role):\n"
        '    """Reads --limit."""\n'
        '    raise ValueError(f"name it with --{role}-column")\n'
        'NOTE = "markdown rule: | --- |"\n'
        'HINT = "resume with `python cli.py train`"\n'
    )
    found = [text for _, text in library_strings(module) if FLAG.search(text) or "cli.py" in text]
    assert sorted(found) == ["name it with --x-column", "resume with `python cli.py train`"]
