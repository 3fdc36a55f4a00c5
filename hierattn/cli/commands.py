"""Commands the program prints for the user to paste (resume a run, explain with it, open its logs), each one that works as typed.

A printed command starts as the user started this program, with the Python
or script that ran it named so that a fresh shell finds it
(`hierattn.utils.shell`).
"""

import os
import pathlib
import shlex
import sys

from hierattn.utils.shell import interpreter, script, shown

__all__ = ["command_line", "interpreter", "program_name", "script"]


def program_name(python=None):
    """How the user started this program, to print commands they can paste: `python cli.py`, `python -m hierattn` or `hierattn`.

    From `sys.argv[0]`: `cli.py` as it was typed (`python ../hierattn/cli.py`
    stays so), the package's `__main__.py` as `python -m hierattn`, the
    installed script as `hierattn`; anything else (a test runner, an
    embedding program) as `python cli.py`. `python` is `interpreter()`, and
    `hierattn` the script's path when a fresh shell would not find it.

    Args:
        python: Another Python to start it with (its path), instead of this
            one: `python` is then that path, and `hierattn` the script beside
            it (the project's `.venv`'s, for a Python without hierattn's
            dependencies: `hierattn.cli.dependencies`).
    """
    typed = sys.argv[0] if sys.argv and sys.argv[0] else ""
    path = pathlib.PurePath(typed)
    started = interpreter() if python is None else shown(python)
    if path.name == "__main__.py" and path.parent.name == "hierattn":
        return f"{started} -m hierattn"
    if path.name == "hierattn":
        return script("hierattn", typed if python is None else os.path.join(os.path.dirname(python), "hierattn"))
    if path.name == "cli.py":
        return f"{started} {shlex.quote(typed)}"
    return f"{started} cli.py"


def command_line(*words, program=True, python=None):
    """A command to print for the user to paste into a shell: each word shell-quoted, after `program_name(python)`.

    Example:

    >>> command_line("explain", "your text", "--run", "runs/my run", program=False)
    "explain 'your text' --run 'runs/my run'"
    """
    quoted = " ".join(shlex.quote(str(word)) for word in words)
    if not program:
        return quoted
    return " ".join(part for part in (program_name(python), quoted) if part)
