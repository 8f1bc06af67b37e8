"""Long windows (past a week, up to a year): the same one-second ticks, summarised as they run.

A long window (:attr:`~lanes.pool.scenario.Scenario.is_long`) is too long to
keep its arrivals and per-tick counts, but its table can still be exactly the
one the per-tick model gives, because the policies of a table stop differing
once the batch backlog is finished:

1. **The prefix.**  Each policy runs in the fast engine
   (:mod:`lanes.pool.engine`) on the first P ticks, drawn with the whole
   window's rate curve (the raised cosine spans the full window).  If some
   policy still has batch work queued or in a slot at the end of the prefix,
   P is doubled and the prefix run again; past :data:`MAX_PREFIX_HOURS`
   (and the arrivals a prefix may keep) the window is refused.
2. **The tail.**  With no batch work left, every policy does the same thing:
   free slots go to waiting interactive requests in arrival order (no
   headroom, floor, eviction or aging rule has anything to act on).  What is
   left of a policy's state is the requests still waiting and the ticks at
   which the requests in slots free them.  Policies with the same state are
   one group and share one simulation of the rest of the window; groups whose
   states become equal at the end of a chunk merge.
3. **Streamed draws.**  The tail's ticks are drawn a chunk at a time
   (:class:`~lanes.pool.arrivals._TickDraws` carries the generator's place),
   and each chunk is summarised and dropped.  In a chunk where nobody is
   waiting and the slots never fill even if every arrival is admitted at
   once (a check made with C-level passes: ``itertools.accumulate``,
   ``max``), every request waits 0 s; only other chunks are walked tick by
   tick.

A policy's row combines its prefix run with its groups' tail: waits are
merged histograms (so percentiles follow the anchor's rule over the whole
window), slot use adds the prefix's busy slot-seconds, the slot time of the
requests in slots at the prefix's end, and the tail's.
"""

from __future__ import annotations

import gc
import random
from collections import Counter
from itertools import accumulate, chain, repeat
from operator import add, sub
from typing import Callable

from .arrivals import _RateCurve, _TickDraws, _stream_from, _use_words
from .. import _checks
from .policies import Policy, parse_policy
from .results import _NoSeries, SlotPoolResult, _wait_summary, _interactive_busy_s
from . import scenario as _limits
from .scenario import MAX_SERIES_HOURS, Scenario

#: Longest prefix, in hours, run before the policies must have finished the
#: batch backlog (the longest window the engine keeps whole).
MAX_PREFIX_HOURS = MAX_SERIES_HOURS
#: Ticks drawn and summarised at once in the tail (an hour; more when a
#: request's slot time is longer, fewer when arrivals are very dense).
CHUNK_TICKS = 3600
#: Most interactive requests that may wait at once in a long window's tail
#: (the pool is then overloaded by interactive work alone).
MAX_WAITING = 5_000_000

#: Admitted requests left at the front of a tail's queue before they are dropped.
_COMPACT_AFTER = 65536

Progress = Callable[[int, int], None]


def run_long(
    scenario: Scenario,
    policies: "list[str | Policy] | tuple[str | Policy, ...]",
    *,
    prefix_ticks: int | None = None,
    chunk_ticks: int | None = None,
    progress: Progress | None = None,
) -> list[SlotPoolResult]:
    """Run ``policies`` (specs or Policy objects) on ``scenario`` without keeping its arrivals.

    Returns one result per policy, in order.

    ``prefix_ticks`` is the first prefix tried (default: twice the backlog's
    work spread over every slot, plus an hour) and ``chunk_ticks`` the tail's
    chunk (default :data:`CHUNK_TICKS`); neither changes the results, only
    how the work is cut (the tests force small ones).  ``progress(done,
    total)`` is called with ticks simulated so far after each chunk.  A
    prefix as long as the window is the plain run, and its results keep
    their series.
    """
    _checks.instance("scenario", scenario, Scenario)
    pols = [parse_policy(p) for p in _checks.sequence("policies", policies, what="policy specs", min_len=1)]
    for p in pols:
        p.check_fits(scenario.slots)
    prefix_ticks = _checks.optional_integer("prefix_ticks", prefix_ticks, lo=1)
    chunk_ticks = _checks.optional_integer("chunk_ticks", chunk_ticks, lo=1)
    if progress is not None and not callable(progress):
        raise ValueError(f"progress must be a function of (done, total) or None (got {_checks.show(progress)})")
    collecting = gc.isenabled()
    gc.disable()  # many small lists, no cycles: see engine._execute
    try:
        return _run_long(scenario, pols, prefix_ticks, chunk_ticks, progress)
    finally:
        if collecting:
            gc.enable()


def _run_long(
    scenario: Scenario,
    policies: list[Policy],
    prefix_ticks: int | None,
    chunk_ticks: int | None,
    progress: Progress | None,
) -> list[SlotPoolResult]:
    T = scenario.ticks
    lo_rate, hi_rate = scenario.trough_rate, scenario.peak_rate
    hi_s = scenario.inter_service_s[1]
    draws = _TickDraws(
        random.Random(scenario.seed), scenario.backlog, scenario.batch_service_s, scenario.inter_service_s,
        words=_use_words(),
    )
    cap = _prefix_cap(scenario)
    P = min(T, cap, max(1, prefix_ticks if prefix_ticks is not None else _first_prefix(scenario)))
    counts: list[int] = []
    service: list[int] = []
    while True:
        if P > len(counts):
            more_counts, more_service = draws.ticks(_RateCurve(lo_rate, hi_rate, T, len(counts), P))
            counts += more_counts
            service += more_service
        stream = _stream_from(draws.backlog, counts, service, hi_s)
        prefix = scenario if P == T else scenario.with_(hours=P / 3600)
        if P == T:  # the whole window: the plain run
            from .engine import _execute

            return [_execute(prefix, p, stream).result() for p in policies]
        states = [_PrefixState.of(prefix, p, stream) for p in policies]
        if all(s.batch_done for s in states):
            break
        if P >= cap:
            raise ValueError(
                f"hours: a window past {_limits.MAX_SERIES_HOURS} h is simulated only if every policy finishes "
                f"the batch backlog within its first {cap / 3600:g} h, and here one does not "
                f"(got hours={scenario.hours}, backlog={scenario.backlog}, slots={scenario.slots})"
            )
        P = min(2 * P, cap, T)
    del stream, counts
    if progress is not None:
        progress(P, T)

    groups: list[_Tail] = []
    for i, s in enumerate(states):
        for g in groups:
            if g.head == s.head and g.carry == s.ends_after:
                g.members.append(i)
                break
        else:
            queue_at = list(s.stream_arrival_tick[s.head :])
            queue_s = list(service[s.head :])
            groups.append(_Tail(scenario, [i], s.head, list(s.ends_after), queue_at, queue_s))
    for s in states:
        s.stream_arrival_tick = ()  # the prefix's arrivals are no longer needed
    del service
    n_tail_arrivals = 0
    step = chunk_ticks if chunk_ticks is not None else _chunk(scenario)
    totals = [_Stats() for _ in policies]
    c0 = P
    while c0 < T:
        c1 = min(c0 + step, T)
        chunk_counts, chunk_service = draws.ticks(_RateCurve(lo_rate, hi_rate, T, c0, c1))
        chunk = _Chunk(c0, chunk_counts, chunk_service, hi_s, T)
        n_tail_arrivals += len(chunk_service)
        for g in groups:
            g.step(chunk)
        if len(groups) > 1:
            groups = _merge(groups, totals)
        if progress is not None:
            progress(c1, T)
        c0 = c1
    for g in groups:
        g.flush(totals)
    return [
        s.result(scenario, totals[i], n_tail_arrivals) for i, s in enumerate(states)
    ]


def _first_prefix(scenario: Scenario) -> int:
    """A first guess at when every policy has finished the backlog, in ticks.

    Twice the backlog's mean work spread over every slot, plus an hour for
    the requests that waited meanwhile, in whole hours.
    """
    lo, hi = scenario.batch_service_s
    work_s = scenario.backlog * (lo + hi) / 2 / scenario.slots
    return int(-(-(2 * work_s + 3600) // 3600) * 3600)


def _prefix_cap(scenario: Scenario) -> int:
    """Longest prefix, ticks: :data:`MAX_PREFIX_HOURS`, and arrivals kept within :data:`MAX_SERIES_ARRIVALS`."""
    cap = min(scenario.ticks, MAX_PREFIX_HOURS * 3600)
    if scenario.peak_rate > 0:
        cap = min(cap, max(3600, int(_limits.MAX_SERIES_ARRIVALS / scenario.peak_rate)))
    return cap


def _chunk(scenario: Scenario) -> int:
    """Tail chunk in ticks: an hour, or the longest slot time if longer, but about a million arrivals at most.

    A chunk at least as long as the longest slot time keeps the releases
    carried from one chunk to the next within the next chunk.
    """
    step = max(CHUNK_TICKS, scenario.inter_service_s[1])
    if scenario.peak_rate > 0:
        step = min(step, max(60, int(1_000_000 / scenario.peak_rate)))
    return step


class _PrefixState:
    """One policy's prefix run, boiled down to what the tail and the row need."""

    @classmethod
    def of(cls, prefix: Scenario, pol: Policy, stream) -> "_PrefixState":
        from .engine import _execute

        run = _execute(prefix, pol, stream)
        P = prefix.ticks
        s = cls()
        s.policy = pol
        s.batch_done = run.batch_queued == 0 and run.batch_end[P] == 0
        s.head = sum(run.inter_start)  # requests admitted; the rest of the prefix's arrivals wait
        s.ends_after = run.interactive_ends_after()
        waits = run.wait_count
        while waits and not waits[-1]:
            waits.pop()
        s.wait_counts = waits
        s.inter_busy_s = _interactive_busy_s(prefix, stream, run.inter_start, s.head)
        s.batch_busy_s = run.batch_busy
        s.batch_finished = sum(run.batch_end[:P])
        s.preempted = run.preempted
        s.n_arrivals = stream.n_arrivals
        s.prefix_ticks = P
        s.stream_arrival_tick = stream.arrival_tick
        return s

    def result(self, scenario: Scenario, tail: "_Stats", n_tail_arrivals: int) -> SlotPoolResult:
        """This policy's row over the whole window: the prefix run plus its share of the tail."""
        waits = list(self.wait_counts)
        for w, n in tail.waits.items():
            if w >= len(waits):
                waits += [0] * (w + 1 - len(waits))
            waits[w] += n
        n = self.head + tail.admitted
        p50, p99, worst, late = _wait_summary(waits, n)
        # Slot time of requests in slots when the prefix ended, from then to the window's end.
        P, T = self.prefix_ticks, scenario.ticks
        carried = sum((min(P + i, T) - P) * k for i, k in enumerate(self.ends_after) if k)
        busy = self.inter_busy_s + carried + tail.busy_s + self.batch_busy_s
        no_series = _NoSeries(scenario)
        return SlotPoolResult(
            scenario=scenario,
            policy=self.policy,
            p50_s=p50,
            p99_s=p99,
            max_s=worst,
            late_fraction=late / max(1, n),
            batch_done=self.batch_finished,
            preempted=self.preempted,
            util=busy / (T * scenario.slots),
            n_interactive=n,
            n_arrivals=self.n_arrivals + n_tail_arrivals,
            batch_queued=0,
            wait_counts=waits,
            _stream=no_series,  # type: ignore[arg-type]
            _buckets=no_series,  # type: ignore[arg-type]
        )


class _Stats:
    """What a stretch of the tail adds to a row: waits by length, admissions, busy slot-seconds."""

    def __init__(self) -> None:
        self.waits: Counter = Counter()
        self.admitted = 0
        self.busy_s = 0

    def add(self, other: "_Stats") -> None:
        self.waits.update(other.waits)
        self.admitted += other.admitted
        self.busy_s += other.busy_s


class _Chunk:
    """One stretch of the tail's draws, ticks ``[c0, c0 + len(counts))``, and what every group reads of it."""

    def __init__(self, c0: int, counts: list[int], service: list[int], hi_s: int, T: int) -> None:
        self.c0, self.counts, self.service = c0, counts, service
        n = len(counts)
        self.n_arrivals = len(service)
        self.span = n + hi_s + 1  # releases can fall this far from c0
        self.hi_s, self.T = hi_s, T
        self._when: list[int] | None = None
        self._zero_wait: list[int] | None = None
        self._busy: int | None = None

    @property
    def when(self) -> list[int]:
        """Arrival tick of each of the chunk's requests, counted from c0."""
        if self._when is None:
            self._when = list(chain.from_iterable(map(repeat, range(len(self.counts)), self.counts)))
        return self._when

    @property
    def zero_wait_ends(self) -> list[int]:
        """Slots the chunk's requests free at each tick from c0, if each is admitted on arrival."""
        if self._zero_wait is None:
            ends = [0] * self.span
            for end, k in Counter(map(add, self.when, self.service)).items():
                ends[end] = k
            self._zero_wait = ends
        return self._zero_wait

    def most_in_slots(self, busy: int) -> int:
        """At least the most slots held at once in the chunk if nobody waits, with ``busy`` held at c0.

        A request holds its slot at most ``hi_s`` ticks, so after tick i only
        those that arrived in the last ``hi_s`` ticks can hold one, and those
        held at c0 are all free by tick ``hi_s``.  Two C-level passes over
        the per-tick counts; no per-request work.
        """
        acc = list(accumulate(self.counts, initial=0))
        h, n = self.hi_s, len(self.counts)
        early = busy + acc[min(h, n)]
        return max(early, max(map(sub, acc[h + 1 :], acc[1:]), default=0))

    def ends_after(self, start: int) -> Counter:
        """Requests arriving at tick ``start`` (from c0) or later, by the tick their slot frees if admitted at once."""
        counts = self.counts[start:]
        first = sum(self.counts[:start])
        when = chain.from_iterable(map(repeat, range(start, len(self.counts)), counts))
        return Counter(map(add, when, self.service[first:]))

    @property
    def zero_wait_busy_s(self) -> int:
        """Slot-seconds inside the window of the chunk's requests, if each is admitted on arrival."""
        if self._busy is None:
            left = self.T - self.c0  # ticks from c0 to the window's end
            if len(self.counts) - 1 + self.hi_s <= left:  # none can run past the end
                self._busy = sum(self.service)
            else:
                self._busy = sum(map(min, self.service, map(sub, repeat(left), self.when)))
        return self._busy


class _Tail:
    """Interactive-only FIFO from the prefix's end: one group of policies that share a state.

    ``carry[i]`` counts slots freed at tick ``c0 + i`` by requests already in
    slots (c0: the next tick to simulate), ``busy`` the slots they hold, and
    ``queue_at[qhead:]``/``queue_s[qhead:]`` the arrival ticks and service
    times of waiting requests, oldest first (admitted ones are dropped from
    the front only now and then, so a long queue is not copied every chunk).
    """

    def __init__(
        self, scenario: Scenario, members: list[int], head: int, carry: list[int], queue_at: list[int], queue_s: list[int]
    ) -> None:
        self.slots, self.T = scenario.slots, scenario.ticks
        self.members = members
        self.head = head  # only to group policies at the start
        self.carry = carry
        self.busy = sum(carry)
        self.queue_at, self.queue_s = queue_at, queue_s
        self.qhead = 0
        self.stats = _Stats()

    def state(self) -> tuple:
        q = self.qhead
        return self.busy, self.carry, self.queue_at[q:], self.queue_s[q:]

    def flush(self, totals: list[_Stats]) -> None:
        """Add the stats gathered since the last flush to every member's totals."""
        for m in self.members:
            totals[m].add(self.stats)
        self.stats = _Stats()

    def step(self, chunk: _Chunk) -> None:
        """Simulate the chunk's ticks."""
        carry = self.carry
        if len(carry) < chunk.span:
            carry += [0] * (chunk.span - len(carry))
        n = len(chunk.counts)
        if self.qhead == len(self.queue_at):  # nobody waiting: does anyone have to, in this chunk?
            if chunk.most_in_slots(self.busy) <= self.slots:  # surely not: only the carry is needed
                after = carry[n:]
                for end, k in chunk.ends_after(max(0, n - chunk.hi_s)).items():
                    if end >= n:
                        after[end - n] += k
                self._admit_all(chunk, after)
                return
            rel = list(map(add, carry, chunk.zero_wait_ends))
            if max(accumulate(map(sub, chunk.counts, rel), initial=self.busy)) <= self.slots:
                self._admit_all(chunk, rel[n:])
                return
        self._walk(chunk, carry)

    def _admit_all(self, chunk: _Chunk, after: list[int]) -> None:
        """The chunk where every request got its slot on arrival; ``after``: the releases carried on."""
        self.carry = after
        self.busy = sum(after)
        st = self.stats
        st.waits[0] += chunk.n_arrivals
        st.admitted += chunk.n_arrivals
        st.busy_s += chunk.zero_wait_busy_s

    def _walk(self, chunk: _Chunk, rel: list[int]) -> None:
        """The chunk tick by tick: release, then admit waiting requests oldest first."""
        c0, T = chunk.c0, self.T
        counts = chunk.counts
        arrival, service = self.queue_at, self.queue_s
        head = head0 = self.qhead
        arrived = len(arrival)
        arrival += map(add, chunk.when, repeat(c0))
        service += chunk.service
        waits = self.stats.waits
        free = self.slots - self.busy
        busy_s = 0
        for i, k in enumerate(counts):
            free += rel[i]
            arrived += k
            if free and arrived > head:
                stop = arrived if arrived - head <= free else head + free
                t = c0 + i
                for j in range(head, stop):
                    s = service[j]
                    rel[i + s] += 1
                    waits[t - arrival[j]] += 1
                    busy_s += s if t + s <= T else T - t
                free -= stop - head
                head = stop
        self.busy = self.slots - free
        self.carry = rel[len(counts) :]
        self.stats.admitted += head - head0
        self.stats.busy_s += busy_s
        if head == len(arrival):  # nobody left waiting
            arrival.clear()
            service.clear()
            head = 0
        elif head > _COMPACT_AFTER and 2 * head > len(arrival):
            del arrival[:head], service[:head]
            head = 0
        self.qhead = head
        if len(arrival) - head > MAX_WAITING:
            raise ValueError(
                f"slots: interactive requests alone overload the pool in a long window: more than {MAX_WAITING} "
                f"wait at once (got slots={self.slots}); windows past {_limits.MAX_SERIES_HOURS} h are simulated only "
                f"while fewer wait"
            )


def _merge(groups: list[_Tail], totals: list[_Stats]) -> list[_Tail]:
    """Merge groups whose states are equal (their futures are then the same)."""
    kept: list[_Tail] = []
    for g in groups:
        for k in kept:
            if k.state() == g.state():
                k.flush(totals)
                g.flush(totals)
                k.members += g.members
                break
        else:
            kept.append(g)
    return kept
