"""Per-student variants: a student identifier gives each set its own parameters and seed.

The parameters come deterministically from ``sha256("lanes-exercises/<slug>/<student>")``:
the same identifier always gives the same variant, two identifiers almost always give
different ones, and the empty identifier gives the set's default variant, whose numbers
are chosen away from those the chapters print.
"""

from __future__ import annotations

import hashlib
import random
from dataclasses import dataclass

__all__ = ["Variant", "normalise_student", "rng_for"]


def normalise_student(student: object) -> str:
    """The identifier as used for the variant: stripped and lower-cased; ``ValueError`` if not a str."""
    if type(student) is not str:
        raise ValueError(f"STUDENT must be a string in quotes, such as \"jdoe42\" (got {type(student).__name__})")
    s = student.strip().lower()
    if len(s) > 100:
        raise ValueError(f"STUDENT must be at most 100 characters (got {len(s)})")
    if not s.isprintable():
        raise ValueError("STUDENT must hold printable characters only")
    return s


def rng_for(slug: str, student: str) -> random.Random:
    """A random generator seeded from the set and the (normalised) student identifier."""
    digest = hashlib.sha256(f"lanes-exercises/{slug}/{student}".encode()).digest()
    return random.Random(int.from_bytes(digest[:16], "big"))


@dataclass(frozen=True)
class Variant:
    """The parameters of one set for one student; read them as attributes (``V.rate_per_s``).

    Attributes
    ----------
    slug : str
        The exercise set, such as ``"01_slots_and_littles_law"``.
    student : str
        The normalised student identifier (``""`` for the default variant).
    params : tuple of (str, object)
        Parameter names and values, in the order the set defines them.
    """

    slug: str
    student: str
    params: tuple

    def __getattr__(self, name: str):
        for k, v in object.__getattribute__(self, "params"):
            if k == name:
                return v
        raise AttributeError(f"this variant has no parameter {name!r}; it has: "
                             + ", ".join(k for k, _ in object.__getattribute__(self, "params")))

    def __getitem__(self, name: str):
        return self.__getattr__(name)

    def as_dict(self) -> dict:
        return dict(self.params)

    def __str__(self) -> str:
        who = f"student {self.student!r}" if self.student else "the default variant (STUDENT is empty)"
        width = max((len(k) for k, _ in self.params), default=0)
        lines = [f"Exercise set {self.slug}, {who}. Your parameters (use them as V.<name>):"]
        lines += [f"  V.{k:<{width}} = {v!r}" for k, v in self.params]
        return "\n".join(lines)

    def _repr_pretty_(self, p, cycle) -> None:  # IPython display
        p.text(str(self))
