"""One server, three orders of service: a seeded simulation to check the priority formulas.

Prefill, seen as one server that takes one prompt at a time, with Poisson
arrivals of a few classes of prompt, each class with a fixed service time (a
prompt's prefill time is set by its length, known on arrival).  The same
arrivals are served in three orders:

* ``"fcfs"``: first come, first served;
* ``"sjf"``: non-preemptive shortest job first: when the server frees, it
  takes the shortest waiting job (the earliest among equals) and finishes it;
* ``"srpt"``: preemptive shortest remaining processing time: an arrival
  shorter than what the job in service has left takes the server at once,
  and the evicted job resumes later where it stopped.

:func:`simulate_order` runs one order on one seeded stream and returns a
:class:`OrderRun`; :func:`simulate_orders` runs all three on the *same*
arrivals (common random numbers, so the differences between orders are not
blurred by different draws); :func:`mean_and_error` turns one number from
several seeds into a mean and its standard error.  The formulas they check
are :func:`lanes.pool.theory.mg1_wait_s` (FCFS),
:func:`lanes.pool.theory.sjf_waits_s` (Cobham's formula for SJF) and
:func:`lanes.pool.theory.conservation_sum_s` (Kleinrock's conservation law).

Tie rules: a job that ends at the very instant of an arrival ends first; an
arrival preempts under SRPT only if it is strictly shorter than the remaining
work.  The run starts empty, measures the jobs after ``warmup`` arrivals, and
drains after the last arrival.

Units: rates per second, times in seconds.  Standard library only; every run
takes an explicit ``seed``.

>>> run = simulate_order((9.0, 1.0), (0.05, 0.1), "fcfs", jobs=20_000, seed=1)
>>> round(run.busy_fraction, 1)
0.5
"""

from __future__ import annotations

import heapq
import math
import random
import statistics
from collections.abc import Sequence
from dataclasses import asdict, dataclass

from .. import _checks

ORDERS = ("fcfs", "sjf", "srpt")
"""The orders of service :func:`simulate_order` understands."""

#: Most jobs (measured plus warm-up) one run takes: about 1.5 s of pure Python.
MAX_JOBS = 500_000
#: Most classes a run takes; the priority formulas take any number, the chapter two.
MAX_CLASSES = 100


@dataclass(frozen=True)
class OrderRun:
    """One simulated run of one server under one order of service.

    Attributes
    ----------
    order : str
        ``"fcfs"``, ``"sjf"`` or ``"srpt"``.
    seed : int
        Seed of the arrival stream.
    jobs : tuple of int
        Jobs measured in each class (after the warm-up); a class with none
        has ``nan`` for its means.
    mean_wait_s : tuple of float
        Mean wait of each class (s): time in system not being served,
        response minus service time (the wait in queue when nothing is
        preempted).
    mean_response_s : tuple of float
        Mean response time of each class, arrival to completion (s).
    mean_response_all_s : float
        Mean response time over all measured jobs (s).
    busy_fraction : float
        Service time measured over the measured jobs' span (arrival of the
        first to the last completion): the utilisation the run reached.
    """

    order: str
    seed: int
    jobs: tuple[int, ...]
    mean_wait_s: tuple[float, ...]
    mean_response_s: tuple[float, ...]
    mean_response_all_s: float
    busy_fraction: float

    @property
    def mean_wait_all_s(self) -> float:
        """Mean wait over all measured jobs (s)."""
        return sum(n * w for n, w in zip(self.jobs, self.mean_wait_s)) / sum(self.jobs)

    def to_dict(self) -> dict:
        """Plain dict of unrounded numbers."""
        return asdict(self)


def _mix(rates_per_s: object, service_s: object) -> tuple[list[float], list[float]]:
    rates = _checks.sequence("rates_per_s", rates_per_s, what="rates", min_len=1, max_len=MAX_CLASSES)
    sizes = _checks.sequence("service_s", service_s, what="service times", min_len=1, max_len=MAX_CLASSES)
    if len(rates) != len(sizes):
        raise ValueError(f"rates_per_s and service_s must have one entry per class (got {len(rates)} and {len(sizes)})")
    rates = [_checks.number(f"rates_per_s[{i}]", r, lo=0) for i, r in enumerate(rates)]
    sizes = [_checks.number(f"service_s[{i}]", s, lo=0, lo_open=True) for i, s in enumerate(sizes)]
    if sum(rates) <= 0:
        raise ValueError("rates_per_s must have at least one rate above 0")
    load = sum(r * s for r, s in zip(rates, sizes))
    if load >= 1:
        raise ValueError(f"rates_per_s x service_s must sum to a load below 1 (got {load:g}); at or above it the queue grows without bound")
    return rates, sizes


def _arrivals(rates: list[float], n: int, seed: int) -> tuple[list[float], list[int]]:
    """``n`` Poisson arrivals of the superposed classes: times (s) and the class of each."""
    rng = random.Random(seed)
    total = sum(rates)
    t, times, classes = 0.0, [], []
    picks = rng.choices(range(len(rates)), weights=rates, k=n)
    for k in picks:
        t += rng.expovariate(total)
        times.append(t)
        classes.append(k)
    return times, classes


def _serve(order: str, times: list[float], sizes: list[float]) -> list[float]:
    """Completion time (s) of each job, served in ``order``; jobs given in arrival order."""
    preemptive = order == "srpt"
    done = [0.0] * len(times)
    queue: list[tuple] = []  # heap of (*key, remaining work, job): the key ranks who goes next
    current, left, now = -1, 0.0, 0.0  # the job in service (-1: idle), its remaining work, the clock

    def key(j: int, remaining: float) -> tuple:
        return (j,) if order == "fcfs" else (remaining, j)

    def run_until(t: float) -> None:
        nonlocal current, left, now
        while current >= 0 and now + left <= t:  # ends at or before t: ends first
            now += left
            done[current] = now
            current, left = -1, 0.0
            if queue:
                *_, left, current = heapq.heappop(queue)
        if current >= 0:
            left -= t - now
        now = t

    for j, t in enumerate(times):
        run_until(t)
        if current < 0:
            current, left = j, sizes[j]
        elif preemptive and sizes[j] < left:
            heapq.heappush(queue, (*key(current, left), left, current))  # evicted, resumes later
            current, left = j, sizes[j]
        else:
            heapq.heappush(queue, (*key(j, sizes[j]), sizes[j], j))
    run_until(math.inf)
    return done


def simulate_order(
    rates_per_s: Sequence[float],
    service_s: Sequence[float],
    order: str,
    *,
    jobs: int = 100_000,
    warmup: int = 2_000,
    seed: int = 0,
) -> OrderRun:
    """Simulate one server under ``order`` with Poisson arrivals of fixed-size classes.

    Parameters
    ----------
    rates_per_s : sequence of float
        Arrival rate of each class (jobs/s), >= 0; the total load
        ``sum(rate x service)`` must be below 1.
    service_s : sequence of float
        Service time of every job of each class (s), > 0.
    order : {"fcfs", "sjf", "srpt"}
        The order of service (see the module docstring).
    jobs : int
        Jobs measured, after the warm-up.
    warmup : int
        Jobs that arrive first and are not measured (the run starts empty).
    seed : int
        Seed of the ``random.Random`` that draws the arrival times and classes;
        the same seed gives the same arrivals under every order.

    Returns
    -------
    OrderRun
    """
    rates, sizes = _mix(rates_per_s, service_s)
    kind = _checks.choice("order", order, ORDERS)
    n = _checks.integer("jobs", jobs, lo=100, hi=MAX_JOBS)
    w = _checks.integer("warmup", warmup, lo=0, hi=MAX_JOBS)
    _checks.limit("jobs", n + w, MAX_JOBS, why="jobs + warmup, one run")
    seed = _checks.integer("seed", seed, big=True)

    times, classes = _arrivals(rates, n + w, seed)
    size_of = [sizes[k] for k in classes]
    done = _serve(kind, times, size_of)

    k_n = len(rates)
    count, waits, resps = [0] * k_n, [0.0] * k_n, [0.0] * k_n
    busy = 0.0
    for j in range(w, n + w):
        k = classes[j]
        response = done[j] - times[j]
        count[k] += 1
        resps[k] += response
        waits[k] += response - size_of[j]
        busy += size_of[j]
    span = max(done[w:]) - times[w]
    return OrderRun(
        order=kind,
        seed=seed,
        jobs=tuple(count),
        mean_wait_s=tuple(x / c if c else math.nan for x, c in zip(waits, count)),
        mean_response_s=tuple(x / c if c else math.nan for x, c in zip(resps, count)),
        mean_response_all_s=sum(resps) / n,
        busy_fraction=busy / span,
    )


def simulate_orders(
    rates_per_s: Sequence[float], service_s: Sequence[float], **kwargs: object
) -> dict[str, OrderRun]:
    """:func:`simulate_order` under each of :data:`ORDERS`, on the same arrivals (same keywords)."""
    _checks.keywords("simulate_orders", kwargs, ("jobs", "warmup", "seed"))
    return {o: simulate_order(rates_per_s, service_s, o, **kwargs) for o in ORDERS}  # type: ignore[arg-type]


def mean_and_error(values: Sequence[float]) -> tuple[float, float]:
    """Mean of independent replications and its standard error, ``stdev / sqrt(n)``.

    The runs of different seeds are independent, so the spread of their means
    measures the sampling error of one number; about 95% of the time the
    true value lies within two standard errors of the mean.

    Parameters
    ----------
    values : sequence of float
        One value per seed, at least two.
    """
    xs = [_checks.number("values", v) for v in _checks.sequence("values", values, what="numbers", min_len=2)]
    return statistics.fmean(xs), statistics.stdev(xs) / math.sqrt(len(xs))
