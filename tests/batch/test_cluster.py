"""Tests for hierattn.batch.cluster: an address where nothing answers, workers a cluster cannot place, SIGTERM."""

import os
import signal
import socket
import threading
import time

import pytest

from hierattn.batch.cluster import (
    Stopped,
    check_address,
    check_placeable,
    check_workers,
    sigterm_deferred,
    sigterm_held,
    stop_on_sigterm,
)
from hierattn.errors import ArgumentError, HierattnError


def _closed_port():
    """A local port where nothing listens (it was free a moment ago)."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def test_an_address_where_nothing_answers_is_refused_at_once(monkeypatch):
    monkeypatch.delenv("RAY_ADDRESS", raising=False)
    port = _closed_port()
    start = time.monotonic()
    with pytest.raises(ArgumentError, match=rf"^no Ray cluster answers at 127.0.0.1:{port}: connection refused; .*"):
        check_address(f"127.0.0.1:{port}")
    with pytest.raises(ArgumentError, match=rf"^no Ray cluster answers at ray://127.0.0.1:{port}: .* check address$"):
        check_address(f"ray://127.0.0.1:{port}")
    monkeypatch.setenv("RAY_ADDRESS", f"127.0.0.1:{port}")  # what ray.init joins for None or "auto"
    for address in (None, "auto"):
        with pytest.raises(HierattnError, match=rf"answers at 127.0.0.1:{port} \(RAY_ADDRESS\)"):
            check_address(address)
    assert time.monotonic() - start < 5
    monkeypatch.delenv("RAY_ADDRESS")
    for address in ("head-node", "head-node:port", "1.2.3.4:0", ":6379", "foo:1:2"):
        with pytest.raises(ArgumentError, match=r"^address must be auto, HOST:PORT or ray://HOST:PORT; got "):
            check_address(address)
    with socket.create_server(("127.0.0.1", 0)) as server:  # something answers: joining it is Ray's to try
        check_address(f"127.0.0.1:{server.getsockname()[1]}")
    if socket.has_ipv6:
        with pytest.raises(ArgumentError, match=r"^no Ray cluster answers at \[::1\]:"):
            check_address(f"[::1]:{port}")
    check_address(None), check_address("auto"), check_address("local")  # a cluster on this machine: nothing to try


def test_predict_files_refuses_such_an_address_in_seconds_and_writes_nothing(monkeypatch, han_run_dir, tmp_path):
    """It waited a minute and more in ray.init (issue #54)."""
    ray = pytest.importorskip("ray", reason='Ray is not installed (pip install -e ".[ray]")')
    from hierattn.batch import predict_files

    if ray.is_initialized():  # a cluster this process holds is used as it is, whatever the address
        pytest.skip("this process is connected to a Ray cluster")
    monkeypatch.delenv("RAY_ADDRESS", raising=False)
    (tmp_path / "in.csv").write_text("text\na good film\n")
    start = time.monotonic()
    with pytest.raises(ArgumentError, match=r"^no Ray cluster answers at 127.0.0.1:\d+: connection refused"):
        predict_files(tmp_path / "in.csv", tmp_path / "out", han_run_dir, address=f"127.0.0.1:{_closed_port()}")
    assert time.monotonic() - start < 15
    assert sorted(p.name for p in tmp_path.iterdir()) == ["in.csv"] and not ray.is_initialized()


def test_worker_counts_are_whole_numbers_the_cluster_can_place():
    check_workers(None), check_workers(3)
    for bad in (0, -1, 2.5, True, "2", float("nan"), float("inf")):
        with pytest.raises(ArgumentError, match="^workers must be a whole number of at least 1"):
            check_workers(bad)
    check_placeable(2, 2.0), check_placeable(None, 2.0), check_placeable(1, 0.5)  # a fraction of a CPU: one worker
    with pytest.raises(ArgumentError, match=r"^workers must be at most 2, one per CPU .*\(it has 2 CPUs\); got 1000$"):
        check_placeable(1000, 2.0)
    with pytest.raises(ArgumentError, match=r"at most 1, .*\(it has 0.5 CPUs\); got 2$"):
        check_placeable(2, 0.5)


def _sigterm_to_this_thread():
    signal.pthread_kill(threading.main_thread().ident, signal.SIGTERM)


def test_sigterm_stops_the_block_once_and_the_handler_before_comes_back():
    before = signal.getsignal(signal.SIGTERM)
    undone = False
    with pytest.raises(Stopped) as stopped:
        with stop_on_sigterm():
            try:
                _sigterm_to_this_thread()
                time.sleep(5)  # the handler raises here
            finally:
                _sigterm_to_this_thread()  # a second one while the job is undone: ignored
                time.sleep(0.1)
                undone = True
    assert undone and stopped.value.code == 143 and not isinstance(stopped.value, Exception)
    assert signal.getsignal(signal.SIGTERM) is before


def test_a_held_sigterm_stops_the_block_only_when_it_ends():
    """While Ray starts its processes (which keep it held: a SIGTERM to the process group reaches only the job)."""
    reached = False
    with pytest.raises(Stopped):
        with stop_on_sigterm() as arm, sigterm_held():
            _sigterm_to_this_thread()
            time.sleep(0.2)
            arm()  # as after ray.init
            reached = True
    assert reached
    assert signal.SIGTERM not in signal.pthread_sigmask(signal.SIG_BLOCK, set())  # not held any more


def test_a_sigterm_while_the_cluster_shuts_down_stops_the_job_once_it_is_down():
    """`sigterm_deferred` around `ray.shutdown()`: the shutdown runs to its end, then the job's handler stops it."""
    finished = False
    with pytest.raises(Stopped):
        with stop_on_sigterm(), sigterm_deferred():
            os.kill(os.getpid(), signal.SIGTERM)  # to the process: Python runs the handler in the main thread
            time.sleep(0.2)  # handlers have run by now
            finished = True  # not cut short
    assert finished
    with sigterm_deferred():  # none came: nothing raised
        pass
