"""The built-in policies written against the scheduler interface (:mod:`lanes.pool.protocol`).

Each class here is a scheduler: ``decide(obs)`` looks at one tick's
:class:`~lanes.pool.protocol.Observation` and returns a
:class:`~lanes.pool.protocol.Decision`.  Read them beside
:mod:`lanes.pool.reference`, which runs them (and any scheduler a student
writes) one tick at a time.

:class:`Fifo`
    one queue in submission order; the backlog was submitted first.
:class:`Priority`
    interactive requests first.  Its fields give the other five rows and
    the four extensions: ``reserve`` (``reserve:R``: batch starts only while
    more than R slots stay free), ``preempts`` (``preempt``; with a reserve,
    ``hybrid:R``), ``floor``, ``aging_s``, ``victim`` and ``min_run_s``.

:func:`scheduler_for` turns a :class:`~lanes.pool.policies.Policy` (or its
spec) into one of these; :func:`as_scheduler` accepts that or anything a
student may hand over (a class, an instance, a function), and
:func:`load_policy_file` reads a student's file.  The fast engine
(:mod:`lanes.pool.engine`) does not call these: it computes the same rows
without asking anyone each tick, and the tests check the two agree.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from itertools import chain, islice

from .. import _checks
from .policies import VICTIMS, Policy, parse_policy
from .protocol import BATCH, Decision, Observation, load_policy, student_scheduler


@dataclass(frozen=True)
class Fifo:
    """Batch jobs at the head of the queue first (the backlog was submitted first), then requests."""

    name: str = "fifo"

    def __post_init__(self) -> None:
        _checks.text("name", self.name)

    def decide(self, obs: Observation) -> Decision:
        free = obs.free
        start = [job.id for job in islice(obs.batch_queue, free)]
        free -= len(start)
        start += [req.id for req in islice(obs.waiting, free)]
        return Decision(start)


@dataclass(frozen=True)
class Priority:
    """Interactive requests before batch, with a reserve, preemption and the four extensions.

    Parameters
    ----------
    reserve : int
        Slots batch leaves free when it starts, slots.
    preempts : bool
        Whether waiting requests evict running batch jobs.
    floor : int
        Slots batch keeps while it has work: requests may not take them and
        eviction stops there, slots.
    aging_s : int or None
        A batch job that has waited more than this in the queue is never
        evicted, seconds (``None``: no aging).
    victim : str
        Eviction order: ``youngest`` (latest start first) or
        ``most_remaining`` (most work left first).
    min_run_s : int
        A batch job that has run less than this since it started is never
        evicted, seconds.
    name : str
        Row label.
    """

    reserve: int = 0
    preempts: bool = False
    floor: int = 0
    aging_s: int | None = None
    victim: str = "youngest"
    min_run_s: int = 0
    name: str = "priority"

    def __post_init__(self) -> None:
        set_ = object.__setattr__
        for field in ("reserve", "floor", "min_run_s"):
            set_(self, field, _checks.integer(field, getattr(self, field), lo=0))
        set_(self, "preempts", _checks.boolean("preempts", self.preempts))
        if self.aging_s is not None:
            set_(self, "aging_s", _checks.integer("aging_s", self.aging_s, lo=0))
        _checks.choice("victim", self.victim, VICTIMS)
        _checks.text("name", self.name)

    def decide(self, obs: Observation) -> Decision:
        free, n_batch, n_inter = obs.free, obs.n_batch, obs.n_interactive
        evict = self.evictions(obs) if self.preempts else []
        free += len(evict)
        n_batch -= len(evict)
        # The batch queue after the evictions: the last job evicted is at its head.
        batch_queue = chain(reversed(evict), (job.id for job in obs.batch_queue))
        batch_has_work = bool(evict) or bool(obs.batch_queue) or n_batch > 0
        start = []

        # Waiting requests take free slots, oldest first; with a floor, while
        # batch has work, requests together hold at most slots - floor.
        for req in obs.waiting:
            if not free or (self.floor and batch_has_work and n_inter >= obs.slots - self.floor):
                break
            start.append(req.id)
            free -= 1
            n_inter += 1

        # Batch jobs start from the head while more than the reserve stays free;
        # below its floor, batch may start in any free slot.
        while free and (free > self.reserve or (self.floor and n_batch < self.floor)):
            job = next(batch_queue, None)
            if job is None:
                break
            start.append(job)
            free -= 1
            n_batch += 1
        return Decision(start, evict)

    def evictions(self, obs: Observation) -> list[int]:
        """Batch jobs to evict so every waiting request can have a slot, keeping the floor."""
        need = len(obs.waiting) - obs.free
        if need <= 0:
            return []
        allowed = obs.n_batch - self.floor
        return [job.id for job in self.victims(obs)[: max(0, min(need, allowed))]]

    def victims(self, obs: Observation) -> list:
        """The running batch jobs that may be evicted now, in the order they would be.

        A job is protected while it has run less than ``min_run_s``, and (with
        aging) once it has waited more than ``aging_s`` in the queue.
        ``youngest`` evicts the latest start first (it has lost the least
        work); ``most_remaining`` the job with the most work left (it would
        hold its slot longest).  Ties keep the order the jobs took their slots.
        """
        t = obs.t
        eligible = [
            job
            for job in obs.running
            if job.kind == BATCH
            and t - job.start >= self.min_run_s
            and (self.aging_s is None or job.waited_s <= self.aging_s)
        ]
        if self.victim == "youngest":
            eligible.sort(key=lambda job: -job.start)
        else:  # most_remaining: work left is ends_at - t
            eligible.sort(key=lambda job: -job.ends_at)
        return eligible


def scheduler_for(policy: str | Policy) -> Fifo | Priority:
    """The built-in scheduler of a :class:`Policy` or spec (``"hybrid:8"``, ...)."""
    pol = parse_policy(policy)
    if pol.kind == "fifo":
        return Fifo(name=pol.spec)
    assert pol.victim in VICTIMS
    return Priority(reserve=pol.reserve, preempts=pol.preempts, floor=pol.floor, aging_s=pol.aging_s,
                    victim=pol.victim, min_run_s=pol.min_run_s, name=pol.spec)


def as_scheduler(policy: object):
    """A scheduler from what a student hands over.

    Accepted: a :class:`Policy` or spec string (the built-ins), a class with a
    ``decide`` method (instantiated with no arguments), an object with a
    ``decide`` method, or a function ``f(obs) -> Decision``
    (:func:`lanes.pool.protocol.student_scheduler`).
    """
    if isinstance(policy, (str, Policy)):
        return scheduler_for(policy)
    return student_scheduler(policy)


def name_of(scheduler: object) -> str:
    """The row label of a scheduler: its ``name`` attribute, else its class name."""
    name = getattr(scheduler, "name", None)
    return name if isinstance(name, str) and name else type(scheduler).__name__



def load_policy_file(path: str):
    """The scheduler defined in the Python file at ``path`` (see :func:`lanes.pool.protocol.load_policy`)."""
    if not isinstance(path, (str, os.PathLike)):
        raise ValueError(f"path must name a Python file (got {_checks.show(path)})")
    try:
        with open(path, encoding="utf-8") as f:
            source = f.read()
    except OSError as exc:
        raise ValueError(f"policy-file {_checks.show(str(path))} cannot be read ({exc.strerror})") from None
    except (UnicodeDecodeError, ValueError) as exc:  # not UTF-8 text; a NUL in the path
        raise ValueError(f"policy-file {_checks.show(str(path))} cannot be read as Python text ({exc})") from None
    return load_policy(source, os.fspath(path))
