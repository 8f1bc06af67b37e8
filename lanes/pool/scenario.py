"""The slot-pool scenario: the workload, the pool and the random seed.

A :class:`Scenario` holds every constant of the course's anchor program
(``lanes.py`` in the first seed).  Its defaults reproduce that program's table.
The scheduling rule itself lives in :mod:`lanes.pool.policies`.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from .. import _checks

#: Largest arrival rate accepted, in requests per second.  The Poisson draw
#: starts from exp(-rate), which underflows to zero near 745/s.
MAX_RATE_PER_S = 500.0
#: Longest simulated window accepted, in hours (a year of one-second ticks).
#: Windows up to :data:`MAX_SERIES_HOURS` keep every arrival and per-tick
#: counts; longer ones are summarised as they run (:mod:`lanes.pool.longrun`).
MAX_HOURS = 8760
#: Most interactive arrivals a scenario may expect (mean rate x seconds): a
#: year at the anchor's rates (2-5 req/s) expects about 110 million.  A long
#: window draws them one stretch at a time, so this bounds time, not memory.
MAX_EXPECTED_ARRIVALS = 120_000_000
#: Longest window, in hours, whose per-tick series and per-request waits a
#: result keeps (a week).  The seven default policies at the default rates
#: take about 6 s and 0.4 GiB here at this size.
MAX_SERIES_HOURS = 168
#: Most expected interactive arrivals whose draws are kept whole (each one is
#: stored); a window past this, or past :data:`MAX_SERIES_HOURS`, is a long one.
MAX_SERIES_ARRIVALS = 3_000_000
#: Largest batch backlog accepted, in jobs (about 0.2 GiB and 2 s to draw).
MAX_BACKLOG = 10_000_000
#: Longest slot time of one job or request, in seconds (a week: the longest
#: window whose every arrival is kept, and the longest trace replayed).
MAX_SERVICE_S = MAX_SERIES_HOURS * 3600


@dataclass(frozen=True)
class Scenario:
    """A pool of decode slots shared by interactive arrivals and a batch backlog.

    Parameters
    ----------
    slots : int
        Concurrent sequence slots in the pool (>= 1).
    hours : float
        Simulated time in hours, at most :data:`MAX_HOURS`; one tick is one
        second, so ``hours * 3600`` must be a whole number (>= 1) of ticks.
        Past :data:`MAX_SERIES_HOURS` the window is long (:attr:`is_long`):
        its results hold the table's figures but no per-tick series.
    backlog : int
        Batch jobs queued at t = 0 (0 to :data:`MAX_BACKLOG`).
    batch_service_s : (int, int)
        Inclusive range of a batch job's slot time in seconds, drawn uniformly
        (at most :data:`MAX_SERVICE_S`).
    inter_service_s : (int, int)
        Inclusive range of an interactive request's slot time in seconds
        (at most :data:`MAX_SERVICE_S`).
    trough_rate, peak_rate : float
        Interactive arrivals per second at the start (trough) and the middle
        (peak) of the simulated window; the rate follows a raised cosine.
        The expected arrivals, mean rate times seconds, may not pass
        :data:`MAX_EXPECTED_ARRIVALS`.
    preempt_cost_s : int
        Seconds of work a batch job redoes after each eviction (>= 0).
    seed : int
        Seed of the ``random.Random`` that draws the backlog and arrivals.
    """

    slots: int = 64
    hours: float = 6
    backlog: int = 10_000
    batch_service_s: tuple[int, int] = (60, 180)
    inter_service_s: tuple[int, int] = (4, 12)
    trough_rate: float = 2.0
    peak_rate: float = 5.0
    preempt_cost_s: int = 15
    seed: int = 3

    def __post_init__(self) -> None:
        set_ = object.__setattr__
        set_(self, "slots", _checks.integer("slots", self.slots, lo=1))
        hours = _checks.number("hours", self.hours, lo=0, lo_open=True, hi=MAX_HOURS)
        ticks = hours * 3600
        if abs(ticks - round(ticks)) > 1e-9 or round(ticks) < 1:
            raise ValueError(
                f"hours must be a whole number (>= 1) of seconds when multiplied by 3600 (got {_checks.show(self.hours)})"
            )
        set_(self, "hours", int(hours) if hours.is_integer() else hours)
        set_(self, "backlog", _checks.integer("backlog", self.backlog, lo=0, hi=MAX_BACKLOG))
        for name in ("batch_service_s", "inter_service_s"):
            lo, hi = _checks.int_range(name, getattr(self, name), lo=1)
            _checks.limit(f"{name} hi", hi, MAX_SERVICE_S, why="a week, in seconds")
            set_(self, name, (lo, hi))
        trough = _checks.number("trough_rate", self.trough_rate, lo=0, hi=MAX_RATE_PER_S)
        peak = _checks.number("peak_rate", self.peak_rate, lo=0, hi=MAX_RATE_PER_S)
        if peak < trough:
            raise ValueError(f"peak_rate must be >= trough_rate (got {_checks.bound(peak)} < {_checks.bound(trough)})")
        expected = (trough + peak) / 2 * round(ticks)
        if expected > MAX_EXPECTED_ARRIVALS:
            raise ValueError(
                f"hours x mean rate must expect at most {MAX_EXPECTED_ARRIVALS} interactive arrivals "
                f"(got {expected:.0f}: hours={_checks.show(self.hours)}, trough_rate={trough!r}, peak_rate={peak!r})"
            )
        set_(self, "trough_rate", trough)
        set_(self, "peak_rate", peak)
        set_(self, "preempt_cost_s", _checks.integer("preempt_cost_s", self.preempt_cost_s, lo=0))
        set_(self, "seed", _checks.integer("seed", self.seed, big=True))

    @property
    def ticks(self) -> int:
        """Number of one-second ticks simulated."""
        return int(round(self.hours * 3600))

    @property
    def expected_arrivals(self) -> float:
        """Interactive arrivals expected over the window: mean rate x seconds."""
        return (self.trough_rate + self.peak_rate) / 2 * self.ticks

    @property
    def is_long(self) -> bool:
        """True past :data:`MAX_SERIES_HOURS` or :data:`MAX_SERIES_ARRIVALS`.

        A long window is simulated without keeping its arrivals: results give
        the table's figures, but no per-tick series or per-request waits.
        """
        return self.ticks > MAX_SERIES_HOURS * 3600 or self.expected_arrivals > MAX_SERIES_ARRIVALS

    def with_(self, **changes: object) -> "Scenario":
        """Return a copy with some fields changed (validated again)."""
        return replace(self, **changes)

    def describe(self) -> str:
        """One line in the anchor program's header layout."""
        bl, bh = self.batch_service_s
        il, ih = self.inter_service_s
        return (
            f"{self.slots} slots, {self.hours:g} h, interactive {self.trough_rate:g}-{self.peak_rate:g} req/s"
            f" x {il}-{ih} s, batch backlog {self.backlog} x {bl}-{bh} s"
        )
