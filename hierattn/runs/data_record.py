"""Where a run's data came from (config.json's `data`), and whether it is still the same.

A run records each data file it read (its absolute path, size and sha256),
and for tables the text and label columns and the encoding. Resuming reads
the recorded files again (`data_to_resume`), wherever it is started from,
and `hierattn evaluate` the run's own test data; both refuse files that
changed.
"""

import hashlib
import pathlib

from hierattn.errors import RunError


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


DATA_FILES = ("train", "test", "unlabeled", "imdb")


def data_changes(recorded, current=None):
    """How the data files a run recorded (config.json's `data`) differ from `current`, in plain words.

    Args:
        recorded: The run's record (`hierattn.runs.run.Run.data`): `{name: {"path",
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
            ) + (
                " (its sha256 is not the one in config.json)"
                if current is None or now_["path"] == before["path"]
                else f" ({before['path']}: another sha256)"
            )
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


def data_to_resume(path, recorded, given=None, unlabeled=False):
    """The data files the run at `path` resumes on: those it recorded, or copies of them given again.

    Every file is checked before any is read: a file given again must hold what the recorded one held (the
    same sha256; a folder, the same path), wherever it is now; a recorded file not given must still be where
    the run recorded it, unchanged. Unlabelled texts are read again only by a run that stopped while word2vec
    trained (`unlabeled`); otherwise their file is only checked when given.

    Args:
        path: The run directory (named in errors).
        recorded: The run's record (`hierattn.runs.run.Run.data`).
        given: Data files given again, by name (`train`, `test`,
            `unlabeled`, `imdb`); a name given None is not given.
        unlabeled: Whether the unlabelled texts are read again (the run
            has no `adapted.keras` yet): their recorded file is then checked
            and returned like the others.

    Returns:
        `{name: path}` of the files to read: `train` and, if recorded,
        `test` (and `unlabeled` with `unlabeled`, or given) for a run on
        tables, `imdb` for a run on IMDB. A run that
        recorded no data (trained through `hierattn.runs.train.train`) gets
        the files given, unchecked.

    Raises:
        RunError: A file given for another kind of data than the run's,
            given where the run had none, not what the run recorded, or a
            recorded file missing or changed; in one line that says what
            to do.
    """
    given = {name: str(value) for name, value in (given or {}).items() if value is not None}
    files = {name: recorded[name] for name in DATA_FILES if isinstance(recorded.get(name), dict)}
    if not files:
        if "train" not in given and "imdb" not in given:
            raise RunError(
                f"cannot resume {path} alone: it recorded no data (trained through the Python API); give its data again"
            )
        return {name: value for name, value in given.items() if name != "unlabeled" or unlabeled}
    trained_on = f"IMDB ({files['imdb']['path']})" if "imdb" in files else f"the table {files['train']['path']}"
    wrong_kind = ("imdb" in given) != ("imdb" in files) and ("imdb" in given or "train" in given or "test" in given)
    if wrong_kind:
        other = f"IMDB ({given['imdb']})" if "imdb" in given else f"the table {given.get('train') or given['test']}"
        raise RunError(
            f"cannot resume {path} on {other}: it was trained on {trained_on}; give no data to resume it on the "
            "data it recorded"
        )
    chosen = {}
    for name in DATA_FILES:
        before = files.get(name)
        if name in given:
            if before is None:
                raise RunError(
                    f"cannot resume {path}: it was trained without {name} data, and {given[name]} is given now; "
                    "leave it out, or start a new run"
                )
            now_ = describe_source(given[name])
            change = data_changes({name: before}, {name: now_}).get(name)
            if change:
                todo = (
                    "Resuming would train on other data than the run recorded: restore the file, or start a new run."
                    if now_["path"] == before["path"]
                    else f"Leave it out to resume on the {name} data the run recorded, or start a new run."
                )
                raise RunError(f"cannot resume {path}: {change}. {todo}")
            chosen[name] = given[name]
        elif before is not None and (name != "unlabeled" or unlabeled):
            recorded_path = pathlib.Path(before["path"])
            change = (
                f"{recorded_path} no longer exists"
                if not recorded_path.exists()
                else data_changes({name: before}).get(name)
            )
            if change:
                raise RunError(
                    f"cannot resume {path}: its {name} data {change}. Resuming needs the data the run recorded: "
                    f"restore the file{' (or give a copy of it)' if 'no longer exists' in change else ''}, or start "
                    "a new run."
                )
            chosen[name] = str(recorded_path)
    return chosen
