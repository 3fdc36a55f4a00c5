"""What `hierattn.runtime.Predictor` needs to overlap its work: the cores it may use, and an executor that does not."""

import concurrent.futures
import numbers
import os

from hierattn.errors import ArgumentError

# The most threads onnxruntime may be given: more than any machine's cores make it only slower (and 100,000 never
# start); a machine with more than 64 cores may have 4 per core.
MAX_THREADS = 256


def cores():
    """The cores this process may run on."""
    return len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1


def max_threads():
    """The most threads `hierattn.runtime.load` accepts here: `MAX_THREADS`, or 4 per core where that is more."""
    return max(MAX_THREADS, 4 * cores())


def check_threads(threads):
    """Refuses (`ArgumentError`) a thread count that is not None or a whole number from 1 to `max_threads()`.

    Example:

    >>> check_threads(2), check_threads(None)
    (2, None)
    >>> try:
    ...     check_threads(0)
    ... except ArgumentError as error:
    ...     print(error)   # doctest: +ELLIPSIS
    threads must be a whole number from 1 to ..., not 0
    """
    good = threads is None or (isinstance(threads, numbers.Integral) and not isinstance(threads, bool))
    if not good or (threads is not None and not 1 <= threads <= max_threads()):
        raise ArgumentError(
            f"{{argument}} must be a whole number from 1 to {max_threads()}, not {threads!r}", argument="threads"
        )
    return None if threads is None else int(threads)


class Inline(concurrent.futures.Executor):
    """An executor that runs what it is given at once, in this thread (one chunk: nothing to overlap).

    Example:

    >>> Inline().submit(sum, [1, 2]).result()
    3
    """

    def submit(self, function, /, *args):
        future = concurrent.futures.Future()
        future.set_result(function(*args))
        return future
