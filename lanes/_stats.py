"""The course's one percentile rule, shared by every model and table."""

from __future__ import annotations

from collections.abc import Sequence

from . import _checks


def percentile(sorted_values: Sequence, q: float, empty: float = -1):
    """The anchor program's percentile (nearest rank): element ``int(q * n)`` of the sorted values,
    the last one at most; ``empty`` (-1, as the anchor prints it) when there are none."""
    if type(sorted_values) not in (list, tuple):
        sorted_values = _checks.sequence("sorted_values", sorted_values, what="values")
    q = _checks.number("q", q, lo=0, hi=1)
    n = len(sorted_values)
    return sorted_values[min(n - 1, int(q * n))] if n else empty
