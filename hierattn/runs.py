"""Run directories: what a training run writes, and loading it back to predict.

A run directory holds:

    model.keras         the whole TextClassifier: preprocessor (tokenizer,
                        vocabulary, length limits), backbone, label names
                        (written atomically at the end)
    config.json         the training settings and where the data came from
                        (paths and sha256)
    history.csv         per-epoch metrics
    metrics.json        validation and test metrics
    logs/               TensorBoard logs
    run.json            status ("training" / "complete"), dataset, timestamps
    checkpoints/        state for --resume (removed when the run completes)
"""

import datetime
import pathlib

from hierattn.errors import HierattnError
from hierattn.jsonfile import load_json, save_json

RUN_FORMAT = "hierattn.run/1"
CONFIG_FORMAT = "hierattn.train-config/2"
DEFAULT_ROOT = "runs"


class RunError(HierattnError):
    """A run directory that is missing, incomplete or unreadable."""


def now():
    return datetime.datetime.now().astimezone().isoformat(timespec="seconds")


def new_run_dir(root, model, dataset):
    """A fresh, not yet existing directory name under `root`."""
    stamp = datetime.datetime.now().strftime("%Y%m%d-%H%M%S")
    base = pathlib.Path(root) / f"{model}-{dataset}-{stamp}"
    path, n = base, 1
    while path.exists():
        n += 1
        path = base.with_name(f"{base.name}-{n}")
    return path


def describe_source(path):
    """Where data came from, for config.json: the absolute path, and for a file its size and sha256."""
    import hashlib

    path = pathlib.Path(path)
    entry = {"path": str(path.resolve())}
    if path.is_file():
        digest = hashlib.sha256()
        with open(path, "rb") as f:
            for block in iter(lambda: f.read(1 << 20), b""):
                digest.update(block)
        entry.update(bytes=path.stat().st_size, sha256=digest.hexdigest())
    return entry


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
        RunError: No complete run found; says how to train one.
    """
    candidates = []
    for status_file in pathlib.Path(root).glob("*/run.json"):
        try:
            status = load_json(status_file, RUN_FORMAT)
        except HierattnError:
            continue
        if status.get("status") == "complete":
            candidates.append((status.get("finished", ""), str(status_file.parent)))
    if not candidates:
        raise RunError(f"no trained run found under {root}/: train one first, e.g. `python cli.py train imdb`.")
    return pathlib.Path(max(candidates)[1])


def find_run(path=None, root=DEFAULT_ROOT):
    """The run directory `path` (checked), or the latest complete run under `root`.

    Raises:
        RunError: Not a run directory, or no complete run under `root`.
    """
    path = pathlib.Path(path) if path is not None else find_latest_run(root)
    if not path.is_dir():
        raise RunError(f"no run directory at {path}")
    if not (path / "run.json").exists():
        raise RunError(f"{path} is not a hierattn run (it has no run.json)")
    return path


def recorded_data(path):
    """Where a run's data came from (config.json's `data`: paths, sha256, columns), or {} if not recorded."""
    try:
        data = load_json(pathlib.Path(path) / "config.json", CONFIG_FORMAT).get("data")
    except HierattnError:
        return {}
    return data if isinstance(data, dict) else {}


class Run:
    """A run directory and the classifier trained in it.

    Args:
        path: The run directory.
        classifier: Its `TextClassifier`.
        config: Its training configuration (dict, as in config.json).
        metrics: What metrics.json holds, or None.
        chief: False for the run of a non-chief worker of a multi-worker
            cluster, which the chief wrote to `path` (see `hierattn.training.train`).
    """

    def __init__(self, path, classifier, config, metrics=None, chief=True):
        self.path = pathlib.Path(path)
        self.classifier = classifier
        self.config = config
        self.metrics = metrics
        self.chief = chief


def load_run(path=None, root=DEFAULT_ROOT):
    """Loads a complete run (the latest under `root` when `path` is None).

    The classifier is loaded from model.keras with Keras safe mode on, so a
    model file cannot run arbitrary code (see `load_classifier`).

    Raises:
        RunError: Missing, incomplete, damaged or inconsistent run, in one line.
    """
    path = find_run(path, root)
    status = read_status(path)
    if status.get("status") != "complete":
        raise RunError(
            f"{path} is an unfinished run (status: {status.get('status')}); "
            f"resume it with `python cli.py train {status.get('dataset', 'imdb')} --resume {path}`"
        )
    config = _read_part(path / "config.json", lambda f: load_json(f, CONFIG_FORMAT))
    metrics_file = path / "metrics.json"
    metrics = _read_part(metrics_file, lambda f: load_json(f, "hierattn.metrics/1")) if metrics_file.exists() else None
    return Run(path, load_classifier(path / "model.keras"), config, metrics)


def load_classifier(model_file):
    """A `TextClassifier` from a `.keras` file (safe mode on), checked.

    Its parts are checked against each other: a vocabulary larger than the
    embedding, or a label list of another length than the outputs, is
    refused, not used.

    Raises:
        RunError: The file is missing, damaged, holds code or another kind of
            model, or its parts disagree; in one line.
    """
    import zipfile

    import keras

    from hierattn.classifier import TextClassifier

    model_file = pathlib.Path(model_file)
    if not model_file.is_file():
        raise RunError(f"{model_file.parent} has no {model_file.name}")
    if not zipfile.is_zipfile(model_file):
        raise RunError(f"{model_file} is not a Keras model file: it is not a zip archive (damaged, truncated, "
                       "or another kind of file)")
    try:
        classifier = keras.saving.load_model(model_file, safe_mode=True)
    except Exception as error:  # any failure to read the file is reported in one line
        message = " ".join(str(error).split()) or type(error).__name__
        message = message.rsplit("Exception encountered:", 1)[-1].strip()  # Keras's cause, without the whole config
        if "safe_mode" in message:
            raise RunError(f"{model_file} holds Python code (e.g. a Lambda layer) and Keras safe mode refuses to "
                           "load it; hierattn does not run code from model files. Load it yourself with "
                           "keras.saving.load_model(..., safe_mode=False) only if you trust its source.") from None
        if len(message) > 400:
            message = message[:400].rsplit(" ", 1)[0] + " ..."
        raise RunError(f"{model_file} could not be loaded ({message})") from None
    if not isinstance(classifier, TextClassifier) or not classifier.adapted:
        raise RunError(f"{model_file} holds a {type(classifier).__name__}, not a trained hierattn TextClassifier "
                       "(runs written before hierattn 0.5 must be trained again)")
    outputs = classifier.backbone.output.shape[-1]
    if outputs != len(classifier.label_names):
        raise RunError(f"{model_file} names {len(classifier.label_names)} classes but its model has {outputs} "
                       "outputs: the file was edited or mixed with another")
    size = embedding_rows(classifier.backbone)
    vocabulary = len(classifier.preprocessor.vocabulary)
    if size is not None and vocabulary > size:
        raise RunError(f"{model_file}: its vocabulary has {vocabulary:,} ids but the embedding has {size:,} rows: "
                       "the file was edited or mixed with another")
    return classifier


def _read_part(file, read):
    """`read(file)`, with any sign of a damaged file turned into one `RunError` line."""
    try:
        return read(file)
    except HierattnError as error:
        raise RunError(f"damaged run: {error}") from None
    except (TypeError, KeyError, ValueError, AttributeError) as error:
        raise RunError(f"damaged run: {file} does not hold what hierattn wrote there ({type(error).__name__}: "
                       f"{error})") from None


def embedding_rows(model):
    """The number of token ids the model's `"embedding"` layer accepts, or None if it has none."""
    try:
        layer = model.get_layer("embedding")
    except ValueError:
        return None
    return getattr(getattr(layer, "token_embedding", layer), "input_dim", None)


def ensure_new_or_resumable(path, resume):
    """Refuses to write into an existing run unless resuming an unfinished one."""
    path = pathlib.Path(path)
    exists = path.exists() and any(path.iterdir())
    if resume:
        if not exists or not (path / "run.json").exists():
            raise RunError(f"nothing to resume at {path}: it is not a run directory")
        status = read_status(path)
        if status.get("status") == "complete":
            raise RunError(f"{path} is already complete; train into a new --output instead")
        return True
    if exists:
        raise RunError(f"{path} already exists and is not empty; choose another --output (nothing was overwritten)")
    return False


__all__ = [
    "Run", "RunError", "describe_source", "ensure_new_or_resumable", "find_latest_run", "load_classifier", "load_run", "new_run_dir",
    "read_status", "write_status", "now",
]
