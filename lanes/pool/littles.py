"""Back-of-envelope calculators for the slot pool: Little's law and its friends.

Each function is a closed form (or a short exact sum) that a chapter checks
against the simulator.  Standard library only.

>>> busy_slots(5, 8)
40.0
>>> round(poisson_tail(40, 50), 3)
0.07
>>> batch_trickle_interval_s(120, 64)
1.875
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from itertools import accumulate, repeat

from .. import _checks
from .arrivals import ArrivalStream, rate_per_s
from .scenario import Scenario

__all__ = [
    "SlotBudget",
    "batch_trickle_interval_s",
    "busy_slots",
    "diurnal_max_slope",
    "headroom_slots",
    "poisson_quantile",
    "poisson_tail",
    "rate_curve",
    "slot_budget",
    "zero_wait_busy",
]


def _positive(name: str, value: float, *, allow_zero: bool = True) -> float:
    return _checks.number(name, value, lo=0, lo_open=not allow_zero)


def busy_slots(rate_per_s: float, hold_s: float) -> float:
    """Little's law: mean busy slots L = lambda x W.

    Parameters
    ----------
    rate_per_s : float
        Arrival rate lambda, requests per second.
    hold_s : float
        Mean time one request holds a slot W, seconds.

    Returns
    -------
    float
        Time-averaged number of busy slots (slots).
    """
    return _positive("rate_per_s", rate_per_s) * _positive("hold_s", hold_s)


@dataclass(frozen=True)
class SlotBudget:
    """Interactive slots busy at the trough and the peak, and what is left idle.

    Attributes
    ----------
    slots : int
        Slots in the pool.
    busy_trough, busy_peak : float
        Mean busy interactive slots at the trough and at the peak (slots).
    idle_trough, idle_peak : float
        Slots interactive work leaves idle at the trough and at the peak.
    """

    slots: int
    busy_trough: float
    busy_peak: float
    idle_trough: float
    idle_peak: float


def slot_budget(slots: int, trough_rate: float, peak_rate: float, hold_s: float) -> SlotBudget:
    """Busy and idle slot range over the day from Little's law.

    Parameters
    ----------
    slots : int
        Slots in the pool.
    trough_rate, peak_rate : float
        Interactive arrival rate at the trough and the peak, requests per second.
    hold_s : float
        Mean interactive slot time, seconds.
    """
    slots = _checks.integer("slots", slots, lo=1)
    trough_rate = _positive("trough_rate", trough_rate)
    peak_rate = _positive("peak_rate", peak_rate)
    hold_s = _positive("hold_s", hold_s)
    if peak_rate < trough_rate:
        raise ValueError(f"peak_rate must be >= trough_rate (got {peak_rate!r} < {trough_rate!r})")
    lo, hi = busy_slots(trough_rate, hold_s), busy_slots(peak_rate, hold_s)
    return SlotBudget(slots, lo, hi, slots - lo, slots - hi)


#: Above this mean the Poisson sums below would need millions of terms; the
#: quantile and tail use the Cornish-Fisher / Edgeworth expansion instead,
#: whose error there is far below one slot.
EXACT_MEAN_LIMIT = 1e7


def _first_term(mean: float) -> int:
    """First k whose Poisson(mean) term does not underflow to zero (40 sd below the mean)."""
    return max(0, math.floor(mean - 40 * math.sqrt(mean)) - 1) if mean > 1600 else 0


def _poisson_cdf(mean: float, k: int) -> float:
    """P(N <= k) for N ~ Poisson(mean), summed in log space term by term.

    Terms more than 40 standard deviations from the mean underflow to zero,
    so the sum starts there and stops once past the mean they vanish: the
    same float result as summing from 0 to k.
    """
    if k < 0:
        return 0.0
    if mean == 0:
        return 1.0
    total = 0.0
    log_mean = math.log(mean)
    for i in range(_first_term(mean), k + 1):
        term = math.exp(i * log_mean - mean - math.lgamma(i + 1))
        if term == 0.0 and i > mean:
            break
        total += term
    return min(1.0, total)


def _large_mean_cdf(mean: float, k: int) -> float:
    """P(N <= k) for a large Poisson mean: normal with continuity and skew corrections."""
    from statistics import NormalDist

    sd = math.sqrt(mean)
    x = (k + 0.5 - mean) / sd
    unit = NormalDist()
    return min(1.0, max(0.0, unit.cdf(x) - unit.pdf(x) * (x * x - 1) / (6 * sd)))


def _large_mean_quantile(mean: float, q: float) -> int:
    """Smallest k with P(N <= k) >= q for a large Poisson mean (Cornish-Fisher)."""
    from statistics import NormalDist

    z = NormalDist().inv_cdf(q)
    g1, g2 = 1 / math.sqrt(mean), 1 / mean  # skewness and excess kurtosis of Poisson(mean)
    x = z + (z * z - 1) * g1 / 6 + (z**3 - 3 * z) * g2 / 24 - (2 * z**3 - 5 * z) * g1 * g1 / 36
    return max(0, math.ceil(mean + math.sqrt(mean) * x - 0.5))


def poisson_tail(mean: float, k: int) -> float:
    """P(N >= k) for N ~ Poisson(mean): the chance of a burst to k busy slots.

    Parameters
    ----------
    mean : float
        Mean busy slots (from Little's law), slots.
    k : int
        Burst level, slots.

    Returns
    -------
    float
        Probability, in [0, 1].
    """
    mean = _positive("mean", mean)
    k = _checks.integer("k", k)
    if mean > EXACT_MEAN_LIMIT:
        return max(0.0, 1.0 - _large_mean_cdf(mean, k - 1))
    return max(0.0, 1.0 - _poisson_cdf(mean, k - 1))


def poisson_cdf(mean: float, k: int) -> float:
    """P(N <= k) for N ~ Poisson(mean), mean busy slots and k slots (summed term by term)."""
    return _poisson_cdf(_positive("mean", mean), _checks.integer("k", k))


def poisson_quantile(mean: float, q: float) -> int:
    """Smallest k with P(N <= k) >= q for N ~ Poisson(mean), slots.

    Parameters
    ----------
    mean : float
        Mean busy slots, slots.
    q : float
        Probability in (0, 1).
    """
    mean = _positive("mean", mean)
    q = _checks.number("q", q, lo=0, hi=1, lo_open=True, hi_open=True)
    if mean > EXACT_MEAN_LIMIT:
        return _large_mean_quantile(mean, q)
    k = _first_term(mean)
    cum = _poisson_cdf(mean, k)
    log_mean = math.log(mean) if mean else 0.0
    while cum < q:
        k += 1
        cum += math.exp(k * log_mean - mean - math.lgamma(k + 1))
    return k


def batch_trickle_interval_s(mean_batch_s: float, batch_slots: int) -> float:
    """Mean time between batch completions when batch holds ``batch_slots`` slots.

    When batch work fills the pool under strict priority, a slot opens for a
    user only as a batch job finishes.  With ``batch_slots`` jobs running and
    each lasting ``mean_batch_s`` on average, those finishes come every
    ``mean_batch_s / batch_slots`` seconds.

    Parameters
    ----------
    mean_batch_s : float
        Mean batch job slot time, seconds.
    batch_slots : int
        Slots held by batch jobs.

    Returns
    -------
    float
        Seconds between batch completions.
    """
    mean_batch_s = _positive("mean_batch_s", mean_batch_s, allow_zero=False)
    batch_slots = _positive("batch_slots", batch_slots, allow_zero=False)
    return mean_batch_s / batch_slots


def diurnal_max_slope(trough_rate: float, peak_rate: float, window_s: float) -> float:
    """Steepest rise of the raised-cosine arrival curve, requests per second per second.

    The rate ``trough + (peak - trough) (1 - cos(2 pi t / window)) / 2`` rises
    fastest a quarter of the way through the window, at
    ``(peak - trough) pi / window``.

    Parameters
    ----------
    trough_rate, peak_rate : float
        Rates at the trough and the peak, requests per second.
    window_s : float
        Length of the trough-peak-trough window, seconds.
    """
    _positive("window_s", window_s, allow_zero=False)
    trough_rate = _positive("trough_rate", trough_rate)
    peak_rate = _positive("peak_rate", peak_rate)
    if peak_rate < trough_rate:
        raise ValueError(f"peak_rate must be >= trough_rate (got {peak_rate!r} < {trough_rate!r})")
    return (peak_rate - trough_rate) * math.pi / window_s


def headroom_slots(mean_busy: float, hold_s: float, drain_s: float, *, drift_per_s: float = 0.0) -> int:
    """Headroom R that covers how far interactive demand rises while batch drains.

    Batch refills every slot the headroom rule allows whenever interactive load
    dips, and gives a slot back only when a batch job ends, roughly one batch
    duration ``drain_s`` later.  So R must cover the rise of the busy
    interactive count from a low to a high within one ``drain_s`` window.  The
    busy count is about Poisson(``mean_busy``) and renews every ``hold_s``
    seconds, so a window holds ``n = drain_s / hold_s`` independent looks.  The
    rule takes the typical (median) highest look minus the typical lowest look,
    plus the slow drift of the daily curve over the window
    (``drift_per_s * drain_s``).

    Parameters
    ----------
    mean_busy : float
        Mean busy interactive slots at the time of day sized for, slots.
    hold_s : float
        Mean interactive slot time, seconds.
    drain_s : float
        Time for batch slots to free naturally: about one batch job's duration, seconds.
    drift_per_s : float, optional
        Rise of the mean busy count from the daily curve, slots per second.

    Returns
    -------
    int
        Headroom, slots (rounded up).
    """
    mean_busy = _positive("mean_busy", mean_busy)
    hold_s = _positive("hold_s", hold_s, allow_zero=False)
    drain_s = _positive("drain_s", drain_s, allow_zero=False)
    drift_per_s = _positive("drift_per_s", drift_per_s)
    if mean_busy == 0:
        return math.ceil(drift_per_s * drain_s)
    n = max(1.0, drain_s / hold_s)
    p = 0.5 ** (1 / n)  # the median of the max of n looks is the p-quantile of one look
    high = poisson_quantile(mean_busy, p)
    low = poisson_quantile(mean_busy, 1 - p) if 1 - p > 0 else 0
    return high - low + math.ceil(drift_per_s * drain_s)


def rate_curve(scenario: Scenario) -> list[float]:
    """The interactive arrival rate at every whole second of the window, requests per second."""
    return [rate_per_s(scenario, t) for t in range(_checks.instance("scenario", scenario, Scenario).ticks)]


def zero_wait_busy(stream: ArrivalStream) -> tuple[int, ...]:
    """Interactive requests in slots at each whole second if every one got a slot on arrival: Little's
    L with no wait (one entry per second of the window, and on to the last such request's end).

    A request holds its slot from its arrival for its hold (seconds, whole or not): it counts at every
    whole second s with arrival <= s < arrival + hold.  Its arrival is its second plus the stream's
    own offset (a trace's exact instant); a drawn stream's arrivals are placed at their second, as
    the anchor places them."""
    _checks.instance("stream", stream, ArrivalStream)
    offsets = stream.arrival_offset_s or repeat(0.0)
    spans = [(math.ceil(t + u), math.ceil(t + u + h)) for t, u, h in
             zip(stream.arrival_tick, offsets, stream.inter_service_s)]
    n = max([stream.seconds, *(end + 1 for _, end in spans)])
    change = [0] * (n + 1)
    for start, end in spans:
        change[start] += 1
        change[end] -= 1
    return tuple(accumulate(change[:n]))
