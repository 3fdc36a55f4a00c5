"""A Python without hierattn's dependencies: one line naming the module it lacks, and how to run the program instead.

`python3 cli.py ...` typed outside the project's virtual environment starts
a Python that lacks click, pandas, onnxruntime or TensorFlow. The program
(`hierattn.cli.main`) catches the `ModuleNotFoundError`, whether it comes as
the commands load (click) or once a command imports what it needs (pandas
for `train csv`, onnxruntime for `predict`, ...), and prints
`missing_text`'s line instead of a traceback:

    Error: hierattn's dependencies are not installed for this Python (/usr/bin/python3: No module named 'click');
    run it with .venv's Python: .venv/bin/python cli.py --help (or activate .venv first: . .venv/bin/activate)

(one line). This module, `hierattn.cli`'s `__init__`, `hierattn.cli.commands`
and `hierattn.utils.shell` import only the standard library, so that they
can say it.
"""

import importlib.util
import os
import pathlib
import sys

from hierattn.cli.commands import command_line
from hierattn.utils.shell import pip_install, place, requirements, shown, source_tree

# The modules hierattn's requirements (pyproject.toml's `dependencies`) install, with theirs that it imports.
REQUIRED_MODULES = frozenset(
    ("tensorflow", "keras", "numpy", "sklearn", "scipy", "joblib", "threadpoolctl", "pandas", "click", "tqdm")
    + ("tensorboard", "gensim", "onnxruntime", "onnx", "tf2onnx", "sentencepiece", "charset_normalizer")
)


def missing_module(error):
    """The required module whose absence the `ModuleNotFoundError` `error` reports, or None for any other.

    Only a module of hierattn's requirements (`REQUIRED_MODULES`) that this
    Python cannot find counts. None, so that the error stays one with its
    traceback, for any other: hierattn's own modules and an import of a
    module it does not require (a bug, not an install), the standard
    library's (a Python built without one), and a module this Python can
    find (a missing submodule of an installed package, or one hidden on
    purpose: a bug too).
    """
    name = (getattr(error, "name", None) or "").partition(".")[0]
    if name not in REQUIRED_MODULES:
        return None
    if name in sys.modules:  # loaded, or hidden (None): not missing
        return None
    try:
        if importlib.util.find_spec(name) is not None:
            return None
    except (ImportError, ValueError):
        return None
    return name


def missing_text(error, args):
    """The line (without `Error: `) that says which module this Python lacks and how to run the program instead.

    Args:
        error: The `ModuleNotFoundError` (`missing_module` names a module).
        args: The command line's arguments, given again in the command that
            runs the program with the project's `.venv`.
    """
    python = shown(sys.executable) if sys.executable else "this Python"
    return f"hierattn's dependencies are not installed for this Python ({python}: {error}); {_what_to_do(args)}"


def _what_to_do(args):
    """How to run the program with its dependencies: with the clone's `.venv` (made by `make install`), or installed."""
    clone = source_tree()
    if clone is None:  # installed (e.g. `pip install --no-deps`, for the runtime alone)
        listed = requirements()
        if listed:
            return f"install them: {pip_install(*listed)}"
        return "install hierattn with its dependencies (not with --no-deps)"
    venv = clone / ".venv"
    python = venv / "bin" / "python"
    if _inside(sys.executable, venv):  # the project's own .venv, not (fully) installed
        return f"install them into .venv: {shown(python)} -m pip install -e {shown(clone)}"
    run = command_line(*args, python=python)
    if python.exists():
        return f"run it with .venv's Python: {run} (or activate .venv first: . {shown(venv / 'bin' / 'activate')})"
    make = "make install" if place(clone) == "." else f"make -C {shown(clone)} install"
    return f"run `{make}` (it makes .venv and installs them there), then: {run}"


def _inside(path, folder):
    """Whether `path` lies in `folder` (as written: a virtual environment's `python` is a link out of it)."""
    if not path:
        return False
    path, folder = os.path.abspath(path), os.path.abspath(folder)
    return pathlib.PurePath(path).is_relative_to(folder)
