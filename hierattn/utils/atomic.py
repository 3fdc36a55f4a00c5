"""Writing files whole or not at all: every file hierattn writes goes through here.

A file is written under a temporary name in its own folder
(`.NAME.<8 random hex digits>.partial` plus NAME's suffixes, so Keras still sees
`.keras` or `.weights.h5`) and moved into place only when complete. On any
failure (a full disk, an I/O error, a permission, Ctrl-C) the temporary file
is removed and the error is re-raised as one `WriteError` line that names the
file: "no space left on device while writing runs/x/metrics.json".

With `overwrite=False` the move refuses to replace a file that appeared in
the meantime (another process's), so two writers of one output file never
overwrite each other: one wins, the other gets a `WriteError`.
"""

import contextlib
import errno
import os
import pathlib
import secrets

from hierattn.errors import ArgumentError, WriteError

PARTIAL = ".partial"


# The reasons an OSError without a file name is a failure to write (a full disk, quota, read-only, too large, I/O).
WRITE_ERRNOS = {errno.ENOSPC, errno.EDQUOT, errno.EROFS, errno.EFBIG, errno.EIO}


def reason(error):
    """An `OSError`'s reason in plain words, as a clause: "no space left on device"."""
    text = error.strerror or str(error) or type(error).__name__
    return text[:1].lower() + text[1:]


def is_write_failure(error):
    """Whether an `OSError` that names no file is a failure to write (see `WRITE_ERRNOS`)."""
    return isinstance(error, OSError) and error.errno in WRITE_ERRNOS


def write_error(error, path):
    """A `WriteError` saying, in plain words, why `path` could not be written."""
    if isinstance(error, WriteError):
        return error
    if error.errno == errno.EEXIST:
        return WriteError(f"{path} already exists (another process wrote it); nothing was overwritten", errno.EEXIST)
    return WriteError(f"{reason(error)} while writing {path}", error.errno)


def temporary_name(path):
    """The temporary sibling of `path` that `atomic_path` writes first (short enough for any file system)."""
    path = pathlib.Path(path)
    suffix = "".join(path.suffixes)[-32:]
    return path.with_name(f".{path.name[:150]}.{secrets.token_hex(4)}{PARTIAL}{suffix}")


def is_temporary(path):
    """Whether `path` is a temporary file of this module (left behind only by a killed process)."""
    name = pathlib.Path(path).name
    return name.startswith(".") and PARTIAL in name


def _publish(temporary, path, overwrite):
    if overwrite:
        os.replace(temporary, path)
        return
    try:  # link() fails if `path` exists (FileExistsError, raised as it is): an atomic "create, never replace"
        os.link(temporary, path)
    except OSError as error:
        if error.errno not in (errno.EPERM, errno.ENOTSUP, errno.EOPNOTSUPP, errno.EXDEV, errno.EMLINK):
            raise
        if os.path.lexists(path):  # a file system without hard links: check, then move
            raise FileExistsError(errno.EEXIST, os.strerror(errno.EEXIST), str(path)) from None
        os.replace(temporary, path)
        return
    os.unlink(temporary)


@contextlib.contextmanager
def atomic_path(path, overwrite=True):
    """Yields a temporary path to write `path` through; moves it into place on success.

    For writers that take a file name (`keras.Model.save`, `save_weights`).

    Args:
        path: The file to write.
        overwrite: Replace an existing `path`. With False, a `path` that
            exists when the file is complete is left alone and a
            `WriteError` is raised.

    Raises:
        WriteError: Any `OSError` while writing or moving, in one line naming
            `path`; the temporary file is gone.
    """
    path = pathlib.Path(path)
    temporary = temporary_name(path)
    try:
        yield temporary
        _publish(temporary, path, overwrite)
    except BaseException as error:
        _remove(temporary)
        if isinstance(error, OSError) and (
            getattr(error, "filename", None) in (str(temporary), str(path))
            or (error.filename is None and is_write_failure(error))
        ):
            raise write_error(error, path) from None
        raise  # not about this file (e.g. reading an input while writing)


@contextlib.contextmanager
def atomic_open(path, mode="w", overwrite=True, encoding="utf-8", newline=None):
    """`open(path, mode)` through a temporary file (see `atomic_path`); `mode` is "w" or "wb".

    Example:

    >>> import tempfile
    >>> folder = tempfile.mkdtemp()
    >>> with atomic_open(f"{folder}/results.csv") as f:
    ...     _ = f.write("a,b\\n")
    >>> sorted(os.listdir(folder))
    ['results.csv']
    """
    if mode not in ("w", "wb"):
        raise ValueError(f"atomic_open writes new files only (mode 'w' or 'wb'). Received: mode={mode!r}")
    text = mode == "w"
    with atomic_path(path, overwrite) as temporary:
        with open(temporary, mode, encoding=encoding if text else None, newline=newline if text else None) as f:
            yield f


def write_text(path, text, overwrite=True):
    """Writes `text` (UTF-8) to `path` atomically."""
    with atomic_open(path, "w", overwrite=overwrite, newline="") as f:
        f.write(text)


def _remove(path):
    with contextlib.suppress(OSError):
        os.unlink(path)


def remove_temporary_files(folder):
    """Deletes the temporary files a killed process left under `folder` (the caller owns `folder`)."""
    for path in pathlib.Path(folder).rglob(f"*{PARTIAL}*"):
        if path.is_file() and is_temporary(path):
            _remove(path)


def check_new_file(path, argument="output"):
    """Refuses a file to write that exists, or whose folder does not, before any work (writing it would fail late).

    Args:
        path: The file to write.
        argument: The argument that named `path`, named in the error.

    Raises:
        ArgumentError: `path` exists (it is never overwritten), or its folder
            does not exist or is a file.
    """
    target = pathlib.Path(path)
    if target.exists():
        raise ArgumentError(
            f"{path} already exists; choose another {{argument}} (nothing was overwritten)", argument=argument
        )
    if not target.parent.is_dir():
        problem = "is a file" if target.parent.exists() else "does not exist; create it first"
        raise ArgumentError(f"the folder of {{argument}} {path} {problem}", argument=argument)


__all__ = [
    "WriteError",
    "atomic_open",
    "atomic_path",
    "check_new_file",
    "is_temporary",
    "is_write_failure",
    "reason",
    "remove_temporary_files",
    "temporary_name",
    "write_error",
    "write_text",
]
