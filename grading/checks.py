"""Checks an answer key combines from the judge's helpers (``close``, ``equal``, ``choice``).

``all_of`` makes several sub-answers one criterion, right only when every one is right: a
whole number or a verdict that many students share then earns nothing on its own unless the
number computed with it is right too. ``one_of`` accepts any of several right values (ties).
"""

from __future__ import annotations

from .judge import Check

__all__ = ["all_of", "one_of"]


def all_of(*checks: Check, weight: float = 1.0) -> Check:
    """One criterion that holds when every check in ``checks`` holds; their messages joined."""
    if not checks or not all(isinstance(c, Check) for c in checks):
        raise ValueError("checks must be one or more Check objects")
    ok = all(c.ok for c in checks)
    return Check(ok, "" if ok else "; ".join(c.message for c in checks if not c.ok and c.message), weight)


def one_of(name: str, value: object, allowed, *, abs_tol: float = 0.0, message: str = "",
           weight: float = 1.0) -> Check:
    """``value`` is one of ``allowed`` (several answers are right, such as tied winners); numbers
    within ``abs_tol`` of one count (``abs_tol`` smaller than the gap between allowed numbers)."""
    if abs_tol:
        ok = any(abs(value - x) <= abs_tol for x in allowed)
    else:
        ok = value in set(allowed)
    return Check(ok, "" if ok else (message or f"{name} does not match the value recomputed for your variant"),
                 weight)
