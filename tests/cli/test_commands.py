"""Tests for `hierattn.cli.commands`: printed commands start as the user started the program and work in a fresh shell."""

import os
import shlex
import subprocess
import sys

import pytest

from hierattn.cli import commands
from hierattn.cli.commands import command_line, interpreter, program_name, script


@pytest.fixture
def fresh_shell(monkeypatch, tmp_path):
    """A PATH for `fresh_shell(*folders)`, no virtual environment activated; the cached answer about `python` forgotten."""

    def use(*folders, venv=None):
        monkeypatch.setenv("PATH", os.pathsep.join(map(str, folders)))
        if venv:
            monkeypatch.setenv("VIRTUAL_ENV", str(venv))
        else:
            monkeypatch.delenv("VIRTUAL_ENV", raising=False)
        commands._bare_python_is_this_one.cache_clear()

    yield use
    commands._bare_python_is_this_one.cache_clear()


def python_folder(tmp_path, target):
    """A folder whose `python` starts `target` (as a pyenv shim does)."""
    folder = tmp_path / "bin"
    folder.mkdir(exist_ok=True)
    (folder / "python").write_text(f'#!/bin/sh\nexec {shlex.quote(str(target))} "$@"\n')
    (folder / "python").chmod(0o755)
    return folder


def test_printed_commands_are_quoted_and_start_as_the_user_started_the_program(monkeypatch, fresh_shell):
    fresh_shell(os.path.dirname(sys.executable))  # `python` there is this interpreter (or runs with its prefix)
    if not os.path.exists(os.path.join(os.path.dirname(sys.executable), "python")):
        pytest.skip(f"no `python` beside {sys.executable}")
    assert command_line("explain", "your text", "--run", "runs/my run", program=False) == (
        "explain 'your text' --run 'runs/my run'"
    )
    cases = {
        "cli.py": "python cli.py",
        "../hier attn/cli.py": "python '../hier attn/cli.py'",
        "/venv/lib/python3.11/site-packages/hierattn/__main__.py": "python -m hierattn",
        "/venv/bin/hierattn": "hierattn",  # no such file: its name
        "/venv/bin/pytest": "python cli.py",  # not this program's own name: the README's form
    }
    for typed, program in cases.items():
        monkeypatch.setattr("sys.argv", [typed, "train"])
        assert program_name() == program
    assert command_line("train", "--resume", "runs/a b") == "python cli.py train --resume 'runs/a b'"


def test_a_python_a_fresh_shell_would_not_find_is_named_by_its_path(monkeypatch, fresh_shell, tmp_path):
    monkeypatch.setattr("sys.argv", ["cli.py", "train"])
    monkeypatch.chdir(tmp_path)  # not above this Python: its absolute path
    fresh_shell(tmp_path / "empty")  # no `python` at all
    assert interpreter() == shlex.quote(sys.executable)
    assert command_line("train") == f"{shlex.quote(sys.executable)} cli.py train"

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
