"""Commands the program prints for the user to paste (resume a run, explain with it, open its logs), each one that works as typed.

A printed command starts as the user started this program, and names the
interpreter or script that ran it when a fresh shell on this machine would
not find it by its bare name: `make train` runs `.venv/bin/python cli.py`,
and `python cli.py ...` typed in a new shell (no virtual environment
activated) would start another Python, without Keras. A fresh shell's
`PATH` is taken to be this process's, less an activated virtual
environment's `bin`.
"""

import functools
import os
import pathlib
import shlex
import shutil
import subprocess
import sys


def interpreter():
    """The Python to print: `python` when a fresh shell's `python` is this one, else this one's path (relative under the current folder)."""
    return "python" if _bare_python_is_this_one() else _shown(sys.executable)


def program_name():
    """How the user started this program, to print commands they can paste: `python cli.py`, `python -m hierattn` or `hierattn`.

    From `sys.argv[0]`: `cli.py` as it was typed (`python ../hierattn/cli.py`
    stays so), the package's `__main__.py` as `python -m hierattn`, the
    installed script as `hierattn`; anything else (a test runner, an
    embedding program) as `python cli.py`. `python` is `interpreter()`, and
    `hierattn` the script's path when a fresh shell would not find it.
    """
    typed = sys.argv[0] if sys.argv and sys.argv[0] else ""
    path = pathlib.PurePath(typed)
    if path.name == "__main__.py" and path.parent.name == "hierattn":
        return f"{interpreter()} -m hierattn"
    if path.name == "hierattn":
        return script("hierattn", typed)
    if path.name == "cli.py":
        return f"{interpreter()} {shlex.quote(typed)}"
    return f"{interpreter()} cli.py"


def script(name, path=None):
    """A console script to print: its bare `name` when a fresh shell finds this one by it, else its path.

    Args:
        name: The script's name (`hierattn`, `tensorboard`).
        path: The script that runs (default: the one installed beside this
            interpreter, if there is one).
    """
    path = path or os.path.join(os.path.dirname(sys.executable), name)
    found = shutil.which(name, path=_fresh_path())
    if not os.path.isfile(path) or (found and os.path.abspath(found) == os.path.abspath(path)):
        return name
    return _shown(path)


def command_line(*words, program=True):
    """A command to print for the user to paste into a shell: each word shell-quoted, after `program_name()`.

    Example:

    >>> command_line("explain", "your text", "--run", "runs/my run", program=False)
    "explain 'your text' --run 'runs/my run'"
    """
    quoted = " ".join(shlex.quote(str(word)) for word in words)
    return f"{program_name()} {quoted}" if program else quoted


def _fresh_path():
    """`PATH` as a fresh shell would have it: this process's, less an activated virtual environment's `bin`."""
    entries = os.environ.get("PATH", os.defpath).split(os.pathsep)
    venv = os.environ.get("VIRTUAL_ENV")
    if venv:
        activated = os.path.normpath(os.path.join(venv, "bin"))
        entries = [entry for entry in entries if os.path.normpath(entry) != activated]
    return os.pathsep.join(entries)


@functools.cache
def _bare_python_is_this_one():
    """Whether `python` in a fresh shell starts this interpreter, in this environment (asked of it when unsure)."""
    found = shutil.which("python", path=_fresh_path())
    if found is None:
        return False
    if os.path.abspath(found) == os.path.abspath(sys.executable):
        return True
    try:  # another file (a pyenv shim, a link): the same interpreter if it runs with this one's prefix
        answer = subprocess.run(
            [found, "-c", "import sys; print(sys.prefix)"], capture_output=True, text=True, timeout=10, check=False
        )
    except (OSError, subprocess.SubprocessError):
        return False
    return answer.returncode == 0 and answer.stdout.strip() == sys.prefix


def _shown(path):
    """A file's path to print: relative when under the current folder (`.venv/bin/python`), else absolute; shell-quoted."""
    path = os.path.abspath(path)
    here = os.getcwd()
    if path.startswith(here + os.sep):
        path = os.path.relpath(path, here)
    return shlex.quote(path)
