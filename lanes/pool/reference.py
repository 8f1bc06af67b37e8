"""The slot pool simulated the plain way: one loop over ticks, one function per step.

This is the model to read first.  It keeps a list of the jobs holding slots
and counts every one of them down, every tick, exactly as the course describes
the pool.  Each step of a tick is a small function below, called in this order
by :func:`tick`:

1. :func:`join_queue`: the tick's interactive arrivals join their queue.
2. :func:`complete_work`: every running job does one second of work; jobs
   with none left free their slots.
3. :func:`preempt`: a preempting policy evicts batch jobs for interactive
   requests that find no free slot (victim order, floor, aging, minimum run).
4. :func:`admit_fifo`, or :func:`admit_interactive` then :func:`admit_batch`:
   free slots are filled.
5. The busy slots are counted, for the slot use column.

:func:`run` draws the random numbers, calls :func:`tick` once per second and
summarises the run into the same row as :meth:`lanes.SlotPoolResult.row`.

It is slow: it touches every slot every tick.  The fast engine
(:mod:`lanes.pool.engine`) gets the same answer without doing that.  The two
share no simulation code, only the :class:`~lanes.pool.scenario.Scenario` and
:class:`~lanes.pool.policies.Policy` classes, so when the tests find them
equal on thousands of random scenarios, that is evidence for both.
"""

from __future__ import annotations

import math
import random
from collections import deque
from dataclasses import dataclass, field

from .policies import Policy
from .scenario import Scenario

#: An interactive request is late when it waited longer than this, seconds.
LATE_AFTER_S = 2


# --- the things in the pool ----------------------------------------------------------


@dataclass(eq=False, slots=True)
class Job:
    """A job holding a slot.

    Attributes
    ----------
    kind : str
        ``"interactive"`` or ``"batch"``.
    remaining_s : int
        Seconds of slot time still needed.
    start : int
        Tick at which it took its slot (its latest start, for a batch job
        that was evicted before).
    waited_s : int
        Batch jobs: seconds spent queued before this start, all spells added
        up (aging looks at it).  Interactive requests: their queue wait.
    """

    kind: str
    remaining_s: int
    start: int
    waited_s: int = 0


@dataclass(eq=False, slots=True)
class QueuedBatch:
    """A batch job in the batch queue: never started, or evicted and waiting to resume."""

    remaining_s: int
    waited_s: int  # seconds queued before its latest spell in the queue
    queued_since: int  # tick its latest spell in the queue began


@dataclass(eq=False)
class Pool:
    """Everything that changes during a run.

    Attributes
    ----------
    slots : int
        Slots in the pool.
    running : list of Job
        The jobs holding slots, in the order they took them.
    interactive_queue : deque of (int, int)
        Waiting requests as (arrival tick, service seconds), oldest first.
    batch_queue : deque of QueuedBatch
        Waiting batch jobs, head first.  Evicted jobs go back to the head.
    waits : list of int
        The queue wait of every admitted interactive request, seconds.
    batch_done, preempted, busy_slot_s : int
        Batch jobs finished, evictions, and busy slots summed over ticks.
    """

    slots: int
    running: list[Job] = field(default_factory=list)
    interactive_queue: deque = field(default_factory=deque)
    batch_queue: deque = field(default_factory=deque)
    waits: list[int] = field(default_factory=list)
    batch_done: int = 0
    preempted: int = 0
    busy_slot_s: int = 0

    @property
    def free(self) -> int:
        """Slots nobody holds."""
        return self.slots - len(self.running)

    def count(self, kind: str) -> int:
        """Running jobs of one kind."""
        return sum(1 for job in self.running if job.kind == kind)


# --- the random draws ------------------------------------------------------------------


def draw(scenario: Scenario) -> tuple[list[int], list[list[int]]]:
    """The backlog's service times and, per tick, the arrivals' service times.

    One ``random.Random(seed)`` makes every draw, in the anchor program's
    order: the backlog first, then for each tick one uniform number that
    fixes how many requests arrive (a Poisson count by inverse CDF: add up
    the probabilities of 0, 1, 2, ... arrivals until the sum reaches it),
    followed by one service time per arrival.
    """
    rng = random.Random(scenario.seed)
    backlog = [rng.randint(*scenario.batch_service_s) for _ in range(scenario.backlog)]
    per_tick = []
    for t in range(scenario.ticks):
        lam = arrival_rate(scenario, t)
        u = rng.random()
        k = 0
        term = total = math.exp(-lam)  # probability of 0 arrivals
        while u > total and k < 10_000:  # the cap only matters when rounding keeps total below u
            k += 1
            term *= lam / k  # probability of k arrivals
            total += term
        per_tick.append([rng.randint(*scenario.inter_service_s) for _ in range(k)])
    return backlog, per_tick


def arrival_rate(scenario: Scenario, t: int) -> float:
    """Interactive arrivals per second at tick ``t``: a raised cosine from trough to peak and back."""
    swing = (1 - math.cos(2 * math.pi * t / scenario.ticks)) / 2  # 0 at the ends, 1 in the middle
    return scenario.trough_rate + (scenario.peak_rate - scenario.trough_rate) * swing


# --- one tick ---------------------------------------------------------------------------


def tick(pool: Pool, t: int, arrivals: list[int], policy: Policy, preempt_cost_s: int) -> None:
    """Advance the pool by one second, step by step."""
    join_queue(pool, t, arrivals)
    complete_work(pool)
    if policy.preempts:
        preempt(pool, t, policy, preempt_cost_s)
    if policy.kind == "fifo":
        admit_fifo(pool, t)
    else:
        admit_interactive(pool, t, policy)
        admit_batch(pool, t, policy)
    pool.busy_slot_s += len(pool.running)


def join_queue(pool: Pool, t: int, arrivals: list[int]) -> None:
    """Step 1: this tick's requests join the back of the interactive queue."""
    for service_s in arrivals:
        pool.interactive_queue.append((t, service_s))


def complete_work(pool: Pool) -> None:
    """Step 2: every running job does one second of work; finished jobs leave their slots."""
    for job in pool.running:
        job.remaining_s -= 1
    pool.batch_done += sum(1 for job in pool.running if job.remaining_s <= 0 and job.kind == "batch")
    pool.running = [job for job in pool.running if job.remaining_s > 0]


def preempt(pool: Pool, t: int, policy: Policy, preempt_cost_s: int) -> None:
    """Step 3: evict batch jobs so that every waiting request can have a slot.

    At most ``waiting - free`` jobs are evicted, never so many that fewer than
    ``policy.floor`` batch jobs keep running, and only jobs the policy allows
    (see :func:`victims`).  An evicted job goes back to the head of the batch
    queue and must redo ``preempt_cost_s`` seconds of work when it resumes.
    """
    need = len(pool.interactive_queue) - pool.free
    if need <= 0:
        return
    allowed = pool.count("batch") - policy.floor
    for job in victims(pool, t, policy)[: max(0, min(need, allowed))]:
        pool.running.remove(job)
        pool.batch_queue.appendleft(QueuedBatch(job.remaining_s + preempt_cost_s, job.waited_s, t))
        pool.preempted += 1


def victims(pool: Pool, t: int, policy: Policy) -> list[Job]:
    """The batch jobs that may be evicted now, in the order they would be.

    A job is protected while it has run less than ``policy.min_run_s`` since
    it started, and (with aging on) once it has waited more than
    ``policy.aging_s`` seconds in the queue.  ``youngest`` evicts the latest
    start first (it has lost the least work); ``most_remaining`` evicts the
    job with the most work left first (it would hold the slot longest).  Ties
    keep the order in which the jobs took their slots.
    """
    eligible = [
        job
        for job in pool.running
        if job.kind == "batch"
        and t - job.start >= policy.min_run_s
        and (policy.aging_s is None or job.waited_s <= policy.aging_s)
    ]
    if policy.victim == "youngest":
        eligible.sort(key=lambda job: -job.start)
    else:  # most_remaining
        eligible.sort(key=lambda job: -job.remaining_s)
    return eligible


def admit_fifo(pool: Pool, t: int) -> None:
    """Step 4 under ``fifo``: one queue in submission order; the backlog was submitted first."""
    while pool.free and (pool.batch_queue or pool.interactive_queue):
        if pool.batch_queue:
            start_batch(pool, t)
        else:
            start_interactive(pool, t)


def admit_interactive(pool: Pool, t: int, policy: Policy) -> None:
    """Step 4a: waiting requests take free slots, oldest first.

    With a floor, while batch has work (queued or running), interactive
    requests together hold at most ``slots - floor`` slots.
    """
    while pool.free and pool.interactive_queue:
        if policy.floor:
            n_batch = pool.count("batch")
            batch_has_work = pool.batch_queue or n_batch
            if batch_has_work and len(pool.running) - n_batch >= pool.slots - policy.floor:
                break
        start_interactive(pool, t)


def admit_batch(pool: Pool, t: int, policy: Policy) -> None:
    """Step 4b: batch jobs start while more than the headroom stays free.

    ``policy.reserve`` slots are kept free of batch; below its floor, batch
    may start in any free slot.
    """
    while pool.free and pool.batch_queue:
        if pool.free > policy.reserve or (policy.floor and pool.count("batch") < policy.floor):
            start_batch(pool, t)
        else:
            break


def start_interactive(pool: Pool, t: int) -> None:
    """The oldest waiting request takes a slot; its wait is recorded."""
    arrival, service_s = pool.interactive_queue.popleft()
    pool.waits.append(t - arrival)
    pool.running.append(Job("interactive", service_s, t, waited_s=t - arrival))


def start_batch(pool: Pool, t: int) -> None:
    """The batch job at the head of the queue takes a slot."""
    queued = pool.batch_queue.popleft()
    waited_s = queued.waited_s + (t - queued.queued_since)
    pool.running.append(Job("batch", queued.remaining_s, t, waited_s=waited_s))


# --- a whole run ------------------------------------------------------------------------


def run(scenario: Scenario, policy: Policy, draws: tuple | None = None) -> dict:
    """Simulate ``policy`` on ``scenario`` and return its table row.

    ``draws`` (the result of :func:`draw`) may be passed to reuse one set of
    random numbers for several policies, as the table does.  The row has the
    keys of :meth:`lanes.SlotPoolResult.row`.
    """
    backlog, per_tick = draw(scenario) if draws is None else draws
    pool = Pool(scenario.slots)
    for service_s in backlog:  # the whole backlog is queued at t = 0
        pool.batch_queue.append(QueuedBatch(service_s, 0, 0))
    for t in range(scenario.ticks):
        tick(pool, t, per_tick[t], policy, scenario.preempt_cost_s)
    return summarise(pool, scenario, policy)


def summarise(pool: Pool, scenario: Scenario, policy: Policy) -> dict:
    """The run's row: wait percentiles, late fraction, batch done, evictions, slot use."""
    waits = sorted(pool.waits)
    n = len(waits)
    return {
        "policy": policy.spec,
        "p50": percentile(waits, 0.5),
        "p99": percentile(waits, 0.99),
        "max": waits[-1] if n else -1,
        "late": sum(1 for w in waits if w > LATE_AFTER_S) / max(1, n),
        "batch_done": pool.batch_done,
        "preempted": pool.preempted,
        "util": pool.busy_slot_s / (scenario.ticks * scenario.slots),
    }


def percentile(sorted_waits: list[int], q: float) -> int:
    """Element ``int(q * n)`` of the sorted waits (the last one at most); -1 when there are none."""
    n = len(sorted_waits)
    return sorted_waits[min(n - 1, int(q * n))] if n else -1
