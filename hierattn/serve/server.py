"""`serve`: a run's classifier on uvicorn, on a socket bound first, until SIGTERM or Ctrl-C.

The socket is bound before the model loads, so a port in use is one error
line at once, and port 0 picks a free port (said in the first log line).
Every number is checked first (`hierattn.serve.limits`). On SIGTERM (or
Ctrl-C) the server keeps its socket open while the requests in flight
finish (at most `shutdown_seconds`), answering every new request 503
(`Gate.drain`): a connection that was waiting to be accepted gets an answer
instead of a reset. Then uvicorn stops accepting connections, the batching
and the explanation worker stop, and `serve` returns: the program exits 0.
"""

import asyncio
import signal
import socket
import threading

from hierattn.defaults import SERVE
from hierattn.errors import ResourceError
from hierattn.serve.limits import checked, checked_limits
from hierattn.utils.atomic import reason

LOOPBACK = ("127.0.0.1", "::1", "localhost")


def serve(
    run_dir=None,
    host=SERVE["host"],
    port=SERVE["port"],
    explain=True,
    cors_origins=(),
    access_log=False,
    shutdown_seconds=SERVE["shutdown_seconds"],
    log=print,
    **limits,
):
    """Serves a complete run's classifier (`create_app`) until SIGTERM or Ctrl-C.

    Args:
        run_dir: The run directory (default: the latest complete run under runs/).
        host: The address to listen on (loopback by default: only this machine).
        port: The port (0: any free one, said in the log).
        explain: Serve explanations (loads the Keras classifier in a worker process).
        cors_origins: Origins a browser may call the API from (none by default).
        access_log: Log every request (uvicorn's access log).
        shutdown_seconds: How long requests in flight may take to finish after SIGTERM.
        log: Called with the server's log lines.
        **limits: Limits and batching (`hierattn.serve.limits.LIMITS`), and `network` (`Service`).

    Raises:
        ArgumentError: A number out of its range, or not a finite number
            (`hierattn.serve.limits`), before anything is listened on or loaded.
        ResourceError: The address cannot be listened on (a port in use, an unknown host).
        RunError: No such run, or a run that cannot be loaded.
    """
    import uvicorn

    from hierattn.serve.app import create_app

    port, shutdown_seconds = checked("port", port), checked("shutdown_seconds", shutdown_seconds)
    checked_limits({name: value for name, value in limits.items() if name != "network"})
    sock = _listen(host, port)
    try:
        app = create_app(run_dir, explain=explain, cors_origins=cors_origins, log=log, **limits)
        bound = sock.getsockname()[1]
        url = f"http://{f'[{host}]' if ':' in host else host}:{bound}/"
        service = app.state.service
        log(f"serving {service.backbone} run {service.path.name} on {url} (Ctrl-C or SIGTERM stops it)")
        if host not in LOOPBACK:
            log(f"listening on {host}: anyone who can reach this machine on port {bound} can use the model")
        config = uvicorn.Config(
            app,
            log_level="info" if access_log else "warning",
            access_log=access_log,
            timeout_graceful_shutdown=shutdown_seconds,
            server_header=False,
        )
        with _exit_quietly_on_sigterm():
            _draining(uvicorn.Server, app.state.gate, log)(config).run(sockets=[sock])
    finally:
        sock.close()
    log("stopped")


def _listen(host, port):
    """A socket bound to `(host, port)` and listening, or a `ResourceError` that says why not."""
    try:
        family, kind, proto, _, address = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)[0]
        sock = socket.socket(family, kind, proto)
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind(address)
        sock.listen(SERVE["backlog"])
    except OSError as error:
        raise ResourceError(f"cannot listen on {host}:{port} ({reason(error)})") from None
    return sock


def _draining(server_class, gate, log):
    """uvicorn's `Server`, which on a stop signal first drains `gate` (`Gate.drain`), then shuts down as it does.

    uvicorn's own shutdown closes the listening socket first, which resets
    the connections still waiting in its queue; draining first answers them
    (503), and the requests in flight finish before the socket closes.
    """

    class DrainingServer(server_class):
        async def shutdown(self, sockets=None):
            loop = asyncio.get_running_loop()
            started, seconds = loop.time(), self.config.timeout_graceful_shutdown
            log(f"stopping: {gate.in_flight} request(s) in flight finish; new requests are answered 503")
            await gate.drain(seconds, **SERVE["drain"], give_up=lambda: self.force_exit)
            self.config.timeout_graceful_shutdown = max(seconds - (loop.time() - started), 0.1)
            await super().shutdown(sockets)

    return DrainingServer


class _exit_quietly_on_sigterm:
    """SIGTERM and Ctrl-C end the program with exit status 0 once uvicorn has shut down gracefully.

    uvicorn catches both, shuts down, restores the handlers it found and
    raises the signal again; with these handlers in place that raise
    returns, where Python's defaults would kill the process (status -15) or
    raise KeyboardInterrupt.
    """

    SIGNALS = (signal.SIGTERM, signal.SIGINT)

    def __enter__(self):
        main = threading.current_thread() is threading.main_thread()  # signals are the main thread's only
        self._previous = {sig: signal.signal(sig, lambda number, frame: None) for sig in self.SIGNALS} if main else {}

    def __exit__(self, *exc):
        for sig, handler in self._previous.items():
            signal.signal(sig, handler)
