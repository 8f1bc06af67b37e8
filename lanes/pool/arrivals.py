"""The random draws of a scenario: the backlog, the interactive arrivals and their holds.

The draws do not depend on the policy, the pool or the clock, so one :class:`ArrivalStream` is drawn
per scenario and shared by every policy compared on it.  One ``random.Random(seed)`` makes them in
the anchor program's order: first each backlog job's slot time, then, for each second t, one uniform
number that fixes how many interactive requests arrive (a Poisson count by inverse CDF) followed by
one slot time per arrival.

**Finer clocks.**  At a clock finer than the anchor's second (``tick_s`` below 1, or 0:
event-driven) the same requests arrive with the same holds (whole seconds), each at its own instant
in its second: given k arrivals in a second, a Poisson process places them uniformly, so k uniform
offsets are drawn, sorted and given to the second's requests in order.  They come from a second
generator, ``random.Random(f"offsets {seed}")``, so the anchor's stream is untouched, and only when
a finer clock first reads them.  A request is seen at the scheduling instant its arrival falls in
(the tick it arrives during; at 1 s, its own second, as in the anchor; event-driven, its arrival).

**Batch arriving over the day** (``Scenario.batch_trough_rate``, ``batch_peak_rate``) is drawn the
same way from a third generator, ``random.Random(f"batch {seed}")``: per second a Poisson count, then
per job a slot time and an offset in its second (sorted within the second).
"""

from __future__ import annotations

import math
from math import ceil
import random
from dataclasses import dataclass, replace
from functools import cached_property, lru_cache
from itertools import groupby

from .. import _checks
from .scenario import Scenario

#: Terms summed before a Poisson draw gives up (only when rounding keeps the sum below ``u`` for good).
MAX_POISSON_TERMS = 10_000


def rate_per_s(scenario: Scenario, t: float) -> float:
    """The interactive arrival rate at ``t`` seconds, requests per second: a raised cosine over the
    window, ``trough_rate`` at t = 0, ``peak_rate`` halfway through, back to the trough at the end."""
    _checks.instance("scenario", scenario, Scenario)
    return _rate(scenario.trough_rate, scenario.peak_rate, scenario.ticks, _checks.number("t", t))


def _rate(lo: float, hi: float, seconds: int, t: float) -> float:
    return lo + (hi - lo) * (1 - math.cos(2 * math.pi * t / seconds)) / 2


def poisson_count(lam: float, u: float) -> int:
    """The Poisson(``lam``) quantile of ``u`` (arrivals in one second): the probabilities of 0, 1, 2, ...
    arrivals are added until the sum reaches ``u``."""
    return _poisson(_checks.number("lam", lam, lo=0), _checks.number("u", u))


def _poisson(lam: float, u: float) -> int:
    k = 0
    term = total = math.exp(-lam)
    while u > total and k < MAX_POISSON_TERMS:
        k += 1
        term *= lam / k
        total += term
    return k


@dataclass(frozen=True)
class ArrivalStream:
    """Everything random in one run of a scenario, times in seconds.

    ``batch_service_s``: each backlog job's slot time, in queue order.  ``arrival_tick``: the whole
    second of each interactive arrival (non-decreasing); ``inter_service_s``: its slot time (hold).
    ``arrival_offset_s``: where each arrival falls inside its second, in [0, 1), non-decreasing
    within a second (``None``: drawn from ``offset_seed``, the scenario's seed, when a clock finer
    than one second first reads :attr:`offsets_s`).  ``seconds``: the window drawn for (0: up to the
    last arrival).  ``batch_arrival_tick``, ``batch_arrival_offset_s``, ``batch_arrival_service_s``:
    the batch jobs that arrive over the day (second, offset, slot time), empty for a backlog only.
    """

    batch_service_s: tuple[int, ...]
    arrival_tick: tuple[int, ...]
    inter_service_s: tuple[int, ...]
    arrival_offset_s: tuple[float, ...] | None = None
    seconds: int = 0
    offset_seed: int | None = None
    batch_arrival_tick: tuple[int, ...] = ()
    batch_arrival_offset_s: tuple[float, ...] = ()
    batch_arrival_service_s: tuple[int, ...] = ()

    def __post_init__(self) -> None:
        n = len(self.arrival_tick)
        offsets = n if self.arrival_offset_s is None else len(self.arrival_offset_s)
        if len(self.inter_service_s) != n or offsets != n:
            raise ValueError(f"arrival_tick, inter_service_s and arrival_offset_s must have one entry per arrival "
                             f"(got {n}, {len(self.inter_service_s)} and {offsets})")
        m = len(self.batch_arrival_tick)
        if len(self.batch_arrival_offset_s) != m or len(self.batch_arrival_service_s) != m:
            raise ValueError("batch_arrival_tick, batch_arrival_offset_s and batch_arrival_service_s must have one "
                             f"entry per batch arrival (got {m}, {len(self.batch_arrival_offset_s)} and "
                             f"{len(self.batch_arrival_service_s)})")

    @cached_property
    def offsets_s(self) -> tuple[float, ...]:
        """Where each arrival falls inside its second, in [0, 1): ``arrival_offset_s``, or drawn on first
        use from ``random.Random(f"offsets {offset_seed}")``, k sorted uniforms for a second of k arrivals."""
        if self.arrival_offset_s is not None:
            return self.arrival_offset_s
        draw = random.Random(f"offsets {self.offset_seed}").random
        offsets: list[float] = []
        for _, second in groupby(self.arrival_tick):
            offsets += sorted([draw() for _ in second])
        return tuple(offsets)

    @property
    def n_arrivals(self) -> int:
        """Interactive requests that arrive in the window."""
        return len(self.arrival_tick)


def draw_stream(scenario: Scenario) -> ArrivalStream:
    """Draw the backlog and the interactive arrivals for ``scenario``.

    The draws depend only on the seed, the window, the backlog, the service ranges and the rates;
    the last few streams are kept, so an explorer that moves the pool, the cost, the policy or the clock
    re-uses them.
    """
    sc = _checks.instance("scenario", scenario, Scenario)
    stream = _draw(sc.seed, sc.ticks, sc.backlog, sc.batch_service_s, sc.inter_service_s, sc.trough_rate, sc.peak_rate)
    if sc.batch_trough_rate or sc.batch_peak_rate:
        stream = replace(stream, **_draw_batch(sc.seed, sc.ticks, sc.batch_service_s, sc.batch_trough_rate,
                                               sc.batch_peak_rate))
    return stream


@lru_cache(maxsize=8)
def _draw_batch(seed, seconds, batch_service_s, trough_rate, peak_rate) -> dict:
    """Batch arrivals over the day: per second a Poisson count, then each job's slot time and offset."""
    rng = random.Random(f"batch {seed}")
    when, offsets, services = [], [], []
    for t in range(seconds):
        k = _poisson(_rate(trough_rate, peak_rate, seconds, t), rng.random())
        services += [rng.randint(*batch_service_s) for _ in range(k)]
        offsets += sorted(rng.random() for _ in range(k))
        when += [t] * k
    return {"batch_arrival_tick": tuple(when), "batch_arrival_offset_s": tuple(offsets),
            "batch_arrival_service_s": tuple(services)}


@lru_cache(maxsize=8)
def _draw(seed, seconds, backlog, batch_service_s, inter_service_s, trough_rate, peak_rate) -> ArrivalStream:
    rng = random.Random(seed)
    jobs = tuple(rng.randint(*batch_service_s) for _ in range(backlog))
    lo, hi = inter_service_s
    n = hi - lo + 1
    when, holds = [], []
    for t in range(seconds):
        k = _poisson(_rate(trough_rate, peak_rate, seconds, t), rng.random())
        when += [t] * k
        for _ in range(k):  # randint(lo, hi), by its own rule but without its three calls per number:
            r = rng.getrandbits(n.bit_length())  # the bits n needs, drawn again while r is too large
            while r >= n:
                r = rng.getrandbits(n.bit_length())
            holds.append(lo + r)
    return ArrivalStream(jobs, tuple(when), tuple(holds), None, seconds, offset_seed=seed)


def _clear() -> None:
    _draw.cache_clear()
    _draw_batch.cache_clear()


draw_stream.cache_clear = _clear  # type: ignore[attr-defined]


@dataclass(frozen=True)
class Clock:
    """A stream's times in clock units: ``per_s`` to a second (1 when event-driven, in seconds)."""

    stream: ArrivalStream
    per_s: int
    end_of_day: int
    seen: list  # the instant each request is first seen
    hold: list  # each request's slot time
    backlog_left: list  # each backlog job's slot time
    batch_seen: list  # the instant each batch arrival joins the queue
    batch_left: list  # its slot time
    cost: int  # preempt_cost_s
    stall: float  # eviction_stall_s


def on_the_clock(sc: Scenario, stream: ArrivalStream) -> Clock:
    """Put a stream on the scenario's clock.  On a tick clock a request is seen at the start of the
    tick its arrival falls in (its time floored to the clock: 3.7 s on the 1 s clock is tick 3); when
    event-driven, at its arrival.  A duration takes whole ticks, rounded up (at least one)."""
    _checks.instance("scenario", sc, Scenario)
    _checks.instance("stream", stream, ArrivalStream)
    per_s = sc.ticks_per_s or 1

    def ticks(seconds):  # whole seconds stay exact; a fraction rounds up to the next tick
        if not sc.tick_s:
            return list(seconds)
        return [s * per_s if type(s) is int else max(1, ceil(s * per_s - 1e-9)) for s in seconds]

    def instants(whole, offsets):
        if sc.tick_s == 1:
            return list(whole)
        return [t * per_s + (int(u * per_s) if sc.tick_s else u) for t, u in zip(whole, offsets)]

    return Clock(stream, per_s, sc.ticks * per_s, instants(stream.arrival_tick, stream.offsets_s),
                 ticks(stream.inter_service_s), ticks(stream.batch_service_s),
                 instants(stream.batch_arrival_tick, stream.batch_arrival_offset_s), ticks(stream.batch_arrival_service_s),
                 sc.preempt_cost_s * per_s, ticks([sc.eviction_stall_s])[0] if sc.eviction_stall_s else 0)
