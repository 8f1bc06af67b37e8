"""The slot-pool simulator: interactive requests and a batch backlog on one pool.

One tick is one second.  Within a tick, in this order: the tick's arrivals
join the interactive queue; jobs whose time is up leave their slots; a
preempting policy evicts batch jobs for interactive requests that find no free
slot; free slots are filled (batch first under ``fifo``; otherwise interactive
first, then batch while the policy's headroom allows); busy slots are counted.

The engine is event-driven: a job's completion tick is known when it starts,
so completions are counted in per-tick buckets instead of touching every
running job every tick.  The random draws live in :mod:`lanes.pool.arrivals` and
are shared by every policy run on the same scenario.
"""

from __future__ import annotations

from operator import sub

from .arrivals import ArrivalStream, draw_stream
from .policies import DEFAULT_POLICIES, Policy, parse_policy
from .results import PolicyTable, SlotPoolResult
from .scenario import Scenario


def simulate(
    scenario: Scenario | None = None,
    policy: str | Policy = "priority",
    *,
    stream: ArrivalStream | None = None,
    **extensions: object,
) -> SlotPoolResult:
    """Run one policy on one scenario.

    Parameters
    ----------
    scenario : Scenario, optional
        The workload and pool; the anchor scenario when omitted.
    policy : str or Policy
        A spec such as ``"reserve:8"`` (see :mod:`lanes.pool.policies`) or a Policy.
    stream : ArrivalStream, optional
        Pre-drawn randomness for ``scenario`` (drawn here when omitted).
    **extensions
        Policy extension fields: ``floor``, ``aging_s``, ``victim``, ``min_run_s``.
    """
    scenario = Scenario() if scenario is None else scenario
    pol = parse_policy(policy, **extensions)
    pol.check_fits(scenario.slots)
    if stream is None:
        stream = draw_stream(scenario)
    return _run(scenario, pol, stream)


def run_table(
    scenario: Scenario | None = None,
    policies: tuple[str | Policy, ...] | list[str | Policy] = DEFAULT_POLICIES,
    **extensions: object,
) -> PolicyTable:
    """Run several policies on one scenario, drawing its randomness once."""
    scenario = Scenario() if scenario is None else scenario
    pols = [parse_policy(p, **extensions) for p in policies]
    for p in pols:
        p.check_fits(scenario.slots)
    stream = draw_stream(scenario)
    return PolicyTable(scenario, tuple(_run(scenario, p, stream) for p in pols))


def _run(scenario: Scenario, pol: Policy, stream: ArrivalStream) -> SlotPoolResult:
    T = scenario.ticks
    slots = scenario.slots
    cost = scenario.preempt_cost_s
    arr_service = stream.inter_service_s
    arr_tick = stream.arrival_tick
    zero_wait_end = stream.zero_wait_end
    arrived_by = stream.arrived_by
    backlog = stream.batch_service_s
    n_backlog = len(backlog)

    # Per-tick buckets.  ``ends[t]`` counts slots released at tick t (any
    # kind).  With ``prebook`` it starts as if every interactive request were
    # admitted on arrival, and a request still queued at the end of its
    # arrival tick has its release moved to where it is really admitted;
    # without, each request's release is booked when it is admitted.  Batch releases at or
    # beyond the horizon collect in bucket T, which the loop never reads.
    # Pre-booking pays when most requests are admitted on arrival (headroom,
    # preemption); under fifo and strict priority most wait, and booking each
    # request when it is admitted costs one step instead of two.
    prebook = pol.kind in ("reserve", "preempt", "hybrid")
    ends = list(stream.zero_wait_ends_at) if prebook else [0] * len(stream.zero_wait_ends_at)
    batch_end = [0] * (T + 1)
    inter_start = [0] * T
    wait_count = [0] * T  # admitted interactive requests by wait, seconds (a wait is < T)
    batch_start = [0] * T
    evicted = [0] * T

    front: list[tuple[int, int, int]] = []  # re-queued batch jobs, head of queue last: (remaining, waited, since)
    next_backlog = 0
    # Running batch jobs of preempting policies, grouped by start tick (oldest
    # group first, admission order within a group): [[start, end, waited], ...].
    # Finished and evicted jobs (end <= t) are dropped lazily.
    running_batch: list[list[list[int]]] = []
    n_batch = 0  # batch jobs in slots (kept only when a rule needs it)
    free = slots
    head = 0  # next interactive arrival to admit; arrivals before it are in slots or done
    fresh = 0  # first arrival of the current tick
    preempted = 0
    batch_busy = 0  # batch slot-seconds within the horizon, booked at start, refunded at eviction

    fifo = pol.kind == "fifo"
    preempts = pol.preempts
    headroom = pol.headroom
    floor = pol.floor
    count_batch = preempts or floor > 0
    fast_victims = not pol.has_extensions

    for t in range(T):
        released = ends[t]
        arrived = arrived_by[t]
        if released:
            free += released
            if count_batch:
                n_batch -= batch_end[t]

        if preempts and arrived - head > free and n_batch > floor:
            need = arrived - head - free
            take = need if need < n_batch - floor else n_batch - floor
            victims = _youngest(running_batch, t, take) if fast_victims else _eligible_victims(running_batch, t, take, pol)
            for job in victims:
                end = job[1]
                if end < T:
                    ends[end] -= 1
                    batch_end[end] -= 1
                    batch_busy -= end - t
                else:
                    batch_end[T] -= 1
                    batch_busy -= T - t
                job[1] = -1
                front.append((end - t + cost, job[2], t))
            k = len(victims)
            evicted[t] = k
            preempted += k
            free += k
            n_batch -= k

        if free and not fifo and arrived > head:
            m = arrived - head
            if floor and (front or next_backlog < n_backlog or n_batch):
                cap = (slots - floor) - (slots - free - n_batch)
                if m > cap:
                    m = cap
            if m > free:
                m = free
            if m > 0:
                if not prebook:
                    for j in range(head, head + m):
                        ends[t + arr_service[j]] += 1
                        wait_count[t - arr_tick[j]] += 1
                else:
                    stop = head + m
                    if head < fresh:  # pre-booked, except those that waited
                        for j in range(head, stop if stop < fresh else fresh):
                            ends[t + arr_service[j]] += 1
                            wait_count[t - arr_tick[j]] += 1
                    if stop > fresh:  # admitted on arrival
                        wait_count[0] += stop - (head if head > fresh else fresh)
                inter_start[t] = m
                head += m
                free -= m

        if free and (front or next_backlog < n_backlog) and (fifo or free > headroom or n_batch < floor):
            started = 0
            while free and (front or next_backlog < n_backlog) and (fifo or free > headroom or n_batch < floor):
                if front:
                    remaining, waited, since = front.pop()
                    waited += t - since
                else:
                    remaining = backlog[next_backlog]
                    next_backlog += 1
                    waited = t
                end = t + remaining
                if end < T:
                    ends[end] += 1
                    batch_end[end] += 1
                    batch_busy += remaining
                else:
                    batch_end[T] += 1
                    batch_busy += T - t
                if preempts:
                    if started:
                        running_batch[-1].append([t, end, waited])
                    else:
                        running_batch.append([[t, end, waited]])
                free -= 1
                n_batch += 1
                started += 1
            batch_start[t] = started

        if free and fifo and arrived > head:
            m = arrived - head if arrived - head < free else free
            for j in range(head, head + m):  # fifo never pre-books
                ends[t + arr_service[j]] += 1
                wait_count[t - arr_tick[j]] += 1
            inter_start[t] = m
            head += m
            free -= m

        if prebook and head < arrived:  # this tick's arrivals still queued: they will not end where assumed
            for j in range(head if head > fresh else fresh, arrived):
                ends[zero_wait_end[j]] -= 1
        fresh = arrived

    return SlotPoolResult.from_run(
        scenario=scenario,
        policy=pol,
        stream=stream,
        inter_start=inter_start,
        wait_count=wait_count,
        inter_end=list(map(sub, ends[:T], batch_end[:T])),
        batch_start=batch_start,
        batch_end=batch_end,
        evicted=evicted,
        preempted=preempted,
        batch_busy_slot_s=batch_busy,
        batch_queued=len(front) + n_backlog - next_backlog,
    )


def _youngest(groups: list[list[list[int]]], t: int, take: int) -> list[list[int]]:
    """Pick ``take`` victims, youngest start first, ties in admission order.

    ``groups`` holds the running batch jobs grouped by start tick, youngest
    group last.  Finished or evicted jobs (end <= t) are skipped, and groups
    left with none are dropped.  The caller marks the victims evicted.
    """
    victims: list[list[int]] = []
    while take:
        group = groups[-1]
        alive = []
        for job in group:
            if job[1] > t:
                alive.append(job)
                if len(alive) == take:
                    break
        if len(alive) == take:
            victims += alive
            if alive[-1] is group[-1]:
                groups.pop()
            return victims
        victims += alive
        take -= len(alive)
        groups.pop()
    return victims


def _eligible_victims(groups: list[list[list[int]]], t: int, take: int, pol: Policy) -> list[list[int]]:
    """Pick victims honouring minimum run time, aging and the victim order."""
    groups[:] = [alive for alive in ([job for job in g if job[1] > t] for g in groups) if alive]
    eligible = [
        job
        for group in groups
        for job in group
        if t - job[0] >= pol.min_run_s and (pol.aging_s is None or job[2] <= pol.aging_s)
    ]
    if pol.victim == "youngest":
        eligible.sort(key=lambda job: -job[0])
    else:  # most_remaining
        eligible.sort(key=lambda job: t - job[1])
    return eligible[:take]
