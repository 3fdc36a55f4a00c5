"""`Run`: a complete run found once, each of its files read at most once, its model loaded at most once.

Every command that uses a trained run (`predict`, `evaluate`, `explain`,
`export`, `serve`, batch prediction) resolves it into one `Run` and hands
that object (or its resolved path) down, as datasette's views share one
`Datasette` object: the run is never looked for again along the way, so a
run that finishes meanwhile cannot give the model of one run and the
settings of another.

    run = Run.open()                    # the latest complete run under runs/ (or Run.open("runs/han-imdb-..."))
    model = run.predictor()             # its bundle on hierattn.runtime, else its Keras classifier
    model.predict_labels(["A superb film."])
"""

import hashlib
import os
import pathlib

from hierattn.defaults import CASCADE, MULTILABEL
from hierattn.errors import DataError, HierattnError, RunError
from hierattn.runs.config import read_config
from hierattn.runs.directory import BUNDLE_FILE, DEFAULT_ROOT, complete_run, run_line
from hierattn.utils.jsonfile import load_json

METRICS_FORMAT = "hierattn.metrics/1"
_UNREAD = object()


class Run:
    """A run directory and what it holds, each part read when first asked for and then kept.

    `Run.open` resolves a complete run once (a named one, or the latest
    under a root); `train` returns the `Run` it wrote. The classifier, the
    settings and the metrics are read from the run's files on first use.

    Args:
        path: The run directory.
        classifier: Its `TextClassifier` (read from model.keras when first asked for if not given).
        config: Its settings, a dict as config.json holds them (see
            `hierattn.runs.config.read_config`; read when first asked for if not given).
        metrics: What metrics.json holds (None: none).
        chief: False for the run of a non-chief worker of a multi-worker
            cluster, which the chief wrote to `path` (see `hierattn.runs.train.train`).

    Attributes:
        status: What run.json holds (read once).
        latest_under: The folder the run was found in as the latest
            complete run, or None when it was named.

    Example:

    ```python
    run = Run.open("runs/han-imdb-20261124-101500")  # or Run.open(): the latest complete run under runs/
    run.predictor().predict_labels(["A gripping film."])
    run.metrics["test"]["accuracy"]
    ```
    """

    def __init__(self, path, classifier=None, config=None, metrics=_UNREAD, chief=True):
        self.path = pathlib.Path(path)
        self.chief = chief
        self.latest_under = None
        self._status = None
        self._classifier = classifier
        self._config = config
        self._metrics = metrics
        self._predictor = None

    @classmethod
    def open(cls, run_dir=None, root=DEFAULT_ROOT):
        """The complete run `run_dir` (a path, or a `Run`, returned as it is), else the latest complete run under `root`.

        Raises:
            RunError: Not a run directory, an unfinished run, or no complete
                run under `root`; in one line.
        """
        if isinstance(run_dir, Run):
            return run_dir
        path, status = complete_run(run_dir, root)
        run = cls(path)
        run._status = status
        run.latest_under = root if run_dir is None else None
        return run

    @property
    def line(self):
        """The line that says which run answers: `run: PATH`, and `(the latest complete run under runs/)` if found so."""
        return run_line(self.path, self.latest_under)

    @property
    def status(self):
        """What run.json holds: status, dataset, timestamps, the bundle's record."""
        if self._status is None:
            self._status = _read_part(self.path / "run.json", lambda f: load_json(f, "hierattn.run/1"))
        return self._status

    @property
    def config(self):
        """The run's settings as config.json holds them (`read_config`); a damaged file is a `RunError`."""
        if self._config is None:
            self._config = _read_part(self.path / "config.json", read_config)
        return self._config

    @property
    def data(self):
        """Where the run's data came from (config.json's `data`: paths, sha256, columns), or {} if not recorded."""
        try:
            data = self.config.get("data")
        except HierattnError:
            return {}
        return data if isinstance(data, dict) else {}

    @property
    def label_separator(self):
        """What joins a multi-label run's labels in a table: config.json's `data.label_separator`, else the default's."""
        return self.data.get("label_separator") or MULTILABEL["separator"]

    @property
    def metrics(self):
        """What metrics.json holds, or None without one."""
        if self._metrics is _UNREAD:
            file = self.path / "metrics.json"
            self._metrics = _read_part(file, lambda f: load_json(f, METRICS_FORMAT)) if file.exists() else None
        return self._metrics

    @property
    def classifier(self):
        """The run's `TextClassifier`, loaded from model.keras (Keras safe mode on) when first asked for."""
        if self._classifier is None:
            from hierattn.models.loading import load_classifier  # Keras loads here, not when the CLI starts

            self._classifier = load_classifier(self.path / "model.keras")
        return self._classifier

    @property
    def bundle(self):
        """The run's bundle file (`model.onnx`), or None without one."""
        file = self.path / BUNDLE_FILE
        return file if file.is_file() else None

    def predictor(self, threads=None, log=None, network=None):
        """The model to predict with: the bundle on `hierattn.runtime` if the run has one, else the Keras classifier.

        Both are `hierattn.runtime.TextPredictor`s: the same names, the same
        probabilities; the bundle loads in a fraction of a second without
        TensorFlow. Loaded once; later calls return the same object.

        Args:
            threads: Threads onnxruntime computes each call with (default:
                `hierattn.runtime.load`'s).
            log: Told why a bundle that is there is not used (it cannot be
                loaded, its metadata is damaged, it is not the file this run
                wrote, by run.json's sha256, or is a multi-label run's exported
                before bundles said so): the Keras classifier predicts instead.
            network: `"auto"` or `"always"`: the predictor's `network`
                setting (None: as loaded, `"auto"`); a bundle's other setting is another predictor on
                the same session (`Predictor.with_network`), the loaded one unchanged.

        Raises:
            RunError: Without a usable bundle, the run cannot be loaded
                (`load`: a damaged config.json, metrics.json or model.keras).
        """
        if self._predictor is None:
            self._predictor = self._bundle_predictor(threads, log, network) or self.load().classifier
        if network is None or network == self._predictor.network:
            return self._predictor
        if hasattr(self._predictor, "with_network"):  # a bundle: another predictor on its session, this one unchanged
            return self._predictor.with_network(network)
        self._predictor.network = network  # the run's own classifier
        return self._predictor

    @property
    def predicts_with(self):
        """Which file predicts: `model.onnx` or `model.keras` (after `predictor`), else None."""
        if self._predictor is None:
            return None
        return "model.keras" if self._predictor is self._classifier else BUNDLE_FILE

    def _bundle_predictor(self, threads, log, network=None):
        if self.bundle is None:
            return None
        from hierattn.runtime import load

        try:  # a file that cannot load says so first; one that loads must be the one this run wrote
            predictor = load(self.bundle, threads=threads, network=network or CASCADE["network"])
            self.refuse_foreign_bundle()
            self.refuse_stale_bundle(predictor)
        except DataError as error:
            if log:
                log(f"{error}: predicting with model.keras")
            return None
        return predictor

    def refuse_foreign_bundle(self):
        """Refuses (`DataError`) a bundle that is not the one this run wrote: its sha256 is not run.json's record.

        A run that recorded no bundle written (`{"error"}`) has none of its own; one written before bundles
        were recorded with their sha256 keeps its bundle (`refuse_stale_bundle` still compares it).
        """
        try:
            record = self.status.get("bundle")
        except RunError:  # a damaged run.json: the bundle's own checks decide
            return
        record = record if isinstance(record, dict) else {}
        if "sha256" not in record and "error" in record:
            raise DataError(f"{self.bundle} is not this run's: its run.json says no bundle was written")
        if (
            "sha256" in record
            and not _unchanged(self.bundle, record)
            and bundle_digest(self.bundle) != record["sha256"]
        ):
            raise DataError(f"{self.bundle} is not the bundle this run wrote (its sha256 is not run.json's record)")

    def refuse_stale_bundle(self, predictor):
        """Refuses (`DataError`) a bundle of other labels than config.json's, or single-label for a multi-label run.

        A multi-label run's bundle exported before bundles held thresholds is
        refused so. A damaged config.json does not refuse it: the bundle's own
        metadata decides then.
        """
        try:
            settings = self.config.get("classifier", {})
        except RunError:
            return
        multi_label, names = bool(settings.get("multi_label", False)), settings.get("label_names")
        if multi_label and not predictor.multi_label:
            raise DataError(f"{predictor.path} is a multi-label run's bundle without its thresholds (export it again)")
        if multi_label != predictor.multi_label or (
            isinstance(names, list) and [str(name) for name in names] != predictor.label_names
        ):
            raise DataError(f"{predictor.path} is not this run's: its labels are not those of config.json")

    def load(self):
        """Reads the settings and the metrics and loads the classifier now (a damaged run is refused here); `self`."""
        for part in ("config", "metrics", "classifier"):
            getattr(self, part)
        return self

    def __repr__(self):
        return f"<Run {self.path}>"


def load_run(run_dir=None, root=DEFAULT_ROOT, log=None):
    """Loads a complete run (the latest under `root` when `run_dir` is None): its settings, metrics and classifier.

    The classifier is loaded from model.keras with Keras safe mode on, so a
    model file cannot run arbitrary code (see `hierattn.models.loading.load_classifier`).

    Args:
        run_dir: The run directory, or a `Run`.
        root: Where to look for the latest run.
        log: Called with `Run.line` once the run is loaded: `"run: PATH"`, or
            for the latest run `"run: PATH (the latest complete run under runs/)"`.

    Returns:
        The `Run`, its classifier loaded.

    Raises:
        RunError: Missing, incomplete, damaged or inconsistent run, in one line.
    """
    run = Run.open(run_dir, root).load()
    if log:
        log(run.line)
    return run


def _unchanged(file, record):
    """Whether `file` is, by its size and modification time, the one `record` was made of (then it is not hashed).

    The quick check of make and rsync: a file put in its place since (another
    run's bundle copied in) has another time, or size, and is hashed.
    """
    found = os.stat(file)
    return record.get("bytes") == found.st_size and record.get("mtime_ns") == found.st_mtime_ns


def bundle_digest(file):
    """The sha256 of a bundle file, in hex: what run.json records of the bundle a run wrote."""
    with open(file, "rb") as f:
        return hashlib.file_digest(f, "sha256").hexdigest()


def _read_part(file, read):
    """`read(file)`, with any sign of a damaged file turned into one `RunError` line."""
    try:
        return read(file)
    except HierattnError as error:
        raise RunError(f"damaged run: {error}") from None
    except (TypeError, KeyError, ValueError, AttributeError) as error:
        raise RunError(
            f"damaged run: {file} does not hold what hierattn wrote there ({type(error).__name__}: {error})"
        ) from None


__all__ = ["Run", "load_run"]
