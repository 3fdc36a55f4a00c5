"""`hierattn serve`: its options, and the input refused with one `Error:` line before anything is served."""

import socket
import sys

import pytest
from click.testing import CliRunner

from hierattn.cli import cli
from hierattn.utils.shell import pip_install_extra

pytest.importorskip("fastapi", reason="the serve extra is not installed (pip install -e '.[serve]')")


def invoke(*args):
    return CliRunner().invoke(cli, [str(a) for a in args])


def errors(result):
    return [line for line in result.output.splitlines() if line.startswith("Error:")]


def test_help_lists_the_routes_and_the_options():
    result = invoke("serve", "--help")
    assert result.exit_code == 0
    for word in ("/v1/predict", "/v1/explain", "--no-explain", "--cors-origin", "--max-queue", "--predict-threads"):
        assert word in result.output
    assert "[default: 127.0.0.1]" in result.output


def test_a_missing_run_is_one_error_line(tmp_path):
    result = invoke("serve", "--run", tmp_path / "absent", "--port", 0)
    assert result.exit_code == 1 and errors(result) == [f"Error: no run directory at {tmp_path / 'absent'}"]
    assert "Traceback" not in result.output


def test_a_port_in_use_is_one_error_line(han_run_dir):
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        result = invoke("serve", "--run", han_run_dir, "--port", port)
    assert result.exit_code == 1
    assert errors(result) == [f"Error: cannot listen on 127.0.0.1:{port} (address already in use)"]


def test_an_unknown_host_is_one_error_line(han_run_dir):
    result = invoke("serve", "--run", han_run_dir, "--host", "no-such-host.invalid", "--port", 0)
    assert result.exit_code == 1 and errors(result)[0].startswith("Error: cannot listen on no-such-host.invalid:0")


# Every numeric option: NaN, infinities, negatives, zero where it means nothing, absurdly large, not a number.
OUT_OF_RANGE = [
    ("--port", "70000"),
    ("--port", "-1"),
    ("--max-batch", "0"),
    ("--max-batch", "1000000000000"),
    ("--batch-wait-ms", "nan"),
    ("--batch-wait-ms", "inf"),
    ("--batch-wait-ms", "-inf"),
    ("--batch-wait-ms", "-1"),
    ("--batch-wait-ms", "1e9"),
    ("--batch-size", "0"),
    ("--batch-size", "99999999"),
    ("--predict-threads", "0"),
    ("--predict-threads", "1000000"),
    ("--max-queue", "-1"),
    ("--max-queue", "100000000000"),
    ("--max-explain-queue", "0"),
    ("--max-body-bytes", "0"),
    ("--max-body-bytes", "9223372036854775807"),
    ("--max-texts", "x"),
    ("--max-texts", "nan"),
    ("--max-text-chars", "0"),
    ("--max-text-chars", "1e3"),
]


@pytest.mark.parametrize("option, value", OUT_OF_RANGE, ids=[" ".join(case) for case in OUT_OF_RANGE])
def test_an_option_out_of_range_is_one_error_line_before_anything_loads(tmp_path, option, value):
    result = invoke(
        "serve", "--run", tmp_path / "no-run", "--port", 0, option, value
    )  # the option's error, not the run's
    assert result.exit_code == 2 and len(errors(result)) == 1 and option in errors(result)[0], result.output
    assert "Traceback" not in result.output


def test_without_the_serve_extra_it_says_what_to_install(monkeypatch):
    monkeypatch.setitem(sys.modules, "uvicorn", None)  # `import uvicorn` raises ImportError
    result = invoke("serve", "--port", 0)
    assert result.exit_code == 1
    assert errors(result)[0].endswith(pip_install_extra("serve"))  # hierattn is not on PyPI: the clone's extra
