"""A micro-batcher with a bounded queue, in asyncio and on a virtual clock.

Both versions are built around one object, the **batch window**.  A window
opens when the batcher is idle and a request is waiting; it closes at the first
of two instants:

* the moment it holds ``max_batch`` requests (full), or
* ``max_wait_s`` after it opened (the wait was spent).

A window that opens takes everything already queued, up to ``max_batch``, at
once; only then does it wait, at most ``max_wait_s``, for more.  A closed
window becomes one model call lasting ``model_call_s`` whatever its size (a
decode step reads the weights once for the whole batch).  When the call
returns, the next window opens if anything is waiting.  ``max_wait_s`` is the
latency the batcher may add to fill a batch beyond what is already there: with
0 it never waits, but a window still takes the queue, so requests that piled up
during a call go together.  This is the rule of Triton's dynamic batcher and of
Ray Serve's ``@serve.batch`` with a zero timeout.

The batchers also offer one variant, ``rule="deadline"``, for comparison only:
a window takes a request only while its clock is *strictly before* the close
instant, even one already queued.  It is what a loop written as "while time
is left, take the next request" does, and with ``max_wait_s = 0`` it sends
every request alone however many wait.  It is the rule of a common textbook
micro-batcher; the servers named above take the queue first, and the variant
shows why the order "take what is queued, then wait" matters.

The queue in front may be bounded: a request that finds ``max_queue`` others
waiting is refused at once with :class:`QueueFullError` (backpressure), which a
server turns into a 429 or a retry hint.

:class:`MicroBatcher` runs windows against real ``asyncio`` timers;
:func:`simulate_batches` runs the same windows as a discrete-event simulation
on a virtual clock (a heap of arrival, close and call-done events), so
notebook output never depends on the machine's timing.  Twenty requests that
arrive together with ``max_batch=8`` give batches of ``[8, 8, 4]`` in both.
"""

from __future__ import annotations

import asyncio
import heapq
import time
from collections import deque
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from .. import _checks

RULES = ("queued", "deadline")
"""Window rules: ``"queued"`` takes the waiting queue at once then waits
(the default, what model servers do); ``"deadline"`` takes a request only
strictly before the window's close instant (a variant for comparison)."""


class QueueFullError(asyncio.QueueFull):
    """Raised by :meth:`MicroBatcher.submit` when the queue already holds ``max_queue`` requests."""


#: Most requests :func:`simulate_batches` takes (a count or a list of times): about 4 s.
MAX_ARRIVALS = 200_000
#: Most requests :func:`run_async` submits, and the most real time it may wait (s):
#: it sleeps for every model call and window, so its run time is real.
MAX_ASYNC_REQUESTS = 100_000
MAX_ASYNC_WALL_S = 10.0


def _check_rule(max_batch: object, max_wait_s: object, model_call_s: object, max_queue: object,
                rule: object = "queued"):
    mb = _checks.integer("max_batch", max_batch, lo=1)
    mw = _checks.number("max_wait_s", max_wait_s, lo=0)
    mc = _checks.number("model_call_s", model_call_s, lo=0)
    mq = None if max_queue is None else _checks.integer("max_queue", max_queue, lo=1)
    if rule not in RULES:
        raise ValueError(f"rule must be one of {', '.join(map(repr, RULES))} (got {rule!r})")
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


class _Window:
    """One batch being collected: its members and the instant it must close.

    ``opened_s`` is when the first member was taken; the window stays open to
    new members while it is not full and the clock is before ``close_at_s``.
    """

    __slots__ = ("members", "capacity", "close_at_s")

    def __init__(self, opened_s: float, capacity: int, max_wait_s: float) -> None:
        self.members: list = []
        self.capacity = capacity
        self.close_at_s = opened_s + max_wait_s

    @property
    def full(self) -> bool:
        return len(self.members) >= self.capacity

    def admits(self, now_s: float) -> bool:
        """Whether a request available at ``now_s`` may still join."""
        return not self.full and now_s < self.close_at_s


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
    rule : {"queued", "deadline"}
        ``"queued"`` (default): a new window first takes every waiting request,
        up to ``max_batch``, then waits; ``"deadline"``: the comparison variant
        that takes requests only before the close instant (see the module notes).
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
        rule: str = "queued",
        handler: Callable[[list[Any]], list[Any]] | None = None,
    ) -> None:
        self.max_batch, self.max_wait_s, self.model_call_s, self.max_queue = _check_rule(
            max_batch, max_wait_s, model_call_s, max_queue, rule
        )
        self.rule = rule
        self.handler = handler or (lambda items: list(items))
        self.queue: asyncio.Queue = asyncio.Queue(maxsize=self.max_queue or 0)
        self.batch_sizes: list[int] = []
        self.rejected = 0
        self._bell = asyncio.Event()  # rung by every accepted submission

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
        self._bell.set()
        return await future

    async def _fill(self, window: _Window) -> _Window:
        """Take waiting requests into ``window`` until it is full or its time is up."""
        if self.rule == "queued":  # what is already waiting joins at once
            while not window.full and not self.queue.empty():
                window.members.append(self.queue.get_nowait())
        while True:
            now = time.monotonic()
            if not window.admits(now):
                return window
            if not self.queue.empty():
                window.members.append(self.queue.get_nowait())
                continue
            # Nothing waiting: sleep until a submission rings the bell or the window expires.
            self._bell.clear()
            try:
                await asyncio.wait_for(self._bell.wait(), window.close_at_s - now)
            except asyncio.TimeoutError:
                return window

    async def run(self) -> None:
        """Serve batches forever (cancel the task to stop)."""
        while True:
            first = await self.queue.get()  # idle until something arrives
            window = _Window(time.monotonic(), self.max_batch, self.max_wait_s)
            window.members.append(first)
            batch = (await self._fill(window)).members
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
    rule: str = "queued",
) -> BatchRun:
    """Submit ``requests`` requests at once to a :class:`MicroBatcher` and time it (wall clock).

    Rejected submissions are counted, not raised.  Await it, or call
    ``asyncio.run(run_async(...))`` outside a running event loop.
    """
    n = _checks.integer("requests", requests, lo=0, hi=MAX_ASYNC_REQUESTS)
    mb, mw, mc, _ = _check_rule(max_batch, max_wait_s, model_call_s, max_queue, rule)
    wall = -(-n // mb) * (mc + mw)
    if wall > MAX_ASYNC_WALL_S:
        raise ValueError(
            f"requests / max_batch x (model_call_s + max_wait_s) must be at most {_checks.bound(MAX_ASYNC_WALL_S)} s "
            f"of real waiting (got {wall:.6g} s: requests={n}, max_batch={mb}, model_call_s={mc!r}, max_wait_s={mw!r})"
        )
    batcher = MicroBatcher(max_batch=max_batch, max_wait_s=max_wait_s, model_call_s=model_call_s,
                           max_queue=max_queue, rule=rule)
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
    rule: str = "queued",
) -> BatchRun:
    """The micro-batcher's rule on a virtual clock: deterministic, instant.

    Parameters
    ----------
    arrivals : int or sequence of float
        Arrival times (s), or a count of requests all arriving at t = 0.
    max_batch, max_wait_s, model_call_s, max_queue, rule
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
    >>> simulate_batches(20, max_batch=8, max_wait_s=0).batch_sizes
    (8, 8, 4)
    >>> len(simulate_batches(20, max_batch=8, max_wait_s=0, rule="deadline").batch_sizes)
    20
    """
    mb, mw, mc, mq = _check_rule(max_batch, max_wait_s, model_call_s, max_queue, rule)
    if _checks.items(arrivals) is None:  # a count
        times = [0.0] * _checks.integer("arrivals", arrivals, lo=0, hi=MAX_ARRIVALS)
    else:
        listed = _checks.sequence("arrivals", arrivals, what="arrival times", max_len=MAX_ARRIVALS)
        times = sorted(_checks.number("arrival time", a, lo=0) for a in listed)

    # The state machine: the batcher is idle, collecting (a window is open) or
    # busy (a model call runs).  Arrivals always pass the queue's bound first;
    # a SERVE event then moves waiting requests into a window.  At equal times
    # a window's close comes first (a request arriving exactly at the close
    # misses it), then arrivals, then the end of a call, and SERVE last, so
    # everything arriving at one instant is queued (or refused) before a
    # window takes from the queue.  The sequence number keeps the heap stable.
    CLOSE, ARRIVE, DONE, SERVE = 0, 1, 2, 3
    events: list[tuple[float, int, int]] = [(a, ARRIVE, i) for i, a in enumerate(times)]
    heapq.heapify(events)
    seq = len(times)
    waiting: deque[float] = deque()  # arrival times of accepted requests not yet in a window
    window: _Window | None = None
    in_call: list[float] | None = None  # members of the running model call
    sizes: list[int] = []
    latencies: list[float] = []
    rejected = 0
    finished_at = 0.0

    def schedule(at: float, kind: int) -> None:
        nonlocal seq
        heapq.heappush(events, (at, kind, seq))
        seq += 1

    while events:
        now, kind, i = heapq.heappop(events)
        if kind == ARRIVE:
            if mq is not None and len(waiting) >= mq:
                rejected += 1
            else:
                waiting.append(times[i])
                schedule(now, SERVE)
            continue
        if kind == DONE:
            assert in_call is not None
            latencies += [now - a for a in in_call]
            finished_at, in_call = now, None
            schedule(now, SERVE)
            continue
        if in_call is not None:
            continue  # busy: whatever waits stays queued until the call ends
        if kind == SERVE and window is None and waiting:
            window = _Window(now, mb, mw)
            window.members.append(waiting.popleft())
            if rule == "queued":  # what is already waiting joins at once
                while waiting and not window.full:
                    window.members.append(waiting.popleft())
            schedule(window.close_at_s, CLOSE)
        if window is None:
            continue
        while waiting and window.admits(now):
            window.members.append(waiting.popleft())
        if not window.admits(now):  # full, or its time is up: run it
            sizes.append(len(window.members))
            in_call, window = window.members, None
            schedule(now + mc, DONE)

    return BatchRun(
        batch_sizes=tuple(sizes),
        total_s=finished_at,
        completed=len(latencies),
        rejected=rejected,
        mean_latency_s=sum(latencies) / len(latencies) if latencies else 0.0,
    )
