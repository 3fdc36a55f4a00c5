"""`Batcher`: requests that arrive together, answered by one call of a model, without blocking the event loop.

Each request puts its texts on a bounded queue and awaits its answer. A
consumer takes what is waiting whenever one of its `concurrency` slots is
free (up to a batch's worth, after waiting at most a short window for
more), hands the batch to the model on an executor (threads for
onnxruntime, a process for the Keras explainer), and gives each request its
part of the answer. While batches run, the next one gathers, so under load
batches fill without any wait.

The queue is bounded in texts: a request that would overfill it is refused
at once (`Overloaded`, a 503 with `Retry-After`) instead of waiting without
limit. A request whose client has gone is cancelled; its texts are dropped
before they reach the model. Stopping the batcher answers every request it
still holds with `Stopped`: none is left waiting.
"""

import asyncio
import contextlib


class Overloaded(Exception):
    """The queue has no room for the request's texts: the client should retry later.

    Example:

    >>> str(Overloaded("2,048 texts are waiting"))
    '2,048 texts are waiting'
    """


class Stopped(Exception):
    """The batcher stopped before the request's batch could be answered (the server is stopping or restarting it).

    Example:

    >>> str(Stopped("the explanation worker stopped"))
    'the explanation worker stopped'
    """


class _Entry:
    __slots__ = ("future", "items")

    def __init__(self, items, future):
        self.items = items
        self.future = future


class Batcher:
    """Gathers the items of concurrent requests into batches for one function, run on an executor.

    Args:
        run: A function of a list of items that returns one result per
            item, in order; it runs on `executor`, never on the event loop.
        executor: The `concurrent.futures` executor `run` runs on (None: the
            loop's default thread pool).
        max_batch: The most items per call of `run` (a request with more
            is run alone, whole).
        max_queue: The most items waiting; a request that would pass it is
            refused with `Overloaded` (unless nothing waits: a request is
            never refused for its size alone).
        wait: Seconds to wait for more items after the first of a batch.
        concurrency: Batches run at once (each on a thread of `executor`):
            with 2, the next batch gathers and starts while one runs.

    Attributes:
        waiting: Items queued or in a batch still gathering, now.
        batches: Calls of `run` so far.
        dropped: Items dropped so far because their request was cancelled
            (its client went away) before they ran.

    Use it inside a running event loop: `start()`, then `await submit(items)`,
    then `await stop()`.

    Example:

    >>> import asyncio
    >>> async def two_requests():
    ...     batcher = Batcher(lambda texts: [len(text) for text in texts], max_batch=8, wait=0.01)
    ...     batcher.start()
    ...     answers = await asyncio.gather(batcher.submit(["a", "bb"]), batcher.submit(["ccc"]))
    ...     await batcher.stop()
    ...     return answers, batcher.batches
    >>> asyncio.run(two_requests())  # both requests in one call of the function
    ([[1, 2], [3]], 1)
    """

    def __init__(self, run, executor=None, max_batch=64, max_queue=1024, wait=0.002, concurrency=1):
        self.run = run
        self.executor = executor
        self.max_batch = max_batch
        self.max_queue = max_queue
        self.wait = wait
        self.concurrency = concurrency
        self.waiting = 0
        self.batches = 0
        self.dropped = 0
        self._queue = None
        self._held = None  # an entry that would have overfilled the last batch: the next one starts with it
        self._gathering = []  # the entries of the batch being gathered
        self._running = {}  # each running batch's task, and its entries
        self._task = None

    def start(self):
        """Starts the consumer on the running event loop."""
        self._queue = asyncio.Queue()
        self._task = asyncio.get_running_loop().create_task(self._consume())

    async def stop(self, reason="the server is stopping"):
        """Stops the consumer and its batches; every request still held gets `Stopped(reason)`."""
        if self._task is not None:
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._task
            self._task = None
        held = [self._held] if self._held else []
        queued = []
        while self._queue is not None and not self._queue.empty():
            queued.append(self._queue.get_nowait())
        for task in self._running:
            task.cancel()
        running = [entry for entries in self._running.values() for entry in entries]
        for entry in [*held, *self._gathering, *queued, *running]:
            if not entry.future.done():
                entry.future.set_exception(Stopped(reason))
        self._held, self._gathering, self._running = None, [], {}
        self.waiting = 0

    async def submit(self, items):
        """The results of `items` (a list), once a batch holding them has run.

        Raises:
            Overloaded: The queue has no room for them.
            Stopped: The batcher stopped before their batch was answered.
            Whatever `run` raised for their batch.
        """
        if self.waiting + len(items) > self.max_queue and self.waiting:
            raise Overloaded(f"{self.waiting:,} texts are waiting (the limit is {self.max_queue:,})")
        entry = _Entry(items, asyncio.get_running_loop().create_future())
        self.waiting += len(items)
        self._queue.put_nowait(entry)
        return await entry.future  # cancelled with the request: the consumer then skips the entry

    async def _next(self, timeout):
        """The next waiting entry (the held one first), or None when none comes within `timeout` seconds."""
        if self._held is not None:
            entry, self._held = self._held, None
            return entry
        if not self._queue.empty():
            return self._queue.get_nowait()
        if timeout is None:
            return await self._queue.get()
        if timeout <= 0:
            return None
        try:
            return await asyncio.wait_for(self._queue.get(), timeout)
        except asyncio.TimeoutError:  # noqa: UP041 (not the builtin TimeoutError: they differ before Python 3.11)
            return None

    async def _gather(self):
        """The next batch: the first waiting entry, then what arrives within `wait`, up to `max_batch` items."""
        loop = asyncio.get_running_loop()
        self._gathering = batch = [await self._next(None)]
        size = len(batch[0].items)
        deadline = loop.time() + self.wait
        while size < self.max_batch:
            entry = await self._next(deadline - loop.time())
            if entry is None:
                break
            if size + len(entry.items) > self.max_batch:
                self._held = entry  # too big for this batch: it starts the next one
                break
            batch.append(entry)
            size += len(entry.items)
        self.waiting -= size
        self._gathering = []
        return batch

    async def _consume(self):
        """Gathers a batch whenever fewer than `concurrency` run, and runs it apart, so that the next can gather."""
        loop = asyncio.get_running_loop()
        slots = asyncio.Semaphore(self.concurrency)
        while True:
            await slots.acquire()
            batch = await self._gather()
            live = [entry for entry in batch if not entry.future.done()]  # done: cancelled, its client gone
            self.dropped += sum(len(entry.items) for entry in batch if entry not in live)
            if not live:
                slots.release()
                continue
            self.batches += 1
            task = loop.create_task(self._run(live))
            self._running[task] = live
            task.add_done_callback(lambda task: (self._running.pop(task, None), slots.release()))

    async def _run(self, live):
        """Runs one batch on the executor and gives each request its part of the results (or the error)."""
        items = [item for entry in live for item in entry.items]
        try:
            results = await asyncio.get_running_loop().run_in_executor(self.executor, self.run, items)
        except Exception as error:  # the batch's requests get the error; the consumer goes on
            results, failure = None, error
        else:
            failure = None
        start = 0
        for entry in live:
            if not entry.future.done():
                if failure is None:
                    entry.future.set_result(results[start : start + len(entry.items)])
                else:
                    entry.future.set_exception(failure)
            start += len(entry.items)
