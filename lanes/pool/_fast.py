"""The fast loop: :mod:`lanes.pool.model`'s loop, written for speed, and the one that asks a
student's scheduler (:mod:`lanes.pool.protocol`) at every tick.

It keeps the model's five steps and rules but jumps between instants with a heap (lazy deletion:
an evicted job's old end stays in it and is skipped), keeps running jobs as positional records and
counts interactive ends per instant.  ``tests/pool/test_pool_model.py`` holds it to the model.
"""

from __future__ import annotations

from bisect import bisect_right
from collections import deque
from heapq import heapify, heappop, heappush
from itertools import repeat
from operator import itemgetter
from typing import Any

from .arrivals import ArrivalStream, on_the_clock
from .policies import Policy
from .results import SlotPoolResult
from .scenario import Scenario

# Fields of a running batch job's record: [id, start, waited, end] (times in clock units).
ID, START, WAITED, END = range(4)


def run(sc: Scenario, rule: Any, stream: ArrivalStream) -> SlotPoolResult:
    """Simulate one policy (a :class:`Policy` or a scheduler) on drawn arrivals; summarise the run."""
    clock = on_the_clock(sc, stream)
    per_s, end_of_day, cost, stall = clock.per_s, clock.end_of_day, clock.cost, clock.stall
    seen, hold = clock.seen, clock.hold  # the instant each request is first seen; its slot time
    to_s = (lambda x: x) if per_s == 1 else (lambda x: x / per_s)
    B, slots = sc.backlog, sc.slots
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
    queue = deque(zip(range(B), clock.backlog_left, repeat(0), repeat(0)))  # batch queued: (id, left, waited, since)
    b_seen = clock.batch_seen  # batch jobs arriving over the day: ids B + n_arrivals + k
    b_next, b_id = 0, B + n_arrivals
    batch: dict[int, list] = {}  # running batch jobs, id -> [id, start, waited, end], in the order they took slots
    n_inter = 0  # running interactive requests
    freed: dict = {}  # instant -> how many interactive requests end then
    ending: dict = {}  # instant -> ids of the batch jobs (and, for a student's scheduler, requests) ending then
    instants = [end_of_day, *b_seen]  # heap: the instants in ``freed`` and ``ending``, batch arrivals, comings of age
    heapify(instants)
    waits = [-1] * n_arrivals  # each request's wait, clock units (-1: never admitted)
    log: list[tuple] = []  # per instant: (t, interactive busy, batch busy, batch done, evicted, batch started, interactive done)
    done = evicted_total = batch_started = inter_done = 0
    inter_stalled = 0  # clock units of stall that running interactive requests sat through
    area = 0  # busy slots x clock units
    t = i = 0  # the instant; the next arrival
    while t < end_of_day:
        # 1. Arrivals join the interactive queue.
        first, i = i, bisect_right(seen, t, i)
        while b_next < len(b_seen) and b_seen[b_next] <= t:
            queue.append((b_id + b_next, clock.batch_left[b_next], 0, b_seen[b_next]))
            b_next += 1
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
                if not builtin and job_id >= B:  # a request: listed for a student's scheduler only
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
            instants = [end_of_day, *freed, *ending, *b_seen[b_next:]]
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
