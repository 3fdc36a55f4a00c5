"""A run's classifier as one bundle: written when training ends, exported again on request.

from hierattn.runs.export import export_run

export_run("runs/han-imdb-20261125-120000", "model.onnx")  # the run's classifier as one bundle

(A run's bundle is loaded to predict by `hierattn.runs.run.Run.predictor`.)
"""

import os
import time

from hierattn.errors import first_line
from hierattn.runs.directory import BUNDLE_FILE, write_status
from hierattn.runs.run import bundle_digest, load_run
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
    from hierattn.export import export_bundle

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
        What run.json records: `{"file", "bytes", "sha256", "seconds", "mtime_ns"}`, or `{"error"}`.
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
    """What run.json records of a bundle written: its file, size, sha256 (`Run.predictor` checks it) and export seconds."""
    seconds = round(time.perf_counter() - started, 1)
    found = os.stat(path)
    record = {"file": BUNDLE_FILE, "bytes": found.st_size, "sha256": bundle_digest(path), "seconds": seconds}
    return {**record, "mtime_ns": found.st_mtime_ns}  # unchanged since, by size and time: not hashed again
