"""Names of a package that load on first use (PEP 562), so importing the package loads no Keras."""

import importlib
import sys


def lazy_names(package, exports, then=None):
    """`(__getattr__, __dir__)` for `package`, whose names in `exports` load from their modules on first use.

    Args:
        package: The package's name (`__name__`).
        exports: Each public name → the module that defines it.
        then: A module imported after the first name's, if any: the one
            that registers every Keras class of hierattn, for packages whose
            names all need Keras (`hierattn.utils.keras_hook.REGISTERS`).

    Example:

    >>> __getattr__, __dir__ = lazy_names("hierattn.utils", {"atomic_open": "hierattn.utils.atomic"})
    >>> __getattr__("atomic_open").__module__
    'hierattn.utils.atomic'
    """

    def __getattr__(name):
        if name in exports:
            value = getattr(importlib.import_module(exports[name]), name)
            if then:
                importlib.import_module(then)
            setattr(sys.modules[package], name, value)  # found directly from now on
            return value
        raise AttributeError(f"module {package!r} has no attribute {name!r}")

    def __dir__():
        return sorted(set(vars(sys.modules[package])) | set(exports))

    return __getattr__, __dir__
