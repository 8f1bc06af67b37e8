"""The standard theory of a pool of identical servers: Erlang B and C, and friends.

A pool of ``c`` decode slots fed by Poisson arrivals, each request holding a
slot for a random time with mean ``S`` seconds, is the textbook M/M/c queue
when the hold times are exponential.  Its *offered load* is
``a = arrival rate x S`` erlangs: the mean number of busy slots if no slot
ever ran out (Little's law, :func:`lanes.pool.littles.busy_slots`).

* :func:`erlang_b` is the chance that all ``c`` slots are busy when arrivals
  that find no slot are turned away (M/M/c/c);
* :func:`erlang_c` is the chance that an arrival has to wait when they queue
  instead (M/M/c): ``P(wait > 0)``;
* :func:`mmc_mean_wait_s` and :func:`mmc_wait_tail` give the mean wait and
  ``P(wait > t)`` of M/M/c, first come first served;
* :func:`halfin_whitt_beta` and :func:`sqrt_staffing` give the square-root
  staffing rule ``c = a + beta * sqrt(a)``, with ``beta`` chosen for a target
  ``P(wait > 0)`` (the Halfin-Whitt limit for large pools);
  :func:`servers_for_wait` is the exact smallest ``c`` from Erlang C;
* :func:`allen_cunneen_wait_s` corrects the M/M/c mean wait for general
  inter-arrival and hold times (G/G/c) by their squared coefficients of
  variation.

Both Erlang formulas use the recurrence
``B(0) = 1, B(k) = a B(k-1) / (k + a B(k-1))``, which never forms ``a**c``
or ``c!``, so it is exact to rounding for ``c = 64`` or ``c = 10_000``.

Units: ``load`` in erlangs (busy slots), times in seconds, rates per second.
Standard library only.

>>> round(erlang_c(2, 1.0), 6)        # two servers at one erlang: exactly 1/3
0.333333
>>> round(erlang_c(64, 56.0), 4)
0.2151
>>> sqrt_staffing(56.0, 0.2)
64
"""

from __future__ import annotations

import math

from .. import _checks

__all__ = [
    "erlang_b",
    "erlang_c",
    "mmc_mean_wait_s",
    "mmc_wait_tail",
    "halfin_whitt_wait_probability",
    "halfin_whitt_beta",
    "sqrt_staffing",
    "servers_for_wait",
    "allen_cunneen_wait_s",
    "MAX_SERVERS",
]


#: Most servers the Erlang formulas take: their recurrence does one step per
#: server, so ten million is a few seconds of pure Python, and far past any pool.
MAX_SERVERS = 10**7


def _servers(servers: object) -> int:
    c = _checks.integer("servers", servers, lo=1)
    _checks.limit("servers", c, MAX_SERVERS, why="the Erlang recurrence takes one step per server")
    return c


def _load(load: object) -> float:
    return _checks.number("load", load, lo=0)


def _stable(servers: object, load: object) -> tuple[int, float]:
    c, a = _servers(servers), _load(load)
    if a >= c:
        raise ValueError(
            f"load must be below servers for the queue to settle (got load={a:g} with servers={c});"
            " at or above it the wait grows without bound"
        )
    return c, a


def erlang_b(servers: int, load: float) -> float:
    """Probability that all ``servers`` are busy in a loss system (M/M/c/c).

    Parameters
    ----------
    servers : int
        Servers (slots), an integer in [1, MAX_SERVERS].
    load : float
        Offered load in erlangs (arrival rate x mean hold time), >= 0.

    Returns
    -------
    float
        The fraction of arrivals that find every server busy and are lost.
    """
    c, a = _servers(servers), _load(load)
    b = 1.0
    for k in range(1, c + 1):
        b = a * b / (k + a * b)
        if b == 0.0:  # underflowed: every later step keeps it 0.0, so stop (a few hundred steps past the load)
            break
    return b


def erlang_c(servers: int, load: float) -> float:
    """Probability that an arrival must wait, ``P(wait > 0)``, in M/M/c.

    Computed from Erlang B as ``C = c B / (c - a (1 - B))``.

    Parameters
    ----------
    servers : int
        Servers (slots), an integer in [1, MAX_SERVERS].
    load : float
        Offered load in erlangs, ``0 <= load < servers``.
    """
    c, a = _stable(servers, load)
    b = erlang_b(c, a)
    return c * b / (c - a * (1.0 - b))


def mmc_mean_wait_s(servers: int, load: float, hold_s: float) -> float:
    """Mean time an arrival waits for a server in M/M/c (seconds).

    ``W = C(c, a) * hold_s / (c - a)``: the chance of waiting times the mean
    wait of those who do, which is ``hold_s / (c - a)``.

    Parameters
    ----------
    servers, load
        As for :func:`erlang_c`.
    hold_s : float
        Mean hold (service) time in seconds, > 0.
    """
    c, a = _stable(servers, load)
    s = _checks.number("hold_s", hold_s, lo=0, lo_open=True)
    return erlang_c(c, a) * s / (c - a)


def mmc_wait_tail(servers: int, load: float, hold_s: float, t_s: float) -> float:
    """``P(wait > t_s)`` in M/M/c, first come first served.

    Those who wait do so for an exponential time with rate ``(c - a) / hold_s``,
    so ``P(W > t) = C(c, a) * exp(-(c - a) t / hold_s)``.

    Parameters
    ----------
    servers, load, hold_s
        As for :func:`mmc_mean_wait_s`.
    t_s : float
        Wait in seconds, >= 0.
    """
    c, a = _stable(servers, load)
    s = _checks.number("hold_s", hold_s, lo=0, lo_open=True)
    t = _checks.number("t_s", t_s, lo=0)
    return erlang_c(c, a) * math.exp(-(c - a) * t / s)


def _phi(x: float) -> float:
    return math.exp(-x * x / 2) / math.sqrt(2 * math.pi)


def _big_phi(x: float) -> float:
    return 0.5 * (1 + math.erf(x / math.sqrt(2)))


def halfin_whitt_wait_probability(beta: float) -> float:
    """The large-pool limit of ``P(wait > 0)`` with ``c = a + beta sqrt(a)`` servers.

    Halfin and Whitt (1981): ``P(wait) -> 1 / (1 + beta Phi(beta) / phi(beta))``,
    with ``phi`` and ``Phi`` the standard normal density and distribution.

    Parameters
    ----------
    beta : float
        Spare servers in units of ``sqrt(load)``, > 0.
    """
    b = _checks.number("beta", beta, lo=0, lo_open=True)
    # 1 / (1 + r) with r = b Phi(b) / phi(b), through log r: phi(b) underflows to 0 past b ~ 38,
    # and exp(b**2 / 2) overflows, but log r = log(b Phi(b)) + b**2 / 2 + log(sqrt(2 pi)) is finite.
    log_r = math.log(b) + math.log(_big_phi(b)) + b * b / 2 + 0.5 * math.log(2 * math.pi)
    if log_r > 0:
        e = math.exp(-log_r)  # underflows to 0.0 (the limit) for a large beta, never raises
        return e / (1.0 + e)
    return 1.0 / (1.0 + math.exp(log_r))


def halfin_whitt_beta(p_wait: float) -> float:
    """The ``beta`` whose Halfin-Whitt limit of ``P(wait > 0)`` is ``p_wait``.

    Parameters
    ----------
    p_wait : float
        Target probability of waiting, strictly between 0 and 1.

    Returns
    -------
    float
        ``beta > 0``, to about 1e-12 (bisection; the limit falls as beta grows).
    """
    p = _checks.number("p_wait", p_wait, lo=0, lo_open=True, hi=1)
    if p >= 1:
        raise ValueError(f"p_wait must be a number in (0, 1) (got {p_wait})")
    lo, hi = 1e-12, 1.0
    while halfin_whitt_wait_probability(hi) > p:
        hi *= 2
        if hi > 64:
            raise ValueError(f"p_wait is too small for the normal limit (got {p_wait})")
    for _ in range(200):
        mid = (lo + hi) / 2
        if halfin_whitt_wait_probability(mid) > p:
            lo = mid
        else:
            hi = mid
        if hi - lo < 1e-12:
            break
    return (lo + hi) / 2


def sqrt_staffing(load: float, p_wait: float) -> int:
    """Square-root staffing: ``ceil(load + beta sqrt(load))`` servers for a target ``P(wait)``.

    ``beta`` comes from :func:`halfin_whitt_beta`.  The rule is the analytic
    first guess: the mean ``load`` plus a safety margin that grows as the
    square root of the load, because the number of busy servers fluctuates by
    about ``sqrt(load)`` (a Poisson count's standard deviation).

    Parameters
    ----------
    load : float
        Offered load in erlangs, > 0.
    p_wait : float
        Target probability of waiting, in (0, 1).
    """
    a = _checks.number("load", load, lo=0, lo_open=True)
    beta = halfin_whitt_beta(p_wait)
    return math.ceil(a + beta * math.sqrt(a) - 1e-9)


def servers_for_wait(load: float, p_wait: float) -> int:
    """The smallest number of servers whose Erlang C ``P(wait > 0)`` is at most ``p_wait``.

    Parameters
    ----------
    load : float
        Offered load in erlangs, > 0.
    p_wait : float
        Target probability of waiting, in (0, 1).
    """
    a = _checks.number("load", load, lo=0, lo_open=True)
    p = _checks.number("p_wait", p_wait, lo=0, lo_open=True, hi=1)
    if p >= 1:
        raise ValueError(f"p_wait must be a number in (0, 1) (got {p_wait})")
    _checks.limit("load", a, MAX_SERVERS - 1, why="one step per server, as in the Erlang formulas (MAX_SERVERS)")
    c = math.floor(a) + 1
    b = erlang_b(c, a)
    # C from B as in erlang_c; B(c + 1) from B(c) by one step of the same recurrence, so the
    # search costs one pass up to the answer, not one Erlang B per candidate.
    while c * b / (c - a * (1.0 - b)) > p:
        c += 1
        b = a * b / (c + a * b)
    return c


def allen_cunneen_wait_s(
    servers: int, load: float, hold_s: float, *, arrival_cv2: float = 1.0, hold_cv2: float = 1.0
) -> float:
    """Allen-Cunneen approximation of the mean wait in G/G/c (seconds).

    ``W ~ W(M/M/c) * (arrival_cv2 + hold_cv2) / 2``: the M/M/c mean wait,
    scaled by the mean of the squared coefficients of variation (variance /
    mean squared) of the inter-arrival and hold times.  Poisson arrivals have
    ``arrival_cv2 = 1``; exponential holds ``hold_cv2 = 1`` (the exact M/M/c
    case); a fixed hold has 0; a hold uniform on ``[lo, hi]`` has
    ``(hi - lo)**2 / (3 (hi + lo)**2)``.  With one server and Poisson arrivals
    it is exact (the Pollaczek-Khinchine formula).

    Parameters
    ----------
    servers, load, hold_s
        As for :func:`mmc_mean_wait_s`.
    arrival_cv2, hold_cv2 : float
        Squared coefficients of variation, >= 0.
    """
    ca2 = _checks.number("arrival_cv2", arrival_cv2, lo=0)
    cs2 = _checks.number("hold_cv2", hold_cv2, lo=0)
    return mmc_mean_wait_s(servers, load, hold_s) * (ca2 + cs2) / 2
