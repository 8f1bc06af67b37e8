"""The queueing theory that explains what the slot-pool simulator shows.

Each function is a textbook closed form, stated for one server (M/G/1) unless
it says otherwise; the many-server formulas (Erlang C, square-root staffing,
Allen-Cunneen) are in :mod:`lanes.pool.erlang`, and this module reuses them.

* :class:`JobClass` is one stream of work: Poisson arrivals at ``rate_per_s``
  and service times with a mean and a second moment.  Its
  :attr:`~JobClass.residual_s` is the **mean residual life**
  ``E[S^2] / (2 E[S])``: how long the job found in service still has to run,
  on average, when a random arrival looks (the inspection paradox: a random
  look lands in a long job more often than in a short one).  Uniform 60-180 s
  jobs have a mean of 120 s but a mean residual of 65 s, not 60.
* :func:`mg1_wait_s` is the Pollaczek-Khinchine mean wait, first come first
  served: ``W = W0 / (1 - rho)`` with ``W0 = sum(lambda E[S^2]) / 2``, the
  work a newcomer finds in service.  The wait grows with ``E[S^2]``, not with
  ``E[S]``: at a fixed load, jobs a quarter as long give a quarter of the wait.
* :func:`cobham_waits_s` is Cobham's mean wait of each class under
  non-preemptive priority; :func:`sjf_waits_s` is the same with the classes
  ranked by job length (shortest job first);
  :func:`priority_wait_with_backlog_s` is Cobham's top class when a backlog
  of lower-priority work is always waiting (the server never idles);
  :func:`preemptive_resume_times_s` is the mean time in system under
  preemptive-resume priority.
* :func:`srpt_response_times_s` is the Schrage-Miller mean time in system
  under preemptive shortest remaining processing time, for classes whose jobs
  all have the same length (:meth:`JobClass.fixed`).
* :func:`conservation_sum_s` is Kleinrock's conservation law: for any
  work-conserving, non-preemptive order, ``sum(rho_k W_k)`` is the same
  number, so priority only moves waiting from one class to another.
* :func:`resume_time_s` and :func:`repeat_time_s` give the expected time to
  finish ``work_s`` of work interrupted at Poisson times: resumed where it
  stopped, or started again from scratch.  Their difference is the cost of
  thrash, and it grows exponentially with the job's length.
* :func:`kingman_wait_s` is Kingman's G/G/1 approximation, which carries the
  arrival stream's variability ``arrival_cv2`` into the wait (the many-server
  version is :func:`lanes.pool.erlang.allen_cunneen_wait_s`);
  :func:`peaked_sqrt_staffing` carries the variability of the *count* of busy
  servers (its peakedness, the variance-to-mean ratio, 1 for Poisson) into
  square-root staffing.

Units: rates per second, times in seconds, second moments in s^2.  Standard
library only.

>>> batch = JobClass.uniform(0.2, 60, 180)
>>> batch.residual_s
65.0
>>> round(mg1_wait_s([JobClass.exponential(0.5, 1.0)]), 6)   # M/M/1 at rho 0.5: rho S / (1 - rho)
1.0
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Sequence

from .. import _checks
from .erlang import halfin_whitt_beta

__all__ = [
    "JobClass",
    "mg1_wait_s",
    "cobham_waits_s",
    "sjf_waits_s",
    "priority_wait_with_backlog_s",
    "preemptive_resume_times_s",
    "srpt_response_times_s",
    "conservation_sum_s",
    "resume_time_s",
    "repeat_time_s",
    "kingman_wait_s",
    "peaked_sqrt_staffing",
]

#: Most classes a priority formula takes: the sums are one pass each, this only bounds a typo.
MAX_CLASSES = 10_000


@dataclass(frozen=True)
class JobClass:
    """One class of work: Poisson arrivals and generally distributed service times.

    Attributes
    ----------
    rate_per_s : float
        Arrival rate (jobs/s), >= 0.
    mean_s : float
        Mean service time E[S] (s), > 0.
    second_moment_s2 : float
        E[S^2] (s^2), at least ``mean_s ** 2`` (a variance cannot be negative).
    """

    rate_per_s: float
    mean_s: float
    second_moment_s2: float

    def __post_init__(self) -> None:
        rate = _checks.number("rate_per_s", self.rate_per_s, lo=0)
        mean = _checks.number("mean_s", self.mean_s, lo=0, lo_open=True)
        second = _checks.number("second_moment_s2", self.second_moment_s2, lo=0)
        if second < mean * mean * (1 - 1e-12):
            raise ValueError(
                f"second_moment_s2 must be at least mean_s**2 = {mean * mean:g} (got {second:g}):"
                " the variance E[S^2] - E[S]^2 cannot be negative"
            )
        object.__setattr__(self, "rate_per_s", rate)
        object.__setattr__(self, "mean_s", mean)
        object.__setattr__(self, "second_moment_s2", max(second, mean * mean))

    @classmethod
    def uniform(cls, rate_per_s: float, lo_s: float, hi_s: float) -> "JobClass":
        """Service times uniform on ``[lo_s, hi_s]`` (s): E[S^2] = (lo^2 + lo hi + hi^2) / 3."""
        lo = _checks.number("lo_s", lo_s, lo=0)
        hi = _checks.number("hi_s", hi_s, lo=lo, lo_name="lo_s")
        if hi <= 0:
            raise ValueError(f"hi_s must be a number > 0 (got {hi_s})")
        return cls(rate_per_s, (lo + hi) / 2, (lo * lo + lo * hi + hi * hi) / 3)

    @classmethod
    def exponential(cls, rate_per_s: float, mean_s: float) -> "JobClass":
        """Exponential service times of mean ``mean_s`` (s): E[S^2] = 2 mean^2."""
        m = _checks.number("mean_s", mean_s, lo=0, lo_open=True)
        return cls(rate_per_s, m, 2 * m * m)

    @classmethod
    def fixed(cls, rate_per_s: float, service_s: float) -> "JobClass":
        """Every job takes exactly ``service_s`` (s): E[S^2] = S^2."""
        s = _checks.number("service_s", service_s, lo=0, lo_open=True)
        return cls(rate_per_s, s, s * s)

    @property
    def load(self) -> float:
        """Utilisation this class brings, ``rate x mean`` (busy servers, erlangs)."""
        return self.rate_per_s * self.mean_s

    @property
    def cv2(self) -> float:
        """Squared coefficient of variation of the service time, variance / mean^2."""
        return self.second_moment_s2 / (self.mean_s * self.mean_s) - 1

    @property
    def residual_s(self) -> float:
        """Mean residual life E[S^2] / (2 E[S]) (s): what a random look finds left of the job in service."""
        return self.second_moment_s2 / (2 * self.mean_s)


def _classes(classes: object) -> list[JobClass]:
    items = _checks.sequence("classes", classes, what="JobClass objects", min_len=1, max_len=MAX_CLASSES)
    for i, c in enumerate(items):
        if not isinstance(c, JobClass):
            raise ValueError(f"classes must be a list of JobClass objects (got {_checks.show(c)} at position {i})")
    return items


def _stable(classes: list[JobClass]) -> float:
    rho = sum(c.load for c in classes)
    if rho >= 1:
        raise ValueError(
            f"classes must bring a total load below 1 for the queue to settle (got rho={rho:g});"
            " at or above it the wait grows without bound"
        )
    return rho


def _w0(classes: list[JobClass]) -> float:
    """Mean work in service that an arrival finds (s): sum(lambda E[S^2]) / 2."""
    return sum(c.rate_per_s * c.second_moment_s2 for c in classes) / 2


def mg1_wait_s(classes: Sequence[JobClass]) -> float:
    """Pollaczek-Khinchine mean wait in queue of M/G/1, first come first served (s).

    ``W = W0 / (1 - rho)``, ``W0 = sum(lambda_k E[S_k^2]) / 2 = sum(rho_k x residual_k)``.

    Parameters
    ----------
    classes : list of JobClass
        The streams sharing the server (one or more), total load below 1.
    """
    cs = _classes(classes)
    return _w0(cs) / (1 - _stable(cs))


def cobham_waits_s(classes: Sequence[JobClass]) -> tuple[float, ...]:
    """Cobham's mean wait in queue of each class under non-preemptive priority (s).

    Class 0 has the highest priority.  A job in service always finishes, so
    every class waits for the residual work ``W0`` of whatever is in service,
    batch included: ``W_k = W0 / ((1 - sigma_{k-1}) (1 - sigma_k))`` with
    ``sigma_k`` the load of classes ``0..k``.

    Parameters
    ----------
    classes : list of JobClass
        Highest priority first; total load below 1.
    """
    cs = _classes(classes)
    _stable(cs)
    w0, sigma, waits = _w0(cs), 0.0, []
    for c in cs:
        above = sigma
        sigma += c.load
        waits.append(w0 / ((1 - above) * (1 - sigma)))
    return tuple(waits)


def sjf_waits_s(classes: Sequence[JobClass]) -> tuple[float, ...]:
    """Mean waits under non-preemptive shortest-job-first, in the order given (s).

    Cobham's formula with the classes ranked by mean job length, shortest
    first (the length known on arrival, as a prompt's is).  Among
    non-preemptive orders it gives the least mean wait over all jobs; the
    longest class pays for it, and as the load of shorter jobs nears 1 its
    wait grows without bound (starvation).
    """
    cs = _classes(classes)
    order = sorted(range(len(cs)), key=lambda i: cs[i].mean_s)
    ranked = cobham_waits_s([cs[i] for i in order])
    waits = [0.0] * len(cs)
    for rank, i in enumerate(order):
        waits[i] = ranked[rank]
    return tuple(waits)


def priority_wait_with_backlog_s(users: JobClass, backlog: JobClass) -> float:
    """Mean wait of the top class on one server when lower-priority work never runs out (s).

    Strict priority without eviction, and a backlog that takes the server
    whenever no user waits: the server never idles, the backlog runs for the
    share ``1 - rho`` of the time that the users (load ``rho``) leave, and an
    arriving user finds, on average, ``W0 = rho R_users + (1 - rho) R_backlog``
    of work in service still to finish (``R`` the mean residual lives).  The
    users ahead of it add the factor of Cobham's formula:
    ``W = W0 / (1 - rho)``.  The backlog's ``rate_per_s`` is not used: it takes
    every moment the users leave.

    Parameters
    ----------
    users : JobClass
        The top class; its load must be below 1.
    backlog : JobClass
        The service times of the waiting lower-priority work.
    """
    u = _checks.instance("users", users, JobClass)
    b = _checks.instance("backlog", backlog, JobClass)
    rho = u.load
    if rho >= 1:
        raise ValueError(f"users must bring a load below 1 (got rho={rho:g}); at or above it their wait grows without bound")
    return (rho * u.residual_s + (1 - rho) * b.residual_s) / (1 - rho)


def preemptive_resume_times_s(classes: Sequence[JobClass]) -> tuple[float, ...]:
    """Mean time in system (wait plus service) of each class under preemptive-resume priority (s).

    A higher class evicts a lower one at once, and the evicted job later
    resumes where it stopped, losing nothing.  Class ``k`` sees only classes
    ``0..k``: ``T_k = E[S_k] / (1 - sigma_{k-1}) + W0_k / ((1 - sigma_{k-1}) (1 - sigma_k))``
    with ``W0_k = sum_{i <= k} lambda_i E[S_i^2] / 2``.  Class 0 behaves as if
    alone, whatever the classes below it hold.

    Parameters
    ----------
    classes : list of JobClass
        Highest priority first; total load below 1.
    """
    cs = _classes(classes)
    _stable(cs)
    sigma, w0, times = 0.0, 0.0, []
    for c in cs:
        above = sigma
        sigma += c.load
        w0 += c.rate_per_s * c.second_moment_s2 / 2
        times.append(c.mean_s / (1 - above) + w0 / ((1 - above) * (1 - sigma)))
    return tuple(times)


def srpt_response_times_s(classes: Sequence[JobClass]) -> tuple[float, ...]:
    """Mean time in system of each class under shortest remaining processing time (s).

    Preemptive SRPT on one server: an arrival shorter than what the job in
    service has left takes the server, the evicted job resumes later.  Every
    job of a class has the same length ``x`` (:meth:`JobClass.fixed`; the
    formula needs the whole length distribution, which a mean and a second
    moment give only then).  Schrage and Miller's formula, with equal lengths
    served first come first served among themselves:

    ``T(x) = W0(x) / ((1 - rho(<= x)) (1 - rho(< x))) + integral_0^x dt / (1 - rho(< t))``

    where ``rho(<= x)`` and ``rho(< x)`` are the loads of the classes at most
    and strictly shorter than ``x``, and ``W0(x) = sum lambda_i min(x_i, x)^2 / 2``
    (longer jobs count only their last ``x`` of work, the part no job of
    length ``x`` may preempt).  The first term is the wait until the job first
    runs, the second its time from then on, stretched by shorter arrivals.
    With one class it is the first-come-first-served wait of M/D/1 plus ``x``.
    The classes may be given in any order.
    """
    cs = _classes(classes)
    _stable(cs)
    for i, c in enumerate(cs):
        if c.cv2 > 1e-9:
            raise ValueError(
                f"classes must all be JobClass.fixed (jobs of one length) for the SRPT formula"
                f" (got a squared coefficient of variation of {c.cv2:g} at position {i})"
            )
    times = []
    for c in cs:
        x = c.mean_s
        w0 = sum(o.rate_per_s * min(o.mean_s, x) ** 2 for o in cs) / 2
        at_most = sum(o.load for o in cs if o.mean_s <= x)
        below = sum(o.load for o in cs if o.mean_s < x)
        # the residence integral, piecewise: between consecutive shorter lengths rho(< t) is constant
        edges = sorted({o.mean_s for o in cs if o.mean_s < x}) + [x]
        residence, start, shorter = 0.0, 0.0, 0.0
        for edge in edges:
            residence += (edge - start) / (1 - shorter)
            shorter += sum(o.load for o in cs if o.mean_s == edge and edge < x)
            start = edge
        times.append(w0 / ((1 - at_most) * (1 - below)) + residence)
    return tuple(times)


def conservation_sum_s(classes: Sequence[JobClass]) -> float:
    """Kleinrock's conservation law: ``sum(rho_k W_k)`` for any work-conserving non-preemptive order (s).

    It equals ``rho W0 / (1 - rho)``: the same for first come first served,
    for every priority ranking and for shortest-job-first.  Priority moves
    waiting from one class to another (weighted by load) but cannot remove it;
    only idling capacity on purpose (headroom) or discarding work (a
    restarted job) steps outside the law.
    """
    cs = _classes(classes)
    rho = _stable(cs)
    return rho * _w0(cs) / (1 - rho)


def _interruptions(work_s: object, interrupt_rate_per_s: object, down_s: object) -> tuple[float, float, float]:
    x = _checks.number("work_s", work_s, lo=0)
    g = _checks.number("interrupt_rate_per_s", interrupt_rate_per_s, lo=0)
    d = _checks.number("down_s", down_s, lo=0)
    return x, g, d


def resume_time_s(work_s: float, interrupt_rate_per_s: float, down_s: float = 0.0) -> float:
    """Expected time to finish ``work_s`` when interrupted work resumes where it stopped (s).

    Interruptions (evictions) come at Poisson times, ``interrupt_rate_per_s``
    while the job runs, and each holds the job off for ``down_s`` on average.
    Nothing is lost, so the time is ``work_s (1 + rate x down_s)``.

    Parameters
    ----------
    work_s : float
        The job's length (s), >= 0.
    interrupt_rate_per_s : float
        Interruptions per second of running, >= 0.
    down_s : float
        Mean time from an interruption until the job runs again (s), >= 0.
    """
    x, g, d = _interruptions(work_s, interrupt_rate_per_s, down_s)
    return x * (1 + g * d)


def repeat_time_s(work_s: float, interrupt_rate_per_s: float, down_s: float = 0.0) -> float:
    """Expected time to finish ``work_s`` when an interrupted job starts again from scratch (s).

    Preemptive-repeat with a fixed length: the job completes only in a run of
    ``work_s`` free of interruptions, so the expected time is
    ``(exp(rate x work_s) - 1) (1 / rate + down_s)``.  It exceeds
    :func:`resume_time_s` by the cost of thrash, which grows exponentially
    with ``rate x work_s``: a job interrupted once on average per length takes
    1.72 lengths (with ``down_s = 0``), three times per length 6.4.  Returns
    ``inf`` once ``rate x work_s`` is past 700 (the job practically never finishes).

    Parameters
    ----------
    work_s, interrupt_rate_per_s, down_s
        As for :func:`resume_time_s`.
    """
    x, g, d = _interruptions(work_s, interrupt_rate_per_s, down_s)
    if g == 0 or x == 0:
        return x
    if g * x > 700:
        return math.inf
    return math.expm1(g * x) * (1 / g + d)


def kingman_wait_s(rho: float, mean_s: float, *, arrival_cv2: float = 1.0, service_cv2: float = 1.0) -> float:
    """Kingman's approximation of the mean wait in queue of G/G/1 (s).

    ``W ~ rho / (1 - rho) x (arrival_cv2 + service_cv2) / 2 x mean_s``.  Exact
    for Poisson arrivals (``arrival_cv2 = 1``, the Pollaczek-Khinchine
    formula); burstier arrivals (``arrival_cv2 > 1``) wait proportionally
    longer at the same load.  For a count of arrivals per window, its
    variance-to-mean ratio estimates ``arrival_cv2`` (1 for Poisson).  For
    ``c`` servers use :func:`lanes.pool.erlang.allen_cunneen_wait_s`, the same
    correction applied to the M/M/c wait.

    Parameters
    ----------
    rho : float
        Utilisation in [0, 1).
    mean_s : float
        Mean service time (s), > 0.
    arrival_cv2, service_cv2 : float
        Squared coefficients of variation of inter-arrival and service times, >= 0.
    """
    r = _checks.number("rho", rho, lo=0, hi=1, hi_open=True)
    s = _checks.number("mean_s", mean_s, lo=0, lo_open=True)
    ca2 = _checks.number("arrival_cv2", arrival_cv2, lo=0)
    cs2 = _checks.number("service_cv2", service_cv2, lo=0)
    return r / (1 - r) * (ca2 + cs2) / 2 * s


def peaked_sqrt_staffing(load: float, peakedness: float, p_wait: float) -> int:
    """Square-root staffing for traffic burstier than Poisson: ``ceil(L + beta sqrt(z L))`` servers.

    A Poisson stream keeps a number of servers busy whose variance equals its
    mean ``L``; a burstier one has variance ``z L``, ``z`` being its
    peakedness (the variance-to-mean ratio of the busy count, or of arrival
    counts over windows about one holding time long).  The spare servers
    scale with the standard deviation, ``sqrt(z L)``, so the Halfin-Whitt
    margin ``beta sqrt(L)`` grows by ``sqrt(z)`` (Hayward's and Whitt's
    peakedness approximations).  ``peakedness=1`` gives
    :func:`lanes.pool.erlang.sqrt_staffing`.  A first guess for a sweep: it
    sees one variance-to-mean ratio, not the time scale of the bursts.

    Parameters
    ----------
    load : float
        Offered load in erlangs (mean busy servers), > 0.
    peakedness : float
        Variance-to-mean ratio ``z`` of the busy count, > 0.
    p_wait : float
        Target probability of waiting, in (0, 1).
    """
    a = _checks.number("load", load, lo=0, lo_open=True)
    z = _checks.number("peakedness", peakedness, lo=0, lo_open=True)
    beta = halfin_whitt_beta(p_wait)
    spare = beta * math.sqrt(z * a)
    if a + spare > 1e15:
        raise ValueError(f"load x peakedness must leave fewer than 1e15 servers (got load={a:g}, peakedness={z:g})")
    return math.ceil(a + spare - 1e-9)
