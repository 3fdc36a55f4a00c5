"""The server's numbers, checked where they enter: each of its kind, finite, and in its range.

`serve` checks them all before it listens or loads anything, and `Service`
again (for `create_app`'s callers): a NaN wait, a negative queue or a port
past 65535 is an `ArgumentError` that names the setting, never a server
that starts and then cannot answer. The largest values allowed are
`hierattn.defaults.SERVE["most"]`.
"""

import math
import numbers

from hierattn.defaults import SERVE
from hierattn.errors import ArgumentError

LIMITS = (
    "max_batch",
    "batch_wait_ms",
    "batch_size",
    "predict_threads",
    "max_queue",
    "max_explain_queue",
    "max_body_bytes",
    "max_texts",
    "max_text_chars",
)

# Each number's kind and least value; its most is `SERVE["most"]`'s (a port's, 65535).
RANGES = {
    "port": (int, 0),
    "max_batch": (int, 1),
    "batch_wait_ms": (float, 0),
    "batch_size": (int, 1),
    "predict_threads": (int, 1),
    "max_queue": (int, 1),
    "max_explain_queue": (int, 1),
    "max_body_bytes": (int, 1),
    "max_texts": (int, 1),
    "max_text_chars": (int, 1),
    "shutdown_seconds": (float, 0),
}
MOST = {**SERVE["most"], "port": 65535}


def checked(name, value):
    """`value` as the number `name` takes (an int or a float), or an `ArgumentError` that names `name`.

    Example:

    >>> checked("batch_wait_ms", 2)
    2.0
    >>> checked("batch_wait_ms", float("nan"))
    Traceback (most recent call last):
    ...
    hierattn.errors.ArgumentError: batch_wait_ms must be a finite number from 0 to 1,000; got nan
    >>> checked("port", 70000)
    Traceback (most recent call last):
    ...
    hierattn.errors.ArgumentError: port must be a whole number from 0 to 65,535; got 70000
    """
    kind, least = RANGES[name]
    most = MOST[name]
    if kind is int:
        fits = isinstance(value, numbers.Integral) and not isinstance(value, bool) and least <= value <= most
        what = "a whole number"
    else:
        fits = (
            isinstance(value, numbers.Real)
            and not isinstance(value, bool)
            and math.isfinite(value)
            and least <= value <= most
        )
        what = "a finite number"
    if not fits:
        raise ArgumentError(f"{{argument}} must be {what} from {least:,} to {most:,.0f}; got {value!r}", argument=name)
    return kind(value)


def checked_limits(limits):
    """Every limit of `LIMITS`, from `limits` or `SERVE`'s defaults, each `checked` (`predict_threads` may be None).

    Raises:
        ArgumentError: An unknown limit, or one of the wrong kind or out of range.

    Example:

    >>> checked_limits({"max_batch": 8})["max_batch"], checked_limits({})["max_queue"]
    (8, 2048)
    >>> checked_limits({"max_queue": -1})
    Traceback (most recent call last):
    ...
    hierattn.errors.ArgumentError: max_queue must be a whole number from 1 to 10,000,000; got -1
    """
    unknown = set(limits) - set(LIMITS)
    if unknown:
        raise ArgumentError(f"unknown serving limit(s): {', '.join(sorted(unknown))}")
    found = {name: limits.get(name, SERVE[name]) for name in LIMITS}
    return {
        name: value if value is None and name == "predict_threads" else checked(name, value)
        for name, value in found.items()
    }
