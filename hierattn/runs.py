"""Run directories: what a training run writes, and loading it back to predict.

A run directory holds:

    run.json            status ("training" / "complete"), dataset, timestamps
    config.json         the TrainConfig used
    model.keras         the trained model (written atomically at the end)
    encoder/            vocabulary.json + encoder.json (tokenizer and sizes)
    labels.json         the label map
    history.csv         per-epoch metrics
    metrics.json        validation and test metrics
    logs/               TensorBoard logs
    checkpoints/        state for --resume (removed when the run completes)
"""

import datetime
import pathlib

import numpy as np
from tqdm.auto import tqdm

from hierattn.data.dataset import LabelMap
from hierattn.data.encoding import TextEncoder, sort_batches_by_length, trim_padding
from hierattn.errors import HierattnError
from hierattn.jsonfile import load_json, save_json

RUN_FORMAT = "hierattn.run/1"
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


def _inference_function(model, rank):
    """The model as one `tf.function` traced once for any batch shape.

    `model.predict` retraces for new batch shapes, and length-trimmed batches
    come in many shapes; a fully dynamic input signature avoids that.
    """
    import tensorflow as tf

    cache = model.__dict__.setdefault("_hierattn_inference", {})
    if rank not in cache:
        spec = tf.TensorSpec((None,) * rank, tf.int32)
        cache[rank] = tf.function(lambda x: model(x, training=False), input_signature=[spec], reduce_retracing=True)
    return cache[rank]


def predict_batches(model, x, batch_size=32, progress=False):
    """Class probabilities for id arrays, batching similar lengths together.

    Documents are sorted by length so each batch carries little padding
    (`trim_padding`), then the results are put back in the input order.
    Small batches of similar length are faster on CPU than large ones.
    `progress` shows a progress bar in documents.
    """
    if len(x) == 0:
        return np.zeros((0, model.output.shape[-1]), np.float32)
    return batched_outputs(model, x, batch_size, progress)


def batched_outputs(model, x, batch_size=32, progress=False):
    """A model's outputs for id arrays `x`, in input order.

    Like `predict_batches`, but for any model from int ids, including one with
    a dict of outputs (`hierattn.models.attention_outputs`). Per-position
    outputs (attention weights, every key but `"probabilities"`) come from
    length-trimmed batches and are zero-padded back to the width of `x`.
    """
    groups = sort_batches_by_length(x, batch_size)
    order = np.concatenate(groups)
    cache = model.__dict__.setdefault("_hierattn_inference", {})
    if len(groups) == 1 and ("eager", x.ndim) not in cache:
        # A model's first single batch (e.g. the CLI explaining one text) runs
        # eagerly: ~0.2 s, against ~0.7 s to trace. Later calls are traced.
        cache["eager", x.ndim] = True
        function = lambda batch: model(batch, training=False)  # noqa: E731
    else:
        function = _inference_function(model, x.ndim)
    parts = []
    with tqdm(total=len(x), desc="predicting", unit="doc", disable=not progress) as bar:
        for index in groups:
            parts.append(function(trim_padding(x[index]).astype(np.int32)))
            bar.update(len(index))

    def assemble(values, pad):
        values = [np.asarray(v) for v in values]
        if pad:
            width = x.shape[1 : values[0].ndim]
            values = [np.pad(v, [(0, 0)] + [(0, w - n) for w, n in zip(width, v.shape[1:])]) for v in values]
        stacked = np.concatenate(values)
        result = np.empty_like(stacked)
        result[order] = stacked
        return result

    if isinstance(parts[0], dict):
        return {key: assemble([p[key] for p in parts], key != "probabilities") for key in parts[0]}
    return assemble(parts, False)


class Run:
    """A trained run loaded from disk: model, encoder and labels.

    Args:
        path: The run directory.
        model: The loaded `keras.Model`.
        encoder: Its `TextEncoder`.
        label_map: Its `LabelMap`.
        config: Its training configuration (dict).
    """

    def __init__(self, path, model, encoder, label_map, config):
        self.path = pathlib.Path(path)
        self.model = model
        self.encoder = encoder
        self.label_map = label_map
        self.config = config
        self.metrics = None

    @property
    def mode(self):
        """`"hierarchical"` for HAN, `"flat"` for the others."""
        return "hierarchical" if self.config["model"] == "han" else "flat"

    def encode(self, texts, workers=None, progress=False):
        return self.encoder.encode(texts, mode=self.mode, workers=workers, progress=progress)

    def predict_proba(self, texts, batch_size=32, workers=None, progress=False):
        """Class probabilities `(len(texts), num_classes)` for raw texts."""
        return predict_batches(self.model, self.encode(texts, workers, progress), batch_size, progress)

    def has_words(self, text):
        """Whether the tokenizer keeps any word of `text` (markup, spaces and nothing are wordless)."""
        return any(self.encoder.tokenizer.sentences(text))

    def predict(self, texts, **kwargs):
        """Predicted class names for raw texts."""
        probabilities = self.predict_proba(texts, **kwargs)
        return [self.label_map.names[i] for i in probabilities.argmax(axis=1)]


def load_run(path=None, root=DEFAULT_ROOT):
    """Loads a complete run (the latest under `root` when `path` is None).

    The model is loaded with Keras safe mode on, so a model file cannot run
    arbitrary code. The parts are checked against each other: a vocabulary
    larger than the model's embedding or a label list of another length than
    the model's outputs is refused, not used.

    Raises:
        RunError: Missing, incomplete, damaged or inconsistent run, in one line.
    """
    import keras

    import hierattn.layers  # noqa: F401  (registers the layers for loading)

    path = find_run(path, root)
    status = read_status(path)
    if status.get("status") != "complete":
        raise RunError(
            f"{path} is an unfinished run (status: {status.get('status')}); "
            f"resume it with `python cli.py train {status.get('dataset', 'imdb')} --resume --output {path}`"
        )
    config = _read_part(path / "config.json", lambda f: load_json(f, "hierattn.train-config/1"))
    encoder = _read_part(path / "encoder", TextEncoder.load)
    label_map = _read_part(path / "labels.json", LabelMap.load)
    metrics_file = path / "metrics.json"
    metrics = load_json(metrics_file, "hierattn.metrics/1") if metrics_file.exists() else None
    model = _load_model(path / "model.keras", keras)
    outputs = model.output.shape[-1]
    if outputs != len(label_map):
        raise RunError(f"{path}/labels.json names {len(label_map)} classes but the model has {outputs} outputs: "
                       "the run was edited or mixed with another")
    size = embedding_rows(model)
    if size is not None and len(encoder.vocabulary) > size:
        raise RunError(f"{path}/encoder/vocabulary.json has {len(encoder.vocabulary):,} ids but the model's embedding "
                       f"has {size:,} rows: the run was edited or mixed with another")
    run = Run(path, model, encoder, label_map, config)
    run.metrics = metrics
    return run


def _read_part(file, read):
    """`read(file)`, with any sign of a damaged file turned into one `RunError` line."""
    try:
        return read(file)
    except HierattnError as error:
        raise RunError(f"damaged run: {error}") from None
    except (TypeError, KeyError, ValueError, AttributeError) as error:
        raise RunError(f"damaged run: {file} does not hold what hierattn wrote there ({type(error).__name__}: "
                       f"{error})") from None


def _load_model(model_file, keras):
    """The `.keras` file loaded in safe mode, or a `RunError` that says what is wrong with it."""
    import zipfile

    if not model_file.is_file():
        raise RunError(f"{model_file.parent} has no model.keras")
    if not zipfile.is_zipfile(model_file):
        raise RunError(f"{model_file} is not a Keras model file: it is not a zip archive (damaged, truncated, "
                       "or another kind of file)")
    try:
        return keras.saving.load_model(model_file, safe_mode=True)
    except Exception as error:  # any failure to read the file is reported in one line
        message = " ".join(str(error).split()) or type(error).__name__
        if "safe_mode" in message:
            raise RunError(f"{model_file} holds Python code (e.g. a Lambda layer) and Keras safe mode refuses to "
                           "load it; hierattn does not run code from model files. Load it yourself with "
                           "keras.saving.load_model(..., safe_mode=False) only if you trust its source.") from None
        if len(message) > 400:
            message = message[:400].rsplit(" ", 1)[0] + " ..."
        raise RunError(f"{model_file} could not be loaded ({message})") from None


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
    "Run", "RunError", "ensure_new_or_resumable", "find_latest_run", "load_run", "new_run_dir",
    "predict_batches", "read_status", "write_status", "now",
]
