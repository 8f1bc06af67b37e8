"""A run's day in detail: series over the day, one entry per whole second, and each request's slot time.

``result.day`` (:class:`~lanes.pool.results.SlotPoolResult`) builds a :class:`Day` on first use
from the engine's log, which has one entry per scheduling instant.  The table's figures, each
request's wait and :meth:`~lanes.pool.results.SlotPoolResult.window` stay on the result.
``to_frame`` and ``waits_frame`` import pandas inside.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import cached_property
from typing import TYPE_CHECKING

from .arrivals import ArrivalStream
from .scenario import Scenario

if TYPE_CHECKING:  # pragma: no cover
    import pandas


@dataclass(frozen=True)
class Day:
    """What happened at each whole second of one run.

    ``log`` holds one entry per scheduling instant, in clock units (``per_s`` to a second):
    (t, interactive busy, batch busy, batch done, evicted, batch started, interactive done).
    ``waits`` holds each arrival's wait in seconds (-1: never admitted).
    """

    scenario: Scenario
    stream: ArrivalStream = field(repr=False)
    waits: list = field(repr=False)
    log: list = field(repr=False)
    per_s: int = 1

    def _sample(self, column: int, before_next: bool) -> tuple:
        """The log's ``column`` at each whole second s: from its last entry at or before s (or, with
        ``before_next``, before s + 1, to count what happened during the second)."""
        log, per_s, out, k = self.log, self.per_s, [], -1
        for s in range(self.scenario.ticks):
            while k + 1 < len(log) and (log[k + 1][0] < (s + 1) * per_s if before_next else log[k + 1][0] <= s * per_s):
                k += 1
            out.append(log[k][column] if k >= 0 else 0)
        return tuple(out)

    def _per_second(self, column: int) -> tuple[int, ...]:
        totals = self._sample(column, True)
        return tuple(b - a for a, b in zip((0, *totals), totals))

    @cached_property
    def busy_interactive(self) -> tuple[int, ...]:
        """Slots held by interactive requests at each whole second, after that instant's decision."""
        return self._sample(1, False)

    @cached_property
    def busy_batch(self) -> tuple[int, ...]:
        """Slots held by batch jobs at each whole second, after that instant's decision."""
        return self._sample(2, False)

    @cached_property
    def batch_done_cumulative(self) -> tuple[int, ...]:
        """Batch jobs completed by the end of each second."""
        return self._sample(3, True)

    @cached_property
    def preempted_per_tick(self) -> tuple[int, ...]:
        """Batch evictions in each second."""
        return self._per_second(4)

    @cached_property
    def batch_started_per_tick(self) -> tuple[int, ...]:
        """Batch jobs started (or restarted after eviction) in each second."""
        return self._per_second(5)

    @property
    def interactive_done(self) -> int:
        """Interactive requests that finished within the window."""
        return self.log[-1][6]

    @property
    def mean_busy_interactive(self) -> float:
        """Time-averaged interactive slots busy (L in Little's law)."""
        log, end = self.log, self.scenario.ticks * self.per_s
        return sum(e[1] * (b - e[0]) for e, b in zip(log, [e[0] for e in log[1:]] + [end])) / end

    def batch_done_by(self, t: float) -> int:
        """Batch jobs completed before second ``t`` (a deadline in seconds)."""
        return self.batch_done_cumulative[min(int(t), self.scenario.ticks) - 1] if t > 0 else 0

    @property
    def wait_arrival_tick(self) -> tuple[int, ...]:
        """Arrival second of each admitted interactive request, matching the result's ``wait_s``."""
        return tuple(a for a, w in zip(self.stream.arrival_tick, self.waits) if w >= 0)

    @property
    def wait_service_s(self) -> tuple[int, ...]:
        """Slot time of each admitted interactive request, seconds, matching the result's ``wait_s``."""
        return tuple(s for s, w in zip(self.stream.inter_service_s, self.waits) if w >= 0)

    @property
    def wait_counts(self) -> list[int]:
        """Admitted requests by wait: entry w counts those that waited w seconds (rounded down)."""
        admitted = [int(w) for w in self.waits if w >= 0]
        counts = [0] * (max(admitted) + 1 if admitted else 0)
        for w in admitted:
            counts[w] += 1
        return counts

    def to_frame(self) -> "pandas.DataFrame":
        """Per-second series as a DataFrame indexed by time in seconds."""
        import pandas as pd

        return pd.DataFrame({"busy_interactive": self.busy_interactive, "busy_batch": self.busy_batch,
                             "batch_done": self.batch_done_cumulative, "preempted": self.preempted_per_tick},
                            index=pd.RangeIndex(self.scenario.ticks, name="t_s"))

    def waits_frame(self) -> "pandas.DataFrame":
        """One row per admitted interactive request: arrival second, wait and slot time, seconds."""
        import pandas as pd

        return pd.DataFrame({"arrival_s": self.wait_arrival_tick, "wait_s": [w for w in self.waits if w >= 0],
                             "service_s": self.wait_service_s})
