"""A run's classifier as one bundle: written when training ends, exported again on request, loaded to predict.

from hierattn.runs.export import export_run, load_model

export_run("runs/han-imdb-20261125-120000", "model.onnx")  # the run's classifier as one bundle
model = load_model()  # the latest run's bundle on hierattn.runtime, or its Keras classifier without one
"""

import os
import time

from hierattn.errors import DataError, first_line
from hierattn.runs.config import read_config
from hierattn.runs.directory import BUNDLE_FILE, DEFAULT_ROOT, find_complete_run, load_run, run_line, write_status
from hierattn.utils.atomic import check_new_file


def export_run(run_dir=None, output=None, log=None):
    """Exports a complete run's classifier as one bundle (`TextClassifier.export`).

    Args:
        run_dir: The run directory (default: the latest complete run under runs/).
        output: The bundle's path; it must not exist. Default: the run's
            own `model.onnx`, replaced if there is one (and run.json's
            record of it with it).
        log: Called with a line naming the run once it is loaded.

    Returns:
        The path written.

    Raises:
        ArgumentError: `output` exists, or its folder does not.
        RunError: No such run, or a run that cannot be loaded.
        ExportError: The classifier could not be exported (nothing is written).
    """
    from hierattn.models.export import export_bundle

    if output is not None:
        check_new_file(output)
    run = load_run(run_dir, log=log)
    if output is not None:  # the user's file: one that appears meanwhile is not replaced either
        return export_bundle(run.classifier, output, verbose=False, overwrite=False)
    started = time.perf_counter()
    path = export_bundle(run.classifier, run.path / BUNDLE_FILE, verbose=False)
    write_status(run.path, bundle=_record(path, started))
    return path


def write_bundle(classifier, folder, log=print):
    """Writes a run's bundle (`model.onnx`) into `folder` when training ends; says why in one line if it cannot.

    A run is complete without its bundle (`predict` then uses model.keras),
    so a classifier the exporter cannot convert does not fail the run.

    Returns:
        What run.json records: `{"file", "bytes", "seconds"}`, or `{"error"}`.
    """
    started = time.perf_counter()
    path = os.path.join(folder, BUNDLE_FILE)
    try:
        classifier.export(path, verbose=False)
    except Exception as error:  # any failure (ExportError, a full disk): the run stays complete and usable
        reason = first_line(error)
        if os.path.exists(path):  # an earlier attempt's bundle (a resumed run) would no longer match the record
            os.remove(path)
        log(f"no bundle written ({reason}); predict will use model.keras")
        return {"error": reason}
    return _record(path, started)


def _record(path, started):
    """What run.json records of a bundle written: its file, size and export seconds."""
    return {"file": BUNDLE_FILE, "bytes": os.path.getsize(path), "seconds": round(time.perf_counter() - started, 1)}


def load_model(run_dir=None, root=DEFAULT_ROOT, log=None, threads=None):
    """A complete run's model to predict with: its bundle on `hierattn.runtime` if it has one, else its classifier.

    Both give `label_names`, `predict(texts)` and the same probabilities;
    the bundle loads in a fraction of a second without TensorFlow.

    Args:
        run_dir: The run directory (default: the latest complete run under `root`).
        root: Where to look for the latest run.
        log: Called with a line naming the run once it is loaded.
        threads: Threads onnxruntime computes each call with (default: one per core).

    Returns:
        A `hierattn.runtime.Predictor`, or a `TextClassifier` for a run
        without a bundle (or with one that cannot be loaded, or a
        multi-label run's bundle exported before bundles said so, which
        `log` is told).

    Raises:
        RunError: No such run, or a run that cannot be loaded.
    """
    path = find_complete_run(run_dir, root)
    bundle = path / BUNDLE_FILE
    if bundle.is_file():
        from hierattn.runtime import load

        try:
            predictor = load(bundle, threads=threads)
            check_bundle_kind(predictor, path)
        except DataError as error:
            if log:
                log(f"{error}: predicting with model.keras")
        else:
            if log:
                log(run_line(path, root if run_dir is None else None))
            return predictor
    return load_run(path, log=log).classifier


def check_bundle_kind(predictor, path):
    """Refuses (`DataError`) a multi-label run's bundle that does not say so: exported before bundles held thresholds.

    Args:
        predictor: The bundle, loaded (`hierattn.runtime.Predictor`).
        path: Its run directory, whose config.json says whether the
            classifier is multi-label.
    """
    if predictor.multi_label:
        return
    try:
        multi_label = read_config(path).get("classifier", {}).get("multi_label", False)
    except DataError:  # the run's Keras classifier is what decides; its config is not needed to predict
        return
    if multi_label:
        raise DataError(f"{predictor.path} is a multi-label run's bundle without its thresholds (export it again)")
