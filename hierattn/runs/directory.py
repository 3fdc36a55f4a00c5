"""Run directories: what a training run writes, finding a complete one, and owning one while training.

(A complete run is loaded, once, by `hierattn.runs.run.Run`.)

A run directory holds:

    model.keras         the whole TextClassifier: preprocessor (tokenizer,
                        vocabulary, length limits), backbone, label names
                        (written atomically at the end)
    model.onnx          the same classifier exported as one bundle, which
                        `predict` runs without TensorFlow (`hierattn.runtime`);
                        written after model.keras
    config.json         the settings as given: the untrained classifier's
                        config, the run's own settings, and where the data
                        came from (paths and sha256); see
                        `hierattn.runs.config.read_config`
    history.csv         per-epoch metrics
    metrics.json        validation and test metrics
    report.html         the test split's scores, reliability diagram,
                        accuracy-coverage curve and confusion matrix, as a
                        page (`hierattn.runs.evaluation_page`; with a test
                        split and an n-gram part)
    logs/               TensorBoard logs
    run.json            status ("training" / "complete"), dataset (its name:
                        `dataset_name`), timestamps, and `stopped_by` once the
                        network's training ended (a resumed run trains no
                        further epoch)
    checkpoints/        state to resume from (removed when the run completes)
"""

import contextlib
import datetime
import os
import pathlib
import re
import shutil

from hierattn.defaults import GENERIC_DATA_NAMES
from hierattn.errors import HierattnError, RunError
from hierattn.runs.config import CONFIG_FORMAT
from hierattn.utils.atomic import remove_temporary_files
from hierattn.utils.jsonfile import load_json, save_json

RUN_FORMAT = "hierattn.run/1"
BUNDLE_FILE = "model.onnx"
WORD2VEC_CHECKPOINT = "word2vec.npz"  # in checkpoints/, until adapted.keras is written
DEFAULT_ROOT = "runs"


def now():
    return datetime.datetime.now().astimezone().isoformat(timespec="seconds")


# Suffixes of compressed files, left out of a dataset's name (`reviews.csv.gz` is `reviews`).
_COMPRESSION_SUFFIXES = (".gz", ".bz2", ".zip", ".xz", ".zst", ".tgz")


def dataset_name(path):
    """The name a run gives its data file: the file's name, or its folder's when the file's says only which part.

    The file's name without its suffixes (`reviews.csv.gz` is `reviews`);
    when that name is generic (`hierattn.defaults.GENERIC_DATA_NAMES`:
    `train`, `test`, `data`, ...), the name of the nearest folder up whose
    name is not, so every devsuite set's `train.csv` names its own dataset.
    Characters other than letters, digits, `.`, `_` and `-` become `-`.

    Example:

    >>> dataset_name("../shared/datasets/devsuite/agnews/train.csv")
    'agnews'
    >>> dataset_name("reviews.csv.gz"), dataset_name("/data/imdb/data/train.jsonl")
    ('reviews', 'imdb')
    """
    path = pathlib.Path(path)
    name = path.name
    while name.lower().endswith(_COMPRESSION_SUFFIXES):
        name = name.rsplit(".", 1)[0]
    name = name.rsplit(".", 1)[0] if "." in name[1:] else name
    folders = [folder.name for folder in pathlib.Path(os.path.abspath(path)).parents if folder.name]
    for candidate in (name, *folders):
        if candidate.lower() not in GENERIC_DATA_NAMES:
            name = candidate
            break
    return re.sub(r"[^\w.-]+", "-", name).strip("-") or "data"


def new_run_dir(root, model, dataset):
    """A fresh, not yet existing directory name under `root`: `<model>-<dataset>-<time>` (see `dataset_name`)."""
    stamp = datetime.datetime.now().strftime("%Y%m%d-%H%M%S")
    base = pathlib.Path(root) / f"{model}-{dataset}-{stamp}"
    path, n = base, 1
    while path.exists():
        n += 1
        path = base.with_name(f"{base.name}-{n}")
    return path


def read_status(path):
    return load_json(pathlib.Path(path) / "run.json", RUN_FORMAT)


def write_status(path, **fields):
    path = pathlib.Path(path)
    status = read_status(path) if (path / "run.json").exists() else {}
    status.update(fields)
    save_json(path / "run.json", RUN_FORMAT, status, indent=2)
    return status


def find_latest_run(root=DEFAULT_ROOT):
    """The most recently finished complete run under `root`.

    Raises:
        RunError: No complete run found (`find_run` and `load_run` take a `run_dir`).
    """
    return _latest_run(root)[0]


def _latest_run(root):
    """The most recently finished complete run under `root` and its status, each run.json read once."""
    candidates = []
    for status_file in pathlib.Path(root).glob("*/run.json"):
        try:
            status = load_json(status_file, RUN_FORMAT)
        except HierattnError:
            continue
        if status.get("status") == "complete":
            candidates.append((status.get("finished", ""), str(status_file.parent), status))
    if not candidates:
        raise RunError(
            f"no trained run found under {root}/: train one first, or name a run directory with {{argument}}",
            argument="run_dir",
        )
    _, path, status = max(candidates, key=lambda candidate: candidate[:2])
    return pathlib.Path(path), status


def find_run(run_dir=None, root=DEFAULT_ROOT):
    """The run directory `run_dir` (checked), or the latest complete run under `root`.

    Raises:
        RunError: Not a run directory, or no complete run under `root`.
    """
    path = pathlib.Path(run_dir) if run_dir is not None else find_latest_run(root)
    if not path.is_dir():
        raise RunError(f"no run directory at {path}")
    if not (path / "run.json").exists():
        raise RunError(f"{path} is not a hierattn run (it has no run.json)")
    return path


def complete_run(run_dir=None, root=DEFAULT_ROOT):
    """The complete run `run_dir` (or the latest under `root`) and its status: `(path, run.json's dict)`, read once.

    Raises:
        RunError: Not a run directory, no complete run under `root`, or an
            unfinished run.
    """
    if run_dir is None:
        return _latest_run(root)
    path = find_run(run_dir, root)
    status = read_status(path)
    if status.get("status") != "complete":
        raise RunError(
            f"{path} is an unfinished run (status: {status.get('status')}): resume its training first, "
            "or name a complete run with {argument}",
            argument="run_dir",
        )
    return path, status


def run_line(path, latest_under=None):
    """The line that says which run answers: `run: PATH`, and when it was chosen for the caller, that it is the latest.

    Args:
        path: The run directory.
        latest_under: The folder it was found in as the latest complete run
            (`find_latest_run`), or None when it was named.
    """
    return f"run: {path}" + (f" (the latest complete run under {latest_under}/)" if latest_under is not None else "")


def ensure_new_or_resumable(path, resume, check_lock=True):
    """Refuses to write into an existing run unless resuming an unfinished one that no other process holds.

    A quick check before any data is read; `claim_run_dir` makes the same
    checks again, atomically, when the run starts. `check_lock=False` skips
    the check that no other process holds a run to resume (for a reader of
    it, such as a multi-worker cluster's non-chief worker).

    Returns:
        Whether `path` is a run to resume.

    Raises:
        RunError: In one line.
    """
    path = pathlib.Path(path)
    exists = path.exists() and any(path.iterdir())
    if resume:
        if not exists or not (path / "run.json").exists():
            raise RunError(f"nothing to resume at {path}: it is not a run directory")
        status = read_status(path)
        if status.get("status") == "complete":
            raise RunError(
                f"{path} is already complete: nothing to resume; use it, or train into a new {{argument}}",
                argument="output",
            )
        if not resumable(path):
            raise RunError(
                f"nothing to resume at {path}: the run stopped before its first checkpoint; start a new "
                "run (into another {argument}, or remove this one first)",
                argument="output",
            )
        if check_lock:
            _lock(path, probe=True)
        return True
    if exists:
        raise RunError(
            f"{path} already exists and is not empty; choose another {{argument}} (nothing was overwritten)",
            argument="output",
        )
    return False


def _lock(path, probe=False):
    """An exclusive lock on the directory `path` (its open descriptor), or a `RunError` if another process holds it.

    The operating system releases the lock when the process ends, however it
    ends, so a killed run stays resumable. `probe`: release it at once.
    """
    try:
        import fcntl
    except ImportError:  # not POSIX: the exclusive mkdir of a new run still gives it one owner
        return None
    descriptor = os.open(path, os.O_RDONLY)
    try:
        fcntl.flock(descriptor, fcntl.LOCK_EX | fcntl.LOCK_NB)
        held = os.fstat(descriptor).st_ino == os.stat(path).st_ino  # not removed (by its owner) meanwhile
    except (BlockingIOError, FileNotFoundError):
        held = False
    except OSError:  # a file system without locks (ENOLCK): the exclusive mkdir of a new run still holds
        os.close(descriptor)
        return None
    if not held:
        os.close(descriptor)
        raise RunError(
            f"{path} is in use by another hierattn process (training or resuming it); wait for it to "
            "finish, or train into another {argument}",
            argument="output",
        )
    if probe:
        os.close(descriptor)
        return None
    return descriptor


def resumable(path):
    """Whether a run directory holds what resuming it needs: its first checkpoint, or word2vec's after an epoch."""
    checkpoints = pathlib.Path(path) / "checkpoints"
    return adapted(path) or (checkpoints / WORD2VEC_CHECKPOINT).is_file()


def adapted(path):
    """Whether a run was adapted (its vocabulary, limits and initial embeddings saved: `checkpoints/adapted.keras`)."""
    return (pathlib.Path(path) / "checkpoints" / "adapted.keras").is_file()


@contextlib.contextmanager
def claim_run_dir(path, resume=False):
    """Makes `path` this process's run directory while the block runs.

    A new run's directory is created atomically (an existing one must be
    empty) and locked, so a second process given the same directory, to
    train or to resume, is refused at once with a `RunError` and changes
    nothing. If the block fails before the run has its first checkpoint
    (`resumable`), the directory is removed again (emptied, if it existed
    before); a run with checkpoints is kept, to resume. Resuming, the
    temporary files a killed process left are deleted first.

    Args:
        path: The run directory.
        resume: Continue the unfinished run in `path`.

    Yields:
        `path`, as a `pathlib.Path`.

    Raises:
        RunError: Another process holds `path`, or it cannot be started or
            resumed (see `ensure_new_or_resumable`).
    """
    path = pathlib.Path(path)
    created = False
    if not resume:
        path.parent.mkdir(parents=True, exist_ok=True)
        try:
            path.mkdir()
            created = True
        except FileExistsError:
            pass  # an empty folder is accepted; checked below, under the lock
    descriptor = _lock(path) if path.is_dir() else None
    try:
        if resume or not created:
            ensure_new_or_resumable(path, resume, check_lock=False)
        if resume:
            remove_temporary_files(path)
        try:
            yield path
        except BaseException:
            if not resume and not resumable(path) and not (path / "model.keras").exists():
                _remove_run(path, keep_folder=not created)
            raise
    finally:
        if descriptor is not None:
            os.close(descriptor)


def _remove_run(path, keep_folder):
    if not keep_folder:
        shutil.rmtree(path, ignore_errors=True)
        return
    for child in path.iterdir():
        if child.is_dir():
            shutil.rmtree(child, ignore_errors=True)
        else:
            child.unlink(missing_ok=True)


__all__ = [
    "CONFIG_FORMAT",
    "RunError",
    "claim_run_dir",
    "ensure_new_or_resumable",
    "resumable",
    "adapted",
    "dataset_name",
    "complete_run",
    "find_latest_run",
    "new_run_dir",
    "read_status",
    "run_line",
    "write_status",
    "now",
]
