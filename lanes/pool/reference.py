"""A deliberately plain slot-pool model, the oracle the fast engine is checked against.

It follows the course's semantics literally: a list of running jobs that is
decremented every tick, queues as deques, victims sorted each time.  It is
slow (it touches every slot every tick) and shares no code with the fast
engine in ``lanes.pool.engine`` except the scenario and policy dataclasses, so
agreement between the two on random scenarios is evidence for both.
"""

from __future__ import annotations

import math
import random
from collections import deque
from dataclasses import dataclass

from lanes.pool.policies import Policy
from lanes.pool.scenario import Scenario


@dataclass
class Job:
    kind: str
    remaining: int
    start: int
    waited: int = 0  # batch: seconds spent queued before this start
    arrival: int = 0


def draw(scenario: Scenario):
    """Backlog and per-tick arrivals, drawn with the library's own randint."""
    rng = random.Random(scenario.seed)
    lo, hi = scenario.batch_service_s
    backlog = [rng.randint(lo, hi) for _ in range(scenario.backlog)]
    T = scenario.ticks
    per_tick = []
    for t in range(T):
        lam = scenario.trough_rate + (scenario.peak_rate - scenario.trough_rate) * (1 - math.cos(2 * math.pi * t / T)) / 2
        u = rng.random()
        k, p = 0, math.exp(-lam)
        total = p
        while u > total:
            k += 1
            p = p * (lam / k)
            total += p
        per_tick.append([rng.randint(*scenario.inter_service_s) for _ in range(k)])
    return backlog, per_tick


def run(scenario: Scenario, policy: Policy) -> dict:
    backlog, per_tick = draw(scenario)
    T, slots = scenario.ticks, scenario.slots
    batch_q = deque([s, 0, 0] for s in backlog)  # [remaining, waited, queued_since]
    inter_q: deque = deque()
    running: list[Job] = []
    waits: list[int] = []
    done = preempted = busy = 0
    for t in range(T):
        for s in per_tick[t]:
            inter_q.append((t, s))
        for job in running:
            job.remaining -= 1
        done += sum(1 for j in running if j.remaining <= 0 and j.kind == "batch")
        running = [j for j in running if j.remaining > 0]

        if policy.preempts:
            need = len(inter_q) - (slots - len(running))
            batch = [j for j in running if j.kind == "batch"]
            allowed = len(batch) - policy.floor
            eligible = [
                j for j in batch
                if t - j.start >= policy.min_run_s and (policy.aging_s is None or j.waited <= policy.aging_s)
            ]
            if policy.victim == "youngest":
                eligible.sort(key=lambda j: -j.start)
            else:
                eligible.sort(key=lambda j: -j.remaining)
            for v in eligible[: max(0, min(need, allowed))]:
                running.remove(v)
                batch_q.appendleft([v.remaining + scenario.preempt_cost_s, v.waited, t])
                preempted += 1

        def start_batch() -> None:
            remaining, waited, since = batch_q.popleft()
            running.append(Job("batch", remaining, t, waited + (t - since)))

        def start_inter() -> None:
            a, s = inter_q.popleft()
            waits.append(t - a)
            running.append(Job("inter", s, t, arrival=a))

        if policy.kind == "fifo":
            while len(running) < slots and (batch_q or inter_q):
                start_batch() if batch_q else start_inter()
        else:
            while len(running) < slots and inter_q:
                n_batch = sum(j.kind == "batch" for j in running)
                floor_holds = policy.floor and (batch_q or n_batch)
                if floor_holds and len(running) - n_batch >= slots - policy.floor:
                    break
                start_inter()
            while len(running) < slots and batch_q:
                n_batch = sum(j.kind == "batch" for j in running)
                if slots - len(running) > policy.reserve or n_batch < policy.floor:
                    start_batch()
                else:
                    break
        busy += len(running)

    waits.sort()
    n = len(waits)
    pct = lambda q: waits[min(n - 1, int(q * n))] if n else -1  # noqa: E731
    return {
        "policy": policy.spec,
        "p50": pct(0.5),
        "p99": pct(0.99),
        "max": waits[-1] if n else -1,
        "late": sum(w > 2 for w in waits) / max(1, n),
        "batch_done": done,
        "preempted": preempted,
        "util": busy / (T * slots),
    }
