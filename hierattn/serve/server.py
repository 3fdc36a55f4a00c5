"""`serve`: a run's classifier on uvicorn, on a socket bound first, until SIGTERM or Ctrl-C.

The socket is bound before the model loads, so a port in use is one error
line at once, and port 0 picks a free port (said in the first log line).
On SIGTERM (or Ctrl-C) uvicorn stops accepting connections, lets the
requests in flight finish (at most `shutdown_seconds`), stops the batching
and the explanation worker, and `serve` returns: the program exits 0.
"""

import signal
import socket
import threading

from hierattn.defaults import SERVE
from hierattn.errors import ResourceError
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
        **limits: Limits and batching (`hierattn.serve.service.LIMITS`), and `network` (`Service`).

    Raises:
        ResourceError: The address cannot be listened on (a port in use, an unknown host).
        RunError: No such run, or a run that cannot be loaded.
    """
    import uvicorn

    from hierattn.serve.app import create_app

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
            uvicorn.Server(config).run(sockets=[sock])
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
