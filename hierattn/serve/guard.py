"""`Guard`: the ASGI middleware every request passes: the body's size limit, safe headers, and the stop.

A body over the limit is refused with 413 (and the connection closed)
before it is read: at once when its Content-Length says so, or as soon as a
streamed (chunked) body passes it. Every response says
`X-Content-Type-Options: nosniff`. Its `Gate` counts the requests in
flight; once the server is stopping, every new request is answered 503
(`Gate.drain`), so that none that reached the server is left unanswered.
"""

import asyncio

from starlette.exceptions import HTTPException
from starlette.responses import JSONResponse

_CLOSE = {"Connection": "close"}  # after a 413 the rest of the body is not worth reading; after a 503, stopping


def problem(status, message, headers=None):
    """The JSON error every route answers with: `{"error": message, "status": status}`."""
    return JSONResponse({"error": message, "status": status}, status_code=status, headers=headers)


class Gate:
    """The requests being answered now, and whether the server is stopping (new requests are then answered 503).

    Attributes:
        in_flight: The requests let in and not yet answered.
        arrived: The requests that have come so far, refused ones included.
        stopping: Whether new requests are refused (`drain` sets it).

    Example:

    >>> import asyncio
    >>> gate = Gate()
    >>> asyncio.run(gate.drain(seconds=1, pass_seconds=0.01, after_seconds=0.1))  # nothing in flight: one quiet pass and it is done
    >>> gate.stopping, gate.in_flight
    (True, 0)
    """

    def __init__(self):
        self.in_flight = 0
        self.arrived = 0
        self.stopping = False

    async def drain(self, seconds, pass_seconds, after_seconds, give_up=lambda: False):
        """Refuses new requests, and returns once those in flight are answered and a pass brings no new one.

        Each pass of `pass_seconds` lets the event loop accept and answer
        what has reached the server meanwhile (connections waiting to be
        accepted included), so that the listening socket closes on an empty
        queue. It returns after `seconds` at most, `after_seconds` after the
        last request in flight was answered (new ones may never stop
        coming), or when `give_up()`.
        """
        self.stopping = True
        loop = asyncio.get_running_loop()
        deadline, after = loop.time() + seconds, None
        while True:
            arrived = self.arrived
            await asyncio.sleep(pass_seconds)
            now = loop.time()
            if self.in_flight == 0:
                after = after or now + after_seconds
                if self.arrived == arrived or now >= after:
                    return
            if now >= deadline or give_up():
                return


class Guard:
    """ASGI middleware: the body limit, `nosniff` on every response, and a 503 to new requests while stopping.

    Args:
        app: The ASGI application inside.
        max_body_bytes: The largest request body accepted.
        gate: The `Gate` that counts requests and says when the server is
            stopping (None: a new one, in `gate`).

    Example:

    ```python
    from fastapi import FastAPI

    guarded = Guard(FastAPI(), max_body_bytes=2**20)  # an ASGI application, as uvicorn.run(guarded) takes
    ```
    """

    def __init__(self, app, max_body_bytes, gate=None):
        self.max_body_bytes = max_body_bytes
        self.app = app
        self.gate = gate or Gate()

    async def __call__(self, scope, receive, send):
        if scope["type"] != "http":
            return await self.app(scope, receive, send)
        gate = self.gate
        gate.arrived += 1
        if gate.stopping:
            stopping = problem(503, "the server is stopping: it takes no new requests", _CLOSE)
            return await stopping(scope, receive, self._safe(send))
        gate.in_flight += 1
        try:
            await self._guarded(scope, receive, send)
        finally:
            gate.in_flight -= 1

    async def _guarded(self, scope, receive, send):
        limit = self.max_body_bytes
        length = dict(scope["headers"]).get(b"content-length")
        if length is not None and (not length.isdigit() or len(length) > 18 or int(length) > limit):
            what = f"{int(length):,} bytes" if length.isdigit() and len(length) <= 18 else "of unreadable length"
            too_big = problem(413, f"the body is {what}; the limit is {limit:,}", _CLOSE)
            return await too_big(scope, receive, self._safe(send))
        received = 0

        async def limited_receive():
            nonlocal received
            message = await receive()
            received += len(message.get("body", b""))
            if received > limit:
                raise HTTPException(413, f"the body is over the limit of {limit:,} bytes", _CLOSE)
            return message

        await self.app(scope, limited_receive, self._safe(send))

    @staticmethod
    def _safe(send):
        async def safe_send(message):
            if message["type"] == "http.response.start":
                message["headers"] = [*message.get("headers", []), (b"x-content-type-options", b"nosniff")]
            await send(message)

        return safe_send
