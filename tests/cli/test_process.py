"""Tests for hierattn.cli.process: the program's process-wide settings and its import finder.

The settings change the whole process (its environment, `sys.meta_path`,
file descriptor 2), so what `configure_process` does is checked in a child
process; the loader that hides a module is checked here on two small modules
of the test's own. The settings' effects on TensorFlow (its log lines, its
allocator, loading it without scikit-learn) are tests/cli/test_cli_faults.py's.
"""

import importlib.util
import os
import pathlib
import subprocess
import sys
import types

import pytest

from hierattn.cli.process import _LoadingWithout, _WithoutScikitLearn

ROOT = pathlib.Path(__file__).resolve().parents[2]


def child(script):
    """The lines `script` prints, run by a fresh Python with this checkout importable."""
    result = subprocess.run(
        [sys.executable, "-c", script],
        capture_output=True,
        text=True,
        timeout=120,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
    )
    assert result.returncode == 0, result.stderr
    return result.stdout.split()


def load(path, hidden):
    """The module at `path`, executed by its own loader wrapped in `_LoadingWithout(loader, hidden)`."""
    spec = importlib.util.spec_from_file_location(path.stem, path)
    own = spec.loader
    spec.loader = _LoadingWithout(own, hidden)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module, own


@pytest.fixture
def modules(tmp_path, monkeypatch):
    """A module `hidden_probe` and the folder of the modules that try to import it, importable."""
    (tmp_path / "hidden_probe.py").write_text("VALUE = 7\n")
    (tmp_path / "needs_probe.py").write_text(
        "try:\n    import hidden_probe\n    FOUND = True\nexcept ImportError:\n    FOUND = False\n"
    )
    (tmp_path / "fails_loading.py").write_text("raise RuntimeError('broken module')\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.delitem(sys.modules, "hidden_probe", raising=False)
    return tmp_path


def test_the_hidden_module_cannot_be_imported_only_while_the_module_loads(modules):
    module, own = load(modules / "needs_probe.py", "hidden_probe")
    assert module.FOUND is False
    assert module.__loader__ is own and module.__spec__.loader is own  # its own loader from then on
    assert "hidden_probe" not in sys.modules
    import hidden_probe  # importable right after

    assert hidden_probe.VALUE == 7


def test_the_hidden_module_comes_back_when_the_module_fails_to_load(modules):
    with pytest.raises(RuntimeError, match="broken module"):
        load(modules / "fails_loading.py", "hidden_probe")
    assert "hidden_probe" not in sys.modules


def test_only_the_named_module_is_hidden(modules):
    module, _ = load(modules / "needs_probe.py", "absent_probe")
    assert module.FOUND is True and "absent_probe" not in sys.modules


def test_the_finder_wraps_only_tensorflow_or_keras_and_only_while_scikit_learn_is_not_loaded(monkeypatch):
    finder = _WithoutScikitLearn()
    monkeypatch.setattr(sys, "meta_path", [finder, *sys.meta_path])
    assert finder.find_spec("numpy") is None and finder in sys.meta_path  # not its business: it stays
    monkeypatch.setitem(sys.modules, "sklearn", types.ModuleType("sklearn"))
    assert finder.find_spec("keras") is None and finder in sys.meta_path  # scikit-learn is loaded: nothing to hide


def test_the_finder_wraps_the_first_of_keras_or_tensorflow_then_leaves():
    script = (
        "import sys; from hierattn.cli.process import _WithoutScikitLearn; finder = _WithoutScikitLearn(); "
        "sys.meta_path.insert(0, finder); spec = finder.find_spec('keras'); "
        "print(type(spec.loader).__name__, spec.loader.hidden, finder in sys.meta_path, 'keras' in sys.modules)"
    )
    assert child(script) == ["_LoadingWithout", "sklearn", "False", "False"]  # found, not loaded


def test_configuring_twice_installs_one_finder_and_one_log_handler():
    script = (
        "import logging, sys; from hierattn.cli.process import _WithoutScikitLearn, configure_process; "
        "configure_process(verbose=True); configure_process(verbose=True); "
        "print(sum(isinstance(f, _WithoutScikitLearn) for f in sys.meta_path), "
        "len(logging.getLogger('hierattn').handlers), logging.getLogger('hierattn').level == logging.DEBUG)"
    )
    assert child(script) == ["1", "1", "True"]
