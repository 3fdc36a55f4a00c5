"""The bad-request suite, against a real server: each kind of bad request gets a 4xx JSON error and changes nothing.

Requests a client can get wrong, sent to a `hierattn serve` process: what
the body is (not JSON, not an object, wrong types, unknown fields), what the
texts are (empty, wordless, too long, too many, not Unicode), the body's
size and framing, routes and methods. Every answer is a 4xx with
`{"error": "...", "status": N}`, and afterwards the server still answers the
same prediction for the same text.
"""

import json
import socket

import pytest

GOOD = {"texts": ["a good and great film", "a bad and awful plot"]}
MAX_BODY = 4096  # the suite's server: --max-body-bytes 4096 --max-texts 5 --max-text-chars 300


def _body(payload):
    return json.dumps(payload).encode()


JSON = {"content-type": "application/json"}

# (kind, method, path, body bytes, headers, expected status, a phrase of the error)
CASES = [
    ("truncated JSON", "POST", "/v1/predict", b'{"texts": ["a good', JSON, 400, "not valid JSON"),
    ("empty body", "POST", "/v1/predict", b"", JSON, 400, "not valid JSON"),
    ("invalid UTF-8 bytes", "POST", "/v1/predict", b'{"text": "\xff\xfe good"}', JSON, 400, "not valid JSON"),
    ("JSON nested beyond reason", "POST", "/v1/predict", b"[" * 100_000, JSON, 413, "limit"),
    (
        "deep nesting within the size limit",
        "POST",
        "/v1/predict",
        b'{"texts": ' + b"[" * 1500 + b"]" * 1500 + b"}",
        JSON,
        400,
        "recursion",
    ),
    ("NaN literal", "POST", "/v1/predict", b'{"text": NaN}', JSON, 422, "valid string"),
    ("a JSON list", "POST", "/v1/predict", _body(["a good film"]), JSON, 422, "should be an object"),
    ("a JSON string", "POST", "/v1/predict", _body("a good film"), JSON, 422, "should be an object"),
    ("JSON null", "POST", "/v1/predict", b"null", JSON, 422, "should be an object"),
    ("a JSON number", "POST", "/v1/predict", b"42", JSON, 422, "should be an object"),
    ("no content type", "POST", "/v1/predict", _body(GOOD), {}, 415, "Content-Type: application/json"),
    ("text/plain", "POST", "/v1/predict", _body(GOOD), {"content-type": "text/plain"}, 415, "text/plain"),
    ("a form", "POST", "/v1/predict", b"text=good", {"content-type": "application/x-www-form-urlencoded"}, 415, "JSON"),
    ("texts a string", "POST", "/v1/predict", _body({"texts": "a good film"}), JSON, 422, "texts"),
    ("texts with a number", "POST", "/v1/predict", _body({"texts": ["a good film", 3]}), JSON, 422, "texts[1]: Input"),
    ("texts with null", "POST", "/v1/predict", _body({"texts": ["good", None]}), JSON, 422, "texts[1]: Input"),
    ("texts with a list", "POST", "/v1/predict", _body({"texts": [["a good film"]]}), JSON, 422, "texts[0]: Input"),
    ("texts with an object", "POST", "/v1/predict", _body({"texts": ["good", {"a": 1}]}), JSON, 422, "texts[1]: Input"),
    ("texts with a boolean", "POST", "/v1/predict", _body({"texts": [False]}), JSON, 422, "texts[0]: Input"),
    ("texts with a float", "POST", "/v1/predict", _body({"texts": ["good", 0.5]}), JSON, 422, "texts[1]: Input"),
    ("text a number", "POST", "/v1/predict", _body({"text": 7}), JSON, 422, "text: Input should be a valid string"),
    ("text a boolean", "POST", "/v1/predict", _body({"text": True}), JSON, 422, "valid string"),
    ("text an object", "POST", "/v1/predict", _body({"text": {"a": "b"}}), JSON, 422, "valid string"),
    ("both text and texts", "POST", "/v1/predict", _body({"text": "good", "texts": ["good"]}), JSON, 422, "not both"),
    ("neither text nor texts", "POST", "/v1/predict", _body({}), JSON, 422, "give text"),
    ("an unknown field", "POST", "/v1/predict", _body({**GOOD, "run": "/etc"}), JSON, 422, "run: Extra inputs"),
    ("no texts", "POST", "/v1/predict", _body({"texts": []}), JSON, 422, "texts is empty"),
    ("an empty text", "POST", "/v1/predict", _body({"texts": ["good", ""]}), JSON, 422, "texts[1] is empty"),
    ("a blank text", "POST", "/v1/predict", _body({"text": " \n\t "}), JSON, 422, "text is empty"),
    ("a wordless text", "POST", "/v1/predict", _body({"text": "<br /> <br/>"}), JSON, 422, "no word"),
    ("a text over the limit", "POST", "/v1/predict", _body({"text": "good " * 70}), JSON, 422, "limit is 300"),
    ("too many texts", "POST", "/v1/predict", _body({"texts": ["good"] * 6}), JSON, 422, "limit is 5"),
    ("a lone surrogate", "POST", "/v1/predict", b'{"text": "good \\ud800 film"}', JSON, 400, "not valid JSON"),
    ("a body over the limit", "POST", "/v1/predict", _body({"text": "a" * 5000}), JSON, 413, "the limit is 4,096"),
    ("explain: texts", "POST", "/v1/explain", _body(GOOD), JSON, 422, "text: Field required"),
    ("explain: no text", "POST", "/v1/explain", _body({"top_k": 3}), JSON, 422, "text: Field required"),
    ("explain: top_k 0", "POST", "/v1/explain", _body({"text": "good", "top_k": 0}), JSON, 422, "top_k"),
    ("explain: top_k a string", "POST", "/v1/explain", _body({"text": "good", "top_k": "5"}), JSON, 422, "top_k"),
    ("explain: top_k a fraction", "POST", "/v1/explain", _body({"text": "good", "top_k": 2.5}), JSON, 422, "top_k"),
    ("explain: text null", "POST", "/v1/explain", _body({"text": None}), JSON, 422, "text: Input should be"),
    ("explain: text a number", "POST", "/v1/explain", _body({"text": 12}), JSON, 422, "text: Input should be"),
    ("explain: text a list", "POST", "/v1/explain", _body({"text": ["good"]}), JSON, 422, "text: Input should be"),
    ("explain: wordless", "POST", "/v1/explain", _body({"text": "<p></p>"}), JSON, 422, "no word"),
    ("an unknown route", "GET", "/v1/predictions", b"", {}, 404, "Not Found"),
    ("a file path as a route", "GET", "/../../etc/passwd", b"", {}, 404, "Not Found"),
    ("GET on predict", "GET", "/v1/predict", b"", {}, 405, "Method Not Allowed"),
    ("DELETE on the page", "DELETE", "/", b"", {}, 405, "Method Not Allowed"),
    ("PUT on the model", "PUT", "/v1/model", _body(GOOD), JSON, 405, "Method Not Allowed"),
]


@pytest.fixture(scope="module")
def server(han_run_dir, start_server):
    return start_server(
        han_run_dir, "--no-explain", "--max-body-bytes", "4096", "--max-texts", "5", "--max-text-chars", "300"
    )


@pytest.fixture(scope="module")
def before(server):
    """The server's answer to a good request, before any bad one."""
    answer = server.client.post("/v1/predict", json=GOOD)
    assert answer.status_code == 200, answer.text
    return answer.json()


def test_the_suite_has_at_least_30_kinds():
    assert len({case[0] for case in CASES}) == len(CASES) >= 30


@pytest.mark.parametrize("kind, method, path, body, headers, status, phrase", CASES, ids=[case[0] for case in CASES])
def test_a_bad_request_gets_a_4xx_json_error_and_changes_nothing(
    server, before, kind, method, path, body, headers, status, phrase
):
    answer = server.client.request(method, path, content=body, headers=headers)
    assert answer.status_code == status, (kind, answer.text)
    assert answer.headers["content-type"] == "application/json"
    error = answer.json()
    assert error["status"] == status and phrase in error["error"], error
    assert "Traceback" not in answer.text
    assert server.client.post("/v1/predict", json=GOOD).json() == before  # still answering, and the same
    assert server.process.poll() is None


def _raw(server, request):
    """Sends raw bytes to the server and returns the status line and the body of its answer."""
    host, port = server.url.removeprefix("http://").rstrip("/").split(":")
    with socket.create_connection((host, int(port)), timeout=30) as connection:
        connection.sendall(request)
        answer = b""
        while chunk := connection.recv(65536):
            answer += chunk
    head, _, body = answer.partition(b"\r\n\r\n")
    return head.split(b"\r\n")[0].decode(), body


def test_a_chunked_body_over_the_limit_is_refused_as_it_streams(server, before):
    chunk = b"[" + b'"good", ' * 400  # 3,201 bytes per chunk, no Content-Length: the limit is met while reading
    request = (
        b"POST /v1/predict HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nConnection: close\r\n"
        b"Transfer-Encoding: chunked\r\n\r\n"
        + b"".join(b"%x\r\n%s\r\n" % (len(chunk), chunk) for _ in range(3))
        + b"0\r\n\r\n"
    )
    status, body = _raw(server, request)
    assert status.startswith("HTTP/1.1 413"), (status, body)
    assert json.loads(body)["error"] == "the body is over the limit of 4,096 bytes"
    assert server.client.post("/v1/predict", json=GOOD).json() == before


def test_a_content_length_that_is_not_a_number_is_refused(server, before):
    status, _ = _raw(
        server, b"POST /v1/predict HTTP/1.1\r\nHost: x\r\nContent-Length: ten\r\nConnection: close\r\n\r\n"
    )
    assert status.split()[1].startswith("4"), status  # uvicorn's parser refuses it (400) before the application
    assert server.client.post("/v1/predict", json=GOOD).json() == before


def test_a_request_cut_off_mid_body_leaves_the_server_answering(server, before):
    host, port = server.url.removeprefix("http://").rstrip("/").split(":")
    with socket.create_connection((host, int(port)), timeout=30) as connection:
        connection.sendall(
            b"POST /v1/predict HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
            b'Content-Length: 1000\r\n\r\n{"texts": ["go'
        )
    assert server.client.post("/v1/predict", json=GOOD).json() == before
    server.wait_until(lambda: server.log().count("the client went away") >= 1, 10)
    assert "internal error" not in server.log() and "Traceback" not in server.log()


# Requests that are not HTTP uvicorn can parse: its parser answers them with its own plain-text 400 before the
# application sees them (docs/serve.md, "Errors"): a request line past what the parser takes (httptools: 64 KiB),
# and a body framed both as chunked and by a Content-Length (a request-smuggling pattern HTTP/1.1 forbids).
MALFORMED = {
    "a 100 kB URL": b"GET /v1/model?q=" + b"a" * 100_000 + b" HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n",
    "chunked with a contradicting Content-Length": (
        b"POST /v1/predict HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nConnection: close\r\n"
        b'Transfer-Encoding: chunked\r\nContent-Length: 5\r\n\r\n17\r\n{"text": "a good film"}\r\n0\r\n\r\n'
    ),
}


@pytest.mark.parametrize("request_bytes", MALFORMED.values(), ids=MALFORMED.keys())
def test_a_request_uvicorn_cannot_parse_gets_its_plain_400_and_changes_nothing(server, before, request_bytes):
    status, body = _raw(server, request_bytes)
    assert status.startswith("HTTP/1.1 400"), (status, body)
    assert body == b"Invalid HTTP request received."  # uvicorn's, not the JSON shape: the application never ran
    assert server.client.post("/v1/predict", json=GOOD).json() == before
    assert server.process.poll() is None and "Traceback" not in server.log()
