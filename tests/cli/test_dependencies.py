"""Tests for hierattn.cli.dependencies: a Python without hierattn's dependencies gets one `Error:` line, not a traceback.

The real case is a Python outside the project's `.venv` (the system's
`python3`). Here that Python is this one started with `-S`, which leaves out
every `site-packages` folder: it has the standard library and this checkout
(beside `cli.py`, or on `PYTHONPATH`), and, where a test puts it on
`PYTHONPATH`, click alone.
"""

import os
import pathlib
import re
import subprocess
import sys

import click
import pytest

import hierattn.cli
from hierattn.cli import dependencies, group
from hierattn.cli.dependencies import missing_module, missing_text
from hierattn.utils.shell import interpreter, pip_install_extra, requirements

ROOT = pathlib.Path(__file__).resolve().parents[2]
ONE_LINE = re.compile(
    r"Error: hierattn's dependencies are not installed for this Python \((?P<python>.+): No module named "
    r"'(?P<module>[\w.]+)'\); (?P<what>.+)\n"
)


def without_site_packages(*args, path=(), cwd=ROOT):
    """This Python with `-S` (no site-packages: no click, NumPy, pandas, ...), `path` on `PYTHONPATH`."""
    env = {"PATH": os.environ.get("PATH", os.defpath), "HOME": os.environ.get("HOME", "/")}
    if path:
        env["PYTHONPATH"] = os.pathsep.join(map(str, path))
    return subprocess.run(
        [sys.executable, "-S", *map(str, args)], capture_output=True, text=True, env=env, cwd=cwd, timeout=60
    )


def one_line(result):
    """The missing module named by `result`'s one `Error:` line (exit code 1, nothing else printed)."""
    assert result.returncode == 1, result.stderr
    assert result.stdout == "" and "Traceback" not in result.stderr, result.stderr
    found = ONE_LINE.fullmatch(result.stderr)
    assert found, result.stderr
    return found["module"]


@pytest.fixture(scope="module")
def click_alone(tmp_path_factory):
    """A folder holding click and nothing else that is third-party: for a Python where the commands load, no more."""
    folder = tmp_path_factory.mktemp("click-alone")
    (folder / "click").symlink_to(pathlib.Path(click.__file__).parent, target_is_directory=True)
    return folder


@pytest.mark.parametrize(
    "program",
    [["cli.py"], ["-m", "hierattn"]],
    ids=["cli.py", "python -m hierattn"],
)
def test_help_without_click_is_one_line_naming_it(program):
    assert one_line(without_site_packages(*program, "--help")) == "click"


def test_the_installed_script_without_click_is_one_line_too(tmp_path):
    script = tmp_path / "bin" / "hierattn"  # what pip writes for [project.scripts]: hierattn.cli:main
    script.parent.mkdir()
    script.write_text("import sys\nfrom hierattn.cli import main\n\nif __name__ == '__main__':\n    sys.exit(main())\n")
    assert one_line(without_site_packages(script, "predict", "a text", path=[ROOT])) == "click"


def test_a_module_a_command_imports_as_it_runs_is_one_line_too(click_alone, han_run_dir, tmp_path):
    # click loads the commands; what `train csv` and `predict` import once they run (pandas, NumPy, onnxruntime) is
    # missing.
    (tmp_path / "x.csv").write_text("text,label\ngreat film,pos\nawful film,neg\n")
    trained = one_line(without_site_packages("cli.py", "train", "csv", tmp_path / "x.csv", path=[click_alone]))
    predicted = one_line(without_site_packages("cli.py", "predict", "a text", "--run", han_run_dir, path=[click_alone]))
    assert trained != "click" and predicted != "click"


def test_a_missing_module_of_hierattn_itself_is_a_real_error(monkeypatch, capsys):
    def broken(*args, **kwargs):
        import hierattn.no_such_module  # noqa: F401  (a bug: stays an error with its traceback)

    monkeypatch.setattr(group.cli, "main", broken)
    with pytest.raises(ModuleNotFoundError, match="hierattn.no_such_module"):
        hierattn.cli.main(["--help"])

    def lacking(*args, **kwargs):
        raise ModuleNotFoundError("No module named 'no_such_dependency'", name="no_such_dependency")

    monkeypatch.setattr(group.cli, "main", lacking)
    monkeypatch.setattr(dependencies, "REQUIRED_MODULES", dependencies.REQUIRED_MODULES | {"no_such_dependency"})
    with pytest.raises(SystemExit) as exit:
        hierattn.cli.main(["--help"])
    assert exit.value.code == 1
    assert re.fullmatch(
        r"Error: hierattn's dependencies are not installed for this Python \(.+: No module named "
        r"'no_such_dependency'\); .+\n",
        capsys.readouterr().err,
    )


@pytest.mark.parametrize(
    "name, missing",
    [
        ("no_such_dependency", "no_such_dependency"),  # (made a requirement here)
        ("no_such_dependency.sub", "no_such_dependency"),
        ("not_required", None),  # not one hierattn requires: an import it should not make, a bug
        ("hierattn.no_such_module", None),  # hierattn's own: a bug
        ("_lzma", None),  # the standard library's: a Python built without it
        ("numpy.no_such_module", None),  # a package that is installed: a bug
        (None, None),
    ],
)
def test_only_a_required_module_this_python_cannot_find_counts_as_missing(name, missing, monkeypatch):
    monkeypatch.setattr(dependencies, "REQUIRED_MODULES", dependencies.REQUIRED_MODULES | {"no_such_dependency"})
    assert missing_module(ModuleNotFoundError(f"No module named {name!r}", name=name)) == missing


@pytest.fixture
def a_clone(tmp_path, monkeypatch, fresh_shell):
    """A clone of hierattn (`tmp_path/clone`) the program runs from, started as `/usr/bin/python3 cli.py`."""
    clone = tmp_path / "clone"
    clone.mkdir()
    (tmp_path / "elsewhere").mkdir()
    monkeypatch.setattr(dependencies, "source_tree", lambda: clone)
    monkeypatch.setattr("sys.executable", "/usr/bin/python3")
    monkeypatch.setattr("sys.argv", ["cli.py", "train"])
    monkeypatch.chdir(clone)
    fresh_shell(tmp_path / "empty")  # no `python` in a new shell: a Python is named by its path
    return clone


PANDAS = ModuleNotFoundError("No module named 'pandas'", name="pandas")
LACKS = "hierattn's dependencies are not installed for this Python (/usr/bin/python3: No module named 'pandas'); "


def test_from_a_clone_with_its_venv_it_says_to_run_the_same_command_with_the_venvs_python(
    a_clone, tmp_path, monkeypatch
):
    (a_clone / ".venv" / "bin").mkdir(parents=True)
    (a_clone / ".venv" / "bin" / "python").touch()
    assert missing_text(PANDAS, ["train", "csv", "my data.csv"]) == (
        LACKS + "run it with .venv's Python: .venv/bin/python cli.py train csv 'my data.csv' (or activate .venv "
        "first: . .venv/bin/activate)"
    )
    monkeypatch.chdir(tmp_path / "elsewhere")  # outside the clone: the paths in full
    assert missing_text(PANDAS, ["--help"]).endswith(
        f"run it with .venv's Python: {a_clone}/.venv/bin/python cli.py --help (or activate .venv first: . "
        f"{a_clone}/.venv/bin/activate)"
    )


def test_from_a_clone_without_a_venv_it_says_to_make_one(a_clone, tmp_path, monkeypatch):
    assert missing_text(PANDAS, ["--help"]) == (
        LACKS + "run `make install` (it makes .venv and installs them there), then: .venv/bin/python cli.py --help"
    )
    monkeypatch.chdir(tmp_path / "elsewhere")
    assert missing_text(PANDAS, []).startswith(LACKS + f"run `make -C {a_clone} install` (it makes .venv")


def test_the_venvs_own_python_without_them_is_told_to_install_them_there(a_clone, monkeypatch):
    monkeypatch.setattr("sys.executable", str(a_clone / ".venv" / "bin" / "python"))
    assert missing_text(PANDAS, ["--help"]).endswith("; install them into .venv: .venv/bin/python -m pip install -e .")


def test_installed_without_them_it_names_what_to_install(a_clone, monkeypatch):
    monkeypatch.setattr(dependencies, "source_tree", lambda: None)  # `pip install --no-deps /path/to/hierattn`
    monkeypatch.setattr(dependencies, "requirements", lambda: ("click>=8.1", "pandas>=2.0"))
    assert (
        missing_text(PANDAS, ["--help"])
        == LACKS + "install them: /usr/bin/python3 -m pip install 'click>=8.1' 'pandas>=2.0'"
    )


def test_an_extra_is_installed_from_the_clone_or_by_its_requirements(monkeypatch):
    # hierattn is not on PyPI: `pip install 'hierattn[serve]'` would find nothing
    monkeypatch.chdir(ROOT)
    assert pip_install_extra("serve") == f"{interpreter()} -m pip install -e '.[serve]'"
    monkeypatch.setattr("hierattn.utils.shell.source_tree", lambda: None)  # installed elsewhere
    if not requirements("serve"):
        pytest.skip("hierattn's metadata is not installed")
    assert pip_install_extra("serve") == f"{interpreter()} -m pip install 'fastapi>=0.110' 'uvicorn[standard]>=0.30'"


def test_the_required_modules_are_those_pyproject_requires():
    import tomllib

    project = tomllib.loads((pathlib.Path(hierattn.__file__).parents[1] / "pyproject.toml").read_text())["project"]
    names = {re.split(r"[<>=!~;\[ ]", line, maxsplit=1)[0] for line in project["dependencies"]}
    assert {
        {"scikit-learn": "sklearn", "charset-normalizer": "charset_normalizer"}.get(name, name) for name in names
    } <= dependencies.REQUIRED_MODULES
