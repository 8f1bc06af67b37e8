"""Inside the interactive lane: a bounded queue in front of a few slots.

A discrete-event model of one lane.  Requests from one or more tenants arrive
as Poisson streams (a tenant may *surge* to a higher rate for a while), wait in
the lane's queue, and hold one of ``slots`` servers for a service time drawn
uniformly from ``service_s``.  Every request has a client deadline
``deadline_s`` after its arrival: a client that has not had its answer by then
has given up, so an answer that arrives later is wasted work.

A :class:`LanePolicy` chooses the overload behaviour, one rule at a time:

* ``max_queue`` bounds the queue; an arrival that finds it full is rejected at
  once (an HTTP 429) instead of timing out later.  With ``fair_share`` the bound
  applies to each tenant's own queue.
* ``drop_expired`` skips, at dequeue, a request whose deadline has already
  passed, so a slot is never spent on a client that has left.
* ``fair_share`` keeps one queue per tenant and gives a free slot to the
  waiting tenant with the fewest requests in service (ties: the tenant served
  longest ago), so one tenant's flood waits behind itself.
* ``order="adaptive-lifo"`` serves the oldest request first while the queue
  drains normally, and the newest first once the queue has not been empty for
  ``overload_after_s`` (Maurer, "Fail at Scale", 2015).  ``queue_timeout_s``
  is the CoDel-style companion: while overloaded, a request that has waited
  longer than this is dropped at dequeue; while not overloaded, the limit is
  ``overload_after_s``.  That second limit never actually drops anything: a
  queue that was empty less than ``overload_after_s`` ago holds no request
  that has waited that long.  Nothing forces ``queue_timeout_s`` to be the
  shorter of the two (in chapter 6 it is the longer).

The run is deterministic for a given ``seed``: arrivals and service times are
drawn from one ``random.Random(seed)`` before the queue rule is applied, so
every policy sees exactly the same requests.  Standard library only.

>>> r = simulate_lane(LaneScenario(duration_s=60, seed=1), LanePolicy())
>>> r.count("served") + r.count("unfinished") == len(r.records)
True
"""

from __future__ import annotations

import heapq
import random
from collections import deque
from collections.abc import Sequence
from dataclasses import dataclass, field, replace

from .. import _checks
from .._stats import percentile

__all__ = [
    "ORDERS",
    "OUTCOMES",
    "LanePolicy",
    "LaneRecord",
    "LaneResult",
    "LaneScenario",
    "TenantLoad",
    "compare_policies",
    "simulate_lane",
]

ORDERS = ("fifo", "adaptive-lifo")
"""Queue orders: oldest first always, or newest first while overloaded."""

OUTCOMES = ("served", "late", "rejected", "expired", "timed-out", "unfinished")
"""What can happen to a request.

``served``: answered within its deadline; ``late``: answered after the client
gave up (wasted slot time); ``rejected``: turned away at the front (429);
``expired``: dropped at dequeue because its deadline had passed;
``timed-out``: dropped at dequeue by the queue timeout; ``unfinished``: still
queued or running when the run ended.
"""


#: Most requests a lane scenario may expect (each tenant's highest rate times
#: the duration, summed); every one is drawn and recorded, so this bounds a
#: run: about 5 s and 0.25 GiB on the course machine.
MAX_EXPECTED_REQUESTS = 500_000


# ---------------------------------------------------------------------------
# Inputs


@dataclass(frozen=True)
class TenantLoad:
    """One tenant's arrival stream.

    Parameters
    ----------
    name : str
        Tenant name, unique within a scenario.
    rate_per_s : float
        Poisson arrival rate outside the surge (requests/s, >= 0).
    surge_rate_per_s : float or None
        Arrival rate during ``[surge_start_s, surge_end_s)``; ``None`` for no surge.
    surge_start_s, surge_end_s : float
        The surge window (s).
    """

    name: str
    rate_per_s: float
    surge_rate_per_s: float | None = None
    surge_start_s: float = 0.0
    surge_end_s: float = 0.0

    def __post_init__(self) -> None:
        _checks.text("name", self.name)
        object.__setattr__(self, "rate_per_s", _checks.number("rate_per_s", self.rate_per_s, lo=0))
        if self.surge_rate_per_s is not None:
            object.__setattr__(self, "surge_rate_per_s", _checks.number("surge_rate_per_s", self.surge_rate_per_s, lo=0))
        start = _checks.number("surge_start_s", self.surge_start_s, lo=0)
        end = _checks.number("surge_end_s", self.surge_end_s, lo=0)
        if end < start:
            raise ValueError(f"surge_end_s must be >= surge_start_s (got {end!r} < {start!r})")
        object.__setattr__(self, "surge_start_s", start)
        object.__setattr__(self, "surge_end_s", end)

    def rate_at(self, t_s: float) -> float:
        """Arrival rate at time ``t_s`` (requests/s)."""
        if self.surge_rate_per_s is not None and self.surge_start_s <= t_s < self.surge_end_s:
            return self.surge_rate_per_s
        return self.rate_per_s


@dataclass(frozen=True)
class LaneScenario:
    """The workload and capacity of one interactive lane.

    Parameters
    ----------
    tenants : tuple of TenantLoad
        Arrival streams (at least one, unique names).
    slots : int
        Requests served at once (>= 1).
    service_s : (float, float)
        Service time range; each request's is uniform in it (s, 0 < lo <= hi).
        Capacity is about ``slots / mean(service_s)`` requests/s.
    deadline_s : float
        Client deadline after arrival (s, > 0): later answers are wasted.
    duration_s : float
        Arrivals are generated in ``[0, duration_s)`` and the run stops then (s, > 0).
    seed : int
        Seed of the one random generator the run uses.
    """

    tenants: tuple[TenantLoad, ...] = (TenantLoad("a", 6.0),)
    slots: int = 8
    service_s: tuple[float, float] = (0.5, 1.5)
    deadline_s: float = 5.0
    duration_s: float = 300.0
    seed: int = 1

    def __post_init__(self) -> None:
        tenants = tuple(_checks.items(self.tenants) or ())
        if not tenants or not all(isinstance(t, TenantLoad) for t in tenants):
            raise ValueError(f"tenants must be a non-empty sequence of TenantLoad (got {_checks.show(self.tenants)})")
        names = [t.name for t in tenants]
        if len(set(names)) != len(names):
            raise ValueError(f"tenants must have unique names (got {', '.join(names)})")
        object.__setattr__(self, "tenants", tenants)
        object.__setattr__(self, "slots", _checks.integer("slots", self.slots, lo=1))
        lo, hi = _checks.pair("service_s", self.service_s, "a pair (lo, hi) of seconds")
        lo = _checks.number("service_s lo", lo, lo=0, lo_open=True)
        hi = _checks.number("service_s hi", hi, lo=0, lo_open=True)
        if lo > hi:
            raise ValueError(f"service_s must have lo <= hi (got {lo!r} > {hi!r})")
        object.__setattr__(self, "service_s", (lo, hi))
        object.__setattr__(self, "deadline_s", _checks.number("deadline_s", self.deadline_s, lo=0, lo_open=True))
        object.__setattr__(self, "duration_s", _checks.number("duration_s", self.duration_s, lo=0, lo_open=True))
        object.__setattr__(self, "seed", _checks.integer("seed", self.seed, big=True))
        peak = sum(max(t.rate_per_s, t.surge_rate_per_s or 0.0) for t in tenants)
        if peak * self.duration_s > MAX_EXPECTED_REQUESTS:
            raise ValueError(
                f"duration_s x tenants' rates must expect at most {MAX_EXPECTED_REQUESTS} requests "
                f"(got {peak * self.duration_s:.0f}: duration_s={self.duration_s!r}, total rate {peak!r}/s)"
            )

    @property
    def capacity_per_s(self) -> float:
        """Requests per second the slots can finish: ``slots / mean service time``."""
        return self.slots / (sum(self.service_s) / 2)

    def with_(self, **changes) -> "LaneScenario":
        """A copy with some fields changed (validated again)."""
        return replace(self, **changes)


@dataclass(frozen=True)
class LanePolicy:
    """How the lane behaves when more work arrives than it can serve.

    Parameters
    ----------
    max_queue : int or None
        Most requests allowed to wait (per tenant with ``fair_share``); an
        arrival above it is rejected at once.  ``None``: unbounded.
    drop_expired : bool
        Skip, at dequeue, requests whose client deadline has passed.
    fair_share : bool
        One queue per tenant; a free slot goes to the waiting tenant with the
        fewest requests in service.
    order : {"fifo", "adaptive-lifo"}
        Oldest first, or newest first while the queue has been non-empty for
        ``overload_after_s``.
    queue_timeout_s : float or None
        CoDel-style limit on time in queue while overloaded (s); ``None``: none.
        Outside overload the limit is ``overload_after_s``.
    overload_after_s : float
        How long the queue must stay non-empty before the lane counts as
        overloaded (s, > 0).
    name : str
        Label for tables and legends (built from the rules when empty).
    """

    max_queue: int | None = None
    drop_expired: bool = False
    fair_share: bool = False
    order: str = "fifo"
    queue_timeout_s: float | None = None
    overload_after_s: float = 1.0
    name: str = field(default="")

    def __post_init__(self) -> None:
        if self.max_queue is not None:
            object.__setattr__(self, "max_queue", _checks.integer("max_queue", self.max_queue, lo=1))
        _checks.choice("order", self.order, ORDERS)
        if self.queue_timeout_s is not None:
            object.__setattr__(self, "queue_timeout_s", _checks.number("queue_timeout_s", self.queue_timeout_s, lo=0, lo_open=True))
        object.__setattr__(self, "overload_after_s", _checks.number("overload_after_s", self.overload_after_s, lo=0, lo_open=True))
        for flag in ("drop_expired", "fair_share"):
            object.__setattr__(self, flag, _checks.boolean(flag, getattr(self, flag)))
        _checks.text("name", self.name, empty=True)
        if not self.name:
            object.__setattr__(self, "name", self.describe())

    def describe(self) -> str:
        """A short label built from the rules, e.g. ``"fifo, queue<=40, drop expired"``."""
        parts = [self.order]
        if self.max_queue is not None:
            parts.append(f"queue<={self.max_queue}" + (" per tenant" if self.fair_share else ""))
        if self.fair_share and self.max_queue is None:
            parts.append("fair share")
        if self.drop_expired:
            parts.append("drop expired")
        if self.queue_timeout_s is not None:
            parts.append(f"timeout {self.queue_timeout_s:g} s")
        return ", ".join(parts)


# ---------------------------------------------------------------------------
# Results


@dataclass(frozen=True)
class LaneRecord:
    """One request, as a flat record.

    ``start_s`` and ``finish_s`` are ``None`` when the request never started;
    ``wait_s`` is start minus arrival (``None`` if it never started).
    """

    index: int
    tenant: str
    arrival_s: float
    service_s: float
    deadline_s: float
    outcome: str
    start_s: float | None = None
    finish_s: float | None = None

    @property
    def wait_s(self) -> float | None:
        """Time in queue (s), or ``None`` if the request never started."""
        return None if self.start_s is None else self.start_s - self.arrival_s

    @property
    def latency_s(self) -> float | None:
        """Arrival to answer (s), or ``None`` if never answered."""
        return None if self.finish_s is None else self.finish_s - self.arrival_s


def _quantile(values: Sequence[float], q: float) -> float:
    """The course's percentile of ``values`` (``nan`` when empty)."""
    return percentile(sorted(values), q, empty=float("nan"))


@dataclass(frozen=True)
class LaneResult:
    """Outcome of :func:`simulate_lane`.

    Attributes
    ----------
    scenario, policy : LaneScenario, LanePolicy
        What was run.
    records : tuple of LaneRecord
        Every request, in arrival order.
    queue_len_t_s, queue_len : tuple
        The queue length sampled once per second: times (s) and lengths.
    queue_len_by_tenant : dict of str to tuple of int
        The same samples split by tenant: requests of each tenant waiting.
    """

    scenario: LaneScenario
    policy: LanePolicy
    records: tuple[LaneRecord, ...]
    queue_len_t_s: tuple[float, ...]
    queue_len: tuple[int, ...]
    queue_len_by_tenant: dict[str, tuple[int, ...]] = field(default_factory=dict)

    def _of(self, tenant: str | None) -> list[LaneRecord]:
        return [r for r in self.records if tenant is None or r.tenant == tenant]

    def count(self, outcome: str, tenant: str | None = None) -> int:
        """Requests with ``outcome`` (one of :data:`OUTCOMES`), optionally for one tenant."""
        _checks.choice("outcome", outcome, OUTCOMES)
        return sum(r.outcome == outcome for r in self._of(tenant))

    def latency_quantile_s(self, q: float, tenant: str | None = None) -> float:
        """Quantile ``q`` of arrival-to-answer time over answered requests, on time or late (s)."""
        return _quantile([r.latency_s for r in self._of(tenant) if r.latency_s is not None], q)

    def wait_quantile_s(self, q: float, tenant: str | None = None) -> float:
        """Quantile ``q`` of the queue wait over requests that started (s).

        The wait is the lane's share of a request's time to first token:
        whatever the prefill costs comes on top of it.
        """
        return _quantile([r.wait_s for r in self._of(tenant) if r.wait_s is not None], q)

    def goodput_per_s(self, tenant: str | None = None) -> float:
        """Requests answered within their deadline, per second of the run."""
        return self.count("served", tenant) / self.scenario.duration_s

    def wasted_slot_s(self) -> float:
        """Slot-seconds spent on answers nobody was waiting for any more (late answers)."""
        return sum(r.service_s for r in self.records if r.outcome == "late")

    def summary(self, tenant: str | None = None) -> dict[str, float | int | str]:
        """The numbers the chapter tabulates, for all tenants or one."""
        recs = self._of(tenant)
        n = len(recs)
        return {
            "policy": self.policy.name,
            "arrived": n,
            "on time": self.count("served", tenant),
            "on time (%)": 100.0 * self.count("served", tenant) / n if n else float("nan"),
            "rejected (429)": self.count("rejected", tenant),
            "dropped (expired)": self.count("expired", tenant),
            "dropped (timeout)": self.count("timed-out", tenant),
            "answered late": self.count("late", tenant),
            "p50 latency (s)": self.latency_quantile_s(0.5, tenant),
            "p99 latency (s)": self.latency_quantile_s(0.99, tenant),
            "goodput (req/s)": self.goodput_per_s(tenant),
            "wasted slot-s": sum(r.service_s for r in recs if r.outcome == "late"),
        }

    def to_frame(self):
        """One row per request (pandas imported here)."""
        import pandas as pd

        rows = [
            {
                "tenant": r.tenant,
                "arrival_s": r.arrival_s,
                "start_s": r.start_s,
                "finish_s": r.finish_s,
                "wait_s": r.wait_s,
                "latency_s": r.latency_s,
                "service_s": r.service_s,
                "outcome": r.outcome,
            }
            for r in self.records
        ]
        return pd.DataFrame(rows).rename_axis("request")


# ---------------------------------------------------------------------------
# The simulator


def _draw(scenario: LaneScenario) -> list[tuple[float, int, float]]:
    """All arrivals as (time_s, tenant index, service_s), in time order."""
    rng = random.Random(scenario.seed)
    out: list[tuple[float, int, float]] = []
    lo, hi = scenario.service_s
    for ti, tenant in enumerate(scenario.tenants):
        edges = sorted({0.0, scenario.duration_s, *(e for e in (tenant.surge_start_s, tenant.surge_end_s) if 0 < e < scenario.duration_s)})
        for a, b in zip(edges, edges[1:]):
            rate = tenant.rate_at(a)
            if rate <= 0:
                continue
            t = a + rng.expovariate(rate)
            while t < b:
                out.append((t, ti, rng.uniform(lo, hi)))
                t += rng.expovariate(rate)
    out.sort(key=lambda x: (x[0], x[1]))
    return out


def simulate_lane(scenario: LaneScenario | None = None, policy: LanePolicy | None = None) -> LaneResult:
    """Run one lane under one policy.

    Parameters
    ----------
    scenario : LaneScenario, optional
        Workload and capacity (the default: one tenant at 6 req/s, 8 slots,
        1 s mean service, 5 s deadline, 300 s).
    policy : LanePolicy, optional
        Overload behaviour (default: unbounded FIFO, nothing dropped).

    Returns
    -------
    LaneResult
        A record per request and the queue length once per second.

    Notes
    -----
    Events are processed in time order; completions at a given instant come
    before arrivals at that instant.  The queue is looked at only when a slot
    is free, which is when drops (expired, timed-out) happen: a dropped request
    costs no slot time.
    """
    sc = LaneScenario() if _checks.instance("scenario", scenario, LaneScenario, none_ok=True) is None else scenario
    pol = LanePolicy() if _checks.instance("policy", policy, LanePolicy, none_ok=True) is None else policy
    arrivals = _draw(sc)
    n_t = len(sc.tenants)
    names = [t.name for t in sc.tenants]

    queues: list[deque[int]] = [deque() for _ in range(n_t if pol.fair_share else 1)]
    running = [0] * n_t
    last_served = [-1.0] * n_t
    free = sc.slots
    outcome: list[str] = ["unfinished"] * len(arrivals)
    start: list[float | None] = [None] * len(arrivals)
    finish: list[float | None] = [None] * len(arrivals)
    done: list[tuple[float, int]] = []  # heap of (finish time, request)
    last_empty_s = 0.0
    samples_t: list[float] = []
    samples_q: list[int] = []
    samples_by: list[list[int]] = [[] for _ in range(n_t)]
    next_sample = 0.0

    def queued() -> int:
        return sum(len(q) for q in queues)

    def pick_queue() -> deque[int] | None:
        if not pol.fair_share:
            return queues[0] if queues[0] else None
        waiting = [i for i in range(n_t) if queues[i]]
        if not waiting:
            return None
        i = min(waiting, key=lambda i: (running[i], last_served[i], i))
        return queues[i]

    def dispatch(now: float) -> None:
        nonlocal free, last_empty_s
        while free:
            if queued() == 0:
                last_empty_s = now
                return
            overloaded = now - last_empty_s >= pol.overload_after_s
            q = pick_queue()
            assert q is not None
            k = q.pop() if (pol.order == "adaptive-lifo" and overloaded) else q.popleft()
            t_arr, ti, svc = arrivals[k]
            if queued() == 0:
                last_empty_s = now
            waited = now - t_arr
            if pol.drop_expired and waited >= sc.deadline_s:
                outcome[k] = "expired"
                continue
            if pol.queue_timeout_s is not None:
                limit = pol.queue_timeout_s if overloaded else pol.overload_after_s
                if waited > limit:
                    outcome[k] = "timed-out"
                    continue
            start[k] = now
            finish[k] = now + svc
            free -= 1
            running[ti] += 1
            last_served[ti] = now
            heapq.heappush(done, (now + svc, k))

    def complete_until(t: float) -> None:
        nonlocal free
        while done and done[0][0] <= t:
            now, k = heapq.heappop(done)
            ti = arrivals[k][1]
            running[ti] -= 1
            free += 1
            outcome[k] = "served" if now - arrivals[k][0] <= sc.deadline_s else "late"
            dispatch(now)

    def sample_until(t: float) -> None:
        nonlocal next_sample
        while next_sample <= t and next_sample < sc.duration_s:
            complete_until(next_sample)
            samples_t.append(next_sample)
            samples_q.append(queued())
            if pol.fair_share:
                for i in range(n_t):
                    samples_by[i].append(len(queues[i]))
            else:
                counts = [0] * n_t
                for k in queues[0]:
                    counts[arrivals[k][1]] += 1
                for i in range(n_t):
                    samples_by[i].append(counts[i])
            next_sample += 1.0

    for k, (t_arr, ti, _svc) in enumerate(arrivals):
        sample_until(t_arr)
        complete_until(t_arr)
        q = queues[ti if pol.fair_share else 0]
        if pol.max_queue is not None and len(q) >= pol.max_queue:
            outcome[k] = "rejected"
            continue
        if queued() == 0:
            last_empty_s = t_arr
        q.append(k)
        dispatch(t_arr)
    sample_until(sc.duration_s)
    complete_until(sc.duration_s)
    for k, f in enumerate(finish):  # answers still in flight at the end are unfinished
        if f is not None and f > sc.duration_s:
            outcome[k] = "unfinished"

    records = tuple(
        LaneRecord(
            index=k,
            tenant=names[ti],
            arrival_s=t_arr,
            service_s=svc,
            deadline_s=t_arr + sc.deadline_s,
            outcome=outcome[k],
            start_s=start[k],
            finish_s=finish[k] if outcome[k] in ("served", "late") else None,
        )
        for k, (t_arr, ti, svc) in enumerate(arrivals)
    )
    return LaneResult(
        scenario=sc,
        policy=pol,
        records=records,
        queue_len_t_s=tuple(samples_t),
        queue_len=tuple(samples_q),
        queue_len_by_tenant={name: tuple(samples_by[i]) for i, name in enumerate(names)},
    )


def compare_policies(scenario: LaneScenario, policies: Sequence[LanePolicy], tenant: str | None = None):
    """Run every policy on the same scenario and tabulate :meth:`LaneResult.summary` (a DataFrame)."""
    import pandas as pd

    _checks.instance("scenario", scenario, LaneScenario)
    policies = _checks.sequence("policies", policies, what="LanePolicy", min_len=1)
    for p in policies:
        _checks.instance("policies", p, LanePolicy)
    if tenant is not None:
        _checks.choice("tenant", tenant, tuple(t.name for t in scenario.tenants))
    rows = [simulate_lane(scenario, p).summary(tenant) for p in policies]
    return pd.DataFrame(rows).set_index("policy")
