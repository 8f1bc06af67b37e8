"""``simulate``: one policy on one scenario, checked at the edge, run by the fast loop.

The model is :mod:`lanes.pool.model`, the loop to read; :mod:`lanes.pool._fast` is the same loop
written for speed (tested against the model on every policy, extension and clock), and it alone
asks a student's scheduler (:mod:`lanes.pool.protocol`) at every tick.  What follows describes both.

The pool has ``slots`` identical slots.  Interactive requests arrive over the day
(:mod:`lanes.pool.arrivals`); a backlog of batch jobs is queued at t = 0.  At each scheduling instant
the loop runs five steps, in the anchor program's order:

1. **Arrivals**: requests seen at this instant join the interactive queue.
2. **Completions**: jobs whose slot time is up leave their slots.
3. **Decision**: the policy chooses running batch jobs to evict and waiting jobs to start.  A
   built-in policy (:class:`~lanes.pool.policies.Policy`) applies its rule, written out in the loop;
   any other scheduler is shown an :class:`~lanes.pool.protocol.Observation` and asked, and its
   decision is checked against the interface's rules (:mod:`lanes.pool.protocol`).
4. **Carry out**: evicted jobs go back to the head of the batch queue and redo ``preempt_cost_s``
   seconds when they resume; started jobs take slots.
5. **Count**: busy slots, completions and evictions, for the results.

**The clock.**  Instants are ticks of ``Scenario.tick_s`` seconds (1 s is the anchor's clock),
counted as whole ticks so nothing is rounded.  A built-in policy decides nothing new at an instant
where nothing arrived, finished or came of age (``min_run_s``), so the loop jumps from one such
instant to the next; a student's scheduler is asked at every tick.  With ``tick_s = 0`` the instants
are the arrivals and completions themselves, in seconds (event-driven).  A request's wait is counted
from the instant it is first seen to the instant it takes a slot.
"""

from __future__ import annotations

from typing import Any

from .. import _checks
from .arrivals import ArrivalStream, draw_stream
from .policies import Policy, parse_policy
from .results import SlotPoolResult
from .scenario import Scenario

from ._fast import run  # noqa: E402  (the loop, after the names it shares)


def simulate(scenario: Scenario | None = None, policy: Any = "priority", *, stream: ArrivalStream | None = None,
             **extensions: object) -> SlotPoolResult:
    """Run one policy on one scenario (the anchor scenario when ``scenario`` is omitted).

    ``policy`` is a spec such as ``"reserve:8"`` (:mod:`lanes.pool.policies`), a :class:`Policy`, or
    a scheduler written against :mod:`lanes.pool.protocol` (an object with ``decide(obs)``, its class,
    or a function ``f(obs)``).  ``stream``: the draws to use (a trace replay, or draws shared by
    several runs); drawn for ``scenario`` when omitted.  ``extensions`` (built-in policies only):
    ``floor``, ``aging_s``, ``promote_s``, ``victim``, ``min_run_s``.
    """
    sc = Scenario() if _checks.instance("scenario", scenario, Scenario, none_ok=True) is None else scenario
    if isinstance(policy, (str, Policy)):
        policy = parse_policy(policy, **extensions)
        policy.check_fits(sc.slots)
    elif extensions:
        raise ValueError(f"extensions ({', '.join(extensions)}) apply to built-in policies only, not to a scheduler")
    elif sc.eviction_stall_s or sc.batch_trough_rate or sc.batch_peak_rate:
        raise ValueError("eviction_stall_s and batch arrivals apply to built-in policies only: run a scheduler "
                         "with eviction_stall_s=0, batch_trough_rate=0 and batch_peak_rate=0")
    else:
        from .protocol import student_scheduler  # the interface, loaded only for a student's scheduler

        policy = student_scheduler(policy)
    if stream is None:
        return run(sc, policy, draw_stream(sc))
    _checks.instance("stream", stream, ArrivalStream)
    last = stream.arrival_tick[-1] if stream.arrival_tick else -1
    if last >= sc.ticks or len(stream.batch_service_s) != sc.backlog:
        raise ValueError(f"stream must be drawn for this scenario: arrivals within {sc.ticks} s and a backlog of "
                         f"{sc.backlog} (got an arrival at {last} s and {len(stream.batch_service_s)} backlog jobs)")
    return run(sc, policy, stream)


