"""`hierattn serve` fuzzed from its own OpenAPI description (Schemathesis), and with hostile raw HTTP (Hypothesis).

One real server on a free loopback port, explanations on, takes every
request. Schemathesis loads the server's /openapi.json and generates
requests for each operation, valid ones and invalid ones; each must be
answered as the description says (a 2xx, or a 4xx JSON error), never a 5xx,
a reset connection or a timeout. Then requests beyond the description: bodies
that are not JSON, over the size limit, of other content types, and hostile
texts in valid bodies (each answer the runtime's own). At the end the
server still answers a known prediction as the runtime does.

The examples per operation are Hypothesis's (`budget`); Schemathesis's
coverage phase adds its own fixed cases (missing fields, wrong types,
undeclared methods) to each operation on every run.
"""

import collections
import contextlib
import json
import time

import httpx
import numpy as np
import pytest
import requests
import schemathesis
from hypothesis import given
from hypothesis import strategies as st
from schemathesis.checks import not_a_server_error
from schemathesis.config import SchemathesisConfig
from schemathesis.specs.openapi.checks import (
    allow_header_conformance,
    content_type_conformance,
    negative_data_rejection,
    response_headers_conformance,
    response_schema_conformance,
    status_code_conformance,
    unsupported_method,
)

from hierattn import runtime
from hierattn.runs.directory import BUNDLE_FILE

from hostile import budget, hostile_texts

TIMEOUT = 10  # seconds: a request unanswered after this is a hang (#67)
KNOWN = ["a good and great film, a joy", "a bad and awful plot"]


@pytest.fixture(scope="module")
def sent(request):
    """Requests sent and seconds spent, per operation or property: said at the end (benchmarks/fuzz.py reads it).

    Hypothesis's statistics name only the last of Schemathesis's operations, which all share one test.
    """
    counts, seconds = collections.Counter(), collections.Counter()
    yield counts, seconds
    counts["total"], seconds["total"] = sum(counts.values()), sum(seconds.values())
    capture = request.config.pluginmanager.get_plugin("capturemanager")
    with capture.global_and_fixture_disabled() if capture else contextlib.nullcontext():  # as `capsys.disabled()`
        for name in counts:
            rate = counts[name] / seconds[name] if seconds[name] else 0.0
            print(f"\nHTTP requests sent: {name}: {counts[name]} in {seconds[name]:.1f} s ({rate:.0f}/s)", end="")
        print()


@contextlib.contextmanager
def _counted(sent, name):
    counts, seconds = sent
    started = time.perf_counter()
    try:
        yield
    finally:
        counts[name] += 1
        seconds[name] += time.perf_counter() - started


@pytest.fixture(scope="module")
def api(server):
    """The server's own description of its API, as it serves it."""
    return schemathesis.openapi.from_url(server.url + "openapi.json", config=CONFIG)


# An invalid request is refused with one of the API's 4xx: 413 too (a text over the limit may pass the body's 1 MiB
# first), which Schemathesis does not expect by default.
CONFIG = SchemathesisConfig.from_dict(
    {"checks": {"negative_data_rejection": {"expected-statuses": ["400", "404", "405", "413", "415", "422"]}}}
)


schema = schemathesis.pytest.from_fixture("api")


@pytest.fixture(autouse=True)
def _node_id(request):
    """Schemathesis 4.32 names its subtests after `_nodeid`, which pytest 9.2's nodes no longer have: their id."""
    if not hasattr(request.node, "_nodeid"):
        request.node._nodeid = request.node.nodeid


# Every check that applies. Left out: `positive_data_acceptance` (a request the description allows may still be a
# 422: a text without a word, or over the server's limits, which no JSON schema says), the checks of resources and
# sequences (`use_after_free`, `ensure_resource_availability`: nothing is created or deleted; the description has no
# links, so there is no stateful phase either), of authentication (`ignored_auth`, `missing_required_header`: none).
CHECKS = [
    not_a_server_error,
    status_code_conformance,
    content_type_conformance,
    response_schema_conformance,
    response_headers_conformance,
    negative_data_rejection,
    unsupported_method,
    allow_header_conformance,
]


@pytest.fixture(scope="module")
def session():
    with requests.Session() as session:  # one connection for all of Schemathesis's requests
        yield session


@schema.parametrize()
@budget(15)
def test_every_generated_request_is_answered_as_the_description_says(case, session, sent):
    with _counted(sent, case.operation.label):
        case.call_and_validate(checks=CHECKS, session=session, timeout=TIMEOUT)


@pytest.fixture(scope="module")
def http(server):
    with httpx.Client(base_url=server.url, timeout=TIMEOUT) as client:
        yield client


def _refused_in_json(answer, *statuses):
    assert answer.status_code in statuses, (answer.status_code, answer.text[:300])
    assert answer.headers["content-type"] == "application/json"
    body = answer.json()
    assert set(body) == {"error", "status"} and body["status"] == answer.status_code and body["error"]


# JSON of any shape, as bytes; and bytes that are not JSON: truncated, invalid UTF-8, over the 1 MiB limit.
def _containers(inner):
    keys = st.sampled_from(["text", "texts", "top_k", "min_confidence", "x"]) | st.text(max_size=5)
    return st.lists(inner, max_size=4) | st.dictionaries(keys, inner, max_size=4)


JSON_VALUES = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=20), _containers, max_leaves=12
)
BODIES = st.one_of(
    JSON_VALUES.map(lambda value: json.dumps(value).encode()),
    st.binary(max_size=300),
    st.sampled_from(
        [b"x" * (2**20 + 1), b'{"text": "' + b"good " * 250_000 + b'"}', b"[" * 100_000, b'{"text": "a\\ud800"}']
    ),
)
MEDIA = st.sampled_from(
    [
        "application/json",
        "APPLICATION/JSON; charset=latin-1",
        "text/plain",
        "",
        "application/x-www-form-urlencoded",
        "application/merge-patch+json",
        "multipart/form-data; boundary=x",
    ]
)


@given(body=BODIES, media=MEDIA, path=st.sampled_from(["/v1/predict", "/v1/explain"]))
@budget(30)
def test_any_body_in_any_content_type_is_an_answer_or_a_4xx_json_error(http, sent, body, media, path):
    with _counted(sent, "any body, any content type"):
        answer = http.post(path, content=body, headers={"content-type": media} if media else {})
    if answer.status_code == 200:
        assert answer.headers["content-type"] == "application/json" and answer.json()
    else:
        _refused_in_json(answer, 400, 413, 415, 422)


@pytest.fixture(scope="module")
def predictor(han_run_dir):
    return runtime.load(han_run_dir / BUNDLE_FILE)


@given(text=hostile_texts(), top_k=st.none() | st.integers(-3, 10**12), explain=st.booleans())
@budget(30)
def test_hostile_texts_in_valid_bodies_are_the_runtimes_answer_or_a_4xx(http, predictor, sent, text, top_k, explain):
    body = {"text": text} if top_k is None else {"text": text, "top_k": top_k}
    path = "/v1/explain" if explain else "/v1/predict"
    with _counted(sent, "hostile texts"):
        answer = http.post(path, content=json.dumps(body).encode(), headers={"content-type": "application/json"})
    if answer.status_code != 200:
        return _refused_in_json(answer, 400, 413, 422)  # 400: a lone surrogate is not JSON
    if explain:
        (explanation,) = answer.json()
        assert explanation["label"] in predictor.label_names
    else:
        (prediction,) = answer.json()["predictions"]
        got = [prediction["probabilities"][name] for name in predictor.label_names]
        np.testing.assert_allclose(got, predictor.predict([text])[0], atol=1e-6)


def test_the_server_still_answers_a_known_prediction(http, predictor):
    answer = http.post("/v1/predict", json={"texts": KNOWN})
    assert answer.status_code == 200, answer.text
    got = np.array([[p["probabilities"][n] for n in predictor.label_names] for p in answer.json()["predictions"]])
    np.testing.assert_allclose(got, predictor.predict(KNOWN), atol=1e-6)
