"""Tests for `hierattn.utils.shell`: the Python and scripts a printed command names work in a fresh shell."""

import os
import shlex
import subprocess
import sys

from hierattn.utils import shell
from hierattn.utils.shell import interpreter, pip_install, script


def python_folder(tmp_path, target):
    """A folder whose `python` starts `target` (as a pyenv shim does)."""
    folder = tmp_path / "bin"
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "python").write_text(f'#!/bin/sh\nexec {shlex.quote(str(target))} "$@"\n')
    (folder / "python").chmod(0o755)
    return folder


def test_a_python_a_fresh_shell_would_not_find_is_named_by_its_path(monkeypatch, fresh_shell, tmp_path):
    monkeypatch.setattr("sys.argv", ["cli.py", "train"])
    monkeypatch.chdir(tmp_path)  # not above this Python: its absolute path
    fresh_shell(tmp_path / "empty")  # no `python` at all
    assert interpreter() == shlex.quote(sys.executable)
    assert pip_install("hierattn[ray]") == f"{shlex.quote(sys.executable)} -m pip install 'hierattn[ray]'"

    other = tmp_path / "other"  # another Python: `python` there answers with another prefix
    other.mkdir()
    (other / "python").write_text("#!/bin/sh\necho /usr/elsewhere\n")
    (other / "python").chmod(0o755)
    fresh_shell(other)
    assert interpreter() == shlex.quote(sys.executable)

    fresh_shell(python_folder(tmp_path, sys.executable))  # a shim starting this interpreter: the same prefix
    assert interpreter() == "python"


def test_an_activated_virtual_environment_is_not_a_fresh_shells(monkeypatch, fresh_shell, tmp_path):
    folder = python_folder(tmp_path, sys.executable)
    monkeypatch.chdir(tmp_path)
    fresh_shell(folder, venv=tmp_path)  # `tmp_path/bin` is the activated environment's: gone in a new shell
    assert interpreter() == shlex.quote(sys.executable)
    monkeypatch.chdir(os.path.dirname(os.path.dirname(sys.executable)))  # printed relative to the current folder
    expected = os.path.join(os.path.basename(os.path.dirname(sys.executable)), os.path.basename(sys.executable))
    assert interpreter() == expected


def test_a_script_is_named_by_its_path_unless_a_fresh_shell_finds_it(fresh_shell, tmp_path):
    tool = tmp_path / "venv" / "bin" / "tool"
    tool.parent.mkdir(parents=True)
    tool.write_text("#!/bin/sh\nexit 0\n")
    tool.chmod(0o755)
    fresh_shell(tmp_path / "empty")
    assert script("tool", str(tool)) == str(tool)
    fresh_shell(tool.parent)
    assert script("tool", str(tool)) == "tool"
    assert script("not-installed") == "not-installed"  # nothing beside this Python by that name: its name
    assert subprocess.run(script("tool", str(tool)), shell=True, env={"PATH": str(tool.parent)}).returncode == 0


def test_a_python_of_the_same_prefix_but_another_version_is_not_this_one(monkeypatch, fresh_shell, tmp_path):
    monkeypatch.chdir(tmp_path)
    other = tmp_path / "same-prefix"
    other.mkdir()
    (other / "python").write_text(
        f'#!/bin/sh\necho "{sys.prefix} 2.7.18 (another)"\n'
    )  # /usr/bin/python3.12 beside 3.11
    (other / "python").chmod(0o755)
    fresh_shell(other)
    assert interpreter() == shlex.quote(sys.executable)


def test_an_activated_conda_environment_is_not_a_fresh_shells_but_base_is(monkeypatch, fresh_shell, tmp_path):
    monkeypatch.chdir(tmp_path)
    env = tmp_path / "envs" / "work"
    folder = python_folder(env, sys.executable)  # env/bin/python
    fresh_shell(folder)
    monkeypatch.setenv("CONDA_PREFIX", str(env))
    monkeypatch.setenv("CONDA_DEFAULT_ENV", "work")
    assert interpreter() == shlex.quote(sys.executable)
    shell._bare_python_is_this_one.cache_clear()
    monkeypatch.setenv("CONDA_DEFAULT_ENV", "base")  # a new shell activates base again
    assert interpreter() == "python"


def test_a_python_that_cannot_say_where_it_is_prints_python(monkeypatch):
    monkeypatch.setattr("sys.executable", "")
    assert interpreter() == "python"
