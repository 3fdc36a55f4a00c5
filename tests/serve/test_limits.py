"""The server's numbers checked where they enter: `serve` and `create_app` refuse each bad one before anything loads."""

import math
import socket

import numpy as np
import pytest

from hierattn.defaults import SERVE
from hierattn.errors import ArgumentError
from hierattn.serve import create_app, serve
from hierattn.serve.limits import LIMITS, RANGES, checked, checked_limits

NAN, INF = math.nan, math.inf
# (setting, a bad value): NaN, infinities, negatives, zero where it means nothing, absurdly large, the wrong kind.
BAD = [
    ("batch_wait_ms", NAN),
    ("batch_wait_ms", INF),
    ("batch_wait_ms", -1.0),
    ("batch_wait_ms", 1e9),
    ("batch_wait_ms", "5"),
    ("max_batch", 0),
    ("max_batch", -5),
    ("max_batch", 10**12),
    ("max_batch", 2.5),
    ("max_batch", NAN),
    ("batch_size", 0),
    ("batch_size", INF),
    ("predict_threads", 0),
    ("predict_threads", 10**6),
    ("max_queue", -1),
    ("max_queue", True),
    ("max_explain_queue", 0),
    ("max_body_bytes", 0),
    ("max_body_bytes", 2**62),
    ("max_texts", 0),
    ("max_text_chars", -100),
    ("port", -1),
    ("port", 70000),
    ("port", NAN),
    ("shutdown_seconds", NAN),
    ("shutdown_seconds", -1),
    ("shutdown_seconds", INF),
    ("shutdown_seconds", 1e12),
]


def test_every_number_has_a_range_and_a_most():
    assert set(LIMITS) <= set(RANGES) and set(RANGES) == set(SERVE["most"]) | {"port"}
    assert all(checked(name, SERVE[name]) == SERVE[name] for name in LIMITS if SERVE[name] is not None)


@pytest.mark.parametrize("name, value", BAD, ids=[f"{name}={value!r}" for name, value in BAD])
def test_serve_refuses_a_bad_number_before_it_listens_or_loads(tmp_path, name, value):
    with socket.socket() as taken:  # a port in use and no run: either would be another error, had they come first
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = value if name == "port" else taken.getsockname()[1]
        extra = {} if name == "port" else {name: value}
        with pytest.raises(ArgumentError, match=f"^{name} must be a (whole|finite) number from") as error:
            serve(tmp_path / "no-run", port=port, log=lambda line: None, **extra)
    assert error.value.argument == name and error.value.naming("--x").startswith("--x must be")


@pytest.mark.parametrize("name, value", [case for case in BAD if case[0] in LIMITS][:8])
def test_create_app_refuses_a_bad_limit_before_the_run_loads(tmp_path, name, value):
    with pytest.raises(ArgumentError, match=f"^{name} must be"):
        create_app(tmp_path / "no-run", explain=False, **{name: value})


def test_good_numbers_of_any_numeric_kind_pass_as_ints_and_floats():
    limits = checked_limits({"max_batch": np.int64(16), "batch_wait_ms": 2, "predict_threads": None})
    assert limits["max_batch"] == 16 and type(limits["max_batch"]) is int
    assert limits["batch_wait_ms"] == 2.0 and type(limits["batch_wait_ms"]) is float
    assert limits["predict_threads"] is None and limits["max_queue"] == SERVE["max_queue"]
    assert checked("port", 0) == 0 and checked("shutdown_seconds", 0) == 0.0  # any free port; no wait


def test_an_unknown_limit_is_named():
    with pytest.raises(ArgumentError, match="unknown serving limit"):
        checked_limits({"max_batches": 3})
