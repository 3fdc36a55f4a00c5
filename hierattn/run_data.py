"""Where a run's data came from (config.json's `data`), and whether it is still the same.

A run records each data file it read (path, size, sha256); resuming, and
`hierattn evaluate` on the run's own test data, refuse files that changed.
"""

import hashlib
import pathlib

from hierattn.errors import HierattnError, RunError
from hierattn.train_config import read_config


def describe_source(path):
    """Where data came from, for config.json: the absolute path, and for a file its size and sha256."""
    path = pathlib.Path(path)
    entry = {"path": str(path.resolve())}
    if path.is_file():
        digest = hashlib.sha256()
        with open(path, "rb") as f:
            for block in iter(lambda: f.read(1 << 20), b""):
                digest.update(block)
        entry.update(bytes=path.stat().st_size, sha256=digest.hexdigest())
    return entry


def recorded_data(path):
    """Where a run's data came from (config.json's `data`: paths, sha256, columns), or {} if not recorded."""
    try:
        data = read_config(path).get("data")
    except HierattnError:
        return {}
    return data if isinstance(data, dict) else {}


DATA_FILES = ("train", "test", "unlabeled", "imdb")


def data_changes(recorded, current=None):
    """How the data files a run recorded (config.json's `data`) differ from `current`, in plain words.

    Args:
        recorded: The run's record (`recorded_data`): `{name: {"path",
            "bytes", "sha256"}}` for the files, among other keys.
        current: Descriptions of the files given now (`describe_source`), or
            None to compare each recorded file with itself as it is now.

    Returns:
        `{name: reason}` for each file that is missing, changed (another
        sha256) or given where none was or the other way round; `{}` when
        nothing changed. A folder (IMDB's aclImdb/) has no sha256 and is
        compared by path only.
    """
    names = [name for name in DATA_FILES if isinstance(recorded.get(name), dict) or (current or {}).get(name)]
    if current is not None and not current.get("unlabeled"):
        names = [name for name in names if name != "unlabeled"]  # a resumed run does not read them again
    changes = {}
    for name in names:
        before = recorded.get(name) if isinstance(recorded.get(name), dict) else None
        if current is None:
            if before is None or "sha256" not in before:
                continue
            path = pathlib.Path(before["path"])
            if not path.is_file():
                changes[name] = f"{path} no longer exists"
                continue
            now_ = describe_source(path)
        else:
            now_ = current.get(name)
        if before is None:
            changes[name] = f"the run was started without {name} data, and {now_['path']} is given now"
        elif now_ is None:
            changes[name] = f"the run was started with {name} data {before['path']}, and none is given now"
        elif "sha256" in before and now_.get("sha256") != before["sha256"]:
            changes[name] = (
                f"{now_['path']} changed since the run recorded it"
                if current is None
                else f"{now_['path']} is not the {name} data the run recorded"
            ) + " (its sha256 is not the one in config.json)"
        elif "sha256" not in before and now_["path"] != before["path"]:
            changes[name] = f"{now_['path']} is not the {name} data the run recorded ({before['path']})"
    return changes


def check_same_data(path, recorded, current):
    """Refuses to resume the run at `path` on other data than it recorded (see `data_changes`).

    Raises:
        RunError: What changed, in one line.
    """
    if not any(isinstance(recorded.get(name), dict) for name in DATA_FILES):
        return  # a run trained through the Python API without a record of its data: nothing to compare
    changes = data_changes(recorded, current)
    if changes:
        raise RunError(
            f"cannot resume {path}: " + "; ".join(changes.values()) + ". Resuming would train on other "
            "data than the run recorded: restore the file, or start a new run."
        )
