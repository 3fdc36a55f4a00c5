"""Commands to print for the user to paste into a shell, that work as typed: the Python and scripts named so a new shell finds them.

A printed command names the interpreter or script that runs here by its
path when a fresh shell on this machine would not find it by its bare name:
`make train` runs `.venv/bin/python cli.py`, and `python ...` typed in a new
shell (no virtual environment activated) would start another Python,
without Keras. A fresh shell's `PATH` is taken to be this process's, less an
activated virtual environment's `bin`.

Install commands name what pip can find: hierattn is not on PyPI, so an
extra comes from the clone hierattn runs from (`pip_install_extra`).
"""

import functools
import importlib.metadata
import os
import pathlib
import re
import shlex
import shutil
import subprocess
import sys


def interpreter():
    """The Python to print: `python` when a fresh shell's `python` is this one, else this one's path (relative under the current folder)."""
    if not sys.executable:  # an embedding program that cannot say which Python it is
        return "python"
    return "python" if _bare_python_is_this_one() else shown(sys.executable)


def script(name, path=None):
    """A console script to print: its bare `name` when a fresh shell finds this one by it, else its path.

    Args:
        name: The script's name (`hierattn`, `tensorboard`, `ray`).
        path: The script that runs (default: the one installed beside this
            interpreter, if there is one).
    """
    path = path or os.path.join(os.path.dirname(sys.executable), name)
    found = shutil.which(name, path=_fresh_path())
    if not os.path.isfile(path) or (found and os.path.abspath(found) == os.path.abspath(path)):
        return name
    return shown(path)


def pip_install(*requirements):
    """The command that installs `requirements` into this Python's environment: `<interpreter> -m pip install ...`.

    A bare `pip` may belong to another Python (the system's, outside a
    virtual environment): this one's `-m pip` installs where it is needed.
    """
    return f"{interpreter()} -m pip install {' '.join(shlex.quote(r) for r in requirements)}"


def pip_install_extra(extra):
    """The command that installs hierattn's `extra` (`serve`, `ray`) into this Python's environment, as it works here.

    hierattn is not on PyPI, so `pip install 'hierattn[serve]'` finds nothing. Running from a clone
    (`source_tree`), the clone's own extra, editable as `make install` installs it (`pip install -e '.[serve]'`);
    installed elsewhere, the extra's requirements as hierattn's installed metadata lists them.

    Args:
        extra: The name of the extra, as pyproject.toml's `[project.optional-dependencies]` has it.
    """
    clone = source_tree()
    if clone is not None:
        return f"{interpreter()} -m pip install -e {shlex.quote(f'{place(clone)}[{extra}]')}"
    return pip_install(*(requirements(extra) or [f"hierattn[{extra}]"]))


def requirements(extra=None):
    """hierattn's requirements, as its installed metadata lists them: its own, or those of `extra`; `()` when not installed.

    Args:
        extra: An extra's name (`serve`, `ray`), or None for the requirements of every install.
    """
    try:
        listed = importlib.metadata.requires("hierattn") or []
    except importlib.metadata.PackageNotFoundError:
        return ()
    chosen = []
    for line in listed:
        requirement, _, marker = line.partition(";")
        extras = re.findall(r"""extra\s*==\s*["']([^"']+)["']""", marker)
        if (extra in extras) if extra else not marker.strip():
            chosen.append(requirement.strip())
    return tuple(chosen)


def source_tree():
    """The clone hierattn runs from (its folder, holding pyproject.toml beside `hierattn/`), or None when installed.

    `pip install -e .` (`make install`) leaves hierattn in its clone; `pip install .` copies it into
    `site-packages`, where no pyproject.toml of hierattn's sits above it.
    """
    root = pathlib.Path(__file__).resolve().parents[2]
    try:
        project = (root / "pyproject.toml").read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError):
        return None
    return root if re.search(r'^name\s*=\s*"hierattn"', project, re.MULTILINE) else None


def shown(path):
    """A file's path to print: relative when under the current folder (`.venv/bin/python`), else absolute; shell-quoted."""
    return shlex.quote(place(path))


def place(path):
    """A path to print, unquoted: relative when it is the current folder or under it (`.`, `.venv/bin/python`), else absolute."""
    path = os.path.abspath(path)
    here = os.getcwd()
    if path == here:
        return "."
    if path.startswith(here + os.sep):
        return os.path.relpath(path, here)
    return path


def _fresh_path():
    """`PATH` as a fresh shell would have it: this process's, less an activated environment's `bin`.

    A virtual environment's (`VIRTUAL_ENV`), or a conda environment's other
    than `base` (which a new shell activates again).
    """
    entries = os.environ.get("PATH", os.defpath).split(os.pathsep)
    activated = [os.environ.get("VIRTUAL_ENV")]
    if os.environ.get("CONDA_DEFAULT_ENV", "base") != "base":
        activated.append(os.environ.get("CONDA_PREFIX"))
    gone = {os.path.normpath(os.path.join(folder, "bin")) for folder in activated if folder}
    return os.pathsep.join(entry for entry in entries if os.path.normpath(entry) not in gone)


@functools.cache
def _bare_python_is_this_one():
    """Whether `python` in a fresh shell starts this interpreter, in this environment (asked of it when unsure)."""
    found = shutil.which("python", path=_fresh_path())
    if found is None:
        return False
    if os.path.abspath(found) == os.path.abspath(sys.executable):
        return True
    try:  # another file (a pyenv shim, a link): the same interpreter if it runs with this one's prefix and version
        answer = subprocess.run([found, "-c", _WHO], capture_output=True, text=True, timeout=10, check=False)
    except (OSError, subprocess.SubprocessError):
        return False
    return answer.returncode == 0 and answer.stdout.strip() == _who()


_WHO = "import sys; print(sys.prefix, sys.version)"


def _who():
    """What `_WHO` prints in this interpreter: its prefix and its version (two Pythons may share a prefix)."""
    return f"{sys.prefix} {sys.version}"
