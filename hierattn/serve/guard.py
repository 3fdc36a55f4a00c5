"""`Guard`: the ASGI middleware every request passes: the body's size limit, and safe headers.

A body over the limit is refused with 413 (and the connection closed)
before it is read: at once when its Content-Length says so, or as soon as a
streamed (chunked) body passes it. Every response says
`X-Content-Type-Options: nosniff`.
"""

from starlette.exceptions import HTTPException
from starlette.responses import JSONResponse

_CLOSE = {"Connection": "close"}  # after a 413 the rest of the body is not worth reading


def problem(status, message, headers=None):
    """The JSON error every route answers with: `{"error": message, "status": status}`."""
    return JSONResponse({"error": message, "status": status}, status_code=status, headers=headers)


class Guard:
    """ASGI middleware: the body limit, and `nosniff` on every response.

    Args:
        app: The ASGI application inside.
        max_body_bytes: The largest request body accepted.

    Example:

    ```python
    from fastapi import FastAPI

    guarded = Guard(FastAPI(), max_body_bytes=2**20)  # an ASGI application, as uvicorn.run(guarded) takes
    ```
    """

    def __init__(self, app, max_body_bytes):
        self.max_body_bytes = max_body_bytes
        self.app = app

    async def __call__(self, scope, receive, send):
        if scope["type"] != "http":
            return await self.app(scope, receive, send)
        limit = self.max_body_bytes
        length = dict(scope["headers"]).get(b"content-length")
        if length is not None and (not length.isdigit() or len(length) > 18 or int(length) > limit):
            what = f"{int(length):,} bytes" if length.isdigit() and len(length) <= 18 else "of unreadable length"
            return await problem(413, f"the body is {what}; the limit is {limit:,}", _CLOSE)(scope, receive, send)
        received = 0

        async def limited_receive():
            nonlocal received
            message = await receive()
            received += len(message.get("body", b""))
            if received > limit:
                raise HTTPException(413, f"the body is over the limit of {limit:,} bytes", _CLOSE)
            return message

        async def safe_send(message):
            if message["type"] == "http.response.start":
                message["headers"] = [*message.get("headers", []), (b"x-content-type-options", b"nosniff")]
            await send(message)

        await self.app(scope, limited_receive, safe_send)
