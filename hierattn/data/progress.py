"""Progress bars that show without warnings wherever hierattn runs: a terminal, a notebook with or without widgets.

`tqdm.auto` picks a widget bar in a Jupyter kernel, but where `ipywidgets`
is not installed it warns in red ("IProgress not found. Please update
jupyter and ipywidgets") the first time it is imported, then falls back to
a text bar on standard error, which a notebook also shows in red. `tqdm`
here asks for `tqdm.auto` only where it can show a widget; in a kernel
without `ipywidgets` it gives a text bar in the cell's output (standard
output, as Keras's own progress bar), and on a terminal tqdm's plain bar.

Written to a file (a log, a pipe), a bar that redraws itself with carriage
returns would fill it with hundreds of updates: there it is whole lines
instead, one at each tenth of the work and at least every 30 s
(`PROGRESS`), and the last when the work ends.
"""

import contextlib
import functools
import importlib.util
import sys
import threading
import time

from hierattn.defaults import PROGRESS


def tqdm(*args, **kwargs):
    """A progress bar: `tqdm.auto.tqdm(*args, **kwargs)` where it cannot warn, else `tqdm.std.tqdm`.

    Takes and returns what tqdm's own class does (`with tqdm(total=n) as
    bar`, `for x in tqdm(iterable)`).

    Example:

    >>> with tqdm(total=3, disable=True) as bar:
    ...     bar.update(3)
    >>> [x for x in tqdm(range(3), disable=True)]
    [0, 1, 2]
    """
    if not _has_tqdm():  # a bare install (`pip install --no-deps /path/to/hierattn onnxruntime numpy`): no bar
        return _NoBar(*args[:1])
    kernel = "ipykernel" in sys.modules  # a Jupyter kernel (the check tqdm.autonotebook makes): its cell redraws
    if kernel:
        if _has_widgets():
            from tqdm.auto import tqdm as bar

            return bar(*args, **kwargs)
        if len(args) < 5:  # not given by position (iterable, desc, total, leave, file)
            kwargs.setdefault("file", sys.stdout)
    from tqdm.std import tqdm as bar

    if not kernel and len(args) < 5 and not _is_terminal(kwargs.get("file") or sys.stderr):
        return _log_bar()(*args, **kwargs)
    return bar(*args, **kwargs)


@contextlib.contextmanager
def busy(desc, disable=False):
    """A step that reports nothing itself, shown as it runs: `desc` and its time so far, redrawn every second.

    In a file (`tqdm`'s lines), a line when it starts, every 30 s, and when
    it ends: a long step is never silent.

    Example:

    >>> with busy("fitting the baseline", disable=True):
    ...     pass
    """
    with ticking(tqdm(desc=desc, bar_format="{desc}: {elapsed}", disable=disable)) as bar:
        yield bar


@contextlib.contextmanager
def ticking(bar):
    """`bar` redrawn every second until the block ends, then closed: its time moves while a long unit of work runs.

    Example:

    >>> with ticking(tqdm(total=5, desc="word2vec", unit="epoch", disable=True)) as bar:
    ...     bar.update(5)
    """
    stop = threading.Event()

    def tick():
        while not stop.wait(1.0):
            bar.refresh()

    ticker = threading.Thread(target=tick, daemon=True, name="hierattn-progress")
    if not getattr(bar, "disable", True):
        ticker.start()
    try:
        yield bar
    finally:
        stop.set()
        if ticker.is_alive():
            ticker.join()
        bar.close()


def _is_terminal(stream):
    try:
        return stream.isatty()
    except (AttributeError, ValueError):  # no such method, or a closed stream
        return False


@functools.cache
def _log_bar():
    """tqdm's bar as whole lines for a file: one at each tenth of the work, at least every 30 s, and the last."""
    from tqdm.std import tqdm

    class LogBar(tqdm):
        def __init__(self, *args, **kwargs):
            self._shown = self._shown_at = self._tenth = None
            kwargs.setdefault("mininterval", 1)
            kwargs.setdefault("ascii", True)  # no block characters in a log
            super().__init__(*args, **kwargs)

        def display(self, msg=None, pos=None):  # tqdm's own hook for how a bar is shown
            if msg == "":  # tqdm clearing the bar on close: lines stay
                return False
            tenth = int(10 * self.n / self.total) if self.total else None
            now = time.monotonic()
            due = self._shown_at is None or tenth != self._tenth or now - self._shown_at >= PROGRESS["log_seconds"]
            if due or getattr(self, "_closing", False):
                self._write(str(self) if msg is None else msg, now, tenth)
            return True

        def close(self):
            if not self.disable:
                self._closing = True
                self.display()
                self.leave = False  # the last line is written: nothing to redraw or clear
            super().close()

        def _write(self, line, now, tenth):
            if line.strip() and line != self._shown:
                self.fp.write(line.strip() + "\n")
                self.fp.flush()
                self._shown = line
            self._shown_at, self._tenth = now, tenth

    return LogBar


@functools.cache
def _has_tqdm():
    return importlib.util.find_spec("tqdm") is not None


class _NoBar:
    """What `tqdm` gives where tqdm is not installed: the same calls, nothing shown."""

    def __init__(self, iterable=()):
        self.iterable = iterable

    def __iter__(self):
        return iter(self.iterable)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False

    def update(self, n=1):
        pass

    def close(self):
        pass

    def set_postfix(self, *args, **kwargs):
        pass

    def refresh(self):
        pass


@functools.cache
def _has_widgets():
    return importlib.util.find_spec("ipywidgets") is not None
