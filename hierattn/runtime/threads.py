"""What `hierattn.runtime.Predictor` needs to overlap its work: the cores it may use, and an executor that does not."""

import concurrent.futures
import os


def cores():
    """The cores this process may run on."""
    return len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1


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
