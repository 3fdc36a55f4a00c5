"""Tests for `hierattn.cli.commands`: printed commands start as the user started the program (`fresh_shell`: conftest)."""

import os
import sys

import pytest

from hierattn.cli.commands import command_line, program_name


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
