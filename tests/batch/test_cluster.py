"""Tests for hierattn.batch.cluster: an address where nothing answers, workers a cluster cannot place, SIGTERM."""

import contextlib
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
    ray_address_file,
    sigterm_deferred,
    sigterm_held,
    stop_on_sigterm,
)
from hierattn.defaults import BATCH
from hierattn.errors import ArgumentError, HierattnError


def _closed_port():
    """A local port where nothing listens (it was free a moment ago)."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


@pytest.fixture
def no_recorded_cluster(monkeypatch, tmp_path):
    """No RAY_ADDRESS, and Ray's temporary folder an empty one of this test's (not the machine's /tmp/ray)."""
    monkeypatch.delenv("RAY_ADDRESS", raising=False)
    monkeypatch.setenv("RAY_TMPDIR", str(tmp_path))
    return tmp_path / "ray" / "ray_current_cluster"


def test_an_address_where_nothing_answers_is_refused_at_once(monkeypatch, no_recorded_cluster):
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
    if socket.has_ipv6:
        with pytest.raises(ArgumentError, match=r"^no Ray cluster answers at \[::1\]:"):
            check_address(f"[::1]:{port}")
    check_address(None), check_address("auto"), check_address("local")  # a cluster on this machine: nothing to try


@contextlib.contextmanager
def _server(answer):
    """A TCP server on 127.0.0.1 that is not Ray: each connection gets `answer` (bytes), or with None nothing
    until it is closed; its port."""
    stop = threading.Event()
    listener = socket.create_server(("127.0.0.1", 0))
    listener.settimeout(0.1)

    def serve():
        held = []
        while not stop.is_set():
            try:
                connection, _ = listener.accept()
            except TimeoutError:
                continue
            held.append(connection)
            if answer is not None:
                connection.sendall(answer)
        for connection in held:
            connection.close()

    thread = threading.Thread(target=serve, daemon=True)
    thread.start()
    try:
        yield listener.getsockname()[1]
    finally:
        stop.set()
        thread.join()
        listener.close()


@pytest.mark.parametrize(
    "answer, why",
    [
        (b"HTTP/1.1 400 Bad Request\r\nContent-Length: 0\r\n\r\n", r"something else listens there \(it answered "),
        (b"-ERR unknown command\r\n", r"something else listens there"),
        (None, r"something listens there but gave no HTTP/2 answer within"),
        (b"", r"something listens there but gave no HTTP/2 answer within"),
    ],
    ids=["http1", "redis-like", "silent", "accepts-only"],
)
def test_a_port_that_answers_but_is_not_ray_is_refused_within_seconds(no_recorded_cluster, answer, why):
    """It made `ray.init` wait 25-100 s (issue #67): a Ray GCS answers an HTTP/2 greeting with HTTP/2 settings."""
    with _server(answer) as port:
        for address in (f"127.0.0.1:{port}", f"ray://127.0.0.1:{port}"):
            start = time.monotonic()
            with pytest.raises(ArgumentError, match=rf"^no Ray cluster answers at {address}: {why}") as refused:
                check_address(address, timeout=1)
            assert time.monotonic() - start < 4 and "\n" not in str(
                refused.value
            )  # connecting and the answer: 1 s, and a loaded machine
    assert BATCH["connect_seconds"] < 10  # the default wait, all told


def test_an_http2_server_passes_the_check(no_recorded_cluster):
    """What a gRPC server (Ray's GCS, Ray Client's server) answers first: a SETTINGS frame."""
    with _server(b"\x00\x00\x06\x04\x00\x00\x00\x00\x00\x00\x03\x00\x00\x00\x64") as port:
        check_address(f"127.0.0.1:{port}", timeout=2)
        check_address(f"ray://127.0.0.1:{port}", timeout=2)


def test_a_stale_recorded_cluster_is_refused_within_seconds(no_recorded_cluster):
    """`ray start` records its cluster in Ray's temporary folder; `ray.init()` and `ray.init("auto")` join it, and
    waited minutes when it was gone."""
    assert ray_address_file() == str(no_recorded_cluster)
    no_recorded_cluster.parent.mkdir()
    check_address(None), check_address("auto")  # nothing recorded: a cluster on this machine, nothing to try
    no_recorded_cluster.write_text(f"127.0.0.1:{_closed_port()}\n")
    for address in (None, "auto"):
        start = time.monotonic()
        with pytest.raises(
            HierattnError,
            match=r"^no Ray cluster answers at 127.0.0.1:\d+, the cluster last started "
            r"on this machine \(.*ray_current_cluster\): connection refused; .* give address$",
        ):
            check_address(address)
        assert time.monotonic() - start < 10
    with _server(b"HTTP/1.1 200 OK\r\n\r\n") as port:
        no_recorded_cluster.write_text(f"127.0.0.1:{port}")
        with pytest.raises(HierattnError, match="something else listens there"):
            check_address("auto", timeout=1)
    no_recorded_cluster.write_text("garbage")
    with pytest.raises(HierattnError, match=r"ray_current_cluster must hold HOST:PORT or ray://HOST:PORT; got 'garb"):
        check_address(None)
    check_address("local")  # a new cluster: the recorded one is not used


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
