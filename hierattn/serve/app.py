"""`create_app`: a run's classifier as an ASGI application (FastAPI), its routes thin over a `Service`.

    POST /v1/predict   {"texts": [...]} or {"text": "..."}  ->  {"predictions": [{"label", "probabilities"}, ...]}
                       (a multi-label model: {"labels": [...], "probabilities"}; with "top_k": K in the
                       request, each prediction's "top_k": [{"label", "probability"}, ...])
    POST /v1/explain   {"text": "...", "top_k": 10}         ->  `hierattn explain --format json`'s JSON
    GET  /             a page to paste a text and see its explanation (POST / with the form)
    GET  /healthz      alive;  GET /readyz: which verbs answer (503 until predictions do)
    GET  /v1/model     classes, backbone, the run's metrics, hierattn's version, limits, the load
    GET  /openapi.json the API's OpenAPI description (the page's form and this server's limits on texts included)

Every error is JSON, `{"error": "...", "status": N}`, with a 4xx status for
anything a client sent (400 unreadable JSON, 413 a body over the limit, 415
not JSON, 422 a body that is JSON but not a valid request, 404, and 405 with
`Allow` naming every method of the path) and
503 with `Retry-After` when the queue is full (without, when the server is
stopping); a request that fails changes nothing. A request whose client disconnects is dropped before its texts
reach the model.
"""

import asyncio
import contextlib
import urllib.parse

import pydantic_core
from fastapi import APIRouter, FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import HTMLResponse, JSONResponse, Response
from fastapi.routing import APIRoute
from starlette.exceptions import HTTPException
from starlette.middleware.cors import CORSMiddleware
from starlette.requests import ClientDisconnect

from hierattn import __version__
from hierattn.defaults import SERVE
from hierattn.policy import PredictOptions
from hierattn.serve.batcher import Overloaded, Stopped
from hierattn.serve.guard import Gate, Guard, problem
from hierattn.serve.page import POLICY, page
from hierattn.serve.requests import (
    ERRORS,
    EXPLANATION,
    FORM,
    FORM_ANSWERS,
    ExplainRequest,
    PredictRequest,
    PredictResponse,
    texts_of,
    with_limits,
)
from hierattn.serve.service import Service, Unavailable


class _ClientGone(Exception):
    """The client disconnected before its answer was ready."""


def create_app(run_dir=None, explain=True, cors_origins=(), log=None, **limits):
    """The ASGI application that serves a complete run's classifier (the latest under runs/ by default).

    The run loads here (a `RunError` if there is no such complete run):
    its bundle, or when it has none or a damaged one, its Keras classifier
    (in this process, predicting one batch at a time). The application
    starts its batching and its explanation worker when it starts (ASGI
    lifespan), and stops them, ending the worker, when it shuts down.

    Args:
        run_dir: The run directory.
        explain: Serve explanations (`/v1/explain`, the page) from the run's
            Keras classifier, loaded in a worker process in the background.
        cors_origins: Origins a browser may call the API from (none by default).
        log: Called with lines for the server's log.
        **limits: Limits and batching (`hierattn.serve.limits.LIMITS`;
            defaults in `hierattn.defaults.SERVE`), and `network` (`Service`).

    Example:

    ```python
    import uvicorn
    from hierattn.serve import create_app

    uvicorn.run(create_app("runs/han-imdb-20261125-120000"), host="127.0.0.1", port=8000)
    ```
    """
    service = Service(run_dir, explain=explain, log=log, **limits)

    @contextlib.asynccontextmanager
    async def lifespan(app):
        await service.start()
        yield
        await service.stop()

    app = FastAPI(
        title="hierattn",
        version=__version__,
        description=f"The hierattn text classifier of run {service.path.name}: predictions and explanations.",
        lifespan=lifespan,
        docs_url=None,  # Swagger UI and ReDoc load scripts from a CDN: the description is at /openapi.json
        redoc_url=None,
    )
    app.state.service = service
    app.state.gate = Gate()  # the requests in flight, and the stop (`serve` drains it on SIGTERM)
    _routes(app, service)
    described = app.openapi  # FastAPI's, which keeps what it builds in `app.openapi_schema`

    def openapi():
        if app.openapi_schema is None:
            with_limits(described(), service.limits)
        return app.openapi_schema

    app.openapi = openapi
    _errors(app, service.log)
    app.add_middleware(Guard, max_body_bytes=service.limits["max_body_bytes"], gate=app.state.gate)
    if cors_origins:  # outermost, so that every answer, the guard's 413 included, carries the CORS headers
        app.add_middleware(
            CORSMiddleware, allow_origins=list(cors_origins), allow_methods=["GET", "POST"], allow_headers=["*"]
        )
    return app


def _routes(app, service):
    api = APIRouter(route_class=_JSONRoute)

    @api.post("/v1/predict", response_model=PredictResponse, responses=ERRORS)
    async def predict(body: PredictRequest, request: Request):
        """Class probabilities of one text or a list of texts, in input order; a multi-label model's label sets."""
        texts = texts_of(body, service)
        probabilities = await _unless_gone(request, service.predict(texts))
        return JSONResponse(service.answers(probabilities, PredictOptions(body.top_k, body.min_confidence)))

    @api.post("/v1/explain", responses={200: EXPLANATION, **ERRORS})
    async def explain(body: ExplainRequest, request: Request):
        """One text's explanation: `hierattn explain --format json`'s JSON (a list holding one explanation)."""
        (text,) = texts_of(body, service)
        result = await _unless_gone(request, service.explain(text, body.top_k))
        return Response(result, media_type="application/json")

    app.include_router(api)

    @app.get("/", response_class=HTMLResponse)
    async def form():
        """The page: paste a text and see its explanation."""
        return _page(service)

    @app.post("/", response_class=HTMLResponse, responses=FORM_ANSWERS, openapi_extra=FORM)
    async def explain_form(request: Request):
        """The page's form posted back: the page again, with the text's explanation (or what is wrong, and a 4xx)."""
        if _media(request) != "application/x-www-form-urlencoded":
            return _page(service, error="send the form (application/x-www-form-urlencoded)", status=415)
        try:
            body = (await request.body()).decode("utf-8")
            fields = urllib.parse.parse_qs(body, keep_blank_values=True, max_num_fields=10, strict_parsing=True)
            (text,) = fields["text"]
        except (UnicodeDecodeError, ValueError, KeyError):
            return _page(service, error="the form must have one field, text", status=400)
        try:
            (text,) = texts_of(ExplainRequest(text=text), service)
            picture = await _unless_gone(request, service.explain(text, SERVE["top_k"], fmt="html"))
        except HTTPException as error:
            return _page(service, text, error=error.detail, status=error.status_code)
        except Overloaded as error:
            return _page(service, text, error=str(error), status=503, retry=SERVE["retry_after"]["busy"])
        except Unavailable as error:
            return _page(service, text, error=str(error), status=503, retry=error.retry_after)
        return _page(service, text, picture)

    @app.get("/healthz")
    async def healthz():
        """Alive: the process answers."""
        return {"status": "ok"}

    @app.get("/readyz", responses={503: {"description": "Predictions not ready yet"}})
    async def readyz():
        """Which verbs answer now; 200 once predictions do (explanations may still be loading)."""
        readiness = service.readiness()
        return JSONResponse(readiness, status_code=200 if readiness["predict"] else 503)

    @app.get("/v1/model")
    async def model():
        """The model served: its classes and backbone, the run's metrics, hierattn's version, the limits, the load."""
        return {**service.describe(), "requests_in_flight": app.state.gate.in_flight}  # this one included

    for path, endpoint in (("/", form), ("/healthz", healthz), ("/readyz", readyz), ("/v1/model", model)):
        app.add_api_route(path, endpoint, methods=["HEAD"], include_in_schema=False)  # GET's headers, no body
    app.state.methods = {}  # each path's methods, for a 405's Allow
    for route in [*api.routes, *app.routes]:
        if getattr(route, "methods", None):
            app.state.methods.setdefault(route.path, set()).update(route.methods)


def _page(service, text="", picture="", error=None, status=200, retry=None):
    about = f"{service.backbone} classifier of run {service.path.name}: {', '.join(service.label_names)}"
    headers = {"Content-Security-Policy": POLICY, **({"Retry-After": str(retry)} if retry else {})}
    return HTMLResponse(page(about, text, picture, error), status_code=status, headers=headers)


def _errors(app, log):
    """Every error as JSON: what a client sent wrong as a 4xx, a full queue as 503, anything else as a logged 500."""

    @app.exception_handler(HTTPException)
    async def http_error(request, error):
        headers = error.headers
        methods = _methods(request) if error.status_code == 405 else None
        if methods:  # every method of the path, not only the first route's (`/`: GET, HEAD, POST)
            headers = {**(headers or {}), "Allow": ", ".join(methods)}
        return problem(error.status_code, error.detail, headers)

    @app.exception_handler(RequestValidationError)
    async def invalid(request, error):
        return problem(422, _first_problem(error.errors()))

    busy = {"Retry-After": str(SERVE["retry_after"]["busy"])}

    @app.exception_handler(Overloaded)
    async def overloaded(request, error):
        return problem(503, f"the server is busy ({error}); retry shortly", busy)

    @app.exception_handler(Stopped)
    async def stopped(request, error):
        return problem(503, f"{error}; retry shortly", busy)

    @app.exception_handler(Unavailable)
    async def unavailable(request, error):
        retry = {"Retry-After": str(error.retry_after)} if error.retry_after else None
        return problem(503, str(error), retry)

    @app.exception_handler(_ClientGone)
    @app.exception_handler(ClientDisconnect)
    async def gone(request, error):
        log(f"{request.method} {request.url.path}: the client went away; its request was dropped")
        return Response(status_code=499)  # nobody reads it

    @app.exception_handler(Exception)
    async def internal(request, error):
        log(f"{request.method} {request.url.path}: internal error: {type(error).__name__}: {error}")
        return problem(500, "internal error: the server's log has the details")


class _JSONRequest(Request):
    """A request whose body is read as pydantic reads JSON, not as `json.loads` does (a 400 when it is not JSON).

    pydantic's reading is the API's: `NaN` is a number; invalid UTF-8, a
    lone surrogate or nesting past its recursion limit is not JSON.
    """

    async def json(self):
        if not hasattr(self, "_parsed"):
            try:
                self._parsed = pydantic_core.from_json(await self.body())
            except ValueError as error:
                raise HTTPException(400, f"the body is not valid JSON (Invalid JSON: {error})") from None
        return self._parsed


class _JSONRoute(APIRoute):
    """A route with a typed JSON body: 415 when the body is not JSON, 400 when unreadable, before FastAPI validates it.

    FastAPI reads the body before it solves a route's dependencies; it reads
    a body without a Content-Type (or of any `+json` type) as JSON, an
    empty body as none (a 422), and a client gone mid-body as a 400. So
    these checks come first, in this order, as a `_JSONRequest`; FastAPI
    then validates the parsed body (a 422: `_first_problem`).
    """

    def get_route_handler(self):
        handle = super().get_route_handler()

        async def handle_json(request):
            media = _media(request)
            if media != "application/json":
                raise HTTPException(
                    415, f"send the body as JSON (Content-Type: application/json), not {media or 'nothing'}"
                )
            request = _JSONRequest(request.scope, request.receive)
            await request.json()  # a ClientDisconnect, or the guard's 413, passes as it is
            return await handle(request)

        return handle_json


def _first_problem(errors):
    """FastAPI's first validation error in one line that names the field (`texts[3]: ...`), in JSON's words.

    FastAPI validates the parsed body as Python values, and pydantic's
    messages then name Python's types ("a valid list"); the client sent
    JSON ("a valid array"), as pydantic words it when it reads JSON.
    """
    first = errors[0]
    loc = first["loc"][1:] if first["loc"][:1] == ("body",) else first["loc"]
    line = {key: first[key] for key in ("type", "loc", "input", "ctx") if key in first}
    try:
        (in_json,) = pydantic_core.ValidationError.from_exception_data("body", [line], input_type="json").errors()
        message = in_json["msg"]
    except (KeyError, TypeError, ValueError):  # a type pydantic-core does not know: the message as it is
        message = first["msg"]
    field = "".join(f"[{part}]" if isinstance(part, int) else f".{part}" for part in loc).lstrip(".")
    return f"{field or 'the body'}: {message}"


def _methods(request):
    """The methods the request's path answers, over all its routes (Starlette's 405 names only the first route's)."""
    return sorted(request.app.state.methods.get(request.url.path, ()))


def _media(request):
    return request.headers.get("content-type", "").split(";")[0].strip().lower()


async def _unless_gone(request, work):
    """Awaits `work`, cancelling it (and raising `_ClientGone`) if the client disconnects first."""
    work = asyncio.ensure_future(work)
    gone = asyncio.ensure_future(_disconnected(request))
    try:
        await asyncio.wait((work, gone), return_when=asyncio.FIRST_COMPLETED)
    except BaseException:  # the handler itself was cancelled (a shutdown's deadline): its work goes with it
        work.cancel()
        raise
    finally:
        gone.cancel()
    if not work.done():
        work.cancel()
        raise _ClientGone()
    if work.cancelled():
        raise Stopped("the request was cancelled")
    return work.result()


async def _disconnected(request):
    while (await request.receive())["type"] != "http.disconnect":
        pass


__all__ = ["create_app"]
