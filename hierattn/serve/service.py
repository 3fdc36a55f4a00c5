"""`Service`: what the server answers with, a run's model for predictions and a worker for explanations.

Predictions come from the run's bundle on `hierattn.runtime` (its Keras
classifier when it has none), batched across requests (`Batcher`). Batches
run side by side on `predict_threads` threads (one per core, plus one, by
default), each computing on one core: measured on 2 cores, small batches
side by side beat one batch at a time on both cores (BENCHMARKS.md,
"Serving over HTTP"). The event loop only parses and answers. Explanations come from
the run's Keras classifier in a worker process (`hierattn.serve.explaining`)
that loads in the background: predictions are ready as soon as the bundle is.
"""

import asyncio
import concurrent.futures
import contextlib
import os
import signal
import time
from concurrent.futures.process import BrokenProcessPool

from hierattn import __version__
from hierattn.defaults import SERVE
from hierattn.errors import RunError, first_line
from hierattn.runs.directory import BUNDLE_FILE, DEFAULT_ROOT
from hierattn.runs.run import Run
from hierattn.runs.table import PredictionTable
from hierattn.serve import explaining
from hierattn.serve.batcher import Batcher, Stopped
from hierattn.serve.limits import checked_limits


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
        run_dir: The run directory, or a `hierattn.runs.run.Run` (default:
            the latest complete run under `root`).
        explain: Load the Keras classifier in a worker process for `/v1/explain`
            and the page (False: predictions only, no TensorFlow at all).
        root: Where to look for the latest run.
        log: Called with lines worth a server's log (the run, explanations ready).
        network: `"auto"`: the network reads only the texts the n-gram part
            is not sure of; `"always"`: every text (`Run.predictor`).
        **limits: Any of `hierattn.serve.limits.LIMITS`, defaults from `hierattn.defaults.SERVE`.

    Raises:
        RunError: No such run, or a run that cannot be loaded.
        ArgumentError: An unknown limit, or one that is not a finite number in its range (`limits.checked`).

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

    def __init__(self, run_dir=None, explain=True, root=DEFAULT_ROOT, log=None, network=None, **limits):
        self.limits = checked_limits(limits)
        self.limits["predict_threads"] = self.limits["predict_threads"] or len(os.sched_getaffinity(0)) + 1
        self.log = log or (lambda line: None)
        self.run = Run.open(run_dir, root)
        self.path = self.run.path
        self.model = self.run.predictor(
            threads=1, log=self.log, network=network
        )  # one core per batch, batches side by side
        self.log(self.run.line)
        self.from_bundle = self.run.predicts_with == BUNDLE_FILE
        if not self.from_bundle:  # the Keras classifier predicts, one batch at a time
            self.limits["predict_threads"] = 1
        self.backbone = self.model.architecture
        self.label_names = [str(name) for name in self.model.label_names]
        self.multi_label = self.model.multi_label
        self.policy = self.model.policy
        self.thresholds = self.policy.default_thresholds if self.multi_label else None
        self.has_words = self.model.has_words
        self.metrics = _metrics(self.run, self.log)
        self.explain_state = "loading" if explain else "off"
        self._explain_wanted = explain
        self._worker_pid = None
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
        """Stops the batchers and ends the worker process (requests in flight have been answered by now)."""
        if self._predictions is not None:
            await self._predictions.stop()
            self._predictions.executor.shutdown(wait=False, cancel_futures=True)
        if self._explanations is not None:
            await self._retire(self._explanations, self._worker_pid)

    async def predict(self, texts):
        """Each text's class probabilities (float32 rows, `label_names` order), from one batch shared with other requests."""
        return await self._predictions.submit(texts)

    async def explain(self, text, top_k, fmt="json"):
        """`explain --format json`'s JSON of one text (or with `fmt="html"` the picture), from the worker.

        Raises:
            Unavailable: Explanations are off, still loading, or their worker
                failed or stopped (it is then started again).
            Overloaded: Too many explanations are waiting.
        """
        if self.explain_state != "ready":
            raise Unavailable(*self._why_not_ready())
        batcher = self._explanations
        try:
            (result,) = await batcher.submit([(text, top_k, fmt)])
        except (BrokenProcessPool, Stopped):
            if self._explanations is batcher:  # the first request to find the worker gone starts a new one
                self.log("the explanation worker stopped; starting it again")
                pid = self._worker_pid
                self._start_worker()
                asyncio.get_running_loop().create_task(self._retire(batcher, pid))
            raise Unavailable(
                "the explanation worker stopped; it is starting again", retry_after=SERVE["retry_after"]["restarting"]
            ) from None
        return result

    def answers(self, probabilities, options):
        """`/v1/predict`'s body for rows of probabilities (`predict`'s): `{"predictions": [...]}`.

        One prediction per row (`PredictionTable.answers`): `{"label",
        "probabilities"}`, or for a multi-label model `{"labels",
        "probabilities"}`; with `options.top_k`, also `"top_k": [{"label",
        "probability"}, ...]`, most probable first. With `options.min_confidence`,
        each also `answered` and `confidence`, and the body `left`: how many
        got no answer. `options`: the request's `hierattn.policy.PredictOptions`, checked where it came in.
        """
        table = PredictionTable.of(self.model, probabilities, options)
        found = {"predictions": table.answers(api=True)}
        if options.min_confidence is not None:
            found["left"] = table.left
        return found

    def _predict(self, texts):
        return self.model.predict_texts(texts, batch_size=self.limits["batch_size"])

    def _why_not_ready(self):
        if self.explain_state == "off":
            return ("explanations are off (this server was started without them)",)
        if self.explain_state == "loading":
            return (
                "explanations are loading (the Keras classifier); try again shortly",
                SERVE["retry_after"]["loading"],
            )
        return (f"explanations are unavailable: {self.explain_state}",)

    def _start_worker(self):
        """Starts a worker process loading; `explain_state` becomes "ready" (or why it failed) when it is done."""
        self.explain_state = "loading"
        self._worker_pid = None
        pool = explaining.start_worker()
        batcher = Batcher(explaining.explain, pool, max_batch=1, max_queue=self.limits["max_explain_queue"], wait=0)
        batcher.start()
        self._explanations = batcher
        started = time.perf_counter()
        begun = asyncio.wrap_future(pool.submit(explaining.begin))  # the process's pid first, so stop can end it
        loading = asyncio.wrap_future(pool.submit(explaining.load, str(self.path / "model.keras"), self.model.network))

        def known(future):
            if self._explanations is batcher and not future.cancelled() and future.exception() is None:
                self._worker_pid = future.result()

        def loaded(future):
            if self._explanations is not batcher or future.cancelled():
                return  # news of a worker since replaced
            error = future.exception()
            if error is None:
                self.explain_state = "ready"
                self.log(f"explanations ready (the Keras classifier loaded in {time.perf_counter() - started:.1f} s)")
            else:
                self.explain_state = f"failed ({first_line(error)})"
                self.log(f"explanations unavailable: the Keras classifier did not load ({first_line(error)})")

        begun.add_done_callback(known)
        loading.add_done_callback(loaded)

    async def _retire(self, batcher, pid):
        """Stops a worker's batcher (its requests get `Stopped`) and ends its process."""
        await batcher.stop("the explanation worker stopped")
        batcher.executor.shutdown(wait=False, cancel_futures=True)
        if pid is not None:
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGTERM)

    # What the server says about itself ----------------------------------------------------------------------------

    def readiness(self):
        """Which verbs answer now: `{"predict": True, "explain": "ready" | "loading" | "off" | "failed (...)"}`."""
        return {"predict": self._predictions is not None, "explain": self.explain_state}

    def describe(self):
        """`/v1/model`: the classes, backbone, the run's metrics, versions, what predicts, the limits, the queues.

        `multi_label` says whether the model predicts label sets, and
        `thresholds` (`{label: threshold}`, None for a single-label model)
        when each label is predicted; `offsets` (`{class: offset}`, None
        without) a single-label model's decision rule for macro-F1
        (`hierattn.tuning`). `network` is `"auto"` (the network
        reads only the texts the n-gram part is not sure of: under `cut`) or
        `"always"`. `policy` is the model's decision policy as its bundle and
        `.keras` file hold it (`hierattn.policy.DecisionPolicy.to_dict`): every number that decides.

        Each queue's counts: the texts `waiting` now, and since it started the
        `batches` run and the texts `dropped` because their client went away
        before they ran.
        """
        return {
            "run": self.path.name,
            "backbone": self.backbone,
            "classes": self.label_names,
            "multi_label": self.multi_label,
            "thresholds": None if self.thresholds is None else dict(zip(self.label_names, self.thresholds)),
            "offsets": None if self.policy.offsets is None else dict(zip(self.label_names, self.policy.offsets)),
            "predictions_from": BUNDLE_FILE if self.from_bundle else "model.keras",
            "network": self.policy.network,
            "cut": None if self.policy.cascade is None else self.policy.cascade.cut,
            "temperature": None if self.policy.cascade is None else self.policy.cascade.temperature,
            "policy": _json_ready(self.policy.to_dict()),
            "explanations": self.explain_state,
            "metrics": self.metrics,
            "hierattn_version": __version__,
            "limits": dict(self.limits),
            "queues": {"predict": _counts(self._predictions), "explain": _counts(self._explanations)},
        }


def _metrics(run, log):
    """The run's metrics.json (None without one, or with a damaged one, which `log` is told)."""
    try:
        return run.metrics
    except RunError as error:
        log(f"/v1/model will show no metrics: {str(error).removeprefix('damaged run: ')}")
        return None


def _counts(batcher):
    if batcher is None:
        return None
    return {"waiting": batcher.waiting, "batches": batcher.batches, "dropped": batcher.dropped}


def _json_ready(policy):
    """A policy's dict with its class names as the server shows them (strings)."""
    return dict(policy, label_names=[str(name) for name in policy["label_names"]])
