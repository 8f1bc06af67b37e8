"""Result objects of the slot-pool simulator, and the anchor table's layout.

Results are read-only.  Scalar metrics are fields; per-tick and per-request
series are computed on first use from the run's compact per-tick buckets.
A long window's result (past a week: :attr:`Scenario.is_long`) keeps no
buckets; its series raise one ``ValueError`` naming the limit.
``to_frame`` methods import pandas inside, so ``import lanes`` stays light.
"""

from __future__ import annotations

from bisect import bisect_left, bisect_right
from dataclasses import dataclass, field
from functools import cached_property
from itertools import accumulate, chain, repeat
from operator import sub
from typing import TYPE_CHECKING, Any

from .. import _checks
from .arrivals import ArrivalStream
from .policies import Policy
from .scenario import Scenario

if TYPE_CHECKING:  # pragma: no cover
    import pandas

#: An interactive request is late when it waits longer than this, seconds.
LATE_AFTER_S = 2


def percentile(sorted_waits: list[int] | tuple[int, ...], q: float) -> int:
    """The anchor program's percentile: element ``int(q * n)`` of the sorted list, -1 if empty."""
    if not isinstance(sorted_waits, (list, tuple)):
        raise ValueError(f"sorted_waits must be a sorted list of waits (got {_checks.show(sorted_waits)})")
    q = _checks.number("q", q, lo=0, hi=1)
    n = len(sorted_waits)
    if not n:
        return -1
    return sorted_waits[min(n - 1, int(q * n))]


@dataclass(frozen=True)
class SlotPoolResult:
    """One policy run on one scenario.

    Attributes
    ----------
    p50_s, p99_s, max_s : int
        Interactive queue wait percentiles and maximum, seconds (-1 when no
        request was admitted).
    late_fraction : float
        Fraction of admitted interactive requests that waited more than
        :data:`LATE_AFTER_S` seconds.
    batch_done : int
        Batch jobs completed within the simulated window.
    preempted : int
        Batch evictions.
    util : float
        Mean fraction of slots busy.
    n_interactive : int
        Interactive requests admitted to a slot.
    n_arrivals : int
        Interactive requests that arrived.
    batch_queued : int
        Batch jobs still queued at the end.
    """

    scenario: Scenario
    policy: Policy
    p50_s: int
    p99_s: int
    max_s: int
    late_fraction: float
    batch_done: int
    preempted: int
    util: float
    n_interactive: int
    n_arrivals: int
    batch_queued: int
    wait_counts: list[int] = field(repr=False)  # admitted requests by wait: wait_counts[w], w in seconds
    _stream: ArrivalStream = field(repr=False)
    _buckets: dict[str, list[int]] = field(repr=False)  # per-tick starts, ends and evictions

    @classmethod
    def from_run(
        cls,
        *,
        scenario: Scenario,
        policy: Policy,
        stream: ArrivalStream,
        inter_start: list[int],
        wait_count: list[int],
        slot_end: list[int],
        batch_start: list[int],
        batch_end: list[int],
        evicted: list[int],
        preempted: int,
        batch_busy_slot_s: int,
        batch_queued: int,
    ) -> "SlotPoolResult":
        """Summarise one run from its per-tick buckets (``inter_start[t]`` requests admitted at tick t, ...).

        ``wait_count[w]`` counts admitted interactive requests that waited
        ``w`` seconds; ``slot_end[t]`` counts slots freed at tick t, batch
        (``batch_end[t]``) and interactive together (it may run past the
        window; only ticks before it are read).
        """
        T = scenario.ticks
        n = sum(inter_start)
        p50, p99, worst, late = _wait_summary(wait_count, n)
        inter_busy = _interactive_busy_s(scenario, stream, inter_start, n)
        return cls(
            scenario=scenario,
            policy=policy,
            p50_s=p50,
            p99_s=p99,
            max_s=worst,
            late_fraction=late / max(1, n),
            batch_done=sum(batch_end[:T]),
            preempted=preempted,
            util=(inter_busy + batch_busy_slot_s) / (T * scenario.slots),
            n_interactive=n,
            n_arrivals=stream.n_arrivals,
            batch_queued=batch_queued,
            wait_counts=wait_count,
            _stream=stream,
            _buckets={
                "inter_start": inter_start,
                "slot_end": slot_end,
                "batch_start": batch_start,
                "batch_end": batch_end,
                "evicted": evicted,
            },
        )

    # --- the anchor program's row -------------------------------------------------
    def row(self) -> dict[str, Any]:
        """The JSON row: ``policy``, ``p50``, ``p99``, ``max``, ``late``, ``batch_done``, ``preempted``, ``util``."""
        return {
            "policy": self.policy.spec,
            "p50": self.p50_s,
            "p99": self.p99_s,
            "max": self.max_s,
            "late": self.late_fraction,
            "batch_done": self.batch_done,
            "preempted": self.preempted,
            "util": self.util,
        }

    def line(self) -> str:
        """The row in the anchor table's text layout."""
        return (
            f"{self.policy.label:<14}{self.p50_s:>9}s{self.p99_s:>6}s{self.max_s:>6}s{self.late_fraction:>9.1%}"
            f"{self.batch_done:>12,}{self.preempted:>11,}{self.util:>10.0%}"
        )

    # --- series ---------------------------------------------------------------------
    @cached_property
    def _inter_end(self) -> list[int]:
        """Interactive requests finishing at each tick: all slots freed, less the batch ones."""
        T = self.scenario.ticks
        b = self._buckets
        return list(map(sub, b["slot_end"][:T], b["batch_end"][:T]))

    @cached_property
    def busy_interactive(self) -> tuple[int, ...]:
        """Slots held by interactive requests at each tick, after admission."""
        T = self.scenario.ticks
        return tuple(map(sub, accumulate(self._buckets["inter_start"][:T]), accumulate(self._inter_end)))

    @cached_property
    def busy_batch(self) -> tuple[int, ...]:
        """Slots held by batch jobs at each tick, after admission."""
        T = self.scenario.ticks
        b = self._buckets
        left = accumulate(map(sum, zip(b["batch_end"][:T], b["evicted"][:T])))
        return tuple(map(sub, accumulate(b["batch_start"][:T]), left))

    @cached_property
    def batch_done_per_tick(self) -> tuple[int, ...]:
        """Batch completions at each tick."""
        return tuple(self._buckets["batch_end"][: self.scenario.ticks])

    @cached_property
    def batch_started_per_tick(self) -> tuple[int, ...]:
        """Batch jobs started (or restarted after eviction) at each tick."""
        return tuple(self._buckets["batch_start"])

    @cached_property
    def interactive_started_per_tick(self) -> tuple[int, ...]:
        """Interactive requests admitted to a slot at each tick."""
        return tuple(self._buckets["inter_start"])

    @property
    def interactive_done(self) -> int:
        """Interactive requests that finished within the simulated window."""
        return sum(self._inter_end)

    @cached_property
    def preempted_per_tick(self) -> tuple[int, ...]:
        """Batch evictions at each tick."""
        return tuple(self._buckets["evicted"][: self.scenario.ticks])

    @cached_property
    def batch_done_cumulative(self) -> tuple[int, ...]:
        """Batch jobs completed by the end of each tick."""
        return tuple(accumulate(self.batch_done_per_tick))

    @cached_property
    def wait_s(self) -> tuple[int, ...]:
        """Queue wait of each admitted interactive request, seconds, in arrival order.

        Requests are admitted in arrival order, so request j was admitted at
        the tick whose admission count covers j.
        """
        T = self.scenario.ticks
        admitted_at = chain.from_iterable(map(repeat, range(T), self._buckets["inter_start"]))
        return tuple(map(sub, admitted_at, self.wait_arrival_tick))

    @property
    def wait_arrival_tick(self) -> tuple[int, ...]:
        """Arrival tick of each admitted interactive request, matching :attr:`wait_s`."""
        return self._stream.arrival_tick[: self.n_interactive]

    @property
    def wait_service_s(self) -> tuple[int, ...]:
        """Slot time of each admitted interactive request, matching :attr:`wait_s`."""
        return self._stream.inter_service_s[: self.n_interactive]

    @property
    def mean_busy_interactive(self) -> float:
        """Time-averaged interactive slots busy (L in Little's law)."""
        return sum(self.busy_interactive) / self.scenario.ticks

    def waits_between(self, t0: int, t1: int) -> list[int]:
        """Waits of admitted requests that arrived in ``[t0, t1)`` seconds, sorted."""
        ticks = self.wait_arrival_tick
        return sorted(w for w, a in zip(self.wait_s, ticks) if t0 <= a < t1)

    def window(self, t0: int, t1: int) -> dict[str, float]:
        """p50, p99, max wait and late fraction for arrivals in ``[t0, t1)`` seconds."""
        w = self.waits_between(t0, t1)
        n = len(w)
        return {
            "n": n,
            "p50": percentile(w, 0.5),
            "p99": percentile(w, 0.99),
            "max": w[-1] if n else -1,
            "late": (n - _count_at_most(w, LATE_AFTER_S)) / max(1, n),
        }

    def batch_done_by(self, t: int) -> int:
        """Batch jobs completed before tick ``t`` (a deadline in seconds)."""
        if t <= 0:
            return 0
        return self.batch_done_cumulative[min(t, self.scenario.ticks) - 1]

    def to_frame(self) -> "pandas.DataFrame":
        """Per-tick series as a DataFrame indexed by time in seconds."""
        import pandas as pd

        return pd.DataFrame(
            {
                "busy_interactive": self.busy_interactive,
                "busy_batch": self.busy_batch,
                "batch_done": self.batch_done_cumulative,
                "preempted": self.preempted_per_tick,
            },
            index=pd.RangeIndex(self.scenario.ticks, name="t_s"),
        )

    def waits_frame(self) -> "pandas.DataFrame":
        """One row per admitted interactive request: arrival time, wait and slot time, seconds."""
        import pandas as pd

        return pd.DataFrame(
            {"arrival_s": self.wait_arrival_tick, "wait_s": self.wait_s, "service_s": self.wait_service_s}
        )


def _interactive_busy_s(scenario: Scenario, stream: ArrivalStream, inter_start: list[int], n: int) -> int:
    """Slot-seconds interactive requests held inside the window, the first ``n`` arrivals admitted.

    ``inter_start[t]`` counts requests admitted at tick t (in arrival order).
    Each admitted request counts its service time, less any part past the
    window's end.
    """
    T = scenario.ticks
    inter_busy = stream.total_service_s - sum(stream.inter_service_s[n:])  # usually few are left
    # Refund slot time beyond the horizon: only requests admitted in the
    # last max-service ticks can overrun it.
    j = n
    for t in range(T - 1, max(-1, T - 1 - scenario.inter_service_s[1]), -1):
        k = inter_start[t]
        for i in range(j - k, j):
            over = t + stream.inter_service_s[i] - T
            if over > 0:
                inter_busy -= over
        j -= k
    return inter_busy


class _NoSeries:
    """Stands in for the per-tick buckets and the draws of a long window's result.

    A long window (:attr:`Scenario.is_long`) is summarised as it runs; its
    result has the table's figures but keeps no per-tick series and no
    per-request waits.  Reading any of them raises one ``ValueError`` that
    names the limit.
    """

    def __init__(self, scenario: Scenario) -> None:
        self._scenario = scenario

    def _refuse(self) -> ValueError:
        from . import scenario as limits

        sc = self._scenario
        return ValueError(
            f"hours: per-tick series and per-request waits are kept only for windows of at most "
            f"{limits.MAX_SERIES_HOURS} h that expect at most {limits.MAX_SERIES_ARRIVALS} interactive arrivals "
            f"(got hours={_checks.show(sc.hours)}, {sc.expected_arrivals:.0f} expected); "
            f"this result holds the table's figures only"
        )

    def __getitem__(self, key: object) -> Any:
        raise self._refuse()

    def __getattr__(self, name: str) -> Any:
        if name.startswith("__"):
            raise AttributeError(name)
        raise self._refuse()

    def __repr__(self) -> str:
        return "_NoSeries()"


def _wait_summary(wait_counts: list[int], n: int) -> tuple[int, int, int, int]:
    """p50, p99 and max wait (seconds) and the number of late requests, from counts by wait.

    The percentiles are the anchor program's (see :func:`percentile`): element
    ``int(q * n)`` of the sorted waits.
    """
    if not n:
        return -1, -1, -1, 0
    # admitted[w] = requests that waited w seconds or less; the i-th smallest
    # wait (from 0) is the first w with admitted[w] > i.
    admitted = list(accumulate(wait_counts))
    p50, p99 = (bisect_right(admitted, min(n - 1, int(q * n))) for q in (0.5, 0.99))
    worst = bisect_left(admitted, n)
    late = n - sum(wait_counts[: LATE_AFTER_S + 1])
    return p50, p99, worst, late


def _count_at_most(sorted_values: list[int] | tuple[int, ...], x: int) -> int:
    return bisect_right(sorted_values, x)


_HEADER = f"{'policy':<14}{'inter p50':>10}{'p99':>7}{'max':>7}{'wait>2s':>9}{'batch done':>12}{'preempted':>11}{'slot use':>10}"


@dataclass(frozen=True)
class PolicyTable:
    """Several policies run on one scenario (one shared arrival stream)."""

    scenario: Scenario
    results: tuple[SlotPoolResult, ...]

    def __iter__(self):
        return iter(self.results)

    def __len__(self) -> int:
        return len(self.results)

    def __getitem__(self, key: int | str) -> SlotPoolResult:
        """A result by position or by policy spec (``table["reserve:8"]``)."""
        if isinstance(key, str):
            for r in self.results:
                if r.policy.spec == key:
                    return r
            raise KeyError(key)
        return self.results[key]

    @staticmethod
    def header(scenario: Scenario) -> str:
        """The anchor layout's first three lines: the scenario, a blank line, the column names."""
        return "\n".join([scenario.describe(), "", _HEADER])

    def text(self) -> str:
        """The table in the anchor program's layout, header line included."""
        return "\n".join([self.header(self.scenario), *(r.line() for r in self.results)])

    def rows(self) -> list[dict[str, Any]]:
        """One JSON row per policy (see :meth:`SlotPoolResult.row`)."""
        return [r.row() for r in self.results]

    def to_json(self) -> str:
        import json

        return json.dumps(self.rows())

    def to_frame(self) -> "pandas.DataFrame":
        """The table as a DataFrame, one row per policy, indexed by spec."""
        import pandas as pd

        return pd.DataFrame(self.rows()).set_index("policy")
