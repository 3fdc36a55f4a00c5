"""`Batcher`: concurrent requests share a call, in order; a full queue refuses; a cancelled request never runs."""

import asyncio
import threading
import time

import pytest

from hierattn.serve.batcher import Batcher, Overloaded, Stopped


def run(coroutine):
    return asyncio.run(coroutine)


class Recorder:
    """A model that records each batch it was called with (and may block until told to go on)."""

    def __init__(self, hold=False):
        self.calls = []
        self.go = threading.Event()
        if not hold:
            self.go.set()

    def __call__(self, items):
        self.go.wait(10)
        self.calls.append(list(items))
        return [item.upper() for item in items]


def test_requests_that_arrive_together_share_one_call_and_get_their_own_answers_in_order():
    model = Recorder()

    async def main():
        batcher = Batcher(model, max_batch=64, wait=0.05)
        batcher.start()
        answers = await asyncio.gather(*(batcher.submit([f"a{i}", f"b{i}"]) for i in range(10)))
        await batcher.stop()
        return answers

    answers = run(main())
    assert answers == [[f"A{i}", f"B{i}"] for i in range(10)]
    assert len(model.calls) == 1 and len(model.calls[0]) == 20


def test_a_batch_holds_at_most_max_batch_items_unless_one_request_is_bigger():
    model = Recorder()

    async def main():
        batcher = Batcher(model, max_batch=4, wait=0.05)
        batcher.start()
        await asyncio.gather(*(batcher.submit(["x", "y"]) for _ in range(4)), batcher.submit(list("abcdefg")))
        await batcher.stop()

    run(main())
    sizes = [len(call) for call in model.calls]
    assert sum(sizes) == 15 and all(size <= 4 or size == 7 for size in sizes), sizes


def test_a_request_that_would_overfill_a_batch_starts_the_next_one():
    model = Recorder()

    async def main():
        batcher = Batcher(model, max_batch=4, wait=0.05)
        batcher.start()
        await asyncio.gather(batcher.submit(["a", "b"]), batcher.submit(list("cdefg")), batcher.submit(["h"]))
        await batcher.stop()

    run(main())
    assert model.calls == [["a", "b"], list("cdefg"), ["h"]]


def test_without_company_a_request_waits_no_longer_than_the_window():
    model = Recorder()

    async def main():
        batcher = Batcher(model, wait=0.02)
        batcher.start()
        started = time.perf_counter()
        await batcher.submit(["x"])
        took = time.perf_counter() - started
        await batcher.stop()
        return took

    assert run(main()) < 0.5


def test_a_full_queue_refuses_at_once_and_recovers():
    model = Recorder(hold=True)

    async def main():
        batcher = Batcher(model, max_batch=1, max_queue=2, wait=0)
        batcher.start()
        first = asyncio.ensure_future(batcher.submit(["a"]))  # taken into a batch: the model holds it
        await asyncio.sleep(0.05)
        waiting = [asyncio.ensure_future(batcher.submit([x])) for x in "bc"]  # the queue's two places
        await asyncio.sleep(0.05)
        with pytest.raises(Overloaded, match="2 texts are waiting"):
            await batcher.submit(["d"])
        model.go.set()
        answers = await asyncio.gather(first, *waiting)
        after = await batcher.submit(["e"])
        await batcher.stop()
        return answers, after

    answers, after = run(main())
    assert answers == [["A"], ["B"], ["C"]] and after == ["E"]
    assert ["d"] not in model.calls


def test_a_cancelled_request_is_dropped_before_it_reaches_the_model():
    model = Recorder(hold=True)

    async def main():
        batcher = Batcher(model, max_batch=1, wait=0)
        batcher.start()
        first = asyncio.ensure_future(batcher.submit(["a"]))
        await asyncio.sleep(0.05)
        gone = asyncio.ensure_future(batcher.submit(["b"]))
        await asyncio.sleep(0.01)
        gone.cancel()  # its client went away while it waited
        model.go.set()
        await first
        assert await batcher.submit(["c"]) == ["C"]
        await batcher.stop()
        return batcher.dropped

    assert run(main()) == 1
    assert model.calls == [["a"], ["c"]]


def test_an_error_of_the_model_goes_to_the_batch_requests_and_the_batcher_goes_on():
    def model(items):
        if "bad" in items:
            raise ValueError("cannot")
        return items

    async def main():
        batcher = Batcher(model, max_batch=1, wait=0)
        batcher.start()
        with pytest.raises(ValueError, match="cannot"):
            await batcher.submit(["bad"])
        answer = await batcher.submit(["good"])
        await batcher.stop()
        return answer

    assert run(main()) == ["good"]


def test_stop_answers_every_request_it_holds():
    model = Recorder(hold=True)

    async def main():
        batcher = Batcher(model, max_batch=1, wait=0)
        batcher.start()
        running = asyncio.ensure_future(batcher.submit(["a"]))  # in a batch, on the model
        await asyncio.sleep(0.05)
        waiting = asyncio.ensure_future(batcher.submit(["b"]))  # queued
        await asyncio.sleep(0.01)
        await batcher.stop("stopping")
        model.go.set()
        return await asyncio.gather(running, waiting, return_exceptions=True), batcher.waiting

    answers, waiting = run(main())
    assert [type(answer) for answer in answers] == [Stopped, Stopped] and waiting == 0


def test_stop_answers_a_batch_still_gathering():
    async def main():
        batcher = Batcher(lambda items: items, max_batch=8, wait=5)
        batcher.start()
        gathering = asyncio.ensure_future(batcher.submit(["a"]))  # its batch waits 5 s for more
        await asyncio.sleep(0.05)
        await batcher.stop()
        return await asyncio.gather(gathering, return_exceptions=True)

    (answer,) = run(main())
    assert isinstance(answer, Stopped)
