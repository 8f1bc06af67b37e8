"""The slot pool simulated the plain way: one loop over ticks, one function per step.

This is the model to read first.  It keeps a list of the jobs holding slots
and counts every one of them down, every tick, exactly as the course describes
the pool.  Each step of a tick is a small function below, called in this order
by :func:`tick`:

1. :func:`join_queue`: the tick's interactive arrivals join their queue.
2. :func:`complete_work`: every running job does one second of work; jobs
   with none left free their slots.
3. The scheduler looks at the pool (:meth:`~lanes.pool.protocol.Board.observe`)
   and decides which batch jobs to evict and which waiting jobs to start.
4. :func:`carry_out`: the decision is checked against the rules of the
   interface (:mod:`lanes.pool.protocol`) and carried out.
5. The busy slots are counted, for the slot use column.

The scheduling rule itself is not in this file: any scheduler written
against the interface can be run, and the seven built-in policies with their
four extensions are written that way in :mod:`lanes.pool.schedulers`.

:func:`run` draws the random numbers, calls :func:`tick` once per second and
summarises the run into the same row as :meth:`lanes.SlotPoolResult.row`.

It is slow: it touches every slot every tick.  The fast engine
(:mod:`lanes.pool.engine`) gets the same answer without doing that.  The two
share no simulation code, only the :class:`~lanes.pool.scenario.Scenario` and
:class:`~lanes.pool.policies.Policy` classes, so when the tests find them
equal on thousands of random scenarios, that is evidence for both.
"""

from __future__ import annotations

import math
import random
from dataclasses import dataclass, field

from .. import _checks
from .policies import Policy, parse_policy
from .protocol import BATCH, INTERACTIVE, Board, Running
from .arrivals import _refuse_long
from .scenario import MAX_SERVICE_S, Scenario
from .schedulers import as_scheduler, name_of

#: An interactive request is late when it waited longer than this, seconds.
LATE_AFTER_S = 2


# --- the things in the pool ----------------------------------------------------------


@dataclass(eq=False)
class Pool:
    """Everything that changes during a run.

    Attributes
    ----------
    board : Board
        What a scheduler may see: the queues and the jobs holding slots
        (:class:`~lanes.pool.protocol.Board`).
    left : dict of int to int
        Seconds of slot time each running job still needs, by job id; the
        simulator counts these down.  For interactive requests it is the
        hidden part of the state: no scheduler is told it.
    service : dict of int to int
        Slot time of each waiting interactive request, by id (hidden too).
    waits : list of int
        The queue wait of every admitted interactive request, seconds.
    batch_done, preempted, busy_slot_s : int
        Batch jobs finished, evictions, and busy slots summed over ticks.
    """

    board: Board
    left: dict = field(default_factory=dict)
    service: dict = field(default_factory=dict)
    waits: list[int] = field(default_factory=list)
    batch_done: int = 0
    preempted: int = 0
    busy_slot_s: int = 0

    @property
    def slots(self) -> int:
        """Slots in the pool."""
        return self.board.slots


# --- the random draws ------------------------------------------------------------------


def draw(scenario: Scenario) -> tuple[list[int], list[list[int]]]:
    """The backlog's service times and, per tick, the arrivals' service times.

    One ``random.Random(seed)`` makes every draw, in the anchor program's
    order: the backlog first, then for each tick one uniform number that
    fixes how many requests arrive (a Poisson count by inverse CDF: add up
    the probabilities of 0, 1, 2, ... arrivals until the sum reaches it),
    followed by one service time per arrival.
    """
    _checks.instance("scenario", scenario, Scenario)
    _refuse_long("the reference simulator draws every tick's arrivals as lists", scenario)
    rng = random.Random(scenario.seed)
    backlog = [rng.randint(*scenario.batch_service_s) for _ in range(scenario.backlog)]
    per_tick = []
    for t in range(scenario.ticks):
        lam = arrival_rate(scenario, t)
        u = rng.random()
        k = 0
        term = total = math.exp(-lam)  # probability of 0 arrivals
        while u > total and k < 10_000:  # the cap only matters when rounding keeps total below u
            k += 1
            term *= lam / k  # probability of k arrivals
            total += term
        per_tick.append([rng.randint(*scenario.inter_service_s) for _ in range(k)])
    return backlog, per_tick


def arrival_rate(scenario: Scenario, t: int) -> float:
    """Interactive arrivals per second at tick ``t``: a raised cosine from trough to peak and back."""
    if type(scenario) is not Scenario or type(t) is not int or not 0 <= t <= MAX_SERVICE_S:  # skipped on draw's calls
        _checks.instance("scenario", scenario, Scenario)
        t = _checks.number("t", t)
    swing = (1 - math.cos(2 * math.pi * t / scenario.ticks)) / 2  # 0 at the ends, 1 in the middle
    return scenario.trough_rate + (scenario.peak_rate - scenario.trough_rate) * swing


# --- one tick ---------------------------------------------------------------------------


def tick(pool: Pool, t: int, arrivals: list[int], scheduler) -> None:
    """Advance the pool by one second, step by step."""
    if not callable(getattr(scheduler, "decide", None)):
        raise ValueError(f"scheduler must have a method decide(obs) (got {_checks.show(scheduler)}); "
                         "lanes.pool.schedulers.as_scheduler makes one from a spec or a function")
    join_queue(pool, t, arrivals)
    complete_work(pool)
    decision = scheduler.decide(pool.board.observe(t))
    carry_out(pool, t, decision)
    pool.busy_slot_s += pool.board.n_running


def join_queue(pool: Pool, t: int, arrivals: list[int]) -> list:
    """Step 1: this tick's requests join the back of the interactive queue; returns them."""
    _check_step(pool, t)
    arrivals = _service_times("arrivals", arrivals)
    joined = []
    for service_s in arrivals:
        req = pool.board.add_request(t)
        pool.service[req.id] = service_s
        joined.append(req)
    return joined


def complete_work(pool: Pool) -> list[Running]:
    """Step 2: every running job does one second of work; finished jobs leave their slots.

    Returns the jobs that finished.
    """
    _check_step(pool)
    left = pool.left
    done = []
    for job_id, s in left.items():  # one second of work each
        left[job_id] = s - 1
        if s <= 1:
            done.append(job_id)
    for job_id in done:
        del left[job_id]
    finished = pool.board.finish(done)
    pool.batch_done += sum(1 for job in finished if job.kind == BATCH)
    return finished


def carry_out(pool: Pool, t: int, decision: object) -> tuple[list[Running], list[Running]]:
    """Steps 3 and 4: check the scheduler's decision, then evict and start jobs.

    An evicted batch job goes back to the head of the batch queue and must
    redo ``preempt_cost_s`` seconds of work when it resumes.  A started
    request's queue wait is recorded.  A decision that breaks a rule raises
    :class:`~lanes.pool.protocol.DecisionError` and changes nothing.
    Returns the evicted and the started jobs.
    """
    _check_step(pool, t)
    evicted, started = pool.board.apply(t, decision)
    for job in evicted:
        del pool.left[job.id]
    pool.preempted += len(evicted)
    for job in started:
        if job.kind == INTERACTIVE:
            pool.left[job.id] = pool.service.pop(job.id)
            pool.waits.append(job.waited_s)
        else:
            pool.left[job.id] = job.ends_at - t
    return evicted, started


# --- a whole run ------------------------------------------------------------------------


def new_pool(scenario: Scenario, backlog: list[int]) -> Pool:
    """An empty pool with the whole backlog queued at t = 0 (ids ``0 .. backlog - 1``).

    ``backlog`` is the slot time of each batch job in queue order, seconds.
    """
    _checks.instance("scenario", scenario, Scenario)
    backlog = _service_times("backlog", backlog)
    pool = Pool(Board(scenario.slots, scenario.preempt_cost_s))
    for service_s in backlog:
        pool.board.add_batch(service_s, 0)
    return pool


def run(scenario: Scenario, policy: object, draws: tuple | None = None) -> dict:
    """Simulate ``policy`` on ``scenario`` and return its table row.

    ``policy`` is a :class:`Policy` or spec (run by its built-in scheduler)
    or any scheduler (see :func:`lanes.pool.schedulers.as_scheduler`).
    ``draws`` (the result of :func:`draw`) may be passed to reuse one set of
    random numbers for several policies, as the table does.  The row has the
    keys of :meth:`lanes.SlotPoolResult.row`.  It takes one to two seconds
    per policy for the anchor day on the course machine, and grows with
    ticks x slots.
    """
    _checks.instance("scenario", scenario, Scenario)
    if draws is not None:
        draws = _check_draws(scenario, draws)
    if isinstance(policy, str):
        policy = parse_policy(policy)
    if isinstance(policy, Policy):
        policy.check_fits(scenario.slots)
    scheduler = as_scheduler(policy)
    backlog, per_tick = draw(scenario) if draws is None else draws
    pool = new_pool(scenario, backlog)
    for t in range(scenario.ticks):
        tick(pool, t, per_tick[t], scheduler)
    return summarise(pool, scenario, policy.spec if isinstance(policy, Policy) else name_of(scheduler))


def summarise(pool: Pool, scenario: Scenario, label: str) -> dict:
    """The run's row: wait percentiles, late fraction, batch done, evictions, slot use."""
    _check_step(pool)
    _checks.instance("scenario", scenario, Scenario)
    _checks.text("label", label)
    waits = sorted(pool.waits)
    n = len(waits)
    return {
        "policy": label,
        "p50": percentile(waits, 0.5),
        "p99": percentile(waits, 0.99),
        "max": waits[-1] if n else -1,
        "late": sum(1 for w in waits if w > LATE_AFTER_S) / max(1, n),
        "batch_done": pool.batch_done,
        "preempted": pool.preempted,
        "util": pool.busy_slot_s / (scenario.ticks * scenario.slots),
    }


def percentile(sorted_waits: list[int], q: float) -> int:
    """Element ``int(q * n)`` of the sorted waits (the last one at most); -1 when there are none."""
    if type(sorted_waits) is not list or type(q) is not float:  # the checks, skipped on summarise's own calls
        sorted_waits = _checks.sequence("sorted_waits", sorted_waits, what="waits")
        q = _checks.number("q", q, lo=0, hi=1)
    n = len(sorted_waits)
    return sorted_waits[min(n - 1, int(q * n))] if n else -1


# --- checks at the entries ------------------------------------------------------------------


def _check_step(pool: object, t: object = 0) -> None:
    """Refuse a step on anything but a :class:`Pool`, or at a tick outside the longest window."""
    if type(pool) is not Pool:
        _checks.instance("pool", pool, Pool)
    if type(t) is not int or not 0 <= t <= MAX_SERVICE_S:
        _checks.integer("t", t, lo=0, hi=MAX_SERVICE_S)


def _service_times(name: str, values: object) -> list[int]:
    """``values`` as a list of slot times, integers >= 1 seconds."""
    items = values if type(values) is list else _checks.sequence(name, values, what="service times in seconds")
    if all(type(s) is int and s >= 1 for s in items):
        return items
    return [_checks.integer(f"{name}[{i}]", s, lo=1) for i, s in enumerate(items)]


def _check_draws(scenario: Scenario, draws: object) -> tuple[list[int], list]:
    """``draws`` as :func:`draw` returns them for ``scenario``: the backlog and one list per tick."""
    backlog, per_tick = _checks.pair("draws", draws, "a pair (backlog, per_tick) as draw(scenario) returns it")
    backlog = _service_times("draws backlog", backlog)
    per_tick = _checks.sequence("draws per_tick", per_tick, what="lists of service times, one per tick")
    if len(per_tick) != scenario.ticks:
        raise ValueError(f"draws per_tick must hold one list per tick of the scenario "
                         f"(got {len(per_tick)} for {scenario.ticks} ticks)")
    return backlog, per_tick
