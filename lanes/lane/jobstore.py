"""The batch lane as a product: a durable job store, idempotent items, overflow.

Batch work needs its own front door: marking requests "low priority" on the
chat endpoint does not make a batch lane.  A client submits a job and gets a **job ID** back at once; it polls the ID for
progress and fetches results when they are ready.  Inside, the job is
**chunked** into small items, each with its own deadline, so workers can fit
them into idle slots and a failure costs one item, not the job.

:class:`JobStore` keeps jobs and items in SQLite (the standard library's
``sqlite3``), so a store opened again on the same file after a crash carries
on where it stopped.  Everything that can be retried is idempotent:

* ``submit`` with an ``idempotency_key`` already seen returns the same job ID;
* ``claim`` hands out an item only if it has no result, and hands it out again
  only after its lease has run out (the worker holding it is presumed dead);
* ``complete`` stores the first result of an item and ignores later ones, so
  a retried item never yields two results.

When the in-house lane cannot finish a job by its deadline, the part it cannot
do is sent to a provider batch API (:class:`ProviderBatchAPI`, a stand-in that
promises results within a completion window, 24 h by default).
:func:`plan_overflow` decides how many items; :func:`simulate_batch_lane` runs
the whole lane hour after hour on a virtual clock.  Standard library only.

>>> store = JobStore()
>>> job = store.submit(["doc 1", "doc 2"], deadline_s=3600)
>>> [i.item_id for i in store.claim(now_s=0, limit=2)]
['job-0001/0', 'job-0001/1']
>>> store.complete("job-0001/0", "ok"), store.complete("job-0001/0", "ok again")
(True, False)
>>> store.poll(job).done
1
"""

from __future__ import annotations

import math
import random
import sqlite3
from collections.abc import Sequence
from dataclasses import dataclass, replace

from .. import _checks

__all__ = [
    "BatchLaneResult",
    "BatchLaneScenario",
    "ItemLease",
    "JobStatus",
    "JobStore",
    "OverflowPlan",
    "ProviderBatchAPI",
    "chunk",
    "daily_capacity_items_per_h",
    "plan_overflow",
    "simulate_batch_lane",
]

HOUR_S = 3600.0

_SCHEMA = """
CREATE TABLE IF NOT EXISTS jobs (
    job_id TEXT PRIMARY KEY,
    idempotency_key TEXT UNIQUE,
    submitted_s REAL NOT NULL,
    deadline_s REAL NOT NULL
);
CREATE TABLE IF NOT EXISTS items (
    item_id TEXT PRIMARY KEY,
    job_id TEXT NOT NULL,
    seq INTEGER NOT NULL,
    payload TEXT NOT NULL,
    deadline_s REAL NOT NULL,
    state TEXT NOT NULL,              -- pending, leased, done, overflowed, expired
    lease_until_s REAL,
    attempts INTEGER NOT NULL DEFAULT 0,
    result TEXT,
    done_by TEXT,
    done_s REAL
);
CREATE INDEX IF NOT EXISTS items_by_job ON items (job_id, state, seq);
CREATE INDEX IF NOT EXISTS items_by_deadline ON items (state, deadline_s, job_id, seq);
CREATE INDEX IF NOT EXISTS items_by_lease ON items (state, lease_until_s);
CREATE TABLE IF NOT EXISTS counters (name TEXT PRIMARY KEY, value INTEGER NOT NULL);
"""


def chunk(documents: Sequence[str], size: int) -> list[str]:
    """Split a job's documents into items of at most ``size`` documents (joined by newlines).

    A 1,000-document job becomes 1,000 items at ``size=1``: each holds a slot
    briefly and can be retried on its own.
    """
    documents = _checks.sequence("documents", documents, what="strings")
    for d in documents:
        _checks.text("documents", d, empty=True)
    n = _checks.integer("size", size, lo=1)
    return ["\n".join(documents[i : i + n]) for i in range(0, len(documents), n)]


@dataclass(frozen=True)
class ItemLease:
    """An item handed to a worker until ``lease_until_s`` (s)."""

    item_id: str
    job_id: str
    payload: str
    deadline_s: float
    lease_until_s: float
    attempt: int


@dataclass(frozen=True)
class JobStatus:
    """What ``poll`` answers: item counts by state, and the job's state.

    ``state`` is ``"done"`` when every item has a result, ``"failed"`` when
    some item expired without one, else ``"running"``.
    """

    job_id: str
    items: int
    pending: int
    leased: int
    done: int
    overflowed: int
    expired: int
    deadline_s: float

    @property
    def state(self) -> str:
        """``"done"``, ``"failed"`` or ``"running"``."""
        if self.done == self.items:
            return "done"
        if self.expired:
            return "failed"
        return "running"


class JobStore:
    """Durable jobs and items in SQLite.

    Parameters
    ----------
    path : str
        Database file, or ``":memory:"`` (default) for a store that lives as
        long as the object.  Open the same file again to recover after a crash.

    Notes
    -----
    Job IDs are ``job-0001``, ``job-0002``, ... in submission order and item IDs
    ``<job>/<n>``, so runs are reproducible.  Times are virtual seconds passed
    in by the caller (``now_s``); the store never reads a clock.
    """

    def __init__(self, path: str = ":memory:") -> None:
        self.path = path
        self._db = sqlite3.connect(path)
        self._db.executescript(_SCHEMA)
        self._db.commit()

    # -- helpers -------------------------------------------------------------

    def _bump(self, name: str, by: int = 1) -> int:
        self._db.execute(
            "INSERT INTO counters (name, value) VALUES (?, ?) ON CONFLICT(name) DO UPDATE SET value = value + ?",
            (name, by, by),
        )
        return self._db.execute("SELECT value FROM counters WHERE name = ?", (name,)).fetchone()[0]

    def counter(self, name: str) -> int:
        """A running count kept by the store: ``"duplicate_results"``, ``"claims"``, ``"jobs"``."""
        row = self._db.execute("SELECT value FROM counters WHERE name = ?", (name,)).fetchone()
        return row[0] if row else 0

    def close(self) -> None:
        """Close the database (the file keeps everything committed)."""
        self._db.close()

    # -- client side -----------------------------------------------------------

    def submit(
        self,
        items: Sequence[str],
        *,
        deadline_s: float,
        now_s: float = 0.0,
        item_deadlines_s: Sequence[float] | None = None,
        idempotency_key: str | None = None,
    ) -> str:
        """Store a job and return its ID at once.

        Parameters
        ----------
        items : sequence of str
            Item payloads (use :func:`chunk` to cut documents into items); at least one.
        deadline_s : float
            The job's deadline (virtual s); must be after ``now_s``.
        now_s : float
            Submission time (s).
        item_deadlines_s : sequence of float, optional
            A deadline per item (s); each defaults to the job's.
        idempotency_key : str, optional
            A client-chosen key: submitting again with the same key returns the
            first job's ID and stores nothing new.
        """
        now = _checks.number("now_s", now_s, lo=0)
        deadline = _checks.number("deadline_s", deadline_s, lo=now, lo_open=True)
        if not items:
            raise ValueError("items must contain at least one item (got 0)")
        if item_deadlines_s is None:
            per_item = [deadline] * len(items)
        else:
            if len(item_deadlines_s) != len(items):
                raise ValueError(f"item_deadlines_s must have one deadline per item (got {len(item_deadlines_s)} for {len(items)} items)")
            per_item = [_checks.number("item deadline", d, lo=now, lo_open=True) for d in item_deadlines_s]
        if idempotency_key is not None:
            row = self._db.execute("SELECT job_id FROM jobs WHERE idempotency_key = ?", (idempotency_key,)).fetchone()
            if row:
                return row[0]
        with self._db:
            job_id = f"job-{self._bump('jobs'):04d}"
            self._db.execute("INSERT INTO jobs VALUES (?, ?, ?, ?)", (job_id, idempotency_key, now, deadline))
            self._db.executemany(
                "INSERT INTO items (item_id, job_id, seq, payload, deadline_s, state) VALUES (?, ?, ?, ?, ?, 'pending')",
                [(f"{job_id}/{k}", job_id, k, str(p), d) for k, (p, d) in enumerate(zip(items, per_item))],
            )
        return job_id

    def poll(self, job_id: str) -> JobStatus:
        """Counts of the job's items by state."""
        row = self._db.execute("SELECT deadline_s FROM jobs WHERE job_id = ?", (job_id,)).fetchone()
        if row is None:
            raise ValueError(f"job_id must name a submitted job (got {job_id!r})")
        counts = dict(self._db.execute("SELECT state, COUNT(*) FROM items WHERE job_id = ? GROUP BY state", (job_id,)).fetchall())
        return JobStatus(
            job_id=job_id,
            items=sum(counts.values()),
            pending=counts.get("pending", 0),
            leased=counts.get("leased", 0),
            done=counts.get("done", 0),
            overflowed=counts.get("overflowed", 0),
            expired=counts.get("expired", 0),
            deadline_s=row[0],
        )

    def results(self, job_id: str) -> dict[str, str]:
        """Results stored so far, by item ID (one per item at most)."""
        rows = self._db.execute("SELECT item_id, result FROM items WHERE job_id = ? AND state = 'done' ORDER BY seq", (job_id,))
        return dict(rows.fetchall())

    def done_by(self, job_id: str) -> dict[str, int]:
        """Finished items by who did them (``"in-house"``, ``"provider"``)."""
        rows = self._db.execute("SELECT done_by, COUNT(*) FROM items WHERE job_id = ? AND state = 'done' GROUP BY done_by", (job_id,))
        return dict(rows.fetchall())

    # -- worker side -----------------------------------------------------------

    def expire(self, now_s: float) -> int:
        """Mark items whose deadline has passed without a result as expired; return how many."""
        with self._db:
            n = 0
            for state in ("pending", "leased"):
                n += self._db.execute("UPDATE items SET state = 'expired' WHERE state = ? AND deadline_s <= ?", (state, now_s)).rowcount
        return n

    def claim(self, now_s: float, limit: int = 1, *, lease_s: float = 600.0) -> list[ItemLease]:
        """Lease up to ``limit`` items to a worker.

        Only items without a result are handed out: first leased ones whose
        lease has run out, then pending ones, earliest deadline first.  Items past their deadline are expired
        first and never handed out.
        """
        now = _checks.number("now_s", now_s, lo=0)
        n = _checks.integer("limit", limit, lo=0)
        lease = _checks.number("lease_s", lease_s, lo=0, lo_open=True)
        self.expire(now)
        with self._db:
            cols = "SELECT item_id, job_id, payload, deadline_s, attempts FROM items "
            rows = self._db.execute(
                cols + "WHERE state = 'leased' AND lease_until_s <= ? ORDER BY lease_until_s LIMIT ?", (now, n)
            ).fetchall()  # lapsed leases first: their worker is presumed dead
            rows += self._db.execute(
                cols + "WHERE state = 'pending' ORDER BY deadline_s, job_id, seq LIMIT ?", (n - len(rows),)
            ).fetchall()
            self._db.executemany(
                "UPDATE items SET state = 'leased', lease_until_s = ?, attempts = attempts + 1 WHERE item_id = ?",
                [(now + lease, r[0]) for r in rows],
            )
            self._bump("claims", len(rows))
        return [ItemLease(r[0], r[1], r[2], r[3], now + lease, r[4] + 1) for r in rows]

    def complete(self, item_id: str, result: str, *, now_s: float = 0.0, by: str = "in-house") -> bool:
        """Store ``result`` for ``item_id`` unless it already has one.

        Returns ``True`` for the first result and ``False`` for a duplicate
        (a retried item, a repeated report), which is counted and ignored.
        A result arriving after the item expired is still kept: the work is done.
        """
        with self._db:
            cur = self._db.execute(
                "UPDATE items SET state = 'done', result = ?, done_by = ?, done_s = ?, lease_until_s = NULL "
                "WHERE item_id = ? AND state != 'done'",
                (result, by, now_s, item_id),
            )
            if cur.rowcount == 0:
                if self._db.execute("SELECT 1 FROM items WHERE item_id = ?", (item_id,)).fetchone() is None:
                    raise ValueError(f"item_id must name a stored item (got {item_id!r})")
                self._bump("duplicate_results")
                return False
        return True

    def overflow(self, job_id: str, n: int) -> list[ItemLease]:
        """Take ``n`` pending items of a job (latest deadline first) out of the in-house lane.

        They are marked ``overflowed`` (not handed to workers) and returned, to
        be sent to a provider batch API; their results come back through
        :meth:`complete` with ``by="provider"``.
        """
        k = _checks.integer("n", n, lo=0)
        with self._db:
            rows = self._db.execute(
                "SELECT item_id, job_id, payload, deadline_s, attempts FROM items WHERE job_id = ? AND state = 'pending' "
                "ORDER BY deadline_s DESC, seq DESC LIMIT ?",
                (job_id, k),
            ).fetchall()
            self._db.executemany("UPDATE items SET state = 'overflowed' WHERE item_id = ?", [(r[0],) for r in rows])
        return [ItemLease(r[0], r[1], r[2], r[3], math.inf, r[4]) for r in rows]


class ProviderBatchAPI:
    """A stand-in for a provider's batch API: results within a completion window.

    Parameters
    ----------
    window_s : float
        The promised completion window (s; 24 h by default).
    turnaround_s : float, optional
        When the results of a batch actually come back (s after submission,
        at most ``window_s``; the window by default, the pessimistic case).

    Notes
    -----
    Providers price batch work below real-time calls in exchange for the
    window; check your provider's current terms.  This stand-in only keeps
    time: ``submit`` returns a batch ID, ``collect`` returns the items whose
    results are ready.
    """

    def __init__(self, window_s: float = 24 * HOUR_S, turnaround_s: float | None = None) -> None:
        self.window_s = _checks.number("window_s", window_s, lo=0, lo_open=True)
        t = self.window_s if turnaround_s is None else turnaround_s
        self.turnaround_s = _checks.number("turnaround_s", t, lo=0, hi=self.window_s)
        self._batches: list[tuple[str, float, list[str]]] = []
        self.submitted_items = 0

    def submit(self, item_ids: Sequence[str], now_s: float) -> str:
        """Send items; return a batch ID."""
        batch_id = f"batch-{len(self._batches) + 1:03d}"
        self._batches.append((batch_id, now_s + self.turnaround_s, list(item_ids)))
        self.submitted_items += len(item_ids)
        return batch_id

    def collect(self, now_s: float) -> list[str]:
        """Item IDs of every batch ready by ``now_s`` (each batch is returned once)."""
        ready = [b for b in self._batches if b[1] <= now_s]
        self._batches = [b for b in self._batches if b[1] > now_s]
        return [i for b in ready for i in b[2]]


@dataclass(frozen=True)
class OverflowPlan:
    """How many remaining items stay in-house and how many go to the provider.

    ``provider_in_time`` is ``False`` when the deadline is closer than the
    provider's window: overflow would then not be guaranteed to help.
    """

    remaining_items: int
    in_house_items: int
    overflow_items: int
    provider_in_time: bool


def plan_overflow(
    remaining_items: int,
    capacity_items_per_h: Sequence[float],
    *,
    provider_window_h: float = 24.0,
) -> OverflowPlan:
    """Split remaining items between the in-house lane and the provider.

    Parameters
    ----------
    remaining_items : int
        Items without a result and not yet overflowed.
    capacity_items_per_h : sequence of float
        In-house items per hour for each whole hour left before the deadline
        (its length is the hours left).
    provider_window_h : float
        The provider's completion window (h).

    Returns
    -------
    OverflowPlan
        Overflow is ``remaining - floor(sum(capacity))`` when positive, else 0:
        it is triggered exactly when the in-house lane cannot meet the deadline.
    """
    n = _checks.integer("remaining_items", remaining_items, lo=0)
    caps = [
        _checks.number("capacity_items_per_h", c, lo=0)
        for c in _checks.sequence("capacity_items_per_h", capacity_items_per_h, what="items per hour")
    ]
    window = _checks.number("provider_window_h", provider_window_h, lo=0, lo_open=True)
    can = math.floor(sum(caps) + 1e-9)
    over = max(0, n - can)
    return OverflowPlan(remaining_items=n, in_house_items=n - over, overflow_items=over, provider_in_time=len(caps) >= window)


def daily_capacity_items_per_h(
    *,
    slots: int = 64,
    trough_rate: float = 2.0,
    peak_rate: float = 5.0,
    interactive_hold_s: float = 8.0,
    headroom_slots: int = 8,
    item_s: float = 60.0,
) -> tuple[float, ...]:
    """Batch items per hour over a 24 h day, from the slots interactive work leaves idle.

    Interactive arrivals follow a raised cosine from ``trough_rate`` at hour 0
    to ``peak_rate`` at hour 12 (requests/s); by Little's law they keep
    ``rate x interactive_hold_s`` slots busy.  Batch may use the rest minus
    ``headroom_slots``, one item of ``item_s`` seconds per slot at a time.
    """
    s = _checks.integer("slots", slots, lo=1)
    lo = _checks.number("trough_rate", trough_rate, lo=0)
    hi = _checks.number("peak_rate", peak_rate, lo=lo)
    hold = _checks.number("interactive_hold_s", interactive_hold_s, lo=0)
    reserve = _checks.integer("headroom_slots", headroom_slots, lo=0, hi=s)
    item = _checks.number("item_s", item_s, lo=0, lo_open=True)
    out = []
    for h in range(24):
        rate = lo + (hi - lo) * (1 - math.cos(2 * math.pi * (h + 0.5) / 24)) / 2
        idle = max(0.0, s - reserve - rate * hold)
        out.append(idle * HOUR_S / item)
    return tuple(out)


#: Most items one simulated job may hold (each is a row in the store: about 6 s).
MAX_ITEMS = 50_000
#: Longest deadline simulated, in hours (a month of one-minute steps).
MAX_DEADLINE_H = 24 * 31


@dataclass(frozen=True)
class BatchLaneScenario:
    """One big job through the batch lane.

    Parameters
    ----------
    items : int
        Items in the job after chunking (>= 1).
    deadline_h : float
        Job deadline, hours after submission (> 0).
    capacity_items_per_h : tuple of float
        In-house items per hour for each hour of the day (cycled); by
        default :func:`daily_capacity_items_per_h` with 10-minute items
        (about 4,000 items a day).
    overflow : bool
        Send what the lane cannot finish in time to the provider.
    provider_window_h, provider_turnaround_h : float
        The provider's promised window, and when results actually come back (h).
    crash_prob : float
        Chance a worker dies after doing an item but before reporting it; the
        item's lease runs out and it is done again (in [0, 1)).
    repeat_report_prob : float
        Chance a worker reports the same result twice (a retried request).
    lease_h : float
        Lease length (h).
    safety : float
        Fraction of nominal capacity the planner counts on, in (0, 1].
    seed : int
        Seed for crashes and repeated reports.
    """

    items: int = 10_000
    deadline_h: float = 30.0
    capacity_items_per_h: tuple[float, ...] = daily_capacity_items_per_h(item_s=600.0)
    overflow: bool = True
    provider_window_h: float = 24.0
    provider_turnaround_h: float = 24.0
    crash_prob: float = 0.02
    repeat_report_prob: float = 0.01
    lease_h: float = 0.25
    safety: float = 0.95
    seed: int = 7

    def __post_init__(self) -> None:
        object.__setattr__(self, "items", _checks.integer("items", self.items, lo=1, hi=MAX_ITEMS))
        object.__setattr__(
            self, "deadline_h", _checks.number("deadline_h", self.deadline_h, lo=0, lo_open=True, hi=MAX_DEADLINE_H)
        )
        caps = tuple(
            _checks.number("capacity_items_per_h", c, lo=0)
            for c in _checks.sequence("capacity_items_per_h", self.capacity_items_per_h, what="items per hour")
        )
        if not caps:
            raise ValueError("capacity_items_per_h must hold at least one hour (got 0)")
        object.__setattr__(self, "capacity_items_per_h", caps)
        object.__setattr__(self, "overflow", _checks.boolean("overflow", self.overflow))
        w = _checks.number("provider_window_h", self.provider_window_h, lo=0, lo_open=True)
        object.__setattr__(self, "provider_window_h", w)
        object.__setattr__(self, "provider_turnaround_h", _checks.number("provider_turnaround_h", self.provider_turnaround_h, lo=0, hi=w))
        object.__setattr__(self, "crash_prob", _checks.number("crash_prob", self.crash_prob, lo=0, hi=0.99))
        object.__setattr__(self, "repeat_report_prob", _checks.number("repeat_report_prob", self.repeat_report_prob, lo=0, hi=1))
        object.__setattr__(self, "lease_h", _checks.number("lease_h", self.lease_h, lo=0, lo_open=True))
        object.__setattr__(self, "safety", _checks.number("safety", self.safety, lo=0, hi=1, lo_open=True))
        object.__setattr__(self, "seed", _checks.integer("seed", self.seed, big=True))

    def capacity_at(self, hour: int) -> float:
        """In-house items per hour during hour ``hour`` after submission."""
        return self.capacity_items_per_h[hour % len(self.capacity_items_per_h)]

    def with_(self, **changes) -> "BatchLaneScenario":
        """A copy with some fields changed (validated again)."""
        return replace(self, **changes)


@dataclass(frozen=True)
class BatchLaneResult:
    """Outcome of :func:`simulate_batch_lane`.

    Attributes
    ----------
    hours : tuple of float
        End of each simulated hour (h).
    done_in_house, done_by_provider, expired : tuple of int
        Cumulative items at the end of each hour.
    plan : OverflowPlan
        The planner's decision at submission.
    by_deadline : int
        Items with a result by the deadline.
    attempts : int
        Times an item was handed to a worker (retries included).
    duplicate_results : int
        Repeated results the store ignored.
    results_stored : int
        Results in the store at the end: one per finished item.
    """

    scenario: BatchLaneScenario
    job_id: str
    hours: tuple[float, ...]
    done_in_house: tuple[int, ...]
    done_by_provider: tuple[int, ...]
    expired: tuple[int, ...]
    plan: OverflowPlan
    by_deadline: int
    attempts: int
    duplicate_results: int
    results_stored: int

    @property
    def on_time_fraction(self) -> float:
        """Fraction of the job's items finished by the deadline."""
        return self.by_deadline / self.scenario.items

    def summary(self) -> dict[str, float | int | str]:
        """The numbers the chapter tabulates."""
        return {
            "overflow": "on" if self.scenario.overflow else "off",
            "items": self.scenario.items,
            "in-house": self.done_in_house[-1],
            "provider": self.done_by_provider[-1],
            "expired": self.expired[-1],
            "done by deadline (%)": 100.0 * self.on_time_fraction,
            "attempts": self.attempts,
            "retries": self.attempts - self.done_in_house[-1],
            "duplicate results ignored": self.duplicate_results,
            "results stored": self.results_stored,
        }

    def to_frame(self):
        """One row per hour: cumulative items by who finished them (pandas imported here)."""
        import pandas as pd

        return pd.DataFrame(
            {"in_house": self.done_in_house, "provider": self.done_by_provider, "expired": self.expired},
            index=pd.Index(self.hours, name="hour"),
        )


def simulate_batch_lane(scenario: BatchLaneScenario | None = None, *, store: JobStore | None = None) -> BatchLaneResult:
    """Run one chunked job through the batch lane, one virtual minute at a time.

    At submission the planner (:func:`plan_overflow`, counting on ``safety``
    times nominal capacity less crashes) sends the items the lane cannot finish
    by the deadline to the provider, if ``overflow`` is on and the provider's
    window fits before the deadline.  Each minute the workers claim as many
    items as the minute's capacity allows; a crashed worker's item is claimed
    again once its lease runs out; some reports arrive twice and the store
    ignores the copy.  The run ends at the deadline.
    """
    sc = BatchLaneScenario() if _checks.instance("scenario", scenario, BatchLaneScenario, none_ok=True) is None else scenario
    st = JobStore() if _checks.instance("store", store, JobStore, none_ok=True) is None else store
    rng = random.Random(sc.seed)
    deadline_s = sc.deadline_h * HOUR_S
    job = st.submit([f"item {k}" for k in range(sc.items)], deadline_s=deadline_s, now_s=0.0)
    provider = ProviderBatchAPI(sc.provider_window_h * HOUR_S, sc.provider_turnaround_h * HOUR_S)

    whole_hours = int(math.floor(sc.deadline_h + 1e-9))
    derate = sc.safety * (1 - sc.crash_prob)
    plan = plan_overflow(sc.items, [sc.capacity_at(h) * derate for h in range(whole_hours)], provider_window_h=sc.provider_window_h)
    if sc.overflow and plan.overflow_items and plan.provider_in_time:
        sent = st.overflow(job, plan.overflow_items)
        provider.submit([i.item_id for i in sent], now_s=0.0)

    hours: list[float] = []
    in_house: list[int] = []
    by_provider: list[int] = []
    expired: list[int] = []
    carry = 0.0
    minutes = int(math.ceil(sc.deadline_h * 60 - 1e-9))
    for m in range(minutes):
        now = m * 60.0
        for item_id in provider.collect(now):
            st.complete(item_id, "provider result", now_s=now, by="provider")
        carry += sc.capacity_at(int(now // HOUR_S)) / 60.0
        n = int(carry)
        carry -= n
        for lease in st.claim(now, n, lease_s=sc.lease_h * HOUR_S):
            if rng.random() < sc.crash_prob:
                continue  # worker died after the work, before reporting: the lease will run out
            st.complete(lease.item_id, f"result of {lease.payload}", now_s=now + 60.0)
            if rng.random() < sc.repeat_report_prob:
                st.complete(lease.item_id, f"result of {lease.payload}", now_s=now + 60.0)  # a retried report
        if (m + 1) % 60 == 0 or m == minutes - 1:
            end = now + 60.0
            for item_id in provider.collect(end):
                st.complete(item_id, "provider result", now_s=end, by="provider")
            if m == minutes - 1:
                st.expire(deadline_s)
            counts = st.done_by(job)
            hours.append(min(end, deadline_s) / HOUR_S)
            in_house.append(counts.get("in-house", 0))
            by_provider.append(counts.get("provider", 0))
            expired.append(st.poll(job).expired)

    by_deadline = st._db.execute(
        "SELECT COUNT(*) FROM items WHERE job_id = ? AND state = 'done' AND done_s <= ?", (job, deadline_s)
    ).fetchone()[0]
    attempts = st._db.execute("SELECT COALESCE(SUM(attempts), 0) FROM items WHERE job_id = ?", (job,)).fetchone()[0]
    return BatchLaneResult(
        scenario=sc,
        job_id=job,
        hours=tuple(hours),
        done_in_house=tuple(in_house),
        done_by_provider=tuple(by_provider),
        expired=tuple(expired),
        plan=plan,
        by_deadline=by_deadline,
        attempts=attempts,
        duplicate_results=st.counter("duplicate_results"),
        results_stored=len(st.results(job)),
    )
