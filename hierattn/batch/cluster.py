"""The Ray cluster of a batch job: its address checked before joining it, the workers it can place, and SIGTERM.

`ray.init` waits a minute or more for a cluster address where nothing
answers, or where something that is not Ray does (or that a stale record
of `ray start` names), and a pool of more workers than the cluster can run waits for
room forever: `check_address` and `check_placeable` refuse both within
seconds, as one line. `stop_on_sigterm` turns a SIGTERM (as systemd or
Slurm send it to a job's processes) into `Stopped`, so the job is undone in
order (no output folder, the cluster shut down) before the process ends
with the usual code of a process ended by SIGTERM; `sigterm_held` keeps
the SIGTERM sent to the whole process group away from the Ray processes
the job starts, which, dying beside it, ended it before it could.
"""

import contextlib
import os
import signal
import socket
import sys
import tempfile
import threading
import time

from hierattn.decision import check_k
from hierattn.defaults import BATCH
from hierattn.errors import ArgumentError, HierattnError
from hierattn.utils.atomic import reason

# The exit code of a job stopped by SIGTERM: 128 + 15, as a shell reports a process that SIGTERM ended.
STOPPED_EXIT = 128 + signal.SIGTERM


class Stopped(SystemExit):
    """A batch job stopped by SIGTERM: a `SystemExit` of `STOPPED_EXIT` (143), raised once the job is undone.

    A `SystemExit`, not an `Exception`: a program that catches a job's
    errors to go on with the next job still ends, as SIGTERM asks.

    Example:

    >>> Stopped().code, isinstance(Stopped(), Exception)
    (143, False)
    """

    def __init__(self):
        super().__init__(STOPPED_EXIT)


def check_address(address, timeout=BATCH["connect_seconds"]):
    """Refuses, within `timeout` seconds, a Ray cluster address where no Ray cluster answers.

    The address `ray.init(address)` would join is tried: `address`; for
    None or `"auto"`, the `RAY_ADDRESS` environment variable when it is
    set, else the cluster that `ray start` last recorded on this machine
    (the file `ray_current_cluster` in Ray's temporary folder,
    `ray_address_file`), which Ray joins as it would an address given. A
    Ray cluster's GCS (or, with `ray://`, its Ray Client server) speaks
    gRPC: the address must take a TCP connection and answer an HTTP/2
    greeting with HTTP/2 settings (`_not_grpc`). A port where something
    else listens (a web server, a database, a program that never answers)
    made `ray.init` wait 25 to 100 s, and a stale recorded cluster minutes.
    `"local"`, and None or `"auto"` with nothing recorded, start or find a
    cluster on this machine: nothing to try.

    Raises:
        ArgumentError: `address` is not `HOST:PORT` or `ray://HOST:PORT`,
            or no Ray cluster answers there.
        HierattnError: The same, for the address `RAY_ADDRESS` names or the
            cluster recorded.

    Example:

    >>> check_address("local")
    >>> try:
    ...     check_address("head-node")
    ... except ArgumentError as error:
    ...     print(error)
    address must be auto, HOST:PORT or ray://HOST:PORT; got 'head-node'
    """
    environment = os.environ.get("RAY_ADDRESS") if address in (None, "auto") else None
    environment = None if environment == "auto" else environment  # RAY_ADDRESS=auto: Ray reads the file too
    recorded = _recorded_address() if address in (None, "auto") and not environment else None
    target = environment or recorded or address
    if target in (None, "auto", "local"):
        return
    source = "RAY_ADDRESS" if environment else ray_address_file() if recorded else None
    host, port = _host_port(target, source)
    deadline = time.monotonic() + timeout
    try:
        with socket.create_connection((host, port), timeout=timeout) as connection:
            # A cluster with TLS (RAY_USE_TLS) answers a greeting in plain text with an alert: a connection is all
            # that is asked of it.
            tls = os.environ.get("RAY_USE_TLS", "0").lower() in ("1", "true")
            why = None if tls else _not_grpc(connection, max(0.1, deadline - time.monotonic()))
    except TimeoutError:
        why = f"no answer within {timeout:g} s"
    except socket.gaierror:
        why = f"no such host: {host}"
    except OSError as error:
        why = reason(error)
    if why is None:
        return
    if environment:
        raise HierattnError(f"no Ray cluster answers at {target} (RAY_ADDRESS): {why}; start it or change RAY_ADDRESS")
    if recorded:
        raise HierattnError(
            f"no Ray cluster answers at {target}, the cluster last started on this machine ({source}): {why}; "
            f"start one (`ray start` on a head node), delete {source} if it is gone for good, or give {{argument}}",
            argument="address",
        )
    raise ArgumentError(
        f"no Ray cluster answers at {target}: {why}; start it (`ray start` on its head node) or check {{argument}}",
        argument="address",
    )


# What an HTTP/2 client says first: the connection preface, then its (empty) SETTINGS frame. A gRPC server answers
# with a SETTINGS frame of its own: 3 bytes of length, its type (4), flags, stream 0.
_HTTP2_GREETING = b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n" + b"\x00\x00\x00\x04\x00\x00\x00\x00\x00"
_HTTP2_SETTINGS = 4


def _not_grpc(connection, timeout):
    """Why what answers on `connection` is not a gRPC (HTTP/2) server such as Ray's GCS, or None when it is one."""
    connection.settimeout(timeout)
    try:
        connection.sendall(_HTTP2_GREETING)
        head = b""
        while len(head) < 9:
            chunk = connection.recv(9 - len(head))
            if not chunk:
                return "something listens there but closed the connection: it is not a Ray cluster"
            head += chunk
    except TimeoutError:
        return f"something listens there but gave no HTTP/2 answer within {timeout:.2g} s: it is not a Ray cluster"
    except OSError as error:
        return f"something listens there but {reason(error)}: it is not a Ray cluster"
    if head[3] != _HTTP2_SETTINGS:
        shown = head.decode("ascii", "replace").split("\r")[0].split("\n")[0]
        return f"something else listens there (it answered {shown!r}, not HTTP/2): it is not a Ray cluster"
    return None


def ray_address_file():
    """The file where `ray start` records the cluster that `ray.init()` and `ray.init("auto")` join.

    `<RAY_TMPDIR or TMPDIR or /tmp>/ray/ray_current_cluster`, as Ray finds it
    (`ray._common.utils.get_ray_address_file`), without importing Ray.
    """
    if "RAY_TMPDIR" in os.environ:
        root = os.environ["RAY_TMPDIR"]
    elif sys.platform.startswith("linux") and "TMPDIR" in os.environ:
        root = os.environ["TMPDIR"]
    elif sys.platform.startswith(("linux", "darwin")):
        root = "/tmp"
    else:
        root = tempfile.gettempdir()
    return os.path.join(root, "ray", "ray_current_cluster")


def _recorded_address():
    """The address in `ray_address_file()`, or None (no such file, or an empty one)."""
    try:
        with open(ray_address_file(), encoding="utf-8", errors="replace") as f:
            return f.read(1000).strip() or None
    except OSError:
        return None


def _host_port(address, source):
    """`(host, port)` of `HOST:PORT`, `ray://HOST:PORT` or `[IPv6]:PORT`; `source`: where it came from, if not given."""
    rest = str(address).removeprefix("ray://").rstrip("/")
    host, colon, port = rest.rpartition(":")
    if host.startswith("[") and host.endswith("]"):  # an IPv6 address
        host = host[1:-1]
    elif ":" in host:
        host = ""
    if colon and host and port.isdigit() and 0 < int(port) < 2**16:
        return host, int(port)
    if source:
        must = "must be auto," if source == "RAY_ADDRESS" else "must hold"
        raise HierattnError(f"{source} {must} HOST:PORT or ray://HOST:PORT; got {address!r}")
    raise ArgumentError(f"{{argument}} must be auto, HOST:PORT or ray://HOST:PORT; got {address!r}", argument="address")


def check_workers(workers):
    """Refuses a worker count that is not a whole number of at least 1 (None passes: one per CPU).

    >>> check_workers(None), check_workers(2)
    (None, None)
    """
    if workers is not None:
        check_k(workers, "workers")


def check_placeable(workers, cpus):
    """Refuses more workers than a cluster of `cpus` CPUs can run: Ray would wait for room that never comes.

    Each worker computes on one core and asks Ray for a share of the CPUs
    (`worker_cpus` in `hierattn.batch.on_ray`), so one worker per CPU is the
    most that can work at once. A cluster that grows (an autoscaler) is
    counted as it is when the job starts.

    >>> check_placeable(2, 2.0), check_placeable(None, 2.0), check_placeable(1, 0.5)
    (None, None, None)
    >>> try:
    ...     check_placeable(1000, 2.0)
    ... except ArgumentError as error:
    ...     print(error)
    workers must be at most 2, one per CPU of the Ray cluster (it has 2 CPUs); got 1000
    """
    most = max(1, int(cpus))
    if workers is not None and workers > most:
        raise ArgumentError(
            f"{{argument}} must be at most {most}, one per CPU of the Ray cluster (it has {cpus:g} CPUs); got {workers}",
            argument="workers",
        )


@contextlib.contextmanager
def stop_on_sigterm():
    """While the block runs in the main thread, SIGTERM raises `Stopped` there; the handler before comes back after.

    Yields a function that sets the handler again: `ray.init` sets a
    SIGTERM handler of its own (`sys.exit(15)`), so it is called once Ray
    has started. A second SIGTERM while the job is being undone is
    ignored, so the undoing is not cut short. In another thread the block
    runs without a handler of its own (Python runs signal handlers in the
    main thread only).
    """
    if threading.current_thread() is not threading.main_thread():
        yield lambda: None
        return
    previous = signal.getsignal(signal.SIGTERM)

    def stop(signum, frame):
        signal.signal(signal.SIGTERM, signal.SIG_IGN)
        raise Stopped()

    def arm():
        signal.signal(signal.SIGTERM, stop)

    arm()
    try:
        yield arm
    finally:
        signal.signal(signal.SIGTERM, previous if previous is not None else signal.SIG_DFL)


@contextlib.contextmanager
def sigterm_deferred():
    """While the block runs in the main thread, a SIGTERM is noted, not acted on; after it, the handler before runs.

    For what must not be cut short, such as shutting a cluster down: the
    job's handler (`stop_on_sigterm`) then raises `Stopped` once the block
    has ended. Blocking the signal would not do: a thread that does not
    block it receives it, and Python runs the handler in the main thread
    all the same. Elsewhere than in the main thread nothing changes.
    """
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    came = []
    previous = signal.signal(signal.SIGTERM, lambda signum, frame: came.append(signum))
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, previous if previous is not None else signal.SIG_DFL)
    if came:
        if not callable(previous):
            raise Stopped()
        previous(signal.SIGTERM, None)


@contextlib.contextmanager
def sigterm_held():
    """While the block runs in the main thread, SIGTERM waits (blocked); one that came is delivered after it.

    The processes and threads started in the block keep it blocked: a new
    local cluster's (Ray's GCS, raylet, and the workers the raylet starts),
    so a SIGTERM sent to the whole process group (systemd, Slurm) reaches
    only the job's own process, which undoes the job and shuts them down
    (`ray.shutdown` ends them with SIGKILL when SIGTERM does not). Left to
    die with it, the raylet took the driver down at once (Ray ends a driver
    whose raylet is gone), before it could undo anything. Elsewhere than in
    the main thread nothing is held.
    """
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    before = signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGTERM})
    try:
        yield
    finally:
        signal.pthread_sigmask(signal.SIG_SETMASK, before)
