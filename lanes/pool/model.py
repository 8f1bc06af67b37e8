"""The slot pool, one scheduling instant at a time: the model to read.

Every run of the course is this loop.  ``lanes.simulate`` runs a faster copy of it
(:mod:`lanes.pool._fast`, tested to give the same results on every policy, extension and clock);
this one is written to be read beside the anchor program.  At each instant ``t`` it does five
things, in the anchor's order:

1. **Arrivals**: requests seen by ``t`` join the interactive queue (batch jobs arriving over the
   day join the batch queue's tail).
2. **Completions**: jobs whose slot time is up leave their slots.
3. **Decision**: a preempting policy evicts running batch jobs for the requests that wait (and
   outrank the batch queue's head); then free slots go, one at a time, to the higher-ranked head of
   the two queues, within the reserve and the floor (the rules: :mod:`lanes.pool.policies`).
4. **Carry out**: an evicted job goes back to the head of the batch queue and redoes
   ``preempt_cost_s`` when it resumes; each eviction stalls every running sequence for
   ``eviction_stall_s``; started jobs take their slots.
5. **Count**: busy slots, completions and evictions.

Then ``t`` moves to the next instant at which something can change: an arrival, an end, a job
coming of age for eviction (``min_run_s``), or the end of the day.  Times are in clock units: whole
ticks of ``tick_s`` on a tick clock (so nothing is rounded), seconds when event-driven.
"""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass

from .arrivals import ArrivalStream, draw_stream, on_the_clock
from .policies import Policy, parse_policy
from .results import SlotPoolResult
from .scenario import Scenario


@dataclass
class Request:
    """An interactive request: first seen at ``seen``, holding a slot for ``hold`` (clock units)."""

    index: int
    seen: float
    hold: float
    end: float = 0.0


@dataclass
class BatchJob:
    """A batch job: ``left`` of work to do; ``waited`` in the queue before it last started;
    ``since``, when it last joined the queue; ``start`` and ``end`` of its stay in a slot."""

    id: int
    left: float
    waited: float = 0
    since: float = 0
    start: float = 0
    end: float = 0


def simulate(scenario: Scenario, policy: str | Policy = "priority", *, stream: ArrivalStream | None = None,
             **extensions: object) -> SlotPoolResult:
    """Run a built-in policy (a spec such as ``"hybrid:8"``, or a :class:`Policy`) on ``scenario``."""
    rule = parse_policy(policy, **extensions)
    rule.check_fits(scenario.slots)
    sc, clock = scenario, on_the_clock(scenario, draw_stream(scenario) if stream is None else stream)
    per_s, end_of_day, cost, stall = clock.per_s, clock.end_of_day, clock.cost, clock.stall
    arriving = deque(Request(j, seen, hold) for j, (seen, hold) in enumerate(zip(clock.seen, clock.hold)))
    batch_arriving = deque(BatchJob(len(clock.backlog_left) + k, left, since=at) for k, (at, left)
                           in enumerate(zip(clock.batch_seen, clock.batch_left)))
    queue = deque(BatchJob(k, left) for k, left in enumerate(clock.backlog_left))  # the batch queue, head first
    waiting: deque[Request] = deque()  # interactive queue, in arrival order
    requests: list[Request] = []  # running requests
    batch: list[BatchJob] = []  # running batch jobs, in the order they took their slots
    waits = [-1.0] * len(arriving)  # each request's wait, clock units (-1: never admitted)
    done = evicted_total = batch_started = inter_done = 0
    area = inter_stalled = 0  # busy slots x clock units; stall sat through by running requests
    log = []
    aging = None if rule.aging_s is None else rule.aging_s * per_s
    promote = None if rule.promote_s is None else rule.promote_s * per_s
    min_run = rule.min_run_s * per_s
    t = 0
    while t < end_of_day:
        # 1. Arrivals.
        while arriving and arriving[0].seen <= t:
            waiting.append(arriving.popleft())
        while batch_arriving and batch_arriving[0].since <= t:
            queue.append(batch_arriving.popleft())
        # 2. Completions.
        inter_done += sum(r.end <= t for r in requests)
        requests = [r for r in requests if r.end > t]
        done += sum(j.end <= t for j in batch)
        batch = [j for j in batch if j.end > t]

        # 3. The decision.  A request outranks the batch queue's head unless the head is promoted:
        # it has waited promote_s in all, and it reached that before the request was seen.
        def head_outranks(request: Request) -> bool:
            if promote is None or not queue:
                return False
            head = queue[0]
            return head.since - head.waited + promote < request.seen

        free = sc.slots - len(requests) - len(batch)
        evicted: list[BatchJob] = []
        if rule.preempts and len(waiting) > free and len(batch) > rule.floor:
            need = sum(not head_outranks(r) for r in waiting)
            may_go = [j for j in batch if t - j.start >= min_run and (aging is None or j.waited <= aging)
                      and (promote is None or j.waited < promote)]
            if rule.victim == "youngest":  # the latest start first; a start group in the order it took slots
                may_go.sort(key=lambda j: -j.start)
            else:  # the most work left first
                may_go.sort(key=lambda j: -j.end)
            evicted = may_go[:max(0, min(need - free, len(batch) - rule.floor))]
        # 4. Carry out: evictions, then starts, one slot at a time.
        for job in evicted:
            batch.remove(job)
            job.left, job.since = job.end - t + cost, t
            queue.appendleft(job)
        evicted_total += len(evicted)
        free += len(evicted)
        while free > 0:
            if rule.kind == "fifo":  # one queue in submission order: the backlog came first
                take_batch, take_request = bool(queue), bool(waiting)
            else:
                floor_held = rule.floor and (queue or batch) and len(requests) >= sc.slots - rule.floor
                take_request = bool(waiting) and not floor_held
                take_batch = bool(queue) and (free > rule.reserve or len(batch) < rule.floor) and (
                    not take_request or head_outranks(waiting[0]))
            if take_batch:
                job = queue.popleft()
                job.waited, job.start, job.end = job.waited + t - job.since, t, t + job.left
                batch.append(job)
                batch_started += 1
            elif take_request:
                r = waiting.popleft()
                waits[r.index], r.end = t - r.seen, t + r.hold
                requests.append(r)
            else:
                break
            free -= 1
        if evicted and stall:  # the engine recomputes each victim's cache: every running sequence waits
            shift = stall * len(evicted)
            inter_stalled += len(requests) * shift
            for job in (*requests, *batch):
                job.end += shift

        # 5. Count, and move to the next instant at which something can change.
        log.append((t, len(requests), len(batch), done, evicted_total, batch_started, inter_done))
        nxt = [end_of_day, *(r.end for r in requests), *(job.end for job in batch),
               *(job.start + min_run for job in batch if rule.preempts and job.start + min_run > t),  # evictable
               *(q[0].seen for q in (arriving,) if q), *(q[0].since for q in (batch_arriving,) if q)]
        nxt = min(nxt)
        area += (len(requests) + len(batch)) * (nxt - t)
        t = nxt
    waits = [w if w < 0 else w / per_s for w in waits]
    return SlotPoolResult.from_run(sc, rule, clock.stream, waits, log, per_s, batch_done=done,
                                   preempted=evicted_total, util=area / (end_of_day * sc.slots),
                                   batch_queued=len(queue), stalled_s=evicted_total * stall / per_s,
                                   inter_stalled_s=inter_stalled / per_s)
