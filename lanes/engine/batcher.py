"""A micro-batcher with a bounded queue, in asyncio and on a virtual clock.

The rule: take the first waiting request, then keep collecting until the batch
holds ``max_batch`` requests or ``max_wait_s`` has passed since the first one
was taken; run the batch as one model call lasting ``model_call_s`` whatever
its size (a decode step reads the weights once for the whole batch); repeat.
``max_wait_s`` is the latency you are willing to add to fill a batch.

A queue without a limit hides overload until latency explodes, so the queue may
be bounded: above ``max_queue`` waiting requests a new one is rejected at once
with :class:`QueueFullError` (backpressure), which the caller can turn into a
429 or a retry.

:class:`MicroBatcher` runs the rule with real ``asyncio`` timers;
:func:`simulate_batches` applies the same rule on a virtual clock, so notebook
output does not depend on the machine's timing.  For 20 requests arriving
together and ``max_batch=8`` both give batches of ``[8, 8, 4]``.
"""

from __future__ import annotations

import asyncio
import time
from collections import deque
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from .. import _checks


class QueueFullError(asyncio.QueueFull):
    """Raised by :meth:`MicroBatcher.submit` when the queue already holds ``max_queue`` requests."""


def _check_rule(max_batch: object, max_wait_s: object, model_call_s: object, max_queue: object):
    mb = _checks.integer("max_batch", max_batch, lo=1)
    mw = _checks.number("max_wait_s", max_wait_s, lo=0)
    mc = _checks.number("model_call_s", model_call_s, lo=0)
    mq = None if max_queue is None else _checks.integer("max_queue", max_queue, lo=1)
    return mb, mw, mc, mq


@dataclass(frozen=True)
class BatchRun:
    """What a batcher run did.

    Attributes
    ----------
    batch_sizes : tuple of int
        Size of every batch, in the order they ran.
    total_s : float
        Time from the start of the run until the last batch finished (s).
    completed, rejected : int
        Requests answered, and requests turned away by the bounded queue.
    mean_latency_s : float
        Mean time from arrival (submission) to answer over completed requests (s).
    """

    batch_sizes: tuple[int, ...]
    total_s: float
    completed: int
    rejected: int
    mean_latency_s: float

    @property
    def batches(self) -> int:
        """Number of model calls made."""
        return len(self.batch_sizes)

    def to_dict(self) -> dict:
        """Plain dict of unrounded numbers, ready for JSON."""
        return {
            "batch_sizes": list(self.batch_sizes),
            "batches": self.batches,
            "total_s": self.total_s,
            "completed": self.completed,
            "rejected": self.rejected,
            "mean_latency_s": self.mean_latency_s,
        }


class MicroBatcher:
    """Collect requests into batches and run each batch as one (simulated) model call.

    Parameters
    ----------
    max_batch : int
        Largest batch (>= 1).
    max_wait_s : float
        Longest time to wait for a batch to fill, counted from its first request (s).
    model_call_s : float
        Duration of one model call, whatever the batch size (s; 50 ms by default).
    max_queue : int or None
        Most requests allowed to wait; ``None`` for an unbounded queue.
    handler : callable, optional
        Maps the list of a batch's items to the list of their results; by
        default each item is answered with itself.

    Notes
    -----
    Start :meth:`run` as a task, ``await submit(item)`` from callers, and
    cancel the task when done.  ``batch_sizes`` grows as batches run.
    """

    def __init__(
        self,
        *,
        max_batch: int = 8,
        max_wait_s: float = 0.02,
        model_call_s: float = 0.05,
        max_queue: int | None = None,
        handler: Callable[[list[Any]], list[Any]] | None = None,
    ) -> None:
        self.max_batch, self.max_wait_s, self.model_call_s, self.max_queue = _check_rule(
            max_batch, max_wait_s, model_call_s, max_queue
        )
        self.handler = handler or (lambda items: list(items))
        self.queue: asyncio.Queue = asyncio.Queue(maxsize=self.max_queue or 0)
        self.batch_sizes: list[int] = []
        self.rejected = 0

    async def submit(self, item: Any) -> Any:
        """Queue ``item`` and wait for its result; raise :class:`QueueFullError` if the queue is full."""
        future = asyncio.get_running_loop().create_future()
        try:
            self.queue.put_nowait((item, future))
        except asyncio.QueueFull:
            self.rejected += 1
            raise QueueFullError(
                f"queue is full: {self.queue.qsize()} requests waiting (max_queue={self.max_queue}); retry later"
            ) from None
        return await future

    async def _collect(self) -> list[tuple[Any, asyncio.Future]]:
        batch = [await self.queue.get()]
        deadline = time.monotonic() + self.max_wait_s
        while len(batch) < self.max_batch:
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                break
            try:
                batch.append(await asyncio.wait_for(self.queue.get(), remaining))
            except asyncio.TimeoutError:
                break
        return batch

    async def run(self) -> None:
        """Serve batches forever (cancel the task to stop)."""
        while True:
            batch = await self._collect()
            self.batch_sizes.append(len(batch))
            await asyncio.sleep(self.model_call_s)
            results = self.handler([item for item, _ in batch])
            for (_, future), result in zip(batch, results):
                if not future.done():
                    future.set_result(result)


async def run_async(
    requests: int = 20,
    *,
    max_batch: int = 8,
    max_wait_s: float = 0.02,
    model_call_s: float = 0.05,
    max_queue: int | None = None,
) -> BatchRun:
    """Submit ``requests`` requests at once to a :class:`MicroBatcher` and time it (wall clock).

    Rejected submissions are counted, not raised.  Await it, or call
    ``asyncio.run(run_async(...))`` outside a running event loop.
    """
    n = _checks.integer("requests", requests, lo=0)
    batcher = MicroBatcher(max_batch=max_batch, max_wait_s=max_wait_s, model_call_s=model_call_s, max_queue=max_queue)
    worker = asyncio.create_task(batcher.run())
    start = time.monotonic()
    latencies: list[float] = []

    async def one(i: int) -> None:
        t0 = time.monotonic()
        await batcher.submit(f"request {i}")
        latencies.append(time.monotonic() - t0)

    outcomes = await asyncio.gather(*(one(i) for i in range(n)), return_exceptions=True)
    total = time.monotonic() - start
    worker.cancel()
    try:
        await worker
    except asyncio.CancelledError:
        pass
    errors = [o for o in outcomes if isinstance(o, BaseException)]
    unexpected = [e for e in errors if not isinstance(e, QueueFullError)]
    if unexpected:
        raise unexpected[0]
    return BatchRun(
        batch_sizes=tuple(batcher.batch_sizes),
        total_s=total,
        completed=len(latencies),
        rejected=len(errors),
        mean_latency_s=sum(latencies) / len(latencies) if latencies else 0.0,
    )


def simulate_batches(
    arrivals: int | Sequence[float] = 20,
    *,
    max_batch: int = 8,
    max_wait_s: float = 0.02,
    model_call_s: float = 0.05,
    max_queue: int | None = None,
) -> BatchRun:
    """The micro-batcher's rule on a virtual clock: deterministic, instant.

    Parameters
    ----------
    arrivals : int or sequence of float
        Arrival times (s), or a count of requests all arriving at t = 0.
    max_batch, max_wait_s, model_call_s, max_queue
        As for :class:`MicroBatcher`.

    Returns
    -------
    BatchRun
        Batch sizes, the time the last batch finished, completions, rejections
        and mean latency.  An arrival that finds ``max_queue`` requests waiting
        is rejected.

    Examples
    --------
    >>> simulate_batches(20, max_batch=8).batch_sizes
    (8, 8, 4)
    >>> round(simulate_batches(20, max_batch=8).total_s, 3)
    0.17
    """
    mb, mw, mc, mq = _check_rule(max_batch, max_wait_s, model_call_s, max_queue)
    if isinstance(arrivals, int) and not isinstance(arrivals, bool):
        times = [0.0] * _checks.integer("arrivals", arrivals, lo=0)
    else:
        times = sorted(_checks.number("arrival time", a, lo=0) for a in arrivals)

    queue: deque[float] = deque()
    nxt, rejected, t = 0, 0, 0.0
    sizes: list[int] = []
    latencies: list[float] = []

    def admit(until: float) -> None:
        nonlocal nxt, rejected
        while nxt < len(times) and times[nxt] <= until:
            if mq is not None and len(queue) >= mq:
                rejected += 1
            else:
                queue.append(times[nxt])
            nxt += 1

    while True:
        admit(t)
        if not queue:
            if nxt == len(times):
                break
            t = times[nxt]  # idle until the next arrival
            continue
        batch = [queue.popleft()]
        deadline = t + mw
        while len(batch) < mb and t < deadline:
            if queue:
                batch.append(queue.popleft())
            elif nxt < len(times) and times[nxt] < deadline:
                t = times[nxt]
                admit(t)
            else:
                t = deadline
        sizes.append(len(batch))
        t += mc
        latencies += [t - a for a in batch]

    return BatchRun(
        batch_sizes=tuple(sizes),
        total_s=t,
        completed=len(latencies),
        rejected=rejected,
        mean_latency_s=sum(latencies) / len(latencies) if latencies else 0.0,
    )
