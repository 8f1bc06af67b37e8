"""The pool's steps one at a time, for a judge that owns the clock (the online judge of set 13).

It lives beside the exercises because only set 13 uses it: its judge steps a student's
scheduler, and the set's notebook runs a practice day with :func:`run`.

:mod:`lanes.pool.engine` runs whole days, built-in policies and students'
schedulers alike.  A judge that asks a scheduler in another process for each
decision needs the steps apart: :func:`join_queue`, :func:`complete_work`
and :func:`carry_out` advance a :class:`Pool` (a
:class:`~lanes.pool.protocol.Board` plus the hold times no scheduler is
told) one second at a time, and :func:`summarise` gives the run's row.
:func:`run` runs a whole day through the engine.  One tick is one second.
"""

from __future__ import annotations

import math
import random
from dataclasses import dataclass, field

from .. import _checks
from ..pool.arrivals import ArrivalStream
from ..pool.engine import simulate
from ..pool.protocol import BATCH, INTERACTIVE, Board, Running
from ..pool.results import LATE_AFTER_S, percentile
from ..pool.scenario import MAX_SERVICE_S, Scenario


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
    """The backlog's service times and, per second, the arrivals' service times (:func:`lanes.draw_stream`'s draws)."""
    from ..pool.arrivals import draw_stream

    stream = draw_stream(scenario)
    per_tick: list[list[int]] = [[] for _ in range(scenario.ticks)]
    for t, s in zip(stream.arrival_tick, stream.inter_service_s):
        per_tick[t].append(s)
    return list(stream.batch_service_s), per_tick


# --- one tick ---------------------------------------------------------------------------


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
    """``policy``'s table row on ``scenario`` (run by :func:`lanes.simulate`), given ``draws`` or drawn.

    ``draws`` is ``(backlog, per_tick)`` as :func:`draw` returns it.
    """
    _checks.instance("scenario", scenario, Scenario)
    stream = None
    if draws is not None:
        backlog, per_tick = _check_draws(scenario, draws)
        when = [t for t, holds in enumerate(per_tick) for _ in holds]
        holds = [s for tick in per_tick for s in _service_times("draws per_tick", tick)]
        stream = ArrivalStream(tuple(backlog), tuple(when), tuple(holds), (0.0,) * len(when))
    return simulate(scenario, policy, stream=stream).row()


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
