"""Results of the slot-pool simulator: the table's figures and each request's wait; the day in
detail (series over the day) is :mod:`lanes.pool.day`, loaded on first use.
"""

from __future__ import annotations

from bisect import bisect_right
from dataclasses import dataclass, field
from functools import cached_property
from typing import TYPE_CHECKING, Any

from .. import _checks
from .._stats import percentile
from .arrivals import ArrivalStream
from .policies import Policy
from .scenario import Scenario

if TYPE_CHECKING:  # pragma: no cover
    from .day import Day

#: An interactive request is late when it waits longer than this, seconds.
LATE_AFTER_S = 2


def _summary(waits: list) -> dict[str, Any]:
    """``n``, ``p50``, ``p99``, ``max`` and ``late`` (the fraction over :data:`LATE_AFTER_S`) of sorted waits."""
    n = len(waits)
    late = (n - bisect_right(waits, LATE_AFTER_S)) / max(1, n)
    return {"n": n, "p50": percentile(waits, 0.5), "p99": percentile(waits, 0.99), "max": waits[-1] if n else -1,
            "late": late}


@dataclass(frozen=True)
class SlotPoolResult:
    """One policy run on one scenario: the table's figures as fields; ``day`` for the day in detail.

    ``policy`` is what ran (a :class:`Policy` or a student's scheduler).  ``p50_s``, ``p99_s``,
    ``max_s``: interactive queue wait percentiles and maximum, seconds (whole seconds on the 1 s
    clock; -1 when no request was admitted); ``late_fraction``: the fraction of admitted requests
    that waited more than :data:`LATE_AFTER_S`.  ``batch_done``: batch jobs completed within the
    window; ``preempted``: evictions; ``util``: mean fraction of slots busy; ``n_interactive``,
    ``n_arrivals``: requests admitted to a slot, and arrived; ``batch_queued``: batch jobs still
    queued (not in a slot) at the end.  ``stalled_s``: seconds the engine stalled recomputing evicted
    jobs' caches (``Scenario.eviction_stall_s`` per eviction); ``inter_stalled_s``: those seconds summed
    over the interactive requests running through them.
    """

    scenario: Scenario
    policy: Any
    p50_s: float
    p99_s: float
    max_s: float
    late_fraction: float
    batch_done: int
    preempted: int
    util: float
    n_interactive: int
    n_arrivals: int
    batch_queued: int
    _waits: list = field(repr=False)  # each arrival's wait in seconds, -1 if never admitted
    _stream: ArrivalStream = field(repr=False)
    _log: list = field(repr=False)  # per instant: (t, inter busy, batch busy, done, evicted, batch started, inter done)
    _per_s: int = field(repr=False)  # clock units per second (1: whole seconds, or event-driven)
    stalled_s: float = 0.0
    inter_stalled_s: float = 0.0

    @classmethod
    def from_run(cls, scenario: Scenario, policy: Any, stream: ArrivalStream, waits: list, log: list, per_s: int,
                 **counts: Any) -> "SlotPoolResult":
        """Summarise a run: ``waits`` per arrival in seconds (-1: never admitted), the engine's log, and
        the counts ``batch_done``, ``preempted``, ``util`` and ``batch_queued``."""
        admitted = sorted(waits)
        s = _summary(admitted[bisect_right(admitted, -1):])
        return cls(scenario, policy, s["p50"], s["p99"], s["max"], s["late"], n_interactive=s["n"],
                   n_arrivals=stream.n_arrivals, _waits=waits, _stream=stream, _log=log, _per_s=per_s, **counts)

    @property
    def stalled_share(self) -> float:
        """Share of the window the engine spent stalled on evictions (above 1: the stalls outlast the day)."""
        return self.stalled_s / self.scenario.ticks

    @cached_property
    def slowdown(self) -> float:
        """The users' slowdown: admitted requests' slot time with the stalls over their priced holds (1: none)."""
        priced = sum(h for h, w in zip(self._stream.inter_service_s, self._waits) if w >= 0)
        return 1 + self.inter_stalled_s / priced if priced else 1.0

    @property
    def spec(self) -> str:
        """The policy's name in rows: its spec (``hybrid:8``), or a scheduler's ``name``, class or function name."""
        if isinstance(self.policy, Policy):
            return self.policy.spec
        name = getattr(self.policy, "name", None)
        return name if isinstance(name, str) and name else getattr(self.policy, "__name__", type(self.policy).__name__)

    def row(self) -> dict[str, Any]:
        """The JSON row: ``policy``, ``p50``, ``p99``, ``max``, ``late``, ``batch_done``, ``preempted``, ``util``."""
        return {"policy": self.spec, "p50": self.p50_s, "p99": self.p99_s, "max": self.max_s,
                "late": self.late_fraction, "batch_done": self.batch_done, "preempted": self.preempted,
                "util": self.util}

    def line(self) -> str:
        """The row in the anchor table's text layout, the policy by its spec (on a finer clock, waits
        under 100 s to 0.01 s); a run that served no request says so, with the count left waiting."""
        if not self.n_interactive:
            waits = f"{f'none served ({self.n_arrivals:,} waiting)':>33}"
        else:
            p50, p99, top = (f"{w}" if self.scenario.tick_s == 1 else f"{w:.{2 if w < 100 else 0}f}"
                             for w in (self.p50_s, self.p99_s, self.max_s))
            waits = f"{p50:>9}s{p99:>6}s{top:>6}s{self.late_fraction:>9.1%}"
        return f"{self.spec:<14}{waits}{self.batch_done:>12,}{self.preempted:>11,}{self.util:>10.0%}"

    @cached_property
    def wait_s(self) -> tuple[float, ...]:
        """Queue wait of each admitted interactive request, seconds, in arrival order."""
        return tuple(w for w in self._waits if w >= 0)

    def window(self, t0: float, t1: float) -> dict[str, float]:
        """n, p50, p99, max wait and late fraction for requests that arrive in ``[t0, t1)`` seconds."""
        return _summary(sorted(w for w, a in zip(self._waits, self._stream.arrival_tick) if w >= 0 and t0 <= a < t1))

    @cached_property
    def day(self) -> "Day":
        """The run's day in detail: per-second series, Little's law's L, each request's slot time."""
        from .day import Day  # loaded on first use: the table needs only the figures

        return Day(self.scenario, self._stream, self._waits, self._log, self._per_s)
