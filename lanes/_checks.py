"""Validation helpers shared by every model: one clear line naming the parameter.

Each helper returns the (possibly converted) value or raises ``ValueError`` naming the parameter,
the rule and what arrived: ``slots must be an integer >= 1 (got 0)``; the CLI prints it and exits
with status 2.  ``bool`` is never a number; numpy scalars count as the numbers they hold; bounds
print exactly (``10000000``, not ``1e+07``), and one set by another parameter names it.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from numbers import Integral, Real
from typing import Any

#: Longest text of a rejected value quoted in a message; longer ones are cut.
SHOW_CHARS = 60
#: Size from which :func:`integer` refuses an int with no upper bound (far past any count, inside float range).
MAX_INT = 2**64


def show(value: object) -> str:
    """The rejected value as a message quotes it: exact when short, cut when long."""
    if isinstance(value, Integral) and not isinstance(value, bool):
        value = int(value)
        if value.bit_length() > 13_000:  # past what str() converts (4,300 digits): count, do not print
            return f"{'-' if value < 0 else ''}an integer of about {int(value.bit_length() * math.log10(2)) + 1} digits"
        text = str(value)
        return text if len(text) <= SHOW_CHARS else f"{text[:12]}... ({len(text.lstrip('-'))} digits)"
    text = value.__name__ if isinstance(value, type) else repr(value)
    return text if len(text) <= SHOW_CHARS else text[: SHOW_CHARS - 3] + "..."


def bound(value: float | int) -> str:
    """A bound printed exactly: whole numbers without a decimal point or exponent."""
    if isinstance(value, Integral):
        return show(value)
    v = float(value)
    return str(int(v)) if v.is_integer() and abs(v) < 1e16 else repr(v)


def _is_number(value: object) -> bool:
    """True for ints and floats, numpy scalars included; False for bool, str, None, arrays."""
    return isinstance(value, Real) and not (isinstance(value, bool) or type(value).__name__ == "bool_")


def integer(name: str, value: object, *, lo: int | None = None, hi: int | None = None, lo_name: str | None = None,
            hi_name: str | None = None, big: bool = False) -> int:
    """Return ``value`` as an int within ``[lo, hi]`` (either bound optional; a whole float such as
    ``32.0`` is that int).  ``lo_name``/``hi_name`` name a bound set by another parameter.  Without
    ``hi``, an int of :data:`MAX_INT` or more in size is refused unless ``big`` (seeds)."""
    rule = _rule("an integer", lo, hi, lo_name=lo_name, hi_name=hi_name)
    if not _is_number(value):
        raise ValueError(f"{name} must be {rule} (got {show(value)})")
    if not isinstance(value, Integral):
        v = float(value)  # a Real that is not an int: floats, numpy floats, Fractions
        if not (math.isfinite(v) and v.is_integer()):
            raise ValueError(f"{name} must be {rule} (got {show(value)})")
        value = v
    value = int(value)
    if (lo is not None and value < lo) or (hi is not None and value > hi):
        raise ValueError(f"{name} must be {rule} (got {show(value)}{_others(lo, hi, lo_name, hi_name)})")
    if hi is None and not big and abs(value) >= MAX_INT:
        raise ValueError(f"{name} must be {rule} and below 2**64 in size (got {show(value)})")
    return value


def number(name: str, value: object, *, lo: float | None = None, hi: float | None = None, lo_open: bool = False,
           hi_open: bool = False, lo_name: str | None = None, hi_name: str | None = None) -> float:
    """Return ``value`` as a finite float within the bounds (``lo``/``hi`` exclusive if open)."""
    rule = _rule("a number", lo, hi, lo_open=lo_open, hi_open=hi_open, lo_name=lo_name, hi_name=hi_name)
    try:
        v = float(value) if _is_number(value) else math.nan  # type: ignore[arg-type]
    except OverflowError:  # an int past float range
        v = math.nan
    if not math.isfinite(v):
        raise ValueError(f"{name} must be {rule} (got {show(value)})")
    if (lo is not None and (v <= lo if lo_open else v < lo)) or (hi is not None and (v >= hi if hi_open else v > hi)):
        raise ValueError(f"{name} must be {rule} (got {show(value)}{_others(lo, hi, lo_name, hi_name)})")
    return v


def boolean(name: str, value: object) -> bool:
    """Return ``value`` if it is ``True`` or ``False`` (numpy's bools included)."""
    if isinstance(value, bool) or type(value).__name__ == "bool_":
        return bool(value)
    raise ValueError(f"{name} must be True or False (got {show(value)})")


def text(name: str, value: object, *, empty: bool = False) -> str:
    """Return ``value`` if it is a string (non-empty unless ``empty``)."""
    if not isinstance(value, str) or (not empty and not value.strip()):
        raise ValueError(f"{name} must be {'a string' if empty else 'a non-empty string'} (got {show(value)})")
    return value


def int_range(name: str, value: object, *, lo: int = 0) -> tuple[int, int]:
    """Return ``value`` as an ordered pair ``(a, b)`` of integers with ``lo <= a <= b``."""
    a, b = pair(name, value, f"a pair (lo, hi) of integers >= {bound(lo)}")
    a, b = integer(f"{name} lo", a, lo=lo), integer(f"{name} hi", b, lo=lo)
    if a > b:
        raise ValueError(f"{name} must have lo <= hi (got {a} > {b})")
    return a, b


def pair(name: str, value: object, rule: str = "a pair (lo, hi)") -> tuple[Any, Any]:
    """Return the two items of ``value``, a list or tuple (or 1-d array) of length 2."""
    found = items(value)
    if found is None or len(found) != 2:
        raise ValueError(f"{name} must be {rule} (got {show(value)})")
    return found[0], found[1]


def sequence(name: str, value: object, *, what: str = "items", min_len: int = 0, max_len: int | None = None) -> list:
    """Return ``value`` as a list: a list, tuple, range, 1-d array or other finite iterable.

    Strings, bytes, mappings, numbers and ``None`` are refused: a single value where several are wanted.
    """
    found = items(value)
    rule = f"a {'non-empty ' if min_len == 1 else ''}list of {'at least ' + str(min_len) + ' ' if min_len > 1 else ''}{what}"
    if max_len is not None:
        rule += f" (at most {max_len})"
    if found is None or len(found) < min_len:
        raise ValueError(f"{name} must be {rule} (got {show(value)})")
    if max_len is not None and len(found) > max_len:
        raise ValueError(f"{name} must be {rule} (got {len(found)} {what})")
    return found


def items(value: object) -> list[Any] | None:
    """The items of a list, tuple, range, 1-d array or finite iterable; ``None`` for anything else."""
    if value is None or isinstance(value, (str, bytes, bytearray, Mapping, type)) or _is_number(value):
        return None
    if hasattr(value, "ndim") and hasattr(value, "tolist"):  # a numpy array
        return value.tolist() if value.ndim == 1 else None  # type: ignore[union-attr]
    try:
        return list(value) if isinstance(value, Iterable) else None
    except TypeError:
        return None


def instance(name: str, value: object, cls: type | tuple[type, ...], *, none_ok: bool = False) -> Any:
    """Return ``value`` if it is an instance of ``cls`` (or ``None`` when ``none_ok``)."""
    if isinstance(value, cls) or (value is None and none_ok):
        return value
    kinds = " or ".join(f"a {c.__name__}" for c in (cls if isinstance(cls, tuple) else (cls,)))
    raise ValueError(f"{name} must be {kinds}{' or None' if none_ok else ''} (got {show(value)})")


def choice(name: str, value: object, allowed: tuple[str, ...]) -> str:
    """Return ``value`` if it is one of ``allowed``."""
    if not isinstance(value, str) or value not in allowed:
        raise ValueError(f"{name} must be one of {', '.join(allowed)} (got {show(value)})")
    return value


def keywords(where: str, given: Mapping[str, object], known: Iterable[str]) -> None:
    """Refuse keyword arguments of ``given`` that are not in ``known``, listing the known ones."""
    known = tuple(known)
    unknown = [k for k in given if k not in known]
    if unknown:
        raise ValueError(f"{where} got unknown keyword argument {', '.join(map(repr, unknown))} "
                         f"(known: {', '.join(known) or 'none'})")


def limit(name: str, value: float, most: float, *, why: str = "") -> None:
    """Refuse a size above a documented limit, stating the limit (and why, when given)."""
    if value > most:
        raise ValueError(f"{name} must be at most {bound(most)}{'; ' + why if why else ''} (got {show(value)})")


def _others(lo, hi, lo_name, hi_name) -> str:
    """``, block_tokens=16``: the values of the parameters a relative rule names."""
    return "".join(f", {n}={show(v) if isinstance(v, Integral) else bound(v)}"
                   for n, v in ((lo_name, lo), (hi_name, hi)) if n is not None and v is not None)


def _rule(kind: str, lo: float | None, hi: float | None, *, lo_open: bool = False, hi_open: bool = False,
          lo_name: str | None = None, hi_name: str | None = None) -> str:
    low = lo_name if lo_name is not None else (None if lo is None else bound(lo))
    high = hi_name if hi_name is not None else (None if hi is None else bound(hi))
    if low is not None and high is not None:
        return f"{kind} in {'(' if lo_open else '['}{low}, {high}{')' if hi_open else ']'}"
    if low is not None:
        return f"{kind} {'>' if lo_open else '>='} {low}"
    if high is not None:
        return f"{kind} {'<' if hi_open else '<='} {high}"
    return kind
