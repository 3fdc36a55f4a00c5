"""The Ray cluster of a batch job: its address checked before joining it, the workers it can place, and SIGTERM.

`ray.init` waits a minute or more for a cluster address where nothing
answers, and a pool of more workers than the cluster can run waits for
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
import threading

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
    """Refuses, within `timeout` seconds, a Ray cluster address where nothing answers.

    The address `ray.init(address)` would join (`address`; for None or
    `"auto"`, the `RAY_ADDRESS` environment variable when it is set) is
    tried with one TCP connection to its host and port (the GCS port, or
    Ray Client's with `ray://`). `"auto"` without `RAY_ADDRESS`, `"local"`
    and None start or find a cluster on this machine: nothing to try.

    Raises:
        ArgumentError: `address` is not `HOST:PORT` or `ray://HOST:PORT`,
            or nothing answers there.
        HierattnError: The same, for the address `RAY_ADDRESS` names.

    Example:

    >>> check_address(None), check_address("local")
    (None, None)
    >>> try:
    ...     check_address("head-node")
    ... except ArgumentError as error:
    ...     print(error)
    address must be auto, HOST:PORT or ray://HOST:PORT; got 'head-node'
    """
    environment = os.environ.get("RAY_ADDRESS") if address in (None, "auto") else None
    target = environment or address
    if target in (None, "auto", "local"):
        return
    host, port = _host_port(target, environment)
    try:
        with socket.create_connection((host, port), timeout=timeout):
            return
    except TimeoutError:
        why = f"no answer within {timeout:g} s"
    except socket.gaierror:
        why = f"no such host: {host}"
    except OSError as error:
        why = reason(error)
    if environment:
        raise HierattnError(f"no Ray cluster answers at {target} (RAY_ADDRESS): {why}; start it or change RAY_ADDRESS")
    raise ArgumentError(
        f"no Ray cluster answers at {target}: {why}; start it (`ray start` on its head node) or check {{argument}}",
        argument="address",
    )


def _host_port(address, environment):
    """`(host, port)` of `HOST:PORT`, `ray://HOST:PORT` or `[IPv6]:PORT`."""
    rest = str(address).removeprefix("ray://").rstrip("/")
    host, colon, port = rest.rpartition(":")
    if host.startswith("[") and host.endswith("]"):  # an IPv6 address
        host = host[1:-1]
    elif ":" in host:
        host = ""
    if colon and host and port.isdigit() and 0 < int(port) < 2**16:
        return host, int(port)
    if environment:
        raise HierattnError(f"RAY_ADDRESS must be auto, HOST:PORT or ray://HOST:PORT; got {address!r}")
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
