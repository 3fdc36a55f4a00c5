"""`Service`: what the server answers with, a run's model for predictions and a worker for explanations.

Predictions come from the run's bundle on `hierattn.runtime` (its Keras
classifier when it has none), batched across requests (`Batcher`). Batches
run side by side on `predict_threads` threads (one per core, plus one, by
default), each computing on one core: measured on 2 cores, small batches
side by side beat one batch at a time on both cores (BENCHMARKS.md,
"Serving"). The event loop only parses and answers. Explanations come from
the run's Keras classifier in a worker process (`hierattn.serve.explaining`)
that loads in the background: predictions are ready as soon as the bundle is.
"""

import asyncio
import concurrent.futures
import os
import time

from hierattn import __version__
from hierattn.defaults import SERVE
from hierattn.errors import ArgumentError, DataError, first_line
from hierattn.runs.directory import BUNDLE_FILE, DEFAULT_ROOT, find_complete_run
from hierattn.runs.export import load_model
from hierattn.runs.predict import encode
from hierattn.serve import explaining
from hierattn.serve.batcher import Batcher
from hierattn.utils.jsonfile import load_json

LIMITS = (
    "max_batch",
    "batch_wait_ms",
    "batch_size",
    "predict_threads",
    "max_queue",
    "max_explain_queue",
    "max_body_bytes",
    "max_texts",
    "max_text_chars",
)


class Unavailable(Exception):
    """A verb that cannot answer now (explanations loading, off or failed); `retry_after` seconds, or None.

    Example:

    >>> Unavailable("explanations are loading", retry_after=5).retry_after
    5
    """

    def __init__(self, message, retry_after=None):
        super().__init__(message)
        self.retry_after = retry_after


class Service:
    """A complete run's model, served: batched predictions now, explanations once their worker has loaded.

    Args:
        run_dir: The run directory (default: the latest complete run under `root`).
        explain: Load the Keras classifier in a worker process for `/v1/explain`
            and the page (False: predictions only, no TensorFlow at all).
        root: Where to look for the latest run.
        log: Called with lines worth a server's log (the run, explanations ready).
        **limits: Any of `LIMITS`, defaults from `hierattn.defaults.SERVE`.

    Raises:
        RunError: No such run, or a run that cannot be loaded.
        ArgumentError: An unknown limit, or a limit below 1.

    Example:

    ```python
    import asyncio

    async def once():
        service = Service("runs/han-imdb-20261125-120000", explain=False, max_batch=32)
        await service.start()
        probabilities = await service.predict(["A superb film."])
        await service.stop()
        return probabilities

    asyncio.run(once())  # [[0.03, 0.97]], classes in service.label_names order
    ```
    """

    def __init__(self, run_dir=None, explain=True, root=DEFAULT_ROOT, log=None, **limits):
        unknown = set(limits) - set(LIMITS)
        if unknown:
            raise ArgumentError(f"unknown serving limit(s): {', '.join(sorted(unknown))}")
        self.limits = {name: limits.get(name, SERVE[name]) for name in LIMITS}
        self.limits["predict_threads"] = self.limits["predict_threads"] or (os.cpu_count() or 1) + 1
        low = next((name for name in LIMITS if self.limits[name] < (0 if name == "batch_wait_ms" else 1)), None)
        if low:
            raise ArgumentError(f"{low} must be at least 1, not {self.limits[low]}", argument=low)
        self.log = log or (lambda line: None)
        self.path = find_complete_run(run_dir, root)
        self.model = load_model(self.path, log=self.log, threads=1)  # one core per batch, batches side by side
        self.label_names = [str(name) for name in self.model.label_names]
        self.has_words = getattr(self.model, "preprocessor", self.model).has_words
        self.metrics = _metrics(self.path, self.log)
        self.explain_state = "loading" if explain else "off"
        self.started = time.time()
        self._explain_wanted = explain
        self._worker = None
        self._predictions = self._explanations = None

    # The model's verbs, on a running event loop -------------------------------------------------------------------

    async def start(self):
        """Starts the batchers, and the explanation worker loading in the background."""
        threads = self.limits["predict_threads"]
        self._predictions = Batcher(
            self._predict,
            concurrent.futures.ThreadPoolExecutor(threads, thread_name_prefix="hierattn-predict"),
            concurrency=threads,
            max_batch=self.limits["max_batch"],
            max_queue=self.limits["max_queue"],
            wait=self.limits["batch_wait_ms"] / 1000,
        )
        self._predictions.start()
        if self._explain_wanted:
            self._start_worker()

    async def stop(self):
        """Stops the batchers and the worker process (requests in flight have been answered by now)."""
        for batcher in (self._predictions, self._explanations):
            if batcher is not None:
                await _stop(batcher)

    async def predict(self, texts):
        """Each text's class probabilities (a list of float lists), from one batch shared with other requests."""
        return await self._predictions.submit(texts)

    async def explain(self, text, top_k, fmt="json"):
        """`explain --format json`'s JSON of one text (or with `fmt="html"` the picture), from the worker.

        Raises:
            Unavailable: Explanations are off, still loading, or their worker failed.
            Overloaded: Too many explanations are waiting.
        """
        if self.explain_state != "ready":
            raise Unavailable(*self._why_not_ready())
        try:
            (result,) = await self._explanations.submit([(text, top_k, fmt)])
        except concurrent.futures.process.BrokenProcessPool:
            self.log("the explanation worker stopped; starting it again")
            await _stop(self._explanations)
            self._start_worker()
            raise Unavailable("the explanation worker stopped; it is starting again", retry_after=10) from None
        return result

    def _predict(self, texts):
        return self.model.predict_ids(encode(self.model, texts), batch_size=self.limits["batch_size"]).tolist()

    def _why_not_ready(self):
        if self.explain_state == "off":
            return ("explanations are off (the server was started with --no-explain)",)
        if self.explain_state == "loading":
            return ("explanations are loading (the Keras classifier); try again shortly", 5)
        return (f"explanations are unavailable: {self.explain_state}",)

    def _start_worker(self):
        """Starts the worker process loading; `explain_state` becomes "ready" (or the reason it failed) when it is done."""
        self.explain_state = "loading"
        worker = explaining.start_worker(self.path)
        self._explanations = Batcher(
            explaining.explain, worker, max_batch=1, max_queue=self.limits["max_explain_queue"], wait=0
        )
        self._explanations.start()
        started = time.perf_counter()
        loading = asyncio.wrap_future(worker.submit(explaining.ready))

        def done(future):
            if future.cancelled():
                return
            error = future.exception()
            if error is None:
                self.explain_state = "ready"
                self.log(f"explanations ready (the Keras classifier loaded in {time.perf_counter() - started:.1f} s)")
            else:
                self.explain_state = f"failed ({first_line(error)})"
                self.log(f"explanations unavailable: the Keras classifier did not load ({first_line(error)})")

        loading.add_done_callback(done)

    # What the server says about itself ----------------------------------------------------------------------------

    def readiness(self):
        """Which verbs answer now: `{"predict": True, "explain": "ready" | "loading" | "off" | "failed (...)"}`."""
        return {"predict": self._predictions is not None, "explain": self.explain_state}

    def describe(self):
        """`/v1/model`: the classes, backbone, the run's metrics, versions, what predicts, the limits, the queues.

        Each queue's counts since it started: `waiting` texts, `batches` run
        and texts `dropped` because their client went away before they ran.
        """
        return {
            "run": self.path.name,
            "backbone": getattr(self.model, "architecture", None) or self.model.metadata.get("architecture"),
            "classes": self.label_names,
            "predictions_from": BUNDLE_FILE if hasattr(self.model, "metadata") else "model.keras",
            "explanations": self.explain_state,
            "metrics": self.metrics,
            "hierattn_version": __version__,
            "limits": dict(self.limits),
            "queues": {"predict": _counts(self._predictions), "explain": _counts(self._explanations)},
        }


async def _stop(batcher):
    """Stops a batcher and the executor it runs on (a worker process is ended)."""
    await batcher.stop()
    batcher.executor.shutdown(wait=False, cancel_futures=True)


def _metrics(path, log):
    """The run's metrics.json (None without one, or with a damaged one, which `log` is told)."""
    if not (path / "metrics.json").exists():
        return None
    try:
        return load_json(path / "metrics.json", "hierattn.metrics/1")
    except DataError as error:
        log(f"/v1/model will show no metrics: {error}")
        return None


def _counts(batcher):
    if batcher is None:
        return None
    return {"waiting": batcher.waiting, "batches": batcher.batches, "dropped": batcher.dropped}
