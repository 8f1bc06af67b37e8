"""Deadlines, grace and the late policy of a grading run.

``--deadline`` gives a time for every set (``2026-10-02T23:59+02:00``) or for one
(``07_batching=2026-11-20T18:00Z``; repeat it per set; a per-set time overrides the one for
every set). A time without an offset is UTC. ``--grace MINUTES`` is added to every
deadline. A copy is **late** when the export's own submission time (Gradescope's
``created_at``) is after its set's deadline plus the grace, or when the LMS itself flagged
it late (Canvas's ``_LATE_``); when neither is known its lateness is unknown (blank in the
gradebook), and it is never counted as late.

``--late`` is the policy for the copy that counts:

- ``count`` (the default): it is marked late and earns its score;
- ``penalty:F``: it earns ``(1 - F)`` of its score (``penalty:0.1`` takes 10 %);
- ``refuse``: the latest copy handed in on time counts instead; with none, the late copy
  counts and scores 0.

A report records the run's rule (:meth:`Deadlines.as_dict`), so that a regrade can reuse
the class's (``grade.py --policy-from class.json``) and ``merge`` can refuse a regrade
graded under another rule.
"""

from __future__ import annotations

import datetime as dt
import re
from dataclasses import dataclass, field

__all__ = ["Deadlines", "parse_time"]

POLICIES = ("count", "refuse", "penalty:F")


def parse_time(text: str, what: str = "--deadline") -> dt.datetime:
    """An ISO 8601 time (``2026-10-02T23:59``, optional seconds and offset, ``Z`` for UTC), as UTC."""
    s = text.strip().replace(" ", "T", 1)
    s = re.sub(r"Z$", "+00:00", s)
    try:
        t = dt.datetime.fromisoformat(s)
    except ValueError:
        raise ValueError(f"{what} must be an ISO 8601 time such as 2026-10-02T23:59+02:00 (got {text!r})") from None
    return (t if t.tzinfo else t.replace(tzinfo=dt.timezone.utc)).astimezone(dt.timezone.utc)


@dataclass(frozen=True)
class Deadlines:
    """When each set is due (``due``: set slug, or ``"*"`` for every set, -> UTC time), the grace
    period in seconds, and the late policy (``policy`` ``"count"``, ``"refuse"`` or ``"penalty"``
    with ``penalty`` the fraction taken)."""

    due: dict = field(default_factory=dict)
    grace_s: float = 0.0
    policy: str = "count"
    penalty: float = 0.0

    @classmethod
    def parse(cls, specs: list, *, grace_min: float = 0.0, late: str = "count", sets=()) -> "Deadlines":
        """From the command line's ``--deadline`` values, ``--grace`` and ``--late``; ``ValueError``
        naming the option on a bad value."""
        due: dict = {}
        for spec in specs or ():
            slug, sep, when = spec.rpartition("=")
            if sep and slug not in sets:
                raise ValueError(f"--deadline SET=TIME: no set {slug!r} (known: {', '.join(sorted(sets))})")
            due[slug if sep else "*"] = parse_time(when)
        if not grace_min >= 0:
            raise ValueError(f"--grace must be >= 0 minutes (got {grace_min})")
        policy, penalty = late, 0.0
        if late.startswith("penalty:"):
            policy = "penalty"
            try:
                penalty = float(late.split(":", 1)[1])
            except ValueError:
                penalty = -1.0
            if not 0 <= penalty <= 1:
                raise ValueError(f"--late penalty:F needs F in [0, 1] (got {late!r})")
        elif late not in ("count", "refuse"):
            raise ValueError(f"--late must be one of {', '.join(POLICIES)} (got {late!r})")
        return cls(due, float(grace_min) * 60.0, policy, penalty)

    def as_dict(self) -> dict:
        """The rule as JSON data (times in ISO 8601, UTC), what a report records."""
        return {"due": {k: v.isoformat() for k, v in sorted(self.due.items())}, "grace_s": self.grace_s,
                "policy": self.policy, "penalty": self.penalty}

    @classmethod
    def from_dict(cls, data, what: str = "late_policy") -> "Deadlines":
        """The rule :meth:`as_dict` wrote; ``ValueError`` naming ``what`` if it is not one."""
        try:
            due = {str(k): parse_time(str(v), what) for k, v in dict(data["due"]).items()}
            out = cls(due, float(data["grace_s"]), str(data["policy"]), float(data["penalty"]))
        except (KeyError, TypeError, ValueError, AttributeError):
            raise ValueError(f"{what}: not a deadline rule written by grade.py (got {str(data)[:80]!r})") from None
        if out.policy not in ("count", "refuse", "penalty") or not out.grace_s >= 0 or not 0 <= out.penalty <= 1:
            raise ValueError(f"{what}: not a deadline rule written by grade.py (got {str(data)[:80]!r})")
        return out

    def deadline(self, slug: str) -> dt.datetime | None:
        """The deadline of ``slug`` with the grace added, or ``None``."""
        t = self.due.get(slug, self.due.get("*"))
        return None if t is None else t + dt.timedelta(seconds=self.grace_s)

    def lateness(self, slug: str | None, submitted: dt.datetime | None, flagged: bool | None
                 ) -> tuple[bool | None, float | None]:
        """``(late, seconds late)``: from the submission time and the deadline where both are known,
        else the LMS's own flag (seconds unknown), else ``(None, None)``."""
        limit = self.deadline(slug) if slug else None
        if submitted is not None and limit is not None:
            over = (submitted - limit).total_seconds()
            return over > 0, max(0.0, over)
        return flagged, None

    def describe(self) -> str:
        """One line for the report."""
        if not self.due:
            rule = "no deadline given"
        else:
            rule = "; ".join(f"{k if k != '*' else 'every set'} due {v.isoformat()}" for k, v in sorted(self.due.items()))
        late = {"count": "late copies count in full", "refuse": "late copies are refused (an on-time copy counts)",
                "penalty": f"late copies earn {1 - self.penalty:.0%} of their score"}[self.policy]
        return f"{rule}; grace {self.grace_s / 60:g} min; {late}"
