"""The installed `hierattn` command (console script), the same program as `python cli.py`.

It marks the running program as hierattn's command line before hierattn is
imported, so that `import hierattn` leaves Keras unloaded until a command
needs it: bad input is refused in under a second, and TensorFlow's logging is
set before TensorFlow starts (see `hierattn/__init__.py` and `hierattn.cli`).
"""

import sys

setattr(sys.modules["__main__"], "HIERATTN_PROGRAM", True)

from hierattn.cli import main  # noqa: E402

__all__ = ["main"]
