"""What `import hierattn` arranges with Keras: its classes registered when Keras loads, TensorFlow loaded quietly.

Keras finds a saved class by its registered name, and a class is registered when the module defining it is
imported. `import hierattn` must not import Keras (the program refuses bad input before TensorFlow loads), so
when Keras is not loaded yet a one-shot import hook waits for it. The hook is the one process-wide change that
importing hierattn makes, and an acceptable one: it changes how no module loads and no setting, only imports
`hierattn.models` (registering hierattn's own classes, nothing else) right after Keras or TensorFlow has loaded,
and removes itself at that first import; its cost on every other import is one comparison.

When hierattn itself is what loads TensorFlow (e.g. `hierattn.TextClassifier` in a notebook) and
TF_CPP_MIN_LOG_LEVEL is not set, TensorFlow loads quietly: a notebook shows its C++ log lines in red, and they
are noise to a hierattn user (absl's "All log messages before absl::InitializeLog() ...", the oneDNN notice,
"Could not find cuda drivers", "failed call to cuInit", "oneDNN supports DT_BOOL only on platforms with AVX-512").
TF_CPP_MIN_LOG_LEVEL is 3 while it loads and unset again right after (TensorFlow keeps the level it read then:
its C++ log stays quiet in this process; its errors still reach Python as exceptions), and what is written to
file descriptor 2 while it loads is dropped (absl's first lines come before any level applies), or shown if
loading fails. Set TF_CPP_MIN_LOG_LEVEL yourself (0 shows everything) to keep TensorFlow's log; so does
`hierattn --verbose`.
"""

import contextlib
import importlib
import importlib.abc
import importlib.util
import os
import sys

# The module whose import registers every Keras class of hierattn (it imports them all).
REGISTERS = "hierattn.models.text_classifier"
_KERAS_PACKAGES = ("keras", "tensorflow")  # TensorFlow imports Keras: the hook waits for the outer one to finish


def _importing_hierattn():
    """Whether a module of hierattn is being imported (the caller's stack holds its module code)."""
    frame = sys._getframe(1)
    while frame is not None:
        name = frame.f_globals.get("__name__", "")
        if frame.f_code.co_name == "<module>" and (name == "hierattn" or name.startswith("hierattn.")):
            return True
        frame = frame.f_back
    return False


class _RegisterWithKeras(importlib.abc.MetaPathFinder):
    """A one-shot import hook: at the first import of Keras or TensorFlow, `_ThenRegister` wraps its loader.

    It finds nothing itself: it wraps the loader the other finders give,
    as the program's `hierattn.cli.process._WithoutScikitLearn` does (the
    two compose), and removes itself when it fires.
    """

    def find_spec(self, name, path=None, target=None):
        if name not in _KERAS_PACKAGES:
            return None
        sys.meta_path.remove(self)  # once: the other package loads inside this one
        spec = importlib.util.find_spec(name)
        if spec is not None and spec.loader is not None:
            spec.loader = _ThenRegister(spec.loader)
        return spec


class _ThenRegister(importlib.abc.Loader):
    """A module's own loader (quiet when hierattn imports it), then `hierattn.models` imported to register its classes.

    When hierattn itself imports Keras, the module of hierattn importing
    it registers its own classes (and `hierattn.models` cannot be imported
    while the modules it needs are half-initialised): `import hierattn`, or
    `hierattn.models`, is what makes every class known. When TensorFlow
    loaded without Keras, the hook waits for Keras again.
    """

    def __init__(self, loader):
        self.loader = loader

    def create_module(self, spec):
        return self.loader.create_module(spec)

    def exec_module(self, module):
        module.__spec__.loader = module.__loader__ = self.loader  # its own loader from now on (resources, reloads)
        by_hierattn = _importing_hierattn()
        with _quiet_tensorflow(by_hierattn and "TF_CPP_MIN_LOG_LEVEL" not in os.environ):
            self.loader.exec_module(module)
        if "keras" not in sys.modules:
            if not any(isinstance(finder, _RegisterWithKeras) for finder in sys.meta_path):
                sys.meta_path.insert(0, _RegisterWithKeras())
        elif not by_hierattn:
            importlib.import_module(REGISTERS)


@contextlib.contextmanager
def _quiet_tensorflow(quiet):
    """When `quiet`: TF_CPP_MIN_LOG_LEVEL=3 and file descriptor 2 dropped inside the block (shown if it fails)."""
    if not quiet:
        yield
        return
    os.environ["TF_CPP_MIN_LOG_LEVEL"] = "3"
    try:
        with _file_descriptor_2_dropped():
            yield
    finally:
        os.environ.pop("TF_CPP_MIN_LOG_LEVEL", None)


@contextlib.contextmanager
def _file_descriptor_2_dropped():
    """Drops what is written to file descriptor 2 inside the block; writes it there after all if the block fails."""
    try:
        sys.stderr.flush()
        saved = os.dup(2)
    except (OSError, AttributeError, ValueError):  # no real file descriptor 2 (embedded use)
        yield
        return
    import tempfile  # here, not at the top: `import hierattn` stays light

    with tempfile.TemporaryFile() as written:
        os.dup2(written.fileno(), 2)
        try:
            yield
        except BaseException:
            os.dup2(saved, 2)
            written.seek(0)
            os.write(2, written.read())
            raise
        finally:
            os.dup2(saved, 2)
            os.close(saved)


def install():
    """Registers hierattn's classes with Keras now if Keras is loaded, else at its first import (`import hierattn`)."""
    if "keras" in sys.modules:  # Keras first: hierattn's classes are registered now
        importlib.import_module(REGISTERS)
    elif not any(type(finder).__name__ == "_RegisterWithKeras" for finder in sys.meta_path):  # a reload keeps one
        sys.meta_path.insert(0, _RegisterWithKeras())
