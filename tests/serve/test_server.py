"""`hierattn serve` as a process on a free loopback port: ready, batching, explaining, overloaded, stopped.

Each test talks to a real server over TCP: predictions ready before the
Keras classifier loads, concurrent requests batched with no answer mixed
up, explanations equal to `explain --format json`, a full queue answered
503, a client that leaves dropped before its work runs, a crashed
explanation worker started again, and SIGTERM letting requests in flight
finish (new ones, and connections waiting to be accepted, answered 503)
before the process exits 0.
"""

import concurrent.futures
import json
import os
import pathlib
import signal
import socket

import httpx
import numpy as np
import pytest
from click.testing import CliRunner

from hierattn import runtime
from hierattn.cli import cli
from hierattn.runs.directory import BUNDLE_FILE

TEXTS = [f"{'a good and great film' if i % 2 else 'a bad and awful plot'} number {i}" for i in range(64)]


@pytest.fixture(scope="module")
def server(han_run_dir, start_server):
    server = start_server(han_run_dir)
    server.first_readiness = server.client.get("/readyz").json()
    server.wait_for_explanations()
    return server


def test_predictions_are_ready_before_the_explanations(server):
    assert server.first_readiness == {"predict": True, "explain": "loading"}
    assert server.client.get("/readyz").json() == {"predict": True, "explain": "ready"}
    server.wait_until(lambda: "explanations ready" in server.log(), 10)


def test_head_answers_like_get_without_a_body(server):
    for path in ("/", "/healthz", "/readyz", "/v1/model"):
        answer = server.client.head(path)
        assert answer.status_code == 200 and answer.content == b"", path


def test_concurrent_requests_each_get_their_own_answer(server, han_run_dir):
    with concurrent.futures.ThreadPoolExecutor(32) as pool:
        answers = list(pool.map(lambda text: server.client.post("/v1/predict", json={"text": text}), TEXTS))
    assert all(answer.status_code == 200 for answer in answers)
    predictor = runtime.load(han_run_dir / BUNDLE_FILE)
    got = np.array([[a.json()["predictions"][0]["probabilities"][n] for n in predictor.label_names] for a in answers])
    np.testing.assert_allclose(got, predictor.predict(TEXTS), atol=1e-6)


def test_an_explanation_is_explain_format_json(server, han_run_dir):
    text = "A great film. The plot was bad, but the acting was good and the music great."
    answer = server.client.post("/v1/explain", json={"text": text, "top_k": 5})
    assert answer.status_code == 200 and answer.headers["content-type"] == "application/json"
    result = CliRunner().invoke(cli, ["explain", text, "--run", str(han_run_dir), "--format", "json", "--top-k", "5"])
    assert result.exit_code == 0, result.output
    served, printed = answer.json(), json.loads(result.stdout)
    assert _shape(served) == _shape(printed)
    for a, b in zip(_numbers(served), _numbers(printed)):
        assert a == pytest.approx(b, abs=1e-5)


def _shape(value):
    if isinstance(value, dict):
        return {key: _shape(item) for key, item in value.items()}
    if isinstance(value, list):
        return [_shape(item) for item in value]
    return type(value).__name__ if isinstance(value, float) else value


def _numbers(value):
    if isinstance(value, dict):
        return [n for item in value.values() for n in _numbers(item)]
    if isinstance(value, list):
        return [n for item in value for n in _numbers(item)]
    return [value] if isinstance(value, float) else []


def _send_and_leave(server, path, payload, queue):
    """Sends one request on a raw connection and closes it, without reading the answer, once its work is queued."""
    host, port = server.url.removeprefix("http://").rstrip("/").split(":")
    body = json.dumps(payload).encode()
    with socket.create_connection((host, int(port)), timeout=10) as connection:
        connection.sendall(
            f"POST {path} HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
            f"Content-Length: {len(body)}\r\n\r\n".encode()
            + body
        )
        server.wait_until(lambda: server.queues()[queue]["waiting"] == 1, 30)


def test_a_crashed_explanation_worker_is_started_again(server):
    worker = _worker_pid(server.process.pid)
    os.kill(worker, signal.SIGKILL)
    with concurrent.futures.ThreadPoolExecutor(4) as pool:  # several requests find it gone at once
        answers = list(pool.map(lambda i: server.client.post("/v1/explain", json={"text": f"good {i}"}), range(4)))
    assert {answer.status_code for answer in answers} == {503}, [answer.text for answer in answers]
    assert all("starting again" in answer.json()["error"] for answer in answers)
    assert all(answer.headers["retry-after"] == "10" for answer in answers)
    assert server.client.post("/v1/predict", json={"text": "a good film"}).status_code == 200
    server.wait_for_explanations()
    assert server.client.post("/v1/explain", json={"text": "a good film"}).status_code == 200
    assert server.log().count("the explanation worker stopped; starting it again") == 1
    assert _worker_pid(server.process.pid) != worker


def _worker_pid(parent):
    """The explanation worker: the server's child process that runs multiprocessing's spawn main."""
    for task in pathlib.Path(f"/proc/{parent}/task").iterdir():
        for child in (task / "children").read_text().split():
            command = pathlib.Path(f"/proc/{child}/cmdline").read_bytes()
            if b"spawn_main" in command:
                return int(child)
    raise AssertionError("no explanation worker process found")


@pytest.fixture(scope="module")
def slow_server(han_run_dir, start_server):
    """Predictions only, each batch gathering for a second, at most two texts waiting."""
    return start_server(han_run_dir, "--no-explain", "--max-queue", "2", "--batch-wait-ms", "1000")


def test_requests_that_arrive_together_share_a_batch(slow_server):
    before = slow_server.queues()["predict"]["batches"]
    with concurrent.futures.ThreadPoolExecutor(2) as pool:
        answers = list(pool.map(lambda i: slow_server.client.post("/v1/predict", json={"text": TEXTS[i]}), range(2)))
    assert [answer.status_code for answer in answers] == [200, 200]
    assert slow_server.queues()["predict"]["batches"] == before + 1  # both arrived within the batch's second


def test_a_client_that_leaves_leaves_no_work_behind(slow_server):
    before = slow_server.queues()["predict"]
    _send_and_leave(slow_server, "/v1/predict", {"text": "a good film, left behind"}, "predict")  # within the wait
    slow_server.wait_until(lambda: slow_server.queues()["predict"]["dropped"] == before["dropped"] + 1, 10)
    after = slow_server.queues()["predict"]
    assert after["batches"] == before["batches"] and after["waiting"] == 0
    assert "the client went away" in slow_server.log() and "internal error" not in slow_server.log()
    assert slow_server.client.post("/v1/predict", json={"text": "a good film"}).status_code == 200


def test_a_full_queue_is_answered_503_with_retry_after(slow_server):
    with concurrent.futures.ThreadPoolExecutor(8) as pool:
        answers = list(pool.map(lambda i: slow_server.client.post("/v1/predict", json={"text": TEXTS[i]}), range(8)))
    refused = [answer for answer in answers if answer.status_code == 503]
    assert {answer.status_code for answer in answers} == {200, 503}, [answer.status_code for answer in answers]
    assert all(a.headers["retry-after"] == "1" and "busy" in a.json()["error"] for a in refused)
    assert slow_server.client.post("/v1/predict", json={"text": TEXTS[0]}).status_code == 200


def _request(payload, cut=0):
    """A whole `/v1/predict` request's bytes (on a connection closed after its answer), and its last `cut` bytes apart."""
    body = json.dumps(payload).encode()
    head = (
        "POST /v1/predict HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nConnection: close\r\n"
        f"Content-Length: {len(body)}\r\n\r\n"
    ).encode()
    whole = head + body
    return whole[: len(whole) - cut], whole[len(whole) - cut :]


def _connect(server):
    host, port = server.url.removeprefix("http://").rstrip("/").split(":")
    return socket.create_connection((host, int(port)), timeout=30)


def _answer(connection):
    """The status line and the body of the answer on `connection`, read until the server closes it."""
    answer = b""
    with connection:
        while chunk := connection.recv(65536):
            answer += chunk
    head, _, body = answer.partition(b"\r\n\r\n")
    return head.split(b"\r\n")[0].decode(), body


def _hold(server, text):
    """A request sent but for the last byte of its body: in flight until `_finish` sends it."""
    connection = _connect(server)
    sent, rest = _request({"text": text}, cut=1)
    connection.sendall(sent)
    return connection, rest


def _finish(held):
    connection, rest = held
    connection.sendall(rest)
    return _answer(connection)


def _in_flight(server):
    return server.client.get("/v1/model").json()["requests_in_flight"] - 1  # not counting this one


def _worker_begun(server):
    """Whether the explanation worker has begun: it ignores SIGINT from then on (`hierattn.serve.explaining.begin`),
    and the server, which has its process id, can end it."""
    try:
        status = pathlib.Path(f"/proc/{_worker_pid(server.process.pid)}/status").read_text()
    except (AssertionError, OSError):  # not started yet, or just gone
        return False
    (ignored,) = [int(line.split()[1], 16) for line in status.splitlines() if line.startswith("SigIgn:")]
    return bool(ignored & 1 << (signal.SIGINT - 1))


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGINT], ids=["SIGTERM", "Ctrl-C"])
def test_a_stop_signal_lets_requests_in_flight_finish_and_exits_0(han_run_dir, start_server, sig):
    server = start_server(han_run_dir, "--batch-wait-ms", "200")
    server.wait_until(lambda: _worker_begun(server), 120)  # explanations loading in a worker the stop must end too
    held = [_hold(server, TEXTS[i]) for i in range(4)]  # in flight, whatever the machine's load, until finished
    server.wait_until(lambda: _in_flight(server) == 4, 30)
    server.process.send_signal(sig)
    server.wait_until(lambda: "stopping: 4 request(s) in flight" in server.log(), 30)
    answers = [_finish(connection) for connection in held]  # their texts now go through the batching
    assert [status for status, _ in answers] == ["HTTP/1.1 200 OK"] * 4, answers
    assert [json.loads(body)["predictions"][0]["label"] for _, body in answers] == ["neg", "pos", "neg", "pos"]
    assert server.stop() == 0
    assert server.lines[-1] == "stopped" and "Traceback" not in server.log()
    with pytest.raises(httpx.ConnectError):
        httpx.get(server.url + "healthz", timeout=5)


def test_while_stopping_new_requests_are_answered_503_until_those_in_flight_finish(han_run_dir, start_server):
    server = start_server(han_run_dir, "--no-explain")
    held = _hold(server, TEXTS[1])
    server.wait_until(lambda: _in_flight(server) == 1, 30)
    server.process.send_signal(signal.SIGTERM)
    server.wait_until(lambda: "stopping: 1 request(s) in flight" in server.log(), 30)
    for _ in range(8):  # each on a new connection: answered, not reset or refused, while one request is in flight
        connection = _connect(server)
        connection.sendall(b"".join(_request({"text": TEXTS[0]})))
        status, body = _answer(connection)
        assert status == "HTTP/1.1 503 Service Unavailable", (status, body)
        assert json.loads(body) == {"error": "the server is stopping: it takes no new requests", "status": 503}
    status, body = _finish(held)
    assert status == "HTTP/1.1 200 OK" and json.loads(body)["predictions"][0]["label"] == "pos"
    assert server.stop() == 0 and server.lines[-1] == "stopped" and "Traceback" not in server.log()


def test_connections_waiting_to_be_accepted_at_a_stop_signal_are_answered_not_reset(han_run_dir, start_server):
    server = start_server(han_run_dir, "--no-explain")
    server.process.send_signal(signal.SIGSTOP)  # the process sleeps: connections queue, unaccepted, in its backlog
    try:
        waiting = [_connect(server) for _ in range(8)]
        for connection in waiting:
            connection.sendall(b"".join(_request({"text": TEXTS[2]})))
        server.process.send_signal(signal.SIGTERM)  # pending until it wakes
    finally:
        server.process.send_signal(signal.SIGCONT)
    answers = [_answer(connection) for connection in waiting]  # a reset would raise ConnectionResetError here
    assert {status for status, _ in answers} <= {"HTTP/1.1 200 OK", "HTTP/1.1 503 Service Unavailable"}, answers
    assert all(json.loads(body) for _, body in answers)
    assert server.stop() == 0 and "Traceback" not in server.log()
