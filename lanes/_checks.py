"""Validation helpers shared by every model: one clear line naming the parameter.

Each helper returns the (possibly converted) value or raises ``ValueError`` whose
message names the parameter, the rule and what arrived, for example
``slots must be an integer >= 1 (got 0)``.  The CLI prints that message and
exits with status 2.
"""

from __future__ import annotations

import math
from numbers import Integral, Real


def _show(value: object) -> str:
    return repr(value) if isinstance(value, str) else str(value)


def integer(name: str, value: object, *, lo: int | None = None, hi: int | None = None) -> int:
    """Return ``value`` as an int within ``[lo, hi]`` (either bound optional)."""
    rule = _rule("an integer", lo, hi)
    if isinstance(value, bool) or not isinstance(value, Integral):
        if isinstance(value, Real) and not isinstance(value, bool) and float(value).is_integer():
            value = int(value)
        else:
            raise ValueError(f"{name} must be {rule} (got {_show(value)})")
    value = int(value)
    if (lo is not None and value < lo) or (hi is not None and value > hi):
        raise ValueError(f"{name} must be {rule} (got {value})")
    return value


def number(
    name: str,
    value: object,
    *,
    lo: float | None = None,
    hi: float | None = None,
    lo_open: bool = False,
) -> float:
    """Return ``value`` as a finite float within the bounds (``lo`` exclusive if ``lo_open``)."""
    rule = _rule("a number", lo, hi, lo_open=lo_open)
    if isinstance(value, bool) or not isinstance(value, Real) or not math.isfinite(float(value)):
        raise ValueError(f"{name} must be {rule} (got {_show(value)})")
    v = float(value)
    too_low = lo is not None and (v <= lo if lo_open else v < lo)
    if too_low or (hi is not None and v > hi):
        raise ValueError(f"{name} must be {rule} (got {value})")
    return v


def int_range(name: str, value: object, *, lo: int = 0) -> tuple[int, int]:
    """Return ``value`` as an ordered pair ``(a, b)`` of integers with ``lo <= a <= b``."""
    try:
        a, b = value  # type: ignore[misc]
    except (TypeError, ValueError):
        raise ValueError(f"{name} must be a pair (lo, hi) of integers >= {lo} (got {_show(value)})") from None
    a = integer(f"{name} lo", a, lo=lo)
    b = integer(f"{name} hi", b, lo=lo)
    if a > b:
        raise ValueError(f"{name} must have lo <= hi (got {a} > {b})")
    return a, b


def choice(name: str, value: object, allowed: tuple[str, ...]) -> str:
    """Return ``value`` if it is one of ``allowed``."""
    if value not in allowed:
        raise ValueError(f"{name} must be one of {', '.join(allowed)} (got {_show(value)})")
    return value  # type: ignore[return-value]


def _rule(kind: str, lo: float | None, hi: float | None, *, lo_open: bool = False) -> str:
    if lo is not None and hi is not None:
        return f"{kind} in {'(' if lo_open else '['}{lo:g}, {hi:g}]"
    if lo is not None:
        return f"{kind} {'>' if lo_open else '>='} {lo:g}"
    if hi is not None:
        return f"{kind} <= {hi:g}"
    return kind
