"""Batch prediction on Ray Data: a user's Dataset (`predict_dataset`), or files into a folder of parts (`predict_files`).

Workers are a pool of Ray actors, each holding one `BatchPredictor` (the
bundle loaded once, onnxruntime on one thread, tokenizing in its own
process). Together they ask for all CPUs but one, which is left for the
tasks that feed them, so a small cluster cannot deadlock with its CPUs held
by workers waiting for input (whole CPUs did on 2 cores: issue #42). A worker
that dies is restarted and its batch retried (Ray Data's own settings for
actor pools: without a limit);
a batch's rows reach the output only from a task that finished, so every
row is written once. The cluster is checked before any work
(`hierattn.batch.cluster`): an address where no Ray cluster answers, or more
workers than it has CPUs, is one error within seconds; SIGTERM undoes the
job before the process ends.
"""

import contextlib
import functools
import logging
import os
import signal

from hierattn.batch.cluster import (
    Stopped,
    check_address,
    check_placeable,
    check_workers,
    sigterm_deferred,
    sigterm_held,
    stop_on_sigterm,
)
from hierattn.batch.files import OutputFolder, check_inputs, count_rows, file_names, input_files, read_chunks
from hierattn.batch.predictor import BatchPredictor
from hierattn.data.progress import tqdm
from hierattn.defaults import BATCH, CASCADE
from hierattn.errors import DataError, HierattnError, first_line
from hierattn.runs.run import Run
from hierattn.runs.table import left_line, wordless_line
from hierattn.utils.atomic import check_new_file
from hierattn.utils.shell import pip_install_extra


def import_ray():
    """The `ray` module with Ray Data, or one line saying how to install it."""
    try:
        import ray
        import ray.data  # noqa: F401
    except ImportError as error:
        raise HierattnError(f"batch prediction on Ray needs Ray Data ({error}): {pip_install_extra('ray')}") from None
    return ray


def predict_dataset(
    dataset,
    bundle,
    text_column=None,
    keep=(),
    workers=None,
    threads=BATCH["threads"],
    top_k=None,
    label_separator=None,
    network=CASCADE["network"],
    min_confidence=None,
):
    """Predictions of a `ray.data.Dataset`'s texts: a new (lazy) Dataset, one row per input row.

    Its columns are `BatchPredictor`'s: `file` and `row` if the input has
    them, `id` and `label` (found by name), `keep`, then `predicted` and
    `p_<class>` (with `top_k`, `top_1, p_top_1, ...`; a multi-label
    bundle's `predicted` is the label set joined by `label_separator`).
    Nothing runs until the result is consumed (`write_parquet`,
    `iter_batches`, ...); the bundle and the input's columns are checked now
    (reading the input's schema may read its first block).

    Args:
        dataset: A `ray.data.Dataset` with a text column.
        bundle: The bundle (`model.onnx`), or a run directory holding one.
        text_column: The column of the texts (default: found by name).
        keep: More input columns to carry into the output.
        workers: Actors that score, each holding the bundle (default: one
            per CPU of the cluster; at most that).
        threads: onnxruntime's threads in each worker.
        top_k: With a number, the ranked columns (`BatchPredictor`).
        label_separator: What joins a multi-label bundle's labels
            (`BatchPredictor`'s default).
        network: `"auto"` or `"always"` (`BatchPredictor`).
        min_confidence: A probability: a decision less sure than it is no
            answer (`BatchPredictor`).

    Raises:
        ArgumentError: `top_k`, `workers` or `threads` is not a whole
            number of at least 1, `workers` is more than the cluster's CPUs,
            or `min_confidence` is not a number in [0, 1].
        DataError: No bundle, or no text column (or a `keep` column) in
            the Dataset.

    Example:

    ```python
    import ray
    from hierattn.batch import predict_dataset

    reviews = ray.data.read_parquet("s3://bucket/reviews/")
    predict_dataset(reviews, "runs/han-imdb-20261125-120000").write_parquet("s3://bucket/predictions/")
    ```
    """
    ray = import_ray()
    check_workers(workers)
    predictor = BatchPredictor(
        bundle,
        text_column,
        keep,
        threads,
        top_k=top_k,
        label_separator=label_separator,
        network=network,
        min_confidence=min_confidence,
    )
    predictor.columns_of(dataset.columns())
    return _scored(ray, dataset, predictor, workers)


def _scored(ray, dataset, predictor, workers):
    """`dataset` mapped through a pool of `workers` actors, each holding a copy of `predictor`."""
    cpus = float(ray.cluster_resources().get("CPU", 1))
    check_workers(workers)
    check_placeable(workers, cpus)  # more would wait forever for room
    workers = workers or max(1, int(cpus))
    return dataset.map_batches(
        BatchPredictor,
        fn_constructor_kwargs={
            "bundle": predictor.bundle,
            "text_column": predictor.text_column,
            "keep": predictor.keep,
            "threads": predictor.threads,
            "batch_size": predictor.batch_size,
            "top_k": predictor.top_k,
            "label_separator": predictor.label_separator,
            "network": predictor.network,
            "min_confidence": predictor.min_confidence,
        },
        batch_size=BATCH["batch_rows"],
        batch_format="pandas",
        compute=ray.data.ActorPoolStrategy(size=workers),
        num_cpus=worker_cpus(workers, cpus),
    )


def reserved_cpus(cpus):
    """The CPUs left for the tasks that feed the workers: `BATCH["reserved_cpus"]`, at most half the cluster's."""
    return min(BATCH["reserved_cpus"], cpus / 2)


def worker_cpus(workers, cpus):
    """The CPUs each of `workers` asks Ray for on a cluster of `cpus`: a share of what is not reserved, at most one.

    The reserve (`reserved_cpus`) is left for the tasks that feed the
    workers: reading files, or a user's own steps (Ray gives a task a whole
    CPU by default, so on a cluster of one CPU such a step cannot run beside
    the workers).

    >>> worker_cpus(2, 2.0), worker_cpus(1, 2.0), worker_cpus(1, 1.0), worker_cpus(4, 16.0), worker_cpus(16, 16.0)
    (0.5, 1.0, 0.5, 1.0, 0.9375)
    """
    return round(min(1.0, (cpus - reserved_cpus(cpus)) / workers), 4)


def predict_files(
    source,
    output,
    run_dir=None,
    text_column=None,
    encoding=None,
    workers=None,
    address=None,
    output_format=BATCH["output_format"],
    progress=True,
    log=None,
    top_k=None,
    network=CASCADE["network"],
    min_confidence=None,
):
    """Scores every row of the files `source` names, on Ray Data, into a new folder of parts.

    The files are read in Ray tasks (CSV, TSV, JSON lines, Parquet or text files, compressed or not, as
    `predict --file` reads them); each row is written once, in input order, with the columns of `predict
    --file` (and `file`, the file's path under the folder or as the glob matched it, when `source` is a folder
    or a glob). The output and every input are checked, and the bundle loaded, before Ray starts; the inputs
    and the run's bundle must be readable by the cluster's workers at the same paths.

    Args:
        source: A file, a folder (its table and text files, recursively), or a glob pattern.
        output: The folder to write (`part-00000.parquet`, ...); it must not exist. It appears only when the
            job has finished.
        run_dir: The run directory, or a `hierattn.runs.run.Run` (default: the latest complete run); it needs
            its bundle (`model.onnx`).
        text_column: Column of the texts (default: found by name).
        encoding: Text encoding of CSV, JSON-lines and text files (default UTF-8).
        workers: Actors that score (default: one per CPU of the cluster; at most that).
        address: The Ray cluster ("auto", "HOST:PORT", "ray://HOST:PORT"); default: the one this process is
            connected to, else the one `ray.init()` finds (`RAY_ADDRESS`, or the latest `ray start` on this
            machine), else a new local one, shut down at the end. An address (given, in `RAY_ADDRESS`, or
            recorded by `ray start`) where no Ray cluster answers within `BATCH["connect_seconds"]` (nothing
            listens, or something that is not Ray) is refused before Ray is asked to join it.
        output_format: "parquet" or "csv".
        progress: Show a progress bar (in rows).
        log: Called with lines naming the run and the cluster.
        top_k: Also write each row's `top_k` most probable classes (columns `top_1`, `p_top_1`, ...).
        network: `"auto"` or `"always"` (`BatchPredictor`).
        min_confidence: A probability: a decision less sure than it is no answer (`BatchPredictor`); `log` is
            told how many rows were left for a person.

    Returns:
        The number of rows written.

    Raises:
        ArgumentError: `output` exists, or its folder does not; `top_k` or `workers` is not a whole number of
            at least 1; `workers` is more than the cluster's CPUs; `min_confidence` is not a number in [0, 1];
            nothing answers at `address`.
        DataError: No input there, an input that cannot be read or lacks the text column, no bundle, or no
            text with words at all.
        HierattnError: Ray is not installed; Ray could not start or join the cluster.
        Stopped: SIGTERM came (in the main thread): the job was undone (no `output`, the cluster shut down if
            started here), `log` told; a `SystemExit` of 143 (`hierattn.batch.cluster.Stopped`).
    """
    ray = import_ray()
    check_workers(workers)
    try:
        with stop_on_sigterm() as arm, contextlib.ExitStack() as held:
            settings = {"top_k": top_k, "network": network, "min_confidence": min_confidence}
            read, predictor, files = _prepare(source, output, run_dir, text_column, encoding, log, settings)
            write = functools.partial(_write, output=output, output_format=output_format, progress=progress)
            held.enter_context(sigterm_held())  # until Ray has started: its processes never see one (cluster.py)

            def started():  # ray.init sets a SIGTERM handler of its own: ours again, then a SIGTERM that came
                arm()
                held.close()

            with _quiet("ray", "ray.data"):  # Ray's notes, and its tracebacks of an error raised as one
                rows, left, scored = _job(ray, address, workers, predictor, read, write, started, log, files)
    except Stopped:
        if log:
            log(_stopped_line(output))
        raise
    if log:
        _summarise(log, rows, scored, left, min_confidence)
    return rows


def _stopped_line(output):
    """What a job stopped by SIGTERM did: nothing, or (a SIGTERM as the cluster shut down) its output written whole."""
    if os.path.exists(output):
        return f"stopped by SIGTERM as the job ended: {output} was written whole"
    return f"stopped by SIGTERM: nothing was written ({output} was not made)"


def _summarise(log, rows, scored, left, min_confidence):
    """The job's closing lines: the rows without words, and those left for a person under `min_confidence`."""
    if rows > scored:
        log(wordless_line(rows - scored, rows, "rows"))
    if min_confidence is not None:
        log(left_line(left, scored, min_confidence, "rows"))


def _prepare(source, output, run_dir, text_column, encoding, log, settings):
    """Checks the output, the inputs and the run: `(read, predictor, files)`, `read(ray, cpus=...)` a Dataset."""
    check_new_file(output)
    files = input_files(source)
    carried = check_inputs(files, text_column, encoding)
    run = Run.open(run_dir)
    predictor = BatchPredictor(run, "text", **settings)
    if log:
        log(run.line)
    names = file_names(files, source)
    read = functools.partial(
        _files_dataset, files=files, names=names, carried=carried, text_column=text_column, encoding=encoding
    )
    return read, predictor, files


def _job(ray, address, workers, predictor, read, write, started, log, files):
    """Joins or starts the cluster, scores `read(ray, cpus=...)`'s rows and `write`s them: `_write`'s answer."""
    joined = False
    try:
        joined = _connect(ray, address, log)
        started()
        cpus = float(ray.cluster_resources().get("CPU", 1))
        if log:
            log(f"ray: {cpus:g} CPUs, {len(files)} file(s)")
        check_placeable(workers, cpus)
        return write(_scored(ray, read(ray, cpus=reserved_cpus(cpus)), predictor, workers), total=count_rows(files))
    except Exception as error:
        raise _user_error(error) from None
    finally:
        if joined:
            with sigterm_deferred():  # not cut short: a SIGTERM now stops the job once the cluster is down
                ray.shutdown()


def _connect(ray, address, log):
    """Starts or joins the cluster (`address`) unless this process is connected to one; whether it started here."""
    if ray.is_initialized():
        if address and log:
            log(f"ray: this process is already connected to a cluster; address {address} is not used")
        return False
    check_address(address)  # ray.init waits a minute or more where nothing, or something not Ray, answers
    try:  # quiet: an error in a task reaches the caller as one exception, not as the workers' logs
        ray.init(address=address, include_dashboard=False, log_to_driver=False, configure_logging=False)
    except SystemExit as error:  # SIGTERM, by Ray's own handler (sys.exit(15)), while it started: a stop
        if error.code != signal.SIGTERM:
            raise
        ray.shutdown()
        raise Stopped() from None
    except (ValueError, RuntimeError, ConnectionError) as error:
        where = f"the Ray cluster at {address}" if address else "a local Ray cluster"
        raise HierattnError(f"could not start or join {where}: {first_line(error)}") from None
    return True


def _files_dataset(ray, files, names, carried, text_column, encoding, cpus):
    """A Dataset of the files' rows, read in Ray tasks of `cpus` CPUs each (`read_chunks`), in input order."""
    items = [{"path": str(p), "name": n} for p, n in zip(files, names)]
    dataset = ray.data.from_items(items, override_num_blocks=len(items))
    context = dataset.context  # this Dataset's own copy: no process-wide setting changes
    context.target_max_block_size = BATCH["block_bytes"]
    context.execution_options.preserve_order = True
    context.enable_progress_bars = False
    context.print_on_execution_start = False
    return dataset.map_batches(
        _read,
        fn_kwargs={"carried": carried, "text_column": text_column, "encoding": encoding},
        batch_size=1,
        batch_format="pandas",
        num_cpus=cpus,
    )


def _read(batch, carried, text_column, encoding):
    """A Ray task: the rows of the files in `batch` (one file, in practice), in chunks."""
    for path, name in zip(batch["path"], batch["name"]):
        yield from read_chunks(path, name, carried, text_column, encoding)


def _write(dataset, output, output_format, total, progress):
    """Writes the scored Dataset's parts into `output`: `(rows written, rows with words but no answer, rows with words)`.

    However it ends, Ray Data's executor stops here: a `ray.shutdown()` beside its thread ended in SIGABRT.
    """
    scored = left = 0
    batches = iter(dataset.iter_batches(batch_format="pandas", batch_size=None, prefetch_batches=1))
    with (
        contextlib.closing(batches),
        OutputFolder(output, output_format) as folder,
        tqdm(total=total, desc="scoring", unit="doc", disable=not progress) as bar,
    ):
        for frame in batches:
            folder.write(frame)
            words = frame[next(c for c in frame.columns if str(c).startswith("p_"))].notna()  # NaN: no words
            scored += int(words.sum())
            left += int((words & frame["predicted"].isna()).sum())
            bar.update(len(frame))
        if scored == 0:
            raise DataError("no text to score: every text is blank or has no words")
    return folder.rows, left, scored


@contextlib.contextmanager
def _quiet(*names):
    """Nothing from the loggers `names` but critical errors while the block runs; then their levels as before."""
    loggers = [logging.getLogger(name) for name in names]
    levels = [logger.level for logger in loggers]
    for logger in loggers:
        logger.setLevel(logging.CRITICAL)
    try:
        yield
    finally:
        for logger, level in zip(loggers, levels):
            logger.setLevel(level)


def _user_error(error):
    """The hierattn error behind an error a Ray task raised (Ray wraps it), a Ray error as one line, else `error`."""
    import ray.exceptions

    seen = error
    while seen is not None:
        cause = getattr(seen, "cause", None)
        if isinstance(cause, HierattnError):
            return cause
        if isinstance(seen, HierattnError) and type(seen).__module__.startswith("hierattn"):
            return seen
        seen = seen.__cause__ or cause
    if isinstance(error, ray.exceptions.RayError):  # the cluster, not the data: a lost node, a worker that kept dying
        cause = getattr(error, "cause", None)
        return HierattnError(f"ray: {first_line(cause if isinstance(cause, BaseException) else error)}")
    return error
