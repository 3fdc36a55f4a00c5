"""`hierattn serve`: its options, and the input refused with one `Error:` line before anything is served."""

import socket
import sys

import pytest
from click.testing import CliRunner

from hierattn.cli import cli

pytest.importorskip("fastapi", reason="the serve extra is not installed (pip install 'hierattn[serve]')")


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


@pytest.mark.parametrize(
    "option, value", [("--port", "70000"), ("--max-batch", "0"), ("--batch-wait-ms", "-1"), ("--max-texts", "x")]
)
def test_an_option_out_of_range_is_a_usage_error(option, value):
    result = invoke("serve", option, value)
    assert result.exit_code == 2 and option in result.output


def test_without_the_serve_extra_it_says_what_to_install(monkeypatch):
    monkeypatch.setitem(sys.modules, "uvicorn", None)  # `import uvicorn` raises ImportError
    result = invoke("serve", "--port", 0)
    assert result.exit_code == 1
    assert errors(result)[0].endswith('pip install "hierattn[serve]"')
