"""The slot-pool simulator: one loop that runs every policy, at any scheduling clock.

The pool has ``slots`` identical slots.  Interactive requests arrive over the day
(:mod:`lanes.pool.arrivals`); a backlog of batch jobs is queued at t = 0.  At each scheduling instant
the loop runs five steps, in the anchor program's order:

1. **Arrivals**: requests seen at this instant join the interactive queue.
2. **Completions**: jobs whose slot time is up leave their slots.
3. **Decision**: the policy chooses running batch jobs to evict and waiting jobs to start.  A
   built-in policy (:class:`~lanes.pool.policies.Policy`) applies its rule, written out in the loop;
   any other scheduler is shown an :class:`~lanes.pool.protocol.Observation` and asked, and its
   decision is checked against the interface's rules (:mod:`lanes.pool.protocol`).
4. **Carry out**: evicted jobs go back to the head of the batch queue and redo ``preempt_cost_s``
   seconds when they resume; started jobs take slots.
5. **Count**: busy slots, completions and evictions, for the results.

**The clock.**  Instants are ticks of ``Scenario.tick_s`` seconds (1 s is the anchor's clock),
counted as whole ticks so nothing is rounded.  A built-in policy decides nothing new at an instant
where nothing arrived, finished or came of age (``min_run_s``), so the loop jumps from one such
instant to the next; a student's scheduler is asked at every tick.  With ``tick_s = 0`` the instants
are the arrivals and completions themselves, in seconds (event-driven).  A request's wait is counted
from the instant it is first seen to the instant it takes a slot.
"""

from __future__ import annotations

from bisect import bisect_right
from collections import deque
from heapq import heapify, heappop, heappush
from math import ceil
from itertools import repeat
from operator import itemgetter
from typing import Any

from .. import _checks
from .arrivals import ArrivalStream, draw_stream
from .policies import Policy, parse_policy
from .results import SlotPoolResult
from .scenario import Scenario

# Fields of a running batch job's record: [id, start, waited, end] (times in clock units).
ID, START, WAITED, END = range(4)


def simulate(scenario: Scenario | None = None, policy: Any = "priority", *, stream: ArrivalStream | None = None,
             **extensions: object) -> SlotPoolResult:
    """Run one policy on one scenario (the anchor scenario when ``scenario`` is omitted).

    ``policy`` is a spec such as ``"reserve:8"`` (:mod:`lanes.pool.policies`), a :class:`Policy`, or
    a scheduler written against :mod:`lanes.pool.protocol` (an object with ``decide(obs)``, its class,
    or a function ``f(obs)``).  ``stream``: the draws to use (a trace replay, or draws shared by
    several runs); drawn for ``scenario`` when omitted.  ``extensions`` (built-in policies only):
    ``floor``, ``aging_s``, ``promote_s``, ``victim``, ``min_run_s``.
    """
    sc = Scenario() if _checks.instance("scenario", scenario, Scenario, none_ok=True) is None else scenario
    if isinstance(policy, (str, Policy)):
        policy = parse_policy(policy, **extensions)
        policy.check_fits(sc.slots)
    elif extensions:
        raise ValueError(f"extensions ({', '.join(extensions)}) apply to built-in policies only, not to a scheduler")
    elif sc.eviction_stall_s:
        raise ValueError("eviction_stall_s applies to built-in policies only: run a scheduler with eviction_stall_s=0")
    else:
        from .protocol import student_scheduler  # the interface, loaded only for a student's scheduler

        policy = student_scheduler(policy)
    if stream is None:
        return _run(sc, policy, draw_stream(sc))
    _checks.instance("stream", stream, ArrivalStream)
    last = stream.arrival_tick[-1] if stream.arrival_tick else -1
    if last >= sc.ticks or len(stream.batch_service_s) != sc.backlog:
        raise ValueError(f"stream must be drawn for this scenario: arrivals within {sc.ticks} s and a backlog of "
                         f"{sc.backlog} (got an arrival at {last} s and {len(stream.batch_service_s)} backlog jobs)")
    return _run(sc, policy, stream)


def _run(sc: Scenario, rule: Any, stream: ArrivalStream) -> SlotPoolResult:
    """Simulate one policy (a :class:`Policy` or a scheduler) on drawn arrivals; summarise the run."""
    per_s = sc.ticks_per_s or 1  # clock units per second (event-driven: seconds, as floats)
    to_s = (lambda x: x) if per_s == 1 else (lambda x: x / per_s)
    end_of_day = sc.ticks * per_s
    B, slots, cost = sc.backlog, sc.slots, sc.preempt_cost_s * per_s
    seen = list(stream.arrival_tick) if sc.tick_s == 1 else [  # the instant each request is first seen
        t * per_s + (int(u * per_s) if sc.tick_s else u) for t, u in zip(stream.arrival_tick, stream.offsets_s)]
    hold = _in_ticks(stream.inter_service_s, per_s) if sc.tick_s else stream.inter_service_s
    stall = _in_ticks((sc.eviction_stall_s,), per_s)[0] if sc.tick_s and sc.eviction_stall_s else sc.eviction_stall_s
    n_arrivals = len(seen)
    seen.append(end_of_day)  # a last "arrival" at the end of the day ends the loop

    builtin = isinstance(rule, Policy)
    if builtin:
        fifo, preempts, reserve, floor = rule.kind == "fifo", rule.preempts, rule.reserve, rule.floor
        min_run = rule.min_run_s * per_s
        aging = None if rule.aging_s is None else rule.aging_s * per_s
        promote = None if rule.promote_s is None else rule.promote_s * per_s
        youngest = rule.victim == "youngest"
        wake = preempts and min_run > 0  # a job coming of age may be evicted: visit that instant
        every_tick = False
    else:
        from .protocol import INTERACTIVE, Board

        decide_fn, every_tick, wake = rule.decide, sc.tick_s > 0, False
        board = Board(slots, sc.preempt_cost_s)  # what the scheduler sees, kept beside the loop's own state
        for s in stream.batch_service_s:
            board.add_batch(s, 0)

    head = 0  # requests head, ..., i - 1 wait (a built-in policy admits them in arrival order)
    left = stream.batch_service_s if per_s == 1 else [s * per_s for s in stream.batch_service_s]
    queue = deque(zip(range(B), left, repeat(0), repeat(0)))  # batch jobs queued: (id, left, waited, since)
    batch: dict[int, list] = {}  # running batch jobs, id -> [id, start, waited, end], in the order they took slots
    n_inter = 0  # running interactive requests
    freed: dict = {}  # instant -> how many interactive requests end then
    ending: dict = {}  # instant -> ids of the batch jobs (and, for a student's scheduler, requests) ending then
    instants = [end_of_day]  # heap of the instants in ``freed`` and ``ending``, those a batch job comes of age
    waits = [-1] * n_arrivals  # each request's wait, clock units (-1: never admitted)
    log: list[tuple] = []  # per instant: (t, interactive busy, batch busy, batch done, evicted, batch started, interactive done)
    done = evicted_total = batch_started = inter_done = 0
    inter_stalled = 0  # clock units of stall that running interactive requests sat through
    area = 0  # busy slots x clock units
    t = i = 0  # the instant; the next arrival
    while t < end_of_day:
        # 1. Arrivals join the interactive queue.
        first, i = i, bisect_right(seen, t, i)
        if not builtin:
            for k in range(first, i):
                board.add_request(to_s(seen[k]))  # its id is B + k
        # 2. Completions free their slots (an evicted batch job's old end is skipped).
        while instants[0] <= t:
            heappop(instants)
        k = freed.pop(t, 0)
        n_inter -= k
        inter_done += k
        ids = ending.pop(t, None)
        if ids is not None:
            finished = []
            for job_id in ids:
                if job_id >= B:  # a request: listed for a student's scheduler only
                    finished.append(job_id)
                elif (job := batch.get(job_id)) is not None and job[END] == t:
                    del batch[job_id]
                    done += 1
                    finished.append(job_id)
            if not builtin:
                board.finish(finished)

        # 3. The decision, and 4. carrying it out: evictions first, then starts.
        free = slots - n_inter - len(batch)
        evict: list = []
        if not builtin:
            evicted, started = board.apply(to_s(t), decide_fn(board.observe(to_s(t))))  # checks the rules
            evict = [batch[job.id] for job in evicted]
        elif preempts and i - head > free and len(batch) > floor:  # evict for the requests that wait...
            need = i - head if promote is None else _outranking(head, i, seen, queue, promote)  # ...and outrank
            if need > free:
                evict = _victims(batch, t, min(need - free, len(batch) - floor), youngest, min_run, aging, promote)
        if evict:
            for job in evict:  # back to the head of the batch queue, to redo `cost` on resume
                del batch[job[ID]]
                queue.appendleft((job[ID], job[END] - t + cost, job[WAITED], t))
            evicted_total += len(evict)
            free += len(evict)

        jobs: list = []  # batch jobs that take a slot now, in order: (id, left, waited, since)
        if not builtin:
            requests = [job.id - B for job in started if job.kind == INTERACTIVE]  # indices into the stream
            ids = [job.id for job in started if job.kind != INTERACTIVE]  # any queued jobs, in this order
            jobs = [next(item for item in queue if item[0] == job_id) for job_id in ids]
            for item in jobs:
                queue.remove(item)
        elif fifo:  # one queue in submission order: the backlog came first
            while free and queue:
                jobs.append(queue.popleft())
                free -= 1
            requests = range(head, head + min(free, i - head))
            head += len(requests)
        else:  # interactive first (leaving batch its floor while it has work), then batch above the reserve
            room = free
            if floor and (queue or batch):
                room = min(free, slots - floor - n_inter)
            nb = len(batch)
            first = head
            while room > 0 and head < i:
                # The requests that outrank the batch queue's head (all, unless it is promoted and may start)...
                ahead = i - head
                if promote is not None and queue and (free > reserve or nb < floor):
                    ahead = _outranking(head, i, seen, queue, promote)
                k = min(room, ahead)
                head += k
                room -= k
                free -= k
                if room > 0 and head < i and (free > reserve or nb < floor):  # ...then the promoted head
                    jobs.append(queue.popleft())
                    nb += 1
                    free -= 1
                    room = min(room, free)
            requests = range(first, head)
            while free and queue and (free > reserve or nb < floor):
                jobs.append(queue.popleft())
                free -= 1
                nb += 1
        for j in requests:
            waits[j] = t - seen[j]
            end = t + hold[j]
            if end not in freed:
                heappush(instants, end)
            freed[end] = freed.get(end, 0) + 1
        if not builtin:  # a student's scheduler is told which requests end
            for j in requests:
                ending.setdefault(t + hold[j], []).append(B + j)
        n_inter += len(requests)
        for job_id, left, waited, since in jobs:  # in clock units
            end = t + left
            batch[job_id] = [job_id, t, waited + t - since, end]
            if end not in ending:
                heappush(instants, end)
            ending.setdefault(end, []).append(job_id)
            if wake:
                heappush(instants, t + min_run)
        batch_started += len(jobs)
        if evict and stall:  # the engine recomputes each victim's cache: every running sequence waits
            shift = stall * len(evict)
            inter_stalled += n_inter * shift
            freed = {end + shift: k for end, k in freed.items()}
            for job in batch.values():
                job[END] += shift
            ending = {end + shift: ids for end, ids in ending.items()}
            instants = [end_of_day, *freed, *ending]
            if wake:
                instants += [job[START] + min_run for job in batch.values() if job[START] + min_run > t]
            heapify(instants)

        # 5. Count, and go on to the next instant: an arrival, a completion, a job coming of age, the end
        # of the day (or, for a student's scheduler, the next tick).
        log.append((t, n_inter, len(batch), done, evicted_total, batch_started, inter_done))
        last = t
        t = seen[i] if seen[i] < instants[0] else instants[0]
        if every_tick and last + 1 < t:
            t = last + 1
        area += (n_inter + len(batch)) * (t - last)

    waits = waits if per_s == 1 else [w if w < 0 else w / per_s for w in waits]  # in seconds
    return SlotPoolResult.from_run(sc, rule, stream, waits, log, per_s, batch_done=done, preempted=evicted_total,
                                   util=area / (end_of_day * slots), batch_queued=len(queue),
                                   stalled_s=evicted_total * stall / per_s, inter_stalled_s=inter_stalled / per_s)


def _in_ticks(seconds, per_s: int) -> list[int]:
    """Durations in seconds as whole ticks of ``1 / per_s`` seconds, rounded up (at least one tick)."""
    return [max(1, ceil(s * per_s - 1e-9)) for s in seconds]


def _outranking(head: int, i: int, seen: list, queue: deque, promote) -> int:
    """How many of the waiting requests ``head``, ..., ``i - 1`` outrank the head of the batch ``queue``.

    All of them while the queue's head, (id, left, waited, since), has waited
    less than ``promote`` (clock units); once it is promoted, those seen at or
    before the instant it was.
    """
    if not queue:
        return i - head
    return bisect_right(seen, queue[0][3] - queue[0][2] + promote, head, i) - head


def _victims(batch: dict, t, take: int, youngest: bool, min_run, aging, promote=None) -> list:
    """The ``take`` running batch jobs a built-in policy evicts first, of those it may evict.

    A job may be evicted once it has run ``min_run``, unless it waited more
    than ``aging`` in the queue, or at least ``promote`` (clock units; ``None``: no such rule).
    ``youngest`` evicts the latest start first (it has lost the least work),
    else the job with the most work left; ties go in the order jobs took slots.
    """
    jobs = batch.values()  # in the order they took slots, so by start
    if min_run or aging is not None or promote is not None:
        jobs = [job for job in jobs if t - job[START] >= min_run and (aging is None or job[WAITED] <= aging)
                and (promote is None or job[WAITED] < promote)]
    if not youngest:
        return sorted(jobs, key=lambda job: -job[END])[:take]
    found: list = []  # the youngest first: walk back from the latest start, a whole start group at a time
    for job in reversed(jobs):
        if len(found) >= take and job[START] != found[-1][START]:
            break
        found.append(job)
    found.reverse()  # each start group in the order its jobs took slots, then the latest group first
    found.sort(key=itemgetter(START), reverse=True)
    return found[:take]
