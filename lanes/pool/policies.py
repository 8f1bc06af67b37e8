"""Scheduling policies for the slot pool, named by their CLI spec.

The seven rows of the anchor table are specs :func:`parse_policy` reads:
``fifo`` (one queue in submission order; the backlog came first),
``priority`` (interactive requests take a free slot before batch; no
eviction), ``reserve:R`` (priority, and batch starts only while more than R
slots stay free), ``preempt`` (priority; a request that finds no free slot
evicts a running batch job, which goes back to the head of the batch queue)
and ``hybrid:R`` (``reserve:R`` plus preemption once the reserve runs out).

Five extensions, off by default, are keyword fields: ``floor``, ``aging_s``,
``promote_s``, ``victim`` and ``min_run_s`` (see :class:`Policy`).

**Two kinds of aging.**  A batch job's *wait* is the time it has spent in the
batch queue, summed over its stays there (every backlog job waits from t = 0;
an evicted job's wait goes on from where it stopped).  ``aging_s`` makes a job
that waited more than ``aging_s`` immune from eviction once it runs.
``promote_s`` is aging as priority: a job's priority rises with its wait, and
once the wait reaches ``promote_s`` it outranks every interactive request that
arrives after that instant.  Exactly, for the non-FIFO kinds:

* The batch queue keeps its order (evicted jobs at its head).  Its head is
  *promoted* once its wait is at least ``promote_s``; it was promoted at the
  instant ``p`` its wait reached ``promote_s``.
* Free slots go one at a time to the older of the oldest waiting request and
  the promoted head: the head goes first if ``p`` is before the request's
  arrival (a request that arrived at ``p`` itself goes first).  Equivalently,
  priority = wait in the queue, plus ``promote_s`` for a request.
* Promotion changes the order, not which slots a kind may use: a batch job
  still starts only while more than ``reserve`` slots are free (or batch is
  under its ``floor``), and a request still never takes the floor.
* A promoted job never evicts.  A preempting policy evicts only for the
  requests that outrank the queue's head (all waiting requests while the head
  is not promoted), and never evicts a job that was promoted when it started
  (wait at least ``promote_s``), so promotion cannot make a job and a request
  evict each other in turn.

``fifo`` ignores the extensions (it serves in submission order and never evicts).
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from .. import _checks

#: The anchor table's rows, in its order.
DEFAULT_POLICIES: tuple[str, ...] = (
    "fifo",
    "priority",
    "reserve:4",
    "reserve:8",
    "reserve:16",
    "preempt",
    "hybrid:8",
)

#: Victim orders for eviction: ``youngest`` loses the least progress,
#: ``most_remaining`` frees the slot for longest.
VICTIMS: tuple[str, ...] = ("youngest", "most_remaining")

_KINDS = ("fifo", "priority", "reserve", "preempt", "hybrid")


@dataclass(frozen=True)
class Policy:
    """How the pool chooses who gets a free slot and who is evicted.

    Parameters
    ----------
    kind : str
        One of ``fifo``, ``priority``, ``reserve``, ``preempt``, ``hybrid``.
    reserve : int
        Slots kept free of batch (``reserve`` and ``hybrid`` only), slots.
    floor : int
        Slots batch keeps while it has queued work, even under interactive
        load: interactive requests may not take them and eviction stops there.
    aging_s : int or None
        A batch job that has spent more than this many seconds queued is never
        evicted.  ``None`` turns aging off.
    promote_s : int or None
        A batch job that has waited at least this many seconds in the queue
        outranks the interactive requests that arrive after it reached that
        wait; once it runs it is never evicted (the exact rule is in this
        module's docstring).  ``None`` turns promotion off.
    victim : str
        Eviction order, one of :data:`VICTIMS`.
    min_run_s : int
        A batch job that has run for less than this many seconds since it
        last started is never evicted.
    spec : str
        The text this policy was parsed from, echoed in tables and JSON.
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
        if self.aging_s is not None:
            set_(self, "aging_s", _checks.integer("aging_s", self.aging_s, lo=0))
        if self.promote_s is not None:
            set_(self, "promote_s", _checks.integer("promote_s", self.promote_s, lo=0))
        _checks.choice("victim", self.victim, VICTIMS)
        set_(self, "min_run_s", _checks.integer("min_run_s", self.min_run_s, lo=0))
        if not self.spec:
            set_(self, "spec", self.kind if self.kind in ("fifo", "priority", "preempt") else f"{self.kind}:{reserve}")

    @property
    def preempts(self) -> bool:
        """True when waiting interactive work may evict running batch jobs."""
        return self.kind in ("preempt", "hybrid")

    @property
    def headroom(self) -> int:
        """Slots batch must leave free when it starts (the reserve)."""
        return self.reserve

    @property
    def label(self) -> str:
        """Row label in the anchor table's layout (``reserve 8+pre`` for ``hybrid:8``)."""
        if self.kind == "reserve":
            return f"reserve {self.reserve}"
        if self.kind == "hybrid":
            return f"reserve {self.reserve}+pre"
        return self.kind

    def check_fits(self, slots: int) -> None:
        """Raise ``ValueError`` unless the reserve and floor fit in a pool of ``slots``."""
        if self.reserve > slots:
            raise ValueError(f"reserve must be in [0, slots] (got {self.reserve}, slots={slots})")
        if self.floor > slots:
            raise ValueError(f"floor must be in [0, slots] (got {self.floor}, slots={slots})")

    def with_(self, **changes: object) -> "Policy":
        """Return a copy with some fields changed (validated again, spec kept)."""
        return replace(self, **changes)


#: Keyword arguments :func:`parse_policy` (and the simulators) accept: the extension fields.
EXTENSIONS = ("floor", "aging_s", "promote_s", "victim", "min_run_s")


def parse_policy(spec: str | Policy, **extensions: object) -> Policy:
    """Build a :class:`Policy` from its spec (``fifo``, ``reserve:8``, ``hybrid:8``, ...).

    Keyword arguments set the extension fields (``floor``, ``aging_s``,
    ``promote_s``, ``victim``, ``min_run_s``).
    """
    _checks.keywords("policy", extensions, EXTENSIONS)
    if isinstance(spec, Policy):
        return spec.with_(**extensions) if extensions else spec
    if not isinstance(spec, str):
        raise ValueError(f"policy must be a spec string such as 'reserve:8' (got {_checks.show(spec)})")
    text = spec.strip()
    allowed = "fifo, priority, reserve:R, preempt, hybrid:R"
    kind, sep, arg = text.partition(":")
    if kind in ("fifo", "priority", "preempt") and not sep:
        return Policy(kind, spec=text, **extensions)  # type: ignore[arg-type]
    if kind in ("reserve", "hybrid"):
        if not sep:
            raise ValueError(f"policy {_checks.show(text)} needs a reserve size: use {kind}:R with R an integer >= 0")
        try:
            reserve = int(arg)
        except ValueError:
            raise ValueError(
                f"reserve in policy {_checks.show(text)} must be an integer >= 0 (got {_checks.show(arg)})"
            ) from None
        if reserve < 0:
            raise ValueError(f"reserve in policy {_checks.show(text)} must be an integer >= 0 (got {reserve})")
        return Policy(kind, reserve=reserve, spec=text, **extensions)  # type: ignore[arg-type]
    raise ValueError(f"policy must be one of {allowed} (got {_checks.show(text)})")


def parse_policies(specs: str, **extensions: object) -> tuple[Policy, ...]:
    """Parse a comma-separated list of specs, such as the CLI's ``--policies``."""
    if not isinstance(specs, str):
        raise ValueError(f"policies must be a comma-separated string of specs (got {_checks.show(specs)})")
    parts = [p for p in (s.strip() for s in specs.split(",")) if p]
    if not parts:
        raise ValueError(f"policies must list at least one policy, e.g. {','.join(DEFAULT_POLICIES)}")
    return tuple(parse_policy(p, **extensions) for p in parts)
