"""Progress bars that show without warnings wherever hierattn runs: a terminal, a notebook with or without widgets.

`tqdm.auto` picks a widget bar in a Jupyter kernel, but where `ipywidgets`
is not installed it warns in red ("IProgress not found. Please update
jupyter and ipywidgets") the first time it is imported, then falls back to
a text bar on standard error, which a notebook also shows in red. `tqdm`
here asks for `tqdm.auto` only where it can show a widget; in a kernel
without `ipywidgets` it gives a text bar in the cell's output (standard
output, as Keras's own progress bar), and elsewhere tqdm's plain bar.
"""

import functools
import importlib.util
import sys


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
    if not _has_tqdm():  # a bare install (`pip install --no-deps hierattn onnxruntime numpy`): no bar
        return _NoBar(*args[:1])
    if "ipykernel" in sys.modules:  # a Jupyter kernel (the check tqdm.autonotebook makes)
        if _has_widgets():
            from tqdm.auto import tqdm as bar

            return bar(*args, **kwargs)
        if len(args) < 5:  # not given by position (iterable, desc, total, leave, file)
            kwargs.setdefault("file", sys.stdout)
    from tqdm.std import tqdm as bar

    return bar(*args, **kwargs)


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


@functools.cache
def _has_widgets():
    return importlib.util.find_spec("ipywidgets") is not None
