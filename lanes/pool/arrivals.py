"""Arrival streams: the diurnal rate curve and the seeded random draws.

The draws do not depend on the scheduling policy, so one :class:`ArrivalStream`
is drawn per scenario and shared by every policy compared on it.  The draw
order matches the anchor program exactly: first the backlog's service times,
then, for each one-second tick, one uniform number that fixes how many
interactive requests arrive (inverse-CDF Poisson) followed by one service time
per arrival.
"""

from __future__ import annotations

import math
import random
from dataclasses import dataclass
from functools import lru_cache
from itertools import accumulate, chain, repeat
from operator import add
from collections import Counter
from typing import Callable, Iterable

from .scenario import Scenario


def rate_curve(scenario: Scenario) -> list[float]:
    """The scenario's interactive arrival rate at every tick, in requests per second.

    A raised cosine over the simulated window: ``trough_rate`` at t = 0,
    ``peak_rate`` halfway through, back to the trough at the end.
    """
    return _rates(scenario.trough_rate, scenario.peak_rate, scenario.ticks)


def rate_per_s(scenario: Scenario, t: float) -> float:
    """The scenario's interactive arrival rate at time ``t`` seconds, in requests per second."""
    return _rates(scenario.trough_rate, scenario.peak_rate, scenario.ticks, (t,))[0]


def _rates(lo: float, hi: float, ticks: int, times: Iterable[float] | None = None) -> list[float]:
    """The raised cosine at each of ``times`` (default: every tick), requests per second."""
    span, tau, cos = hi - lo, 2 * math.pi, math.cos
    return [lo + span * (1 - cos(tau * t / ticks)) / 2 for t in (range(ticks) if times is None else times)]


#: Terms summed before a Poisson draw gives up; reached only when rounding
#: keeps the summed probability below ``u`` for good.
_MAX_POISSON_TERMS = 10_000
_exp = math.exp


def poisson_count(lam: float, u: float) -> int:
    """Number of arrivals in one tick: the Poisson(``lam``) quantile of ``u``.

    Adds the probability mass term by term, from k = 0, until the running
    total reaches ``u``.
    """
    term = cum = _exp(-lam)
    if u <= cum:
        return 0
    for k in range(1, _MAX_POISSON_TERMS):
        term *= lam / k
        cum += term
        if u <= cum:
            return k
    return _MAX_POISSON_TERMS


def _randint_for(rng: random.Random, lo: int, hi: int) -> Callable[[], int]:
    """A draw of ``rng.randint(lo, hi)``, consuming the generator exactly as it does.

    CPython draws ``randint(a, b)`` as ``a + getrandbits(k)`` with rejection,
    where ``k = (b - a + 1).bit_length()``.  Fixing the range once and calling
    ``getrandbits`` directly skips the library's argument checks on every
    draw.  :func:`_fast_path_agrees` confirms at import that this interpreter
    draws the same numbers; if not, the library's own ``randint`` is used.
    """
    if not _FAST_OK:
        return lambda: rng.randint(lo, hi)
    getrandbits = rng.getrandbits
    n = hi - lo + 1
    k = n.bit_length()

    def draw() -> int:
        r = getrandbits(k)
        while r >= n:
            r = getrandbits(k)
        return lo + r

    return draw


def _fast_path_agrees() -> bool:
    global _FAST_OK
    _FAST_OK = True
    a, b = random.Random(20261129), random.Random(20261129)
    ranges = [(4, 12), (60, 180), (1, 1), (0, 1000), (7, 8)]
    draws = [_randint_for(a, lo, hi) for lo, hi in ranges]
    ok = all(draw() == b.randint(lo, hi) for _ in range(50) for draw, (lo, hi) in zip(draws, ranges))
    ok = ok and a.random() == b.random()
    _FAST_OK = ok
    return ok


_FAST_OK = False
_fast_path_agrees()


@dataclass(frozen=True)
class ArrivalStream:
    """Everything random in one run of a scenario.

    Attributes
    ----------
    batch_service_s : tuple of int
        Slot time of each backlog job, in queue order, seconds.
    arrival_tick : tuple of int
        Tick (second) of each interactive arrival, non-decreasing.
    inter_service_s : tuple of int
        Slot time of each interactive arrival, seconds.
    arrived_by : tuple of int
        ``arrived_by[t]`` is the number of arrivals with tick <= t.
    zero_wait_end : tuple of int
        ``arrival_tick + inter_service_s`` per arrival: the tick its slot frees
        if it is admitted the moment it arrives.
    zero_wait_ends_at : tuple of int
        ``zero_wait_ends_at[t]`` counts arrivals whose ``zero_wait_end`` is ``t``
        (length ``ticks + max interactive service + 1``).  The simulator starts
        from this histogram and corrects it only for requests that wait.
    """

    batch_service_s: tuple[int, ...]
    arrival_tick: tuple[int, ...]
    inter_service_s: tuple[int, ...]
    arrived_by: tuple[int, ...]
    zero_wait_end: tuple[int, ...]
    zero_wait_ends_at: tuple[int, ...]

    @property
    def n_arrivals(self) -> int:
        """Interactive requests that arrive in the window."""
        return len(self.arrival_tick)


def draw_stream(scenario: Scenario) -> ArrivalStream:
    """Draw the backlog and the interactive arrivals for ``scenario``.

    The draws depend only on the seed, the window, the backlog, the service
    ranges and the rates, never on the pool size, the preemption cost or the
    policy; the last few streams are kept, so an explorer that moves one of
    those knobs re-uses its draws.
    """
    return _draw(
        scenario.seed,
        scenario.ticks,
        scenario.backlog,
        scenario.batch_service_s,
        scenario.inter_service_s,
        scenario.trough_rate,
        scenario.peak_rate,
    )


@lru_cache(maxsize=8)
def _draw(
    seed: int,
    ticks: int,
    n_backlog: int,
    batch_service_s: tuple[int, int],
    inter_service_s: tuple[int, int],
    trough_rate: float,
    peak_rate: float,
) -> ArrivalStream:
    rng = random.Random(seed)
    uniform = rng.random
    batch_draw = _randint_for(rng, *batch_service_s)
    inter_draw = _randint_for(rng, *inter_service_s)

    backlog = tuple([batch_draw() for _ in range(n_backlog)])
    counts: list[int] = []  # arrivals per tick
    service: list[int] = []
    for lam in _rates(trough_rate, peak_rate, ticks):
        k = poisson_count(lam, uniform())
        counts.append(k)
        for _ in range(k):
            service.append(inter_draw())
    when = tuple(chain.from_iterable(map(repeat, range(ticks), counts)))
    zero_wait_end = tuple(map(add, when, service))
    ends_at = [0] * (ticks + inter_service_s[1] + 1)
    for end, n in Counter(zero_wait_end).items():
        ends_at[end] = n
    return ArrivalStream(
        backlog, when, tuple(service), tuple(accumulate(counts)), zero_wait_end, tuple(ends_at)
    )


draw_stream.cache_clear = _draw.cache_clear  # type: ignore[attr-defined]
