"""Scheduling policies for the slot pool, named by their CLI spec.

The seven rows of the anchor table are specs :func:`parse_policy` reads: ``fifo`` (one queue in
submission order; the backlog came first), ``priority`` (interactive requests take a free slot
before batch; no eviction), ``reserve:R`` (priority, and batch starts only while more than R slots
stay free), ``preempt`` (priority; a request that finds no free slot evicts a running batch job,
which goes back to the head of the batch queue) and ``hybrid:R`` (``reserve:R`` plus preemption once
the reserve runs out).  Five extensions, off by default, are keyword fields: ``floor``, ``aging_s``,
``promote_s``, ``victim`` and ``min_run_s`` (see :class:`Policy`); ``fifo`` ignores them (it serves
in submission order and never evicts).

**Two kinds of aging.**  A batch job's *wait* is its time in the batch queue, summed over its stays
there (every backlog job waits from t = 0).  ``aging_s`` makes a job that waited more than
``aging_s`` immune from eviction once it runs.  ``promote_s`` is aging as priority, exactly:

* The batch queue keeps its order (evicted jobs at its head).  Its head is *promoted* once its wait
  is at least ``promote_s``, at the instant ``p`` its wait reached ``promote_s``.
* Free slots go one at a time to the older of the oldest waiting request and the promoted head: the
  head goes first if ``p`` is before the request's arrival (a request that arrived at ``p`` itself
  goes first).  Equivalently, priority = wait in the queue, plus ``promote_s`` for a request.
* Promotion changes the order, not which slots a kind may use: a batch job still starts only while
  more than ``reserve`` slots are free (or batch is under its ``floor``), and a request still never
  takes the floor.
* A promoted job never evicts.  A preempting policy evicts only for the requests that outrank the
  queue's head, and never evicts a job that was promoted when it started (wait at least
  ``promote_s``), so a job and a request cannot evict each other in turn.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from .. import _checks

#: The anchor table's rows, in its order.
DEFAULT_POLICIES: tuple[str, ...] = ("fifo", "priority", "reserve:4", "reserve:8", "reserve:16", "preempt", "hybrid:8")

#: Victim orders for eviction: ``youngest`` loses the least progress, ``most_remaining`` frees the slot for longest.
VICTIMS: tuple[str, ...] = ("youngest", "most_remaining")

_KINDS = ("fifo", "priority", "reserve", "preempt", "hybrid")


@dataclass(frozen=True)
class Policy:
    """How the pool chooses who gets a free slot and who is evicted (the rules: this module's docstring).

    ``kind`` is one of ``fifo``, ``priority``, ``reserve``, ``preempt``, ``hybrid``; ``reserve``: slots
    kept free of batch (``reserve`` and ``hybrid`` only); ``floor``: slots batch keeps while it has
    queued work (requests may not take them; eviction stops there); ``aging_s``: a batch job queued
    more than this many seconds is never evicted; ``promote_s``: a batch job that has waited at least
    this many seconds outranks later requests and, once it runs, is never evicted; ``victim``: the
    eviction order, one of :data:`VICTIMS`; ``min_run_s``: a job that has run less than this many
    seconds since it last started is never evicted.  ``None`` (0 for ``min_run_s``) turns a rule off.
    ``spec`` is the text the policy was parsed from, echoed in tables and JSON.
    """

    kind: str
    reserve: int = 0
    floor: int = 0
    aging_s: int | None = None
    promote_s: int | None = None
    victim: str = "youngest"
    min_run_s: int = 0
    spec: str = ""

    def __post_init__(self) -> None:
        set_ = object.__setattr__
        _checks.choice("policy", self.kind, _KINDS)
        reserve = _checks.integer("reserve", self.reserve, lo=0)
        if self.kind not in ("reserve", "hybrid") and reserve:
            raise ValueError(f"reserve applies only to reserve:R and hybrid:R policies (got {self.kind} with reserve {reserve})")
        set_(self, "reserve", reserve)
        set_(self, "floor", _checks.integer("floor", self.floor, lo=0))
        for name in ("aging_s", "promote_s"):
            if getattr(self, name) is not None:
                set_(self, name, _checks.integer(name, getattr(self, name), lo=0))
        _checks.choice("victim", self.victim, VICTIMS)
        set_(self, "min_run_s", _checks.integer("min_run_s", self.min_run_s, lo=0))
        if not self.spec:
            set_(self, "spec", self.kind if self.kind in ("fifo", "priority", "preempt") else f"{self.kind}:{reserve}")

    @property
    def preempts(self) -> bool:
        """True when waiting interactive work may evict running batch jobs."""
        return self.kind in ("preempt", "hybrid")

    def check_fits(self, slots: int) -> None:
        """Raise ``ValueError`` unless the reserve and floor fit in a pool of ``slots``."""
        for name in ("reserve", "floor"):
            _checks.integer(name, getattr(self, name), lo=0, hi=slots, hi_name="slots")

    def with_(self, **changes: object) -> "Policy":
        """Return a copy with some fields changed (validated again, spec kept)."""
        return replace(self, **changes)


#: Keyword arguments :func:`parse_policy` (and the simulators) accept: the extension fields.
EXTENSIONS = ("floor", "aging_s", "promote_s", "victim", "min_run_s")


def parse_policy(spec: str | Policy, **extensions: object) -> Policy:
    """Build a :class:`Policy` from its spec (``fifo``, ``reserve:8``, ``hybrid:8``, ...); keyword
    arguments set the extension fields (:data:`EXTENSIONS`)."""
    _checks.keywords("policy", extensions, EXTENSIONS)
    if isinstance(spec, Policy):
        return spec.with_(**extensions) if extensions else spec
    if not isinstance(spec, str):
        raise ValueError(f"policy must be a spec string such as 'reserve:8' (got {_checks.show(spec)})")
    text = spec.strip()
    kind, sep, arg = text.partition(":")
    if kind in ("fifo", "priority", "preempt") and not sep:
        return Policy(kind, spec=text, **extensions)  # type: ignore[arg-type]
    if kind in ("reserve", "hybrid"):
        if not sep:
            raise ValueError(f"policy {_checks.show(text)} needs a reserve size: use {kind}:R with R an integer >= 0")
        try:
            reserve = int(arg)
        except ValueError:
            raise ValueError(f"reserve in policy {_checks.show(text)} must be an integer >= 0 "
                             f"(got {_checks.show(arg)})") from None
        if reserve < 0:
            raise ValueError(f"reserve in policy {_checks.show(text)} must be an integer >= 0 (got {reserve})")
        return Policy(kind, reserve=reserve, spec=text, **extensions)  # type: ignore[arg-type]
    raise ValueError(f"policy must be one of fifo, priority, reserve:R, preempt, hybrid:R (got {_checks.show(text)})")
