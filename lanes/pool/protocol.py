"""The scheduler interface: what a scheduling policy sees each tick, and what it may decide.

A **scheduler** is any object with a method ``decide(obs)`` (or a plain
function ``f(obs)``) that takes an :class:`Observation` and returns a
:class:`Decision`.  The simulator (:func:`lanes.simulate`, or the online
judge) calls it once per tick, after the tick's arrivals have joined the
queue and the slots whose work is done have been freed, and then carries the
decision out: evictions first, then starts, in the order listed.

What a scheduler may know
-------------------------
It sees the present and nothing else: the time, the free slots, the waiting
interactive requests (with their arrival ticks), the queued batch jobs and
the jobs holding slots (kind, start tick, time waited).  It never sees
future arrivals.  Hold times are revealed by kind:

* **Batch jobs: known.**  A batch job is submitted with its whole input and
  a fixed output budget, so its slot time is part of the job description:
  :class:`QueuedBatch` carries ``remaining_s`` and a running batch job carries
  ``ends_at``.  The victim order ``most_remaining`` relies on it.
* **Interactive requests: unknown until they finish.**  A chat reply is as
  long as the model makes it; nobody knows its length when it starts.  A
  waiting :class:`Request` has no service time and a running interactive job
  has ``ends_at = None``; it simply disappears from ``running`` the tick its
  slot frees.

The rules a decision must keep
------------------------------
:meth:`Board.apply` checks every decision before carrying out any of it and
raises :class:`DecisionError`, naming the rule, when one is broken:

``decision-type``
    ``decide`` returned a :class:`Decision` whose ``start`` and ``evict``
    are lists or tuples of integer job ids.
``evict-running``
    only jobs holding a slot can be evicted, each at most once.
``evict-batch-only``
    an interactive request is never evicted.
``start-queued``
    only waiting jobs can be started (a job evicted this tick is waiting
    again and may be restarted), each at most once.
``free-slots``
    no more jobs start than there are free slots after the evictions.

Units: times are seconds (whole seconds on the 1 s clock; on a finer clock,
``Scenario.tick_s``, multiples of it; event-driven, any); ids are integers, unique within a run (the
backlog's jobs are ``0 .. backlog - 1``, later jobs are numbered as they
arrive).  Standard library only.
"""

from __future__ import annotations

import traceback
from collections import deque
from collections.abc import Sequence
from itertools import islice
from typing import NamedTuple

from .. import _checks

#: The two kinds of job.
INTERACTIVE, BATCH = "interactive", "batch"

#: The rules :meth:`Board.apply` checks, in the order it checks them.
RULES = ("decision-type", "evict-running", "evict-batch-only", "start-queued", "free-slots")


# --- what a scheduler sees ---------------------------------------------------------------
# Records are named tuples: read-only, and cheap to make (the judge makes one per job per event).


class Request(NamedTuple):
    """A waiting interactive request.  ``arrival`` is its arrival tick; its hold time is unknown."""

    id: int
    arrival: int


class QueuedBatch(NamedTuple):
    """A batch job waiting in the batch queue: never started, or evicted and waiting to resume.

    Attributes
    ----------
    remaining_s : int
        Slot time it still needs, seconds (after an eviction this includes the
        work it must redo).
    waited_s : int
        Seconds spent queued before its current spell in the queue.
    queued_since : int
        Tick at which its current spell in the queue began.
    """

    id: int
    remaining_s: int
    waited_s: int
    queued_since: int

    def waited_by(self, t: int) -> int:
        """Seconds spent queued, all spells added up, if it started at tick ``t``."""
        return self.waited_s + (t - self.queued_since)


class Running(NamedTuple):
    """A job holding a slot.

    Attributes
    ----------
    kind : str
        :data:`INTERACTIVE` or :data:`BATCH`.
    start : int
        Tick at which it took its slot (its latest start, for a batch job that
        was evicted before); it has run ``t - start`` seconds since.
    waited_s : int
        Seconds it spent queued before this start (a batch job: all spells
        added up, which is what aging looks at; a request: its queue wait).
    ends_at : int or None
        Batch jobs: the tick its slot frees (work left is ``ends_at - t``).
        Interactive requests: ``None``, the hold time is not revealed.
    """

    id: int
    kind: str
    start: int
    waited_s: int
    ends_at: int | None


class View(Sequence):
    """A read-only window onto a deque or an ordered dict of the board (no copy is made)."""

    __slots__ = ("_items",)

    def __init__(self, items: deque | dict) -> None:
        self._items = items if type(items) is not dict else _Ordered(items)

    def __len__(self) -> int:
        return len(self._items)

    def __bool__(self) -> bool:
        return bool(self._items)

    def __iter__(self):
        return iter(self._items)

    def __getitem__(self, index):
        if isinstance(index, slice):
            start, stop, step = index.indices(len(self._items))
            if step > 0:
                return tuple(islice(self._items, start, stop, step))
            return tuple(self._items)[index]
        return self._items[index]

    def __repr__(self) -> str:
        return f"View({list(islice(self._items, 5))}{' ...' if len(self._items) > 5 else ''}, {len(self._items)} items)"


class _Ordered:
    """The values of a dict in insertion order, indexable (a tuple is made on the first index)."""

    __slots__ = ("_d", "_t")

    def __init__(self, d: dict) -> None:
        self._d, self._t = d, None

    def __len__(self) -> int:
        return len(self._d)

    def __iter__(self):
        return iter(self._d.values())

    def __getitem__(self, index):
        if self._t is None:
            self._t = tuple(self._d.values())
        return self._t[index]


class Observation(NamedTuple):
    """What a scheduler sees at tick ``t``, after arrivals joined and finished jobs left.

    Its sequences are views of the pool, valid during this tick's ``decide``
    call only: copy what you want to keep (``list(obs.waiting)``).

    Attributes
    ----------
    t : int
        The tick, seconds since the start of the run.
    slots : int
        Slots in the pool.
    free : int
        Slots nobody holds now.
    waiting : sequence of Request
        Waiting interactive requests, oldest first.
    batch_queue : sequence of QueuedBatch
        Waiting batch jobs, head first (an evicted job goes back to the head).
    running : sequence of Running
        Jobs holding slots, in the order they took them.
    n_batch : int
        How many of ``running`` are batch jobs.
    preempt_cost_s : int
        Seconds of work a batch job must redo after each eviction.
    """

    t: int
    slots: int
    free: int
    waiting: Sequence
    batch_queue: Sequence
    running: Sequence
    n_batch: int
    preempt_cost_s: int

    @property
    def n_interactive(self) -> int:
        """How many of ``running`` are interactive requests."""
        return len(self.running) - self.n_batch


class Decision(NamedTuple):
    """What a scheduler decides at one tick: job ids to ``evict``, then job ids to ``start``.

    Evicted batch jobs go back to the head of the batch queue (the last one
    listed ends up first) and redo ``preempt_cost_s`` seconds when they resume.
    Started jobs take free slots in the order listed.
    """

    start: tuple | list = ()
    evict: tuple | list = ()


#: A decision that changes nothing.
NOTHING = Decision()


class DecisionError(ValueError):
    """A decision broke one of :data:`RULES`; ``rule`` names it and ``t`` is the tick."""

    def __init__(self, rule: str, t: int, detail: str) -> None:
        super().__init__(f"decision at t={t} breaks rule {rule!r}: {detail}")
        self.rule, self.t = rule, t


# --- the state both sides keep ------------------------------------------------------------


class Board:
    """The observable state of the pool, and the rules for changing it.

    The simulator keeps one (with the hold times of interactive requests
    hidden elsewhere); a scheduler judged in another process keeps a copy,
    updated from what the judge tells it.  Both number jobs the same way.
    """

    def __init__(self, slots: int, preempt_cost_s: int = 0) -> None:
        self.slots = _checks.integer("slots", slots, lo=1)
        self.preempt_cost_s = _checks.integer("preempt_cost_s", preempt_cost_s, lo=0)
        self.waiting: deque[Request] = deque()
        self.batch_queue: deque[QueuedBatch] = deque()
        self.n_batch = 0
        self.next_id = 0
        self._waiting_ids: dict[int, Request] = {}
        self._queued_ids: dict[int, QueuedBatch] = {}
        self._running_ids: dict[int, Running] = {}  # in the order they took their slots

    @property
    def running(self) -> tuple[Running, ...]:
        """The jobs holding slots, in the order they took them."""
        return tuple(self._running_ids.values())

    @property
    def n_running(self) -> int:
        """Slots held."""
        return len(self._running_ids)

    @property
    def free(self) -> int:
        """Slots nobody holds."""
        return self.slots - len(self._running_ids)

    # --- arrivals and completions -----------------------------------------------------
    def add_request(self, t: int) -> Request:
        """An interactive request arrives at tick ``t``: it joins the back of the queue."""
        req = Request(self.next_id, t)
        self.next_id += 1
        self.waiting.append(req)
        self._waiting_ids[req.id] = req
        return req

    def add_batch(self, remaining_s: int, t: int) -> QueuedBatch:
        """A batch job needing ``remaining_s`` seconds is queued at tick ``t`` (at the back)."""
        job = QueuedBatch(self.next_id, remaining_s, 0, t)
        self.next_id += 1
        self.batch_queue.append(job)
        self._queued_ids[job.id] = job
        return job

    def finish(self, ids) -> list[Running]:
        """The jobs ``ids`` completed their work: their slots free.  Returns them."""
        done = [self._running_ids.pop(i) for i in ids]
        if done:
            self.n_batch -= sum(1 for job in done if job.kind == BATCH)
        return done

    def observe(self, t: int) -> Observation:
        """What a scheduler sees now (read-only views, no copies)."""
        running = self._running_ids
        return Observation(t, self.slots, self.slots - len(running), View(self.waiting),
                           View(self.batch_queue), View(running), self.n_batch, self.preempt_cost_s)

    # --- decisions --------------------------------------------------------------------
    def check(self, t: int, decision: object) -> tuple[list[Running], list]:
        """The evicted and started jobs of ``decision``, or :class:`DecisionError` naming the rule broken."""
        if type(decision) is not Decision:
            raise DecisionError("decision-type", t, f"decide() must return a Decision, not {type(decision).__name__}")
        start, evict = decision.start, decision.evict
        for name, ids in (("start", start), ("evict", evict)):
            if type(ids) not in (list, tuple):
                raise DecisionError("decision-type", t, f"Decision.{name} must be a list or tuple of job ids "
                                                        f"(got {type(ids).__name__})")
        if len(evict) > len(self._running_ids):
            raise DecisionError("evict-running", t, f"{len(evict)} evictions but only {len(self._running_ids)} jobs run")
        if len(start) > self.slots:
            raise DecisionError("free-slots", t, f"{len(start)} starts but the pool has {self.slots} slots")
        evicted: list[Running] = []
        seen: set[int] = set()
        for i in evict:
            if type(i) is not int:
                raise DecisionError("decision-type", t, f"job ids are integers (got a {type(i).__name__} in evict)")
            job = self._running_ids.get(i)
            if job is None or i in seen:
                raise DecisionError("evict-running", t, f"job {self._name(i)} is not holding a slot" if job is None
                                    else f"job {i} is evicted twice")
            if job.kind != BATCH:
                raise DecisionError("evict-batch-only", t, f"job {i} is an interactive request")
            seen.add(i)
            evicted.append(job)
        started: list = []
        seen = set()
        for i in start:
            if type(i) is not int:
                raise DecisionError("decision-type", t, f"job ids are integers (got a {type(i).__name__} in start)")
            job = self._waiting_ids.get(i) or self._queued_ids.get(i)
            if job is None and i in self._running_ids and self._running_ids[i] in evicted:
                job = i  # evicted this tick: waiting again
            if job is None or i in seen:
                raise DecisionError("start-queued", t, f"job {self._name(i)} is not waiting" if job is None
                                    else f"job {i} is started twice")
            seen.add(i)
            started.append(job)
        if len(started) > self.free + len(evicted):
            raise DecisionError("free-slots", t, f"{len(started)} starts but {self.free + len(evicted)} slots are free"
                                                 f" after {len(evicted)} evictions")
        return evicted, started

    def _name(self, i: int) -> str:
        """An id for a message: a job's id, or words (so an error never echoes arbitrary data)."""
        return str(i) if 0 <= i < self.next_id else "id (no job has it)"

    def _resolve(self, decision: Decision) -> tuple[list[Running], list]:
        """The jobs a decision names, unchecked (for a copy of the board whose judge checks)."""
        running, waiting, queued = self._running_ids, self._waiting_ids, self._queued_ids
        evicted = [running[i] for i in decision.evict]
        return evicted, [waiting.get(i) or queued.get(i) or i for i in decision.start]

    def apply(self, t: int, decision: object, *, check: bool = True) -> tuple[list[Running], list[Running]]:
        """Check ``decision`` (see :meth:`check`), then carry it out at tick ``t``.

        Returns the evicted jobs and the started ones (as :class:`Running`).
        Nothing changes when a rule is broken.  ``check=False`` skips the rules:
        only for a copy of the board kept beside a judge that checks them.
        """
        evicted, started = self.check(t, decision) if check else self._resolve(decision)
        if evicted:
            self.n_batch -= len(evicted)
            for job in evicted:
                del self._running_ids[job.id]
                back = QueuedBatch(job.id, job.ends_at - t + self.preempt_cost_s, job.waited_s, t)
                self.batch_queue.appendleft(back)
                self._queued_ids[job.id] = back
        out: list[Running] = []
        for job in started:
            if type(job) is int:  # evicted above, now at the queue's head side
                job = self._queued_ids[job]
            if type(job) is Request:
                del self._waiting_ids[job.id]
                _take(self.waiting, job)
                run = Running(job.id, INTERACTIVE, t, t - job.arrival, None)
            else:
                del self._queued_ids[job.id]
                _take(self.batch_queue, job)
                run = Running(job.id, BATCH, t, job.waited_s + t - job.queued_since, t + job.remaining_s)
                self.n_batch += 1
            self._running_ids[run.id] = run
            out.append(run)
        return evicted, out


def _take(queue: deque, item: object) -> None:
    """Remove ``item`` from ``queue``: at once from the head, by search elsewhere."""
    if queue[0] is item:
        queue.popleft()
    else:
        queue.remove(item)  # ids are unique, so the first field decides


# --- a student's scheduler ------------------------------------------------------------------


class _Function:
    """A plain function ``f(obs) -> Decision`` as a scheduler."""

    def __init__(self, fn) -> None:
        self.decide, self.name = fn, getattr(fn, "__name__", "policy")


def student_scheduler(policy: object):
    """A scheduler from a class with a ``decide`` method (instantiated with no arguments),
    an object with a ``decide`` method, or a function ``f(obs) -> Decision``."""
    if isinstance(policy, type):
        if not callable(getattr(policy, "decide", None)):
            raise ValueError(f"policy class {policy.__name__} needs a method decide(self, obs) returning a Decision")
        policy = policy()
    if callable(getattr(policy, "decide", None)):
        return policy
    if callable(policy):
        return _Function(policy)
    raise ValueError(f"policy must be a spec, a class or object with decide(obs), or a function (got {policy!r:.60})")


def load_policy(source: str, filename: str = "<policy>"):
    """The scheduler defined by a student's Python source (a file's text).

    The source is run as a module; the scheduler is, in this order of
    preference: a top-level name ``policy``; else the one class defined there
    that has a ``decide`` method; else the one public function defined there.
    Raises ``ValueError`` when none or several qualify, or when the source does
    not compile.  The source runs in this process: use it for your own files
    (the online judge runs other people's in a sandbox).
    """
    import types

    source = _checks.text("source", source, empty=True)
    filename = _checks.text("filename", filename)
    module = types.ModuleType("student_policy")
    module.__file__ = filename
    try:
        code = compile(source, filename, "exec")
    except SyntaxError as exc:
        where = f" (line {exc.lineno})" if exc.lineno else ""
        raise ValueError(f"policy file {filename} does not compile: {exc.msg}{where}") from None
    except ValueError as exc:  # a NUL byte in the source
        raise ValueError(f"policy file {filename} does not compile: {exc}") from None
    try:
        exec(code, module.__dict__)
    except Exception as exc:  # noqa: BLE001 - the student's module failed as it ran: say where, in one line
        # walk_tb reads no source file (the online judge's child may open none)
        lines = [n for frame, n in traceback.walk_tb(exc.__traceback__) if frame.f_code.co_filename == filename]
        line = f" (line {lines[-1]})" if lines else ""
        raise ValueError(f"policy file {filename} raised {type(exc).__name__} as it ran{line}: "
                         f"{_checks.show(str(exc))}") from exc
    ns = module.__dict__
    if "policy" in ns:
        return student_scheduler(ns["policy"])
    mine = [v for k, v in ns.items() if not k.startswith("_") and getattr(v, "__module__", None) == "student_policy"]
    classes = [v for v in mine if isinstance(v, type) and callable(getattr(v, "decide", None))]
    functions = [v for v in mine if isinstance(v, types.FunctionType)]
    found = classes or functions
    if len(found) != 1:
        kinds = "classes with a decide method" if classes else "functions"
        raise ValueError(
            f"policy file {filename} must define one class with a decide(self, obs) method or one function"
            f" f(obs), or name its policy 'policy = ...' (found {len(found)} {kinds})")
    return student_scheduler(found[0])


def load_policy_file(path: str):
    """The scheduler defined in the Python file at ``path`` (see :func:`load_policy`)."""
    import os

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
