"""A single prefill queue: M/M/1 formulas and a seeded simulation to check them.

The p99 TTFT chain (:func:`lanes.gpu.chains.p99_knee`) treats prefill as an M/M/1
queue: Poisson arrivals, exponential service times, one server, first come
first served.  Its response time is exponential with mean ``S / (1 - rho)``,
so every percentile is a multiple of that mean.  This module gives the curve
(:func:`mm1_response_quantile_s`) and a small simulation
(:func:`simulate_queue`) in which the assumptions can be kept or broken:

* ``service="exponential"``: service times are exponential, the M/M/1 case;
* ``service="lognormal"``: service times are lognormal with the same mean and
  shape ``sigma``, as prompt lengths often are (an M/G/1 queue);
* ``service="prefill"``: prompt lengths are exponential in tokens and each
  prompt's service time comes from a function given as ``prefill_s``, such
  as :func:`lanes.gpu.steps.prefill_service_s` (the prefill step on the
  roofline), so the queue runs on the step model's costs without importing it.

Standard library only; every run takes an explicit ``seed``.
"""

from __future__ import annotations

import math
import random
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass

from .. import _checks
from .._stats import percentile

SERVICES = ("exponential", "lognormal", "prefill")
"""Service-time distributions :func:`simulate_queue` understands."""


def mm1_response_quantile_s(service_s: float, rho: float, percentile: float = 0.99) -> float:
    """Percentile of the M/M/1 response time (wait plus service), in seconds.

    Parameters
    ----------
    service_s : float
        Mean service time S (s, > 0).
    rho : float
        Utilisation in [0, 1).
    percentile : float
        The percentile as a fraction in (0, 1); 0.99 gives ``4.6 x S / (1 - rho)``.

    Returns
    -------
    float
        ``-ln(1 - percentile) x S / (1 - rho)`` (s).
    """
    s = _checks.number("service_s", service_s, lo=0, lo_open=True)
    r = _checks.number("rho", rho, lo=0, hi=1)
    p = _checks.number("percentile", percentile, lo=0, hi=1, lo_open=True)
    if r == 1:
        raise ValueError("rho must be a number in [0, 1) (got 1)")
    if p == 1:
        raise ValueError("percentile must be a number in (0, 1) (got 1)")
    return -math.log(1 - p) * s / (1 - r)


@dataclass(frozen=True)
class QueueRun:
    """One simulated run of a single FCFS queue.

    Attributes
    ----------
    rho : float
        Target utilisation (arrival rate x mean service time).
    service : str
        The service-time distribution.
    arrival_rate_per_s : float
        Poisson arrival rate (requests/s).
    mean_service_s : float
        Mean service time the run actually drew (s).
    measured_rho : float
        Busy time over elapsed time.
    mean_response_s, p99_response_s : float
        Mean and 99th percentile of response time, wait plus service (s).
    requests : int
        Requests measured (after the warm-up).
    """

    rho: float
    service: str
    arrival_rate_per_s: float
    mean_service_s: float
    measured_rho: float
    mean_response_s: float
    p99_response_s: float
    requests: int

    def to_dict(self) -> dict:
        """Plain dict of unrounded numbers."""
        return asdict(self)


def _service_sampler(
    service: str,
    mean_s: float,
    sigma: float,
    mean_tokens: int,
    rng: random.Random,
    prefill_s: Callable[[int], float] | None,
):
    if service == "exponential":
        return lambda: rng.expovariate(1 / mean_s)
    if service == "lognormal":
        mu = math.log(mean_s) - sigma**2 / 2  # keeps the mean at mean_s
        return lambda: rng.lognormvariate(mu, sigma)
    cache: dict[int, float] = {}

    def prefill() -> float:
        tokens = max(1, round(rng.expovariate(1 / mean_tokens)))
        if tokens not in cache:
            cache[tokens] = prefill_s(tokens)  # type: ignore[misc]
        return cache[tokens]

    return prefill


def simulate_queue(
    rho: float,
    *,
    service_s: float = 0.0665,
    service: str = "exponential",
    sigma: float = 1.0,
    mean_prompt_tokens: int = 2048,
    requests: int = 20_000,
    warmup: int = 1_000,
    seed: int = 0,
    prefill_s: Callable[[int], float] | None = None,
) -> QueueRun:
    """Simulate one first-come-first-served server with Poisson arrivals.

    Response times follow Lindley's recursion: a request starts when it
    arrives or when the one before it leaves, whichever is later.

    Parameters
    ----------
    rho : float
        Target utilisation in (0, 1); the arrival rate is ``rho / mean service``.
    service_s : float
        Mean service time S for the exponential and lognormal cases (s).
    service : {"exponential", "lognormal", "prefill"}
        Service-time distribution (see the module docstring).  For
        ``"prefill"`` the mean service time is measured from a pilot sample
        of prompts, so ``service_s`` is not used.
    sigma : float
        Shape of the lognormal (standard deviation of log service time).
    mean_prompt_tokens : int
        Mean of the exponential prompt lengths for ``"prefill"`` (tokens).
    requests : int
        Requests measured after the warm-up.
    warmup : int
        Requests simulated first and not measured.
    seed : int
        Seed of the ``random.Random`` used for arrivals and service times.
    prefill_s : callable, optional
        For ``"prefill"``: the service time (s) of a prompt of so many tokens,
        for example :func:`lanes.gpu.steps.prefill_service_s`.  The queue
        itself knows nothing of the engine, so this must be given.

    Returns
    -------
    QueueRun
    """
    r = _checks.number("rho", rho, lo=0, hi=1, lo_open=True)
    if r == 1:
        raise ValueError("rho must be a number in (0, 1) (got 1)")
    kind = _checks.choice("service", service, SERVICES)
    s = _checks.number("service_s", service_s, lo=0, lo_open=True)
    sig = _checks.number("sigma", sigma, lo=0)
    mean_tokens = _checks.integer("mean_prompt_tokens", mean_prompt_tokens, lo=1)
    n = _checks.integer("requests", requests, lo=100, hi=MAX_REQUESTS)
    w = _checks.integer("warmup", warmup, lo=0, hi=MAX_REQUESTS)
    seed = _checks.integer("seed", seed, big=True)
    if kind == "prefill" and not callable(prefill_s):
        raise ValueError("prefill_s must be a function of prompt tokens giving seconds when service='prefill'")

    rng = random.Random(seed)
    draw = _service_sampler(kind, s, sig, mean_tokens, rng, prefill_s)
    if kind == "prefill":
        pilot = random.Random(seed + 1)
        pilot_draw = _service_sampler(kind, s, sig, mean_tokens, pilot, prefill_s)
        s = sum(pilot_draw() for _ in range(20_000)) / 20_000
    rate = r / s

    t = 0.0
    free_at = 0.0
    responses: list[float] = []
    busy = 0.0
    first_arrival = 0.0
    for i in range(n + w):
        t += rng.expovariate(rate)
        x = draw()
        start = t if t > free_at else free_at
        free_at = start + x
        if i == w:
            first_arrival = t
        if i >= w:
            responses.append(free_at - t)
            busy += x
    responses.sort()
    span = free_at - first_arrival
    return QueueRun(
        rho=r,
        service=kind,
        arrival_rate_per_s=rate,
        mean_service_s=busy / n,
        measured_rho=busy / span,
        mean_response_s=sum(responses) / n,
        p99_response_s=percentile(responses, 0.99),
        requests=n,
    )


#: Most requests (measured or warm-up) one :func:`simulate_queue` run takes: about 3 s.
MAX_REQUESTS = 2_000_000
#: Most requests :func:`knee_sweep` and :func:`rho_limit` simulate in all.
MAX_TOTAL_REQUESTS = 10_000_000


def _queue_keywords(where: str, kwargs: dict) -> int:
    """Check the keywords passed on to :func:`simulate_queue`; return requests per run."""
    import inspect

    known = [k for k in inspect.signature(simulate_queue).parameters if k != "rho"]
    _checks.keywords(where, kwargs, known)
    n = _checks.integer("requests", kwargs.get("requests", 20_000), lo=100, hi=MAX_REQUESTS)
    return n + _checks.integer("warmup", kwargs.get("warmup", 1000), lo=0, hi=MAX_REQUESTS)


def knee_sweep(rhos: Sequence[float], **kwargs: object) -> list[QueueRun]:
    """:func:`simulate_queue` at each utilisation in ``rhos`` (same keywords, same seed).

    At most :data:`MAX_TOTAL_REQUESTS` requests are simulated in all.
    """
    rhos = _checks.sequence("rhos", rhos, what="utilisations")
    per_run = _queue_keywords("knee_sweep", kwargs)
    _checks.limit("rhos", len(rhos) * per_run, MAX_TOTAL_REQUESTS, why="len(rhos) x (requests + warmup), in requests")
    return [simulate_queue(rho, **kwargs) for rho in rhos]  # type: ignore[arg-type]


def rho_limit(
    p99_target_s: float = 1.0,
    *,
    step: float = 0.01,
    **kwargs: object,
) -> float:
    """Highest utilisation on a grid of ``step`` whose simulated p99 meets the target.

    Scans ``step, 2 x step, ...`` below 1 and returns the last utilisation
    before the first miss (0.0 if even the first misses).  Keywords go to
    :func:`simulate_queue`.
    """
    target = _checks.number("p99_target_s", p99_target_s, lo=0, lo_open=True)
    st = _checks.number("step", step, lo=0, hi=0.5, lo_open=True)
    per_run = _queue_keywords("rho_limit", kwargs)
    runs = math.ceil(1 / st)
    if runs * per_run > MAX_TOTAL_REQUESTS:
        raise ValueError(
            f"step must leave at most {MAX_TOTAL_REQUESTS} simulated requests in all, 1/step x (requests + warmup) "
            f"(got step={st!r}: {_checks.show(runs)} runs of {per_run})"
        )
    best = 0.0
    k = 1
    while k * st < 1 - 1e-9:
        rho = round(k * st, 10)
        if simulate_queue(rho, **kwargs).p99_response_s > target:  # type: ignore[arg-type]
            break
        best = rho
        k += 1
    return best
