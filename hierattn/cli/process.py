"""The `hierattn` program's process-wide settings, chosen once in `main` and never on import (not the library's).

`configure_process` sets TensorFlow's CPU allocator and how much of its log
is shown, quiets warnings unless asked, and installs the program's import
finder (`_WithoutScikitLearn`), which loads TensorFlow and Keras without
scikit-learn.
"""

import importlib.abc
import importlib.util
import logging
import os
import sys
import warnings


def configure_process(verbose=False):
    """The process-wide settings of the `hierattn` program (not of the library).

    * `TF_CPU_ALLOCATOR_USE_BFC=true` unless set: TensorFlow pools freed CPU
      tensor memory instead of handing large blocks back to the operating
      system (BENCHMARKS.md, "CPU memory allocator").
    * TensorFlow and Keras load without scikit-learn (`_WithoutScikitLearn`).
    * With `verbose`: hierattn's own log (the `hierattn` logger, e.g. each
      n-gram recipe tried, at DEBUG level) is shown on standard error, and
      so is all of TensorFlow's (`TF_CPP_MIN_LOG_LEVEL=0` unless set, which
      also keeps the start-up lines the library drops when it loads
      TensorFlow itself: see `hierattn/__init__.py`).
    * Without `verbose`: TensorFlow's C++ log lines (written straight to file
      descriptor 2, e.g. `failed call to cuInit` on a machine without a GPU)
      are discarded, Python's own `sys.stderr` keeps the real standard error,
      and library warnings are not shown (the CLI reports what matters itself)
      but for one line per file read in an encoding detected, not given
      (`hierattn.data.decoding.log_detected`).
    """
    os.environ.setdefault("TF_CPU_ALLOCATOR_USE_BFC", "true")
    if not any(isinstance(finder, _WithoutScikitLearn) for finder in sys.meta_path):
        sys.meta_path.insert(0, _WithoutScikitLearn())
    if verbose:
        os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "0")
        library = logging.getLogger("hierattn")  # the library logs, never configures: the program does
        if not library.handlers:
            handler = logging.StreamHandler()
            handler.setFormatter(logging.Formatter("%(message)s"))
            library.addHandler(handler)
        library.setLevel(logging.DEBUG)
        return
    os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
    decoding = logging.getLogger("hierattn.data.decoding")  # "X is not UTF-8: read as GB18030 ...": said once
    if not any(isinstance(handler, _Echo) for handler in decoding.handlers):
        decoding.addHandler(_Echo())
        decoding.setLevel(logging.INFO)
    warnings.simplefilter("ignore")
    logging.getLogger("tensorflow").setLevel(logging.ERROR)
    try:
        sys.stderr.flush()
        saved = os.dup(2)
        devnull = os.open(os.devnull, os.O_WRONLY)
    except (OSError, AttributeError, ValueError):  # no real file descriptor 2 (embedded use)
        return
    os.dup2(devnull, 2)
    os.close(devnull)
    sys.stderr = open(
        saved,
        "w",
        encoding=getattr(sys.stderr, "encoding", None) or "utf-8",
        errors="backslashreplace",
        buffering=1,
        closefd=True,
    )


class _WithoutScikitLearn(importlib.abc.MetaPathFinder):
    """Hides scikit-learn while the first of TensorFlow or Keras loads (the program's import finder).

    Keras imports scikit-learn (about 0.8 s of a ~5 s cold start here) only
    for its `keras.wrappers` scikit-learn estimators, and falls back quietly
    when it is missing. The program never uses those wrappers, so
    scikit-learn is hidden while TensorFlow (or Keras, whichever comes
    first) loads, and is importable normally right after (for `evaluate`'s
    metrics and the baseline).
    """

    def find_spec(self, name, path=None, target=None):
        if name not in ("tensorflow", "keras") or "sklearn" in sys.modules:
            return None
        sys.meta_path.remove(self)  # once: the other package loads inside this one
        spec = importlib.util.find_spec(name)
        if spec is not None and spec.loader is not None:
            spec.loader = _LoadingWithout(spec.loader, "sklearn")
        return spec


class _LoadingWithout(importlib.abc.Loader):
    """A module's own loader, run while the module `hidden` cannot be imported."""

    def __init__(self, loader, hidden):
        self.loader, self.hidden = loader, hidden

    def create_module(self, spec):
        return self.loader.create_module(spec)

    def exec_module(self, module):
        module.__spec__.loader = module.__loader__ = self.loader  # its own loader from now on (resources, reloads)
        sys.modules[self.hidden] = None  # `import sklearn` raises ImportError
        try:
            self.loader.exec_module(module)
        finally:
            if sys.modules.get(self.hidden, False) is None:
                del sys.modules[self.hidden]


class _Echo(logging.Handler):
    """Writes a library record's message to standard error as the program's own lines are (click, at emit time)."""

    def emit(self, record):
        import click

        click.echo(self.format(record), err=True)
