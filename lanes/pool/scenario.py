"""The slot-pool scenario: the workload, the pool, the scheduling clock and the random seed.

A :class:`Scenario` holds every constant of the course's anchor program.  Its defaults schedule as a
serving engine does, at every arrival and completion (``tick_s = 0``); :func:`anchor` is the same
scenario on the anchor program's one-second clock, whose table it reproduces digit for digit.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from .. import _checks

#: Largest arrival rate accepted, requests per second (the Poisson draw's exp(-rate) underflows near 745/s).
MAX_RATE_PER_S = 500.0
#: Longest simulated window accepted, in hours (a week).
MAX_HOURS = 168
#: Longest slot time of one job or request, in seconds (a week).
MAX_SERVICE_S = MAX_HOURS * 3600
#: Most interactive arrivals a scenario may expect (mean rate x seconds), each kept in memory (~100 bytes).
MAX_EXPECTED_ARRIVALS = 20_000_000
#: Longest eviction stall accepted, seconds (an hour: far beyond any recompute).
MAX_STALL_S = 3600
#: Largest batch backlog accepted, in jobs (each one is kept in memory).
MAX_BACKLOG = 10_000_000


@dataclass(frozen=True)
class Scenario:
    """A pool of decode slots shared by interactive arrivals and a batch backlog.

    ``slots``: concurrent sequence slots (>= 1).  ``hours``: simulated time (a whole number of
    seconds, at most :data:`MAX_HOURS`).  ``backlog``: batch jobs queued at t = 0.
    ``batch_service_s``, ``inter_service_s``: inclusive ranges of a batch job's and an interactive
    request's slot time, seconds, drawn uniformly.  ``trough_rate``, ``peak_rate``: interactive
    arrivals per second at the start and the middle of the window (a raised cosine between them).
    ``preempt_cost_s``: seconds of work a batch job redoes after each eviction.  ``seed``: of the
    ``random.Random`` that draws the backlog and the arrivals.  ``tick_s``: the scheduling clock,
    seconds between two decisions: ``0`` (the default) schedules at every arrival and completion
    (event-driven), as a serving engine that schedules every step does; ``1`` is the anchor's clock
    (:func:`anchor`); a clock in between divides one second (0.5, 0.1, 0.02, ...).  The draws are the
    same at every clock (:mod:`lanes.pool.arrivals`).  ``eviction_stall_s``: seconds every running
    sequence (interactive and batch) stalls for each eviction, while the engine recomputes the
    victim's cache (0: no stall; set ``preempt_cost_s=0`` when the stall is the cost model, so the
    victim is not charged twice); on a tick clock it is rounded up to whole ticks.
    ``batch_trough_rate``, ``batch_peak_rate``: batch jobs arriving over the day, jobs per second at
    the start and the middle of the window (a raised cosine between them, as for interactive traffic;
    the peak may be below the trough, for batch that arrives at night), each joining the batch
    queue's tail with a slot time drawn from ``batch_service_s``; 0 and 0 (the default): the backlog only.
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
    tick_s: float = 0
    eviction_stall_s: float = 0
    batch_trough_rate: float = 0
    batch_peak_rate: float = 0

    def __post_init__(self) -> None:
        set_ = object.__setattr__
        set_(self, "slots", _checks.integer("slots", self.slots, lo=1))
        hours = _checks.number("hours", self.hours, lo=0, lo_open=True)
        if hours > MAX_HOURS:
            raise ValueError(f"hours must be at most {MAX_HOURS} (a week) (got {_checks.show(self.hours)})")
        seconds = hours * 3600
        if abs(seconds - round(seconds)) > 1e-9 or round(seconds) < 1:
            raise ValueError(f"hours must be a whole number (>= 1) of seconds when multiplied by 3600 "
                             f"(got {_checks.show(self.hours)})")
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
        expected = (trough + peak) / 2 * round(seconds)
        if expected > MAX_EXPECTED_ARRIVALS:
            raise ValueError(f"hours x mean rate must expect at most {MAX_EXPECTED_ARRIVALS} interactive arrivals "
                             f"(got {expected:.0f}: hours={_checks.show(self.hours)}, trough_rate={trough!r}, peak_rate={peak!r})")
        set_(self, "trough_rate", trough), set_(self, "peak_rate", peak)
        b_trough = _checks.number("batch_trough_rate", self.batch_trough_rate, lo=0, hi=MAX_RATE_PER_S)
        b_peak = _checks.number("batch_peak_rate", self.batch_peak_rate, lo=0, hi=MAX_RATE_PER_S)
        if (b_trough + b_peak) / 2 * round(seconds) > MAX_BACKLOG:
            raise ValueError(f"hours x mean batch rate must expect at most {MAX_BACKLOG} batch arrivals "
                             f"(got batch_trough_rate={b_trough!r}, batch_peak_rate={b_peak!r})")
        set_(self, "batch_trough_rate", b_trough), set_(self, "batch_peak_rate", b_peak)
        set_(self, "preempt_cost_s", _checks.integer("preempt_cost_s", self.preempt_cost_s, lo=0))
        set_(self, "seed", _checks.integer("seed", self.seed, big=True))
        tick = _checks.number("tick_s", self.tick_s, lo=0, hi=1)
        if tick and abs(1 / tick - round(1 / tick)) > 1e-6:
            raise ValueError(f"tick_s must be 0 (event-driven) or divide one second: 1, 0.5, 0.1, 0.02, ... "
                             f"(got {_checks.show(self.tick_s)})")
        set_(self, "tick_s", int(tick) if tick in (0, 1) else 1 / round(1 / tick))
        stall = _checks.number("eviction_stall_s", self.eviction_stall_s, lo=0, hi=MAX_STALL_S)
        set_(self, "eviction_stall_s", int(stall) if float(stall).is_integer() else stall)

    @property
    def ticks(self) -> int:
        """Whole seconds simulated (the anchor's one-second ticks)."""
        return int(round(self.hours * 3600))

    @property
    def ticks_per_s(self) -> int:
        """Scheduling decisions per second on the clock (0 when event-driven)."""
        return round(1 / self.tick_s) if self.tick_s else 0

    def with_(self, **changes: object) -> "Scenario":
        """Return a copy with some fields changed (validated again)."""
        return replace(self, **changes)

    def describe(self) -> str:
        """One line in the anchor program's header layout (the clock added when it is not the anchor's 1 s)."""
        bl, bh = self.batch_service_s
        il, ih = self.inter_service_s
        clock = "" if self.tick_s == 1 else (", event-driven clock" if not self.tick_s else f", {self.tick_s:g} s clock")
        if self.eviction_stall_s:
            clock += f", {self.eviction_stall_s:g} s stall per eviction"
        if self.batch_trough_rate or self.batch_peak_rate:
            clock += f", batch arriving {self.batch_trough_rate:g}-{self.batch_peak_rate:g} jobs/s"
        return (
            f"{self.slots} slots, {self.hours:g} h, interactive {self.trough_rate:g}-{self.peak_rate:g} req/s"
            f" x {il}-{ih} s, batch backlog {self.backlog} x {bl}-{bh} s{clock}"
        )


def anchor(**changes: object) -> Scenario:
    """The anchor program's scenario: the defaults on its one-second clock (``tick_s=1``), whose
    table :func:`lanes.run_table` reproduces digit for digit; ``changes`` as :meth:`Scenario.with_`."""
    _checks.keywords("anchor", changes, Scenario.__dataclass_fields__)
    return Scenario(**{"tick_s": 1, **changes})
