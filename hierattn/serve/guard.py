"""`Guard`: the ASGI middleware every request passes first: the body's size limit, CORS if enabled, safe headers.

A body over the limit is refused with 413 before it is read: at once when
its Content-Length says so, or as soon as a streamed (chunked) body passes
it. Every response says `X-Content-Type-Options: nosniff`. Cross-origin
requests are allowed only from the origins given (Starlette's
`CORSMiddleware`); by default none are.
"""

from starlette.exceptions import HTTPException
from starlette.middleware.cors import CORSMiddleware
from starlette.responses import JSONResponse


def problem(status, message, headers=None):
    """The JSON error every route answers with: `{"error": message, "status": status}`."""
    return JSONResponse({"error": message, "status": status}, status_code=status, headers=headers)


class Guard:
    """ASGI middleware: the body limit, optional CORS and `nosniff` on every response.

    Args:
        app: The ASGI application inside.
        max_body_bytes: The largest request body accepted.
        cors_origins: Origins allowed to call from a browser (none: no CORS headers at all).

    Example:

    ```python
    from fastapi import FastAPI

    guarded = Guard(FastAPI(), max_body_bytes=2**20)  # an ASGI application, as uvicorn.run(guarded) takes
    ```
    """

    def __init__(self, app, max_body_bytes, cors_origins=()):
        self.max_body_bytes = max_body_bytes
        self.app = (
            CORSMiddleware(app, allow_origins=list(cors_origins), allow_methods=["GET", "POST"], allow_headers=["*"])
            if cors_origins
            else app
        )

    async def __call__(self, scope, receive, send):
        if scope["type"] != "http":
            return await self.app(scope, receive, send)
        limit = self.max_body_bytes
        length = dict(scope["headers"]).get(b"content-length")
        if length is not None and (not length.isdigit() or int(length) > limit):
            what = f"{int(length):,} bytes" if length.isdigit() else "of unreadable length"
            return await problem(413, f"the body is {what}; the limit is {limit:,}")(scope, receive, send)
        received = 0

        async def limited_receive():
            nonlocal received
            message = await receive()
            received += len(message.get("body", b""))
            if received > limit:
                raise HTTPException(413, f"the body is over the limit of {limit:,} bytes")
            return message

        async def safe_send(message):
            if message["type"] == "http.response.start":
                message["headers"] = [*message.get("headers", []), (b"x-content-type-options", b"nosniff")]
            await send(message)

        await self.app(scope, limited_receive, safe_send)
