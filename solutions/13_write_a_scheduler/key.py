"""Answer key of set 13 (instructor only): the policies are judged online on hidden days.

The hidden days' seeds come from the course secret and the student's identifier (as the
capstone's do), so they appear nowhere a student can read, and differ between students.
The rules asked for are no built-in policy's (a cap on evictions per tick; sparing batch
jobs about to finish): the reference policies below, run by :func:`lanes.simulate` on the same
days, give the rows a student's policy must equal.
"""

import hashlib

import lanes
from grading.judge import Check, choice
from grading.online import compare_on_days, figures
from lanes.pool.protocol import Decision

#: Hidden days per question, and how many hidden seeds are tried to find days that tell the
#: rule from the built-in one.
HIDDEN_DAYS = 2
TRIES = 6


def hidden_seeds(student: str, secret: str | None = None, count: int = HIDDEN_DAYS) -> tuple:
    """The seeds of the hidden days: from the course secret and the identifier, never the public seed.

    64-bit, so that a policy cannot find them by trying seeds against what it sees.
    """
    from lanes.exercises.variants import course_secret

    secret = course_secret() if secret is None else secret
    return tuple(int.from_bytes(hashlib.sha256(f"lanes-13/{secret}/{student}/{k}".encode()).digest()[:8], "big")
                 for k in range(count))


def _row(day, rule, **extensions):
    return figures(lanes.simulate(day, rule, **extensions).row())


def _days(v, rule, spec, **extensions):
    """The first :data:`HIDDEN_DAYS` hidden days on which ``rule`` and the built-in ``spec`` give
    different rows, so that the built-in rule's code, pasted, earns nothing on them (of at most
    :data:`TRIES` days, tried in order until enough differ; days on which they agree fill up if too
    few do), with ``rule``'s row on each."""
    differ, agree = [], []
    for seed in hidden_seeds(v.student, count=TRIES):
        day = lanes.anchor(hours=0.5, slots=v.slots, backlog=600, trough_rate=v.peak_rate / 2,
                           peak_rate=v.peak_rate, seed=seed)  # the judge runs a scheduler once a second
        want = _row(day, rule)
        (differ if want != _row(day, spec, **extensions) else agree).append((day, want))
        if len(differ) == HIDDEN_DAYS:
            break
    return (differ + agree)[:HIDDEN_DAYS]


class CappedFloor:
    """q1's rule: preemption with a batch floor and at most ``cap`` evictions per tick."""

    def __init__(self, floor, cap):
        self.floor, self.cap = floor, cap

    def decide(self, obs):
        free, n_batch, n_inter = obs.free, obs.n_batch, obs.n_interactive
        evict = []
        need = len(obs.waiting) - free
        if need > 0:
            batch = sorted((job for job in obs.running if job.kind == "batch"), key=lambda job: -job.start)
            evict = [job.id for job in batch[: max(0, min(need, self.cap, n_batch - self.floor))]]
            free += len(evict)
            n_batch -= len(evict)
        queue = list(reversed(evict)) + [job.id for job in obs.batch_queue[: obs.slots]]
        batch_has_work = bool(queue) or n_batch > 0
        start = []
        for request in obs.waiting:
            if free == 0 or (batch_has_work and n_inter >= obs.slots - self.floor):
                break
            start.append(request.id)
            free -= 1
            n_inter += 1
        start += queue[:free]
        return Decision(start=start, evict=evict)


class AgingNearDone:
    """q2's rule: preemption that spares batch jobs which waited over ``aging_s`` or end within ``near_s``."""

    def __init__(self, aging_s, near_s):
        self.aging_s, self.near_s = aging_s, near_s

    def decide(self, obs):
        free = obs.free
        evict = []
        need = len(obs.waiting) - free
        if need > 0:
            batch = [job for job in obs.running if job.kind == "batch"
                     and job.waited_s <= self.aging_s and job.ends_at - obs.t > self.near_s]
            batch.sort(key=lambda job: -job.start)
            evict = [job.id for job in batch[:need]]
            free += len(evict)
        start = []
        for request in obs.waiting:
            if free == 0:
                break
            start.append(request.id)
            free -= 1
        queue = list(reversed(evict)) + [job.id for job in obs.batch_queue[:free]]
        start += queue[:free]
        return Decision(start=start, evict=evict)


def compare_with(answer, days, rule) -> list[Check]:
    """One check per hidden day (``(day, rule's row)`` pairs): the judged policy's row equals the rule's."""
    judged = compare_on_days(answer, [day for day, _ in days], rule, expected=[row for _, row in days])
    return [Check(ok, message) for ok, message in judged]


def q1(a, v):
    rule = CappedFloor(v.floor, v.evict_cap)
    return compare_with(a["q1_policy"], _days(v, rule, "preempt", floor=v.floor), rule)


def q2(a, v):
    rule = AgingNearDone(v.aging_s, v.near_s)
    return compare_with(a["q2_policy"], _days(v, rule, "preempt", aging_s=v.aging_s), rule)


def q3(a, v):
    return choice("q3_choice", a["q3_choice"], "c",
                  hint="which of these rules needs to know how long a request will hold its slot?")
