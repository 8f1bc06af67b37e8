"""The fast slot-pool simulator behind :func:`lanes.simulate` and :func:`lanes.run_table`.

It computes exactly what the plain per-tick model in :mod:`lanes.pool.reference`
computes (the tests compare the two on thousands of random scenarios), but it
never looks at a slot that nothing happens to.  Three ideas make that work:

1. **Release buckets.**  A job's slot time is known when it starts, so the tick
   it will free its slot is known too.  Instead of a list of running jobs that
   is counted down every tick, the engine adds one to ``ends[start + service]``
   and, when the loop reaches that tick, frees ``ends[t]`` slots at once.
2. **Pre-booked releases.**  Under headroom and preemption almost every
   interactive request gets a slot in the tick it arrives, so its release tick
   is ``arrival + service``, known before the run starts.  The arrival stream
   carries that histogram (``zero_wait_ends_at``); policies that admit most
   requests on arrival start from it and only move the releases of the few
   requests that had to wait.
3. **Shared draws.**  The random numbers do not depend on the policy, so they
   are drawn once per scenario (:mod:`lanes.pool.arrivals`) and every policy of
   a table reads the same stream.

Each policy family has its own loop in :class:`_Run`, testing only what can
happen under it: :meth:`~_Run.fifo`, :meth:`~_Run.priority`,
:meth:`~_Run.headroom` (``reserve:R``), :meth:`~_Run.evicting` (``preempt``,
``hybrid:R``; :meth:`~_Run.evicting_batch_only` when no request can ever wait)
and :meth:`~_Run.general` for the extensions.  Where two loops both apply, the
tests check that they agree bucket for bucket.

Within a tick the steps run in the course's order: the tick's arrivals join the
interactive queue; slots whose time is up are freed; a preempting policy evicts
batch jobs for waiting interactive requests; free slots are filled (interactive
first, then batch while the headroom allows; batch first under ``fifo``).
"""

from __future__ import annotations

import gc
from operator import add
from typing import Callable

from .. import _checks
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

    A long window (:attr:`Scenario.is_long`: past a week) is summarised as it
    runs (:mod:`lanes.pool.longrun`): the result's figures are exact, but it
    keeps no per-tick series.

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
    scenario = Scenario() if _checks.instance("scenario", scenario, Scenario, none_ok=True) is None else scenario
    pol = parse_policy(policy, **extensions)
    pol.check_fits(scenario.slots)
    if stream is None:
        if scenario.is_long:
            from .longrun import run_long

            return run_long(scenario, [pol])[0]
        stream = draw_stream(scenario)
    else:
        _check_stream(scenario, stream)
    return _run(scenario, pol, stream)


def _check_stream(scenario: Scenario, stream: object) -> None:
    """Refuse a stream that is not an ArrivalStream or was drawn for another window or backlog."""
    _checks.instance("stream", stream, ArrivalStream)
    got = (len(stream.arrived_by), len(stream.batch_service_s))  # type: ignore[attr-defined]
    want = (scenario.ticks, scenario.backlog)
    ends = len(stream.zero_wait_ends_at)  # type: ignore[attr-defined]
    if got != want or ends < scenario.ticks + 1:
        raise ValueError(
            f"stream must be drawn for this scenario: {want[0]} ticks and a backlog of {want[1]} "
            f"(got a stream of {got[0]} ticks and {got[1]} backlog jobs)"
        )


def run_table(
    scenario: Scenario | None = None,
    policies: tuple[str | Policy, ...] | list[str | Policy] = DEFAULT_POLICIES,
    *,
    stream: ArrivalStream | None = None,
    progress: Callable[[int, int], None] | None = None,
    **extensions: object,
) -> PolicyTable:
    """Run several policies on one scenario, drawing its randomness once.

    ``stream`` replaces the draws with given arrivals (a trace replay:
    :func:`lanes.pool.traces.trace_stream`); every policy reads it.  A long
    window (:attr:`Scenario.is_long`) is summarised as it runs
    (:mod:`lanes.pool.longrun`): exact figures, no per-tick series;
    ``progress(done, total)`` is then called with the ticks simulated so far.
    """
    scenario = Scenario() if _checks.instance("scenario", scenario, Scenario, none_ok=True) is None else scenario
    if isinstance(policies, str):
        from .policies import parse_policies

        policies = parse_policies(policies)
    pols = [parse_policy(p, **extensions) for p in _checks.sequence("policies", policies, what="policy specs", min_len=1)]
    for p in pols:
        p.check_fits(scenario.slots)
    if stream is None:
        if scenario.is_long:
            from .longrun import run_long

            return PolicyTable(scenario, tuple(run_long(scenario, pols, progress=progress)))
        stream = draw_stream(scenario)
    else:
        _check_stream(scenario, stream)
    return PolicyTable(scenario, tuple(_run(scenario, p, stream) for p in pols))


def _run(scenario: Scenario, pol: Policy, stream: ArrivalStream) -> SlotPoolResult:
    """Simulate one policy on a drawn stream and summarise it."""
    return _execute(scenario, pol, stream).result()


def _execute(scenario: Scenario, pol: Policy, stream: ArrivalStream) -> "_Run":
    """Simulate one policy on a drawn stream; the run's buckets, not yet summarised."""
    # A run makes tens of thousands of small lists that never form reference
    # cycles; pausing the cycle collector saves it from scanning them (and the
    # large stream) over and over.  The results are the same either way.
    collecting = gc.isenabled()
    gc.disable()
    try:
        run = _Run(scenario, pol, stream)
        if pol.kind == "fifo":
            run.fifo()
        elif pol.has_extensions:
            run.general()  # floor, aging, victim order, minimum run time
        elif pol.preempts and max(stream.zero_wait_busy, default=0) <= scenario.slots:
            run.evicting_batch_only()  # preempt and hybrid:R when no request ever waits
        elif pol.preempts:
            run.evicting()  # preempt and hybrid:R
        elif pol.kind == "priority":
            run.priority()
        else:
            run.headroom()  # reserve:R
    finally:
        if collecting:
            gc.enable()
    return run


class _Run:
    """The per-tick buckets of one run: what happened at each tick, counted.

    ``ends[t]`` counts slots freed at tick ``t`` (interactive and batch),
    ``batch_end[t]`` the batch jobs among them (``batch_end[T]`` collects those
    that end at or beyond the horizon), ``inter_start``, ``batch_start`` and
    ``evicted`` count admissions and evictions per tick, and
    ``wait_count[w]`` counts interactive requests admitted after waiting ``w``
    seconds.  The loops bind these lists to local names: a local is the
    cheapest lookup Python has, and each loop runs once per tick.
    """

    def __init__(self, scenario: Scenario, pol: Policy, stream: ArrivalStream) -> None:
        T = scenario.ticks
        self.scenario, self.pol, self.stream = scenario, pol, stream
        # Pre-booking pays when most requests are admitted on arrival (headroom,
        # preemption); under fifo and strict priority most of them wait, and
        # booking each request when it is admitted costs one step instead of two.
        self.prebook = pol.kind in ("reserve", "preempt", "hybrid")
        n_ends = len(stream.zero_wait_ends_at)
        self.ends = list(stream.zero_wait_ends_at) if self.prebook else [0] * n_ends
        self.batch_end = [0] * (T + 1)
        self.inter_start = [0] * T
        self.batch_start = [0] * T
        self.evicted = [0] * T
        self.wait_count = [0] * T  # a wait is always shorter than the window
        self.preempted = 0
        self.batch_busy = 0  # batch slot-seconds inside the window
        self.batch_queued = len(stream.batch_service_s)
        self.batch_only = False  # set by evicting_batch_only(): ``ends`` stops at the window

    def interactive_ends_after(self) -> list[int]:
        """Interactive requests still in slots after the last tick, by the tick they free it.

        Entry i counts those that free their slot at tick ``T + i`` (T the
        window), through ``T + max interactive service``.  With the batch
        backlog finished, this and the requests still waiting are all the
        pool holds at the end of the window.
        """
        T = self.scenario.ticks
        ends = self.stream.zero_wait_ends_at if self.batch_only else self.ends
        return list(ends[T : T + self.scenario.inter_service_s[1] + 1])

    # --- fifo ---------------------------------------------------------------------
    def fifo(self) -> None:
        """One queue in submission order: the whole backlog, then interactive requests.

        The backlog was submitted before any interactive request, so no request
        gets a slot until the last batch job has started.  The run therefore has
        two phases: batch jobs take every slot that frees until the backlog is
        empty; from then on interactive requests take the free slots in arrival
        order.  There is no eviction, so each phase is a simple loop.
        """
        T = self.scenario.ticks
        ends, batch_end, batch_start = self.ends, self.batch_end, self.batch_start
        backlog = self.stream.batch_service_s
        n_backlog = len(backlog)
        free = self.scenario.slots
        next_job = 0
        t = 0
        busy = 0
        while next_job < n_backlog and t < T:  # phase 1: batch only
            free += ends[t]
            if free:
                stop = min(next_job + free, n_backlog)
                for remaining in backlog[next_job:stop]:
                    end = t + remaining
                    if end < T:
                        ends[end] += 1
                        batch_end[end] += 1
                        busy += remaining
                    else:
                        batch_end[T] += 1
                        busy += T - t
                batch_start[t] = stop - next_job
                free -= stop - next_job
                next_job = stop
            if next_job < n_backlog:
                t += 1
        self.batch_busy = busy
        self.batch_queued = n_backlog - next_job
        if t < T:  # phase 2: interactive only, from the tick the backlog ran out
            self._interactive_only(t, free)

    def _interactive_only(self, t0: int, free: int) -> None:
        """Admit interactive requests in arrival order from tick ``t0`` on (no batch left)."""
        T = self.scenario.ticks
        ends, inter_start, wait_count = self.ends, self.inter_start, self.wait_count
        service, arrival, arrived_by = self.stream.inter_service_s, self.stream.arrival_tick, self.stream.arrived_by
        head = 0
        for t in range(t0, T):
            if t > t0:
                free += ends[t]
            waiting = arrived_by[t] - head
            if free and waiting:
                stop = head + (waiting if waiting < free else free)
                for j in range(head, stop):
                    ends[t + service[j]] += 1
                    wait_count[t - arrival[j]] += 1
                inter_start[t] = stop - head
                free -= stop - head
                head = stop

    # --- priority and reserve:R -------------------------------------------------------
    def priority(self) -> None:
        """Interactive requests first, batch in whatever is left; nothing is evicted.

        Nothing is ever evicted and there is no floor, so a tick is three
        steps: free the slots that end now; give free slots to waiting
        requests, oldest first; start backlog jobs in the rest.  Under strict
        priority most requests wait, so each one's release is booked when it
        gets its slot (pre-booking would cost two steps per request).
        """
        sc, stream = self.scenario, self.stream
        T = sc.ticks
        service, arrival, arrived_by = stream.inter_service_s, stream.arrival_tick, stream.arrived_by
        backlog = stream.batch_service_s
        n_backlog = len(backlog)
        ends, batch_end, wait_count = self.ends, self.batch_end, self.wait_count
        inter_start, batch_start = self.inter_start, self.batch_start
        free = sc.slots
        head = 0  # next request to admit: all before it have slots (or are done)
        next_job = 0  # next backlog job to start
        batch_busy = 0

        for t in range(T):
            free += ends[t]  # 1. slots whose time is up
            if free:  # a full pool skips steps 2 and 3
                arrived = arrived_by[t]
                if arrived > head:  # 2. waiting requests, oldest first
                    stop = arrived if arrived - head <= free else head + free
                    for j in range(head, stop):
                        ends[t + service[j]] += 1
                        wait_count[t - arrival[j]] += 1
                    inter_start[t] = stop - head
                    free -= stop - head
                    head = stop
                if free and next_job < n_backlog:  # 3. batch in the rest
                    stop = next_job + free if next_job + free < n_backlog else n_backlog
                    for remaining in backlog[next_job:stop]:  # book each job's release
                        end = t + remaining
                        if end < T:
                            ends[end] += 1
                            batch_end[end] += 1
                            batch_busy += remaining
                        else:  # ends after the window: only its slot time inside it counts
                            batch_end[T] += 1
                            batch_busy += T - t
                    batch_start[t] = stop - next_job
                    free -= stop - next_job
                    next_job = stop

        self.batch_busy = batch_busy
        self.batch_queued = n_backlog - next_job

    def headroom(self) -> None:
        """``reserve:R``: as :meth:`priority`, but batch starts only while more than R slots stay free.

        With headroom almost every request gets a slot the tick it arrives, so
        the run starts as if all of them do: releases pre-booked in ``ends``,
        each tick's arrivals counted as admitted with no wait.  A tick where
        nobody waits then costs three additions.  Only when requests must wait
        is anything corrected: a request that waits has its pre-booked
        release and its zero wait taken back, and when it gets its slot, its
        real release and wait are booked.
        """
        sc, stream = self.scenario, self.stream
        T, headroom = sc.ticks, self.pol.reserve
        service, arrival, arrived_by = stream.inter_service_s, stream.arrival_tick, stream.arrived_by
        backlog = stream.batch_service_s
        n_backlog = len(backlog)
        ends, batch_end, batch_start, wait_count = self.ends, self.batch_end, self.batch_start, self.wait_count
        inter_start = self.inter_start = stream.arrivals_per_tick[:T]  # as if all admitted on arrival
        wait_count[0] = stream.n_arrivals
        free = sc.slots
        head = 0  # next request to admit: all before it have slots (or are done)
        fresh = 0  # first request that arrived this tick
        next_job = 0  # next backlog job to start
        batch_busy = 0

        for t in range(T):
            free += ends[t]  # 1. slots whose time is up
            arrived = arrived_by[t]
            if head == fresh and arrived - head <= free:  # 2. nobody waits: as pre-booked
                free -= arrived - head
                head = arrived
            else:  # 2. some wait: oldest first, then correct what was assumed
                stop = arrived if arrived - head <= free else head + free
                older = stop if stop < fresh else fresh
                if older > head:
                    for j in range(head, older):  # waited since an earlier tick
                        ends[t + service[j]] += 1
                        wait_count[t - arrival[j]] += 1
                    inter_start[t] += older - head
                first_left = stop if stop > fresh else fresh
                if first_left < arrived:
                    for j in range(first_left, arrived):  # this tick's arrivals left waiting
                        ends[arrival[j] + service[j]] -= 1  # not where pre-booked
                    inter_start[t] -= arrived - first_left
                    wait_count[0] -= arrived - first_left
                free -= stop - head
                head = stop
            if free > headroom and next_job < n_backlog:  # 3. batch above the headroom
                stop = next_job + free - headroom
                if stop > n_backlog:
                    stop = n_backlog
                for remaining in backlog[next_job:stop]:  # as in priority()
                    end = t + remaining
                    if end < T:
                        ends[end] += 1
                        batch_end[end] += 1
                        batch_busy += remaining
                    else:
                        batch_end[T] += 1
                        batch_busy += T - t
                batch_start[t] = stop - next_job
                free -= stop - next_job
                next_job = stop
            fresh = arrived

        self.batch_busy = batch_busy
        self.batch_queued = n_backlog - next_job

    # --- preempt and hybrid:R ----------------------------------------------------------
    def evicting(self) -> None:
        """Headroom plus eviction: waiting requests evict the youngest batch jobs.

        Releases are pre-booked; a request of this tick still waiting at the
        end of the tick has its pre-booked release taken back (step 5), and
        its real one booked when it gets a slot.  Between freeing slots and
        admitting requests comes an eviction step: if more requests wait than
        slots are free, the batch jobs that started last are evicted (they
        have lost the least work).  Each goes back to the head of the batch
        queue with its remaining work plus the preemption cost, and batch
        restarts take evicted jobs before new ones.

        To find the youngest jobs without sorting, the running batch jobs are
        kept in groups by start tick, the youngest group last; a job is just
        its end tick.  Jobs that have ended are skipped when met.
        """
        sc, stream = self.scenario, self.stream
        T, headroom, cost = sc.ticks, self.pol.reserve, sc.preempt_cost_s
        service, arrival = stream.inter_service_s, stream.arrival_tick
        arrived_by = stream.arrived_by
        backlog = stream.batch_service_s
        n_backlog = len(backlog)
        ends, batch_end, wait_count = self.ends, self.batch_end, self.wait_count
        inter_start, batch_start, evicted = self.inter_start, self.batch_start, self.evicted
        running: list[list[int]] = []  # end ticks of running batch jobs, grouped by start tick
        front: list[int] = []  # remaining work of evicted jobs, next to restart last
        free = sc.slots
        head = fresh = next_job = 0  # next request to admit, first of this tick, next backlog job
        n_batch = 0  # batch jobs in slots
        preempted = batch_busy = 0

        for t in range(T):
            free += ends[t]  # 1. slots whose time is up
            n_batch -= batch_end[t]
            arrived = arrived_by[t]
            waiting = arrived - head
            if waiting > free and n_batch:  # 2. eviction
                take = waiting - free if waiting - free < n_batch else n_batch
                for end in _youngest_ends(running, t, take):
                    if end < T:  # take back its booked release
                        ends[end] -= 1
                        batch_end[end] -= 1
                        batch_busy -= end - t
                    else:
                        batch_end[T] -= 1
                        batch_busy -= T - t
                    front.append(end - t + cost)
                evicted[t] = take
                preempted += take
                free += take
                n_batch -= take
            if free:
                if waiting:  # 3. waiting requests, oldest first
                    stop = arrived if waiting <= free else head + free
                    for j in range(head, stop if stop < fresh else fresh):
                        ends[t + service[j]] += 1
                        wait_count[t - arrival[j]] += 1
                    if stop > fresh:
                        wait_count[0] += stop - (head if head > fresh else fresh)
                    inter_start[t] = stop - head
                    free -= stop - head
                    head = stop
                if free > headroom and (front or next_job < n_backlog):  # 4. batch
                    group: list[int] = []
                    while free > headroom:
                        if front:
                            remaining = front.pop()
                        elif next_job < n_backlog:
                            remaining = backlog[next_job]
                            next_job += 1
                        else:
                            break
                        end = t + remaining
                        if end < T:
                            ends[end] += 1
                            batch_end[end] += 1
                            batch_busy += remaining
                        else:
                            batch_end[T] += 1
                            batch_busy += T - t
                        group.append(end)
                        free -= 1
                    running.append(group)
                    batch_start[t] = len(group)
                    n_batch += len(group)
            if head < arrived:  # 5. this tick's arrivals still waiting
                for j in range(head if head > fresh else fresh, arrived):
                    ends[arrival[j] + service[j]] -= 1  # its pre-booked release
            fresh = arrived

        self.preempted = preempted
        self.batch_busy = batch_busy
        self.batch_queued = len(front) + n_backlog - next_job

    def evicting_batch_only(self) -> None:
        """:meth:`evicting` when interactive requests never wait: only batch is simulated.

        If interactive requests alone never fill the pool
        (``stream.zero_wait_busy`` stays within ``slots``), a preempting policy
        gives every request a slot the tick it arrives: it can always evict
        enough batch.  Then the interactive side is known from the draws
        alone, and each tick only decides the batch side: ``room`` is what
        interactive work leaves; batch above it is evicted, youngest first;
        batch below it, less the headroom, is started.  The result is the
        same as :meth:`evicting` computes step by step (the tests check both).
        """
        sc, stream = self.scenario, self.stream
        T, slots, headroom, cost = sc.ticks, sc.slots, self.pol.reserve, sc.preempt_cost_s
        zero_wait_busy = stream.zero_wait_busy
        backlog = stream.batch_service_s
        n_backlog = len(backlog)
        batch_end, batch_start, evicted = self.batch_end, self.batch_start, self.evicted
        running: list[list[int]] = []  # end ticks of running batch jobs, grouped by start tick
        front: list[int] = []  # remaining work of evicted jobs, next to restart last
        next_job = n_batch = preempted = batch_busy = 0

        for t in range(T):
            n_batch -= batch_end[t]  # 1. batch slots whose time is up
            room = slots - zero_wait_busy[t]  # slots interactive work leaves this tick
            if n_batch > room:  # 2. eviction, youngest first (_youngest_ends, inlined)
                take = n_batch - room
                evicted[t] = take
                preempted += take
                n_batch = room
                while take:
                    group = running[-1]
                    i, n = 0, len(group)
                    while i < n and take:
                        end = group[i]
                        i += 1
                        if end > t:  # still running: evict it
                            batch_end[end if end < T else T] -= 1  # take back its booked release
                            front.append(end - t + cost)
                            take -= 1
                    if i < n:
                        del group[:i]
                    else:
                        running.pop()
            elif room - n_batch > headroom and (front or next_job < n_backlog):  # 4. batch
                group: list[int] = []
                free = room - n_batch
                while free > headroom:
                    if front:
                        remaining = front.pop()
                    elif next_job < n_backlog:
                        remaining = backlog[next_job]
                        next_job += 1
                    else:
                        break
                    end = t + remaining
                    batch_end[end if end < T else T] += 1
                    group.append(end)
                    free -= 1
                running.append(group)
                batch_start[t] = len(group)
                n_batch += len(group)
            batch_busy += n_batch  # batch slot-seconds: the jobs in slots after this tick

        # 3. every request was admitted on arrival, with no wait
        self.batch_only = True
        self.inter_start = stream.arrivals_per_tick[:T]
        self.wait_count[0] = stream.n_arrivals
        self.ends = list(map(add, stream.zero_wait_ends_at[:T], batch_end))  # slots freed per tick
        self.preempted = preempted
        self.batch_busy = batch_busy
        self.batch_queued = len(front) + n_backlog - next_job

    # --- any policy with an extension ---------------------------------------------------
    def general(self) -> None:
        """Interactive requests first; batch only above the headroom or below its floor; eviction.

        Each pass of the loop is one tick, in five steps: free the slots that
        end now; evict batch jobs if waiting requests outnumber free slots (and
        the policy preempts); admit waiting requests; start batch jobs while
        more than ``headroom`` slots are free (or batch is below its floor);
        and, when pre-booking, move the releases of this tick's arrivals that
        are still waiting out of the bucket where they were assumed to end.
        """
        sc, pol, stream = self.scenario, self.pol, self.stream
        T, slots, cost = sc.ticks, sc.slots, sc.preempt_cost_s
        service, arrival = stream.inter_service_s, stream.arrival_tick
        arrived_by = stream.arrived_by
        backlog = stream.batch_service_s
        n_backlog = len(backlog)
        ends, batch_end, wait_count = self.ends, self.batch_end, self.wait_count
        inter_start, batch_start, evicted = self.inter_start, self.batch_start, self.evicted
        prebook = self.prebook
        headroom, floor, preempts = pol.reserve, pol.floor, pol.preempts
        count_batch = preempts or floor > 0  # is n_batch needed?
        choose_victims = _youngest if not pol.has_extensions else _victim_chooser(pol)

        # Evicted jobs wait at the head of the batch queue, the last one evicted
        # first: ``front`` holds (remaining, waited, queued_since), head last.
        front: list[tuple[int, int, int]] = []
        # Running batch jobs, for choosing victims: groups by start tick, oldest
        # first, jobs in admission order within a group, each [start, end, waited].
        # A job that ended or was evicted (end <= t) is dropped when next seen.
        running: list[list[list[int]]] = []
        next_job = 0  # next never-started backlog job
        n_batch = 0  # batch jobs in slots (kept when a floor or eviction needs it)
        free = slots
        head = 0  # next interactive request to admit (all before it are admitted)
        fresh = 0  # first request that arrived this tick
        batch_busy = 0

        for t in range(T):
            # 1. Slots whose time is up.
            free += ends[t]
            if count_batch:
                n_batch -= batch_end[t]
            arrived = arrived_by[t]

            # 2. Eviction: waiting requests outnumber free slots.
            if preempts and arrived - head > free and n_batch > floor:
                need = arrived - head - free
                take = need if need < n_batch - floor else n_batch - floor
                victims = choose_victims(running, t, take)
                for job in victims:
                    end = job[1]
                    job[1] = -1  # evicted: dropped from ``running`` when next seen
                    if end < T:
                        ends[end] -= 1
                        batch_end[end] -= 1
                        batch_busy -= end - t
                    else:
                        batch_end[T] -= 1
                        batch_busy -= T - t
                    front.append((end - t + cost, job[2], t))
                k = len(victims)
                evicted[t] = k
                self.preempted += k
                free += k
                n_batch -= k

            # 3. Interactive requests, in arrival order.
            if free and arrived > head:
                m = arrived - head
                if floor and (front or next_job < n_backlog or n_batch):
                    # batch has work: interactive may hold at most slots - floor
                    cap = free + n_batch - floor
                    if m > cap:
                        m = cap
                if m > free:
                    m = free
                if m > 0:
                    stop = head + m
                    if not prebook:
                        for j in range(head, stop):
                            ends[t + service[j]] += 1
                            wait_count[t - arrival[j]] += 1
                    else:
                        # Requests from earlier ticks waited: book them now (their
                        # pre-booked release was taken back when they waited).
                        # This tick's arrivals end where pre-booked: count them.
                        for j in range(head, stop if stop < fresh else fresh):
                            ends[t + service[j]] += 1
                            wait_count[t - arrival[j]] += 1
                        if stop > fresh:
                            wait_count[0] += stop - (head if head > fresh else fresh)
                    inter_start[t] = m
                    head = stop
                    free -= m

            # 4. Batch jobs: evicted ones first, then the backlog in order.
            if free and (front or next_job < n_backlog) and (free > headroom or n_batch < floor):
                started = 0
                group: list[list[int]] = []
                while free and (front or next_job < n_backlog) and (free > headroom or n_batch < floor):
                    if front:
                        remaining, waited, since = front.pop()
                        waited += t - since
                    else:
                        remaining = backlog[next_job]
                        next_job += 1
                        waited = t  # queued since t = 0
                    end = t + remaining
                    if end < T:
                        ends[end] += 1
                        batch_end[end] += 1
                        batch_busy += remaining
                    else:
                        batch_end[T] += 1
                        batch_busy += T - t
                    if preempts:
                        group.append([t, end, waited])
                    free -= 1
                    n_batch += 1
                    started += 1
                if group:
                    running.append(group)
                batch_start[t] = started

            # 5. This tick's arrivals still waiting will not end where pre-booked.
            if prebook and head < arrived:
                for j in range(head if head > fresh else fresh, arrived):
                    ends[arrival[j] + service[j]] -= 1  # its pre-booked release
            fresh = arrived

        self.batch_busy = batch_busy
        self.batch_queued = len(front) + n_backlog - next_job

    def result(self) -> SlotPoolResult:
        return SlotPoolResult.from_run(
            scenario=self.scenario,
            policy=self.pol,
            stream=self.stream,
            inter_start=self.inter_start,
            wait_count=self.wait_count,
            slot_end=self.ends,
            batch_start=self.batch_start,
            batch_end=self.batch_end,
            evicted=self.evicted,
            preempted=self.preempted,
            batch_busy_slot_s=self.batch_busy,
            batch_queued=self.batch_queued,
        )


def _youngest_ends(groups: list[list[int]], t: int, take: int) -> list[int]:
    """Remove ``take`` youngest running batch jobs from ``groups``; return their end ticks.

    ``groups`` holds end ticks grouped by start tick, youngest group last.
    Within the youngest group the jobs that took their slots first go first
    (the order the course's program evicts in).  Ended jobs (end <= t) are
    skipped and dropped on the way.
    """
    victims: list[int] = []
    while take:
        group = groups[-1]
        i, n = 0, len(group)
        while i < n and take:
            if group[i] > t:
                victims.append(group[i])
                take -= 1
            i += 1
        if i < n:
            del group[:i]
        else:
            groups.pop()
    return victims


def _youngest(groups: list[list[list[int]]], t: int, take: int) -> list[list[int]]:
    """Choose ``take`` victims, the latest start first, ties in admission order.

    The youngest job has lost the least work.  ``groups`` holds the running
    batch jobs grouped by start tick, youngest group last, so the victims are
    found at the end without sorting.  Jobs that ended or were evicted
    (``end <= t``) are skipped, and groups left with none are dropped.
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
        victims += alive
        if len(alive) == take:
            if alive[-1] is group[-1]:
                groups.pop()  # nothing left alive behind the victims
            return victims
        take -= len(alive)
        groups.pop()
    return victims


def _victim_chooser(pol: Policy):
    """The victim rule when an extension is on: minimum run time, aging, victim order."""
    min_run, aging, youngest = pol.min_run_s, pol.aging_s, pol.victim == "youngest"

    def choose(groups: list[list[list[int]]], t: int, take: int) -> list[list[int]]:
        groups[:] = [alive for alive in ([job for job in g if job[1] > t] for g in groups) if alive]
        eligible = [
            job
            for group in groups
            for job in group
            if t - job[0] >= min_run and (aging is None or job[2] <= aging)
        ]
        if youngest:  # latest start first
            eligible.sort(key=lambda job: -job[0])
        else:  # most remaining first
            eligible.sort(key=lambda job: t - job[1])
        return eligible[:take]  # the sorts are stable: ties stay in admission order

    return choose
