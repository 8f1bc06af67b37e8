"""Run many scenario x policy combinations and collect one tidy table.

>>> from lanes.pool.sweep import sweep
>>> df = sweep(["reserve:0", "reserve:16"])          # doctest: +SKIP
>>> df[["policy", "p99_s", "batch_done"]]            # doctest: +SKIP

A progress line (:mod:`lanes.pool.progress`: plain text updated in place, emptied
at the end, so a saved notebook keeps none of it) is shown only in a live JupyterLab session, detected by
the ``JPY_SESSION_NAME`` variable that Jupyter Server sets for its kernels, and
only once a sweep has run for more than a second.  Under nbval, nbconvert,
pytest or a plain script the sweep is silent, so executed notebooks never
store a progress bar.  ``LANES_PROGRESS=1`` or ``0`` forces it on or off.
pandas is imported inside the functions.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING, Any

from .. import _checks
from .policies import EXTENSIONS, Policy, parse_policy
from .scenario import Scenario
from .engine import simulate

if TYPE_CHECKING:  # pragma: no cover
    import pandas

__all__ = [
    "METRICS",
    "SEEDS",
    "progress_enabled",
    "seeds_meeting",
    "smallest_meeting",
    "smallest_reserve",
    "spread",
    "sweep",
    "sweep_scenarios",
    "sweep_seeds",
]

#: The seeds every multi-seed comparison of the course runs on (the anchor
#: scenario's own seed, 3, is one of them).
SEEDS: tuple[int, ...] = tuple(range(1, 11))

#: Result columns of a sweep, in order, with their units.
METRICS: dict[str, str] = {
    "p50_s": "interactive p50 queue wait, s",
    "p99_s": "interactive p99 queue wait, s",
    "max_s": "interactive max queue wait, s",
    "peak_p99_s": "interactive p99 queue wait for arrivals in the peak hour (the middle hour), s",
    "late_fraction": "fraction of interactive requests waiting > 2 s",
    "batch_done": "batch jobs completed in the window",
    "batch_slot_h": "slot-hours held by batch (including work later evicted)",
    "preempted": "batch evictions",
    "util": "mean fraction of slots busy",
}

_SCENARIO_FIELDS = (
    "slots",
    "hours",
    "backlog",
    "batch_service_s",
    "inter_service_s",
    "trough_rate",
    "peak_rate",
    "preempt_cost_s",
    "seed",
)
_POLICY_FIELDS = ("reserve", "floor", "aging_s", "victim", "min_run_s")


def progress_enabled(progress: bool | None = None) -> bool:
    """Whether a sweep shows a progress bar.

    Parameters
    ----------
    progress : bool or None
        ``True`` or ``False`` decide; ``None`` (default) asks the environment:
        ``LANES_PROGRESS`` if set (``1``/``0``), otherwise on only inside a
        live JupyterLab kernel (``JPY_SESSION_NAME`` set) that is not run by pytest.
    """
    if progress is not None:
        return bool(progress)
    forced = os.environ.get("LANES_PROGRESS")
    if forced is not None:
        return forced.strip().lower() in ("1", "true", "yes", "on")
    if "PYTEST_CURRENT_TEST" in os.environ:
        return False
    return bool(os.environ.get("JPY_SESSION_NAME"))


def _iterate(items: Sequence[Any], progress: bool | None, desc: str) -> Iterable[Any]:
    if not progress_enabled(progress) or len(items) < 2:
        return items
    from .progress import track

    return track(items, desc)


def _metric(r: Any, scenario: Scenario, name: str) -> Any:
    if name == "peak_p99_s":
        return r.window(scenario.ticks // 2 - 1800, scenario.ticks // 2 + 1800)["p99"]
    if name == "batch_slot_h":
        return sum(r.busy_batch) / 3600
    return getattr(r, name)


def _row(scenario: Scenario, pol: Policy, label: Any) -> dict[str, Any]:
    r = simulate(scenario, pol)
    row: dict[str, Any] = {}
    if label is not None:
        row["label"] = label
    row["policy"] = pol.spec
    for name in _POLICY_FIELDS:
        row[name] = getattr(pol, name)
    if pol.promote_s is not None:  # a column only where promotion is on, so other sweeps keep their columns
        row["promote_s"] = pol.promote_s
    for name in _SCENARIO_FIELDS:
        value = getattr(scenario, name)
        row[name] = f"{value[0]}-{value[1]}" if isinstance(value, tuple) else value
    row.update(
        p50_s=r.p50_s,
        p99_s=r.p99_s,
        max_s=r.max_s,
        peak_p99_s=r.window(scenario.ticks // 2 - 1800, scenario.ticks // 2 + 1800)["p99"],
        late_fraction=r.late_fraction,
        batch_done=r.batch_done,
        batch_slot_h=sum(r.busy_batch) / 3600,
        preempted=r.preempted,
        util=r.util,
    )
    return row


def sweep(
    policies: Sequence[str | Policy],
    scenarios: Scenario | Sequence[Scenario] | None = None,
    *,
    progress: bool | None = None,
    **extensions: object,
) -> "pandas.DataFrame":
    """Run every policy on every scenario; one row per run.

    Parameters
    ----------
    policies : sequence of str or Policy
        Policy specs (``"reserve:8"``) or Policy objects (extensions included).
    scenarios : Scenario or sequence of Scenario, optional
        The anchor scenario when omitted.
    progress : bool, optional
        Force the progress bar on or off (see :func:`progress_enabled`).
    **extensions
        Extension fields applied to every string spec (``floor``, ``aging_s``,
        ``promote_s``, ``victim``, ``min_run_s``).

    Returns
    -------
    pandas.DataFrame
        Columns: ``policy``, the policy's fields, the scenario's fields (ranges
        as ``"60-180"``), then :data:`METRICS`.  Rows in scenario-major order.
    """
    pols = [parse_policy(p, **extensions) for p in _policy_list(policies)]
    if scenarios is None:
        scs: list[Scenario] = [Scenario()]
    elif isinstance(scenarios, Scenario):
        scs = [scenarios]
    else:
        scs = _checks.sequence("scenarios", scenarios, what="Scenario")
        for sc in scs:
            _checks.instance("scenarios", sc, Scenario)
    if not scs:
        raise ValueError("scenarios must list at least one Scenario (got an empty list)")
    runs = [(sc, p, None) for sc in scs for p in pols]
    return _frame(runs, progress)


def sweep_scenarios(
    policy: str | Policy,
    field: str,
    values: Sequence[Any],
    base: Scenario | None = None,
    *,
    progress: bool | None = None,
    **extensions: object,
) -> "pandas.DataFrame":
    """Vary one scenario field or policy extension and run one policy per value.

    Parameters
    ----------
    policy : str or Policy
        The policy spec, e.g. ``"hybrid:8"``.
    field : str
        A :class:`~lanes.Scenario` field (``preempt_cost_s``, ``batch_service_s``,
        ``tick_s``, ...) or a policy extension (``floor``, ``aging_s``, ``promote_s``, ``victim``, ``min_run_s``).
    values : sequence
        Values of ``field``, one run each.
    base : Scenario, optional
        The scenario the values are applied to (the anchor scenario by default).
    progress : bool, optional
        Force the progress bar on or off.
    **extensions
        Extension fields held fixed.

    Returns
    -------
    pandas.DataFrame
        As :func:`sweep`, plus a ``label`` column holding each value.
    """
    base = Scenario() if _checks.instance("base", base, Scenario, none_ok=True) is None else base
    values = _checks.sequence("values", values, what="values")
    if field in EXTENSIONS:
        runs = [(base, parse_policy(policy, **{**extensions, field: v}), v) for v in values]
    elif field in _SCENARIO_FIELDS or field == "tick_s":  # the clock: swept, but not a column of every sweep
        pol = parse_policy(policy, **extensions)
        runs = [(base.with_(**{field: v}), pol, v) for v in values]
    else:
        allowed = ", ".join(_SCENARIO_FIELDS + ("tick_s",) + EXTENSIONS)
        raise ValueError(f"field must be one of {allowed} (got {_checks.show(field)})")
    if not runs:
        raise ValueError("values must list at least one value (got an empty list)")
    df = _frame(runs, progress)
    return df


def _frame(runs: list[tuple[Scenario, Policy, Any]], progress: bool | None) -> "pandas.DataFrame":
    import pandas as pd

    for sc, pol, _ in runs:
        pol.check_fits(sc.slots)
    rows = [_row(sc, pol, label) for sc, pol, label in _iterate(runs, progress, "simulating")]
    return pd.DataFrame(rows)


def _policy_list(policies: object) -> list[Any]:
    if isinstance(policies, (str, Policy)):
        raise ValueError(
            f"policies must be a list of specs, e.g. ['priority', 'reserve:8'] (got {_checks.show(policies)})"
        )
    return _checks.sequence("policies", policies, what="policy specs", min_len=1)


def _check_metrics(metrics: Sequence[str]) -> tuple[str, ...]:
    names = tuple(_checks.sequence("metrics", metrics, what="metric names"))
    unknown = [m for m in names if m not in METRICS]
    if unknown or not names:
        raise ValueError(f"metrics must be names from {', '.join(METRICS)} (got {_checks.show(list(names))})")
    return names


def _check_seeds(seeds: Iterable[int]) -> list[int]:
    out = _checks.sequence("seeds", seeds, what="integers", min_len=1)
    out = [_checks.integer("seeds", s, big=True) for s in out]
    if len(set(out)) != len(out):
        raise ValueError(f"seeds must not repeat (got {_checks.show(out)})")
    return out


def sweep_seeds(
    policies: Sequence[str | Policy],
    seeds: Iterable[int] = SEEDS,
    base: Scenario | None = None,
    *,
    metrics: Sequence[str] = ("p50_s", "p99_s", "max_s", "late_fraction", "batch_done", "preempted", "util"),
    progress: bool | None = None,
    **extensions: object,
) -> "pandas.DataFrame":
    """Run every policy on one scenario drawn with each seed; one row per run.

    Each seed draws its own arrivals and backlog once, and every policy of that
    seed sees the same draw, so differences within a seed come from the policy
    and differences across seeds show how much a conclusion owes to luck.

    Parameters
    ----------
    policies : sequence of str or Policy
        Policy specs (``"reserve:8"``) or Policy objects.
    seeds : iterable of int
        Seeds of the scenario's random draw (default :data:`SEEDS`, ten seeds).
    base : Scenario, optional
        The scenario whose ``seed`` is replaced (the anchor scenario by default).
    metrics : sequence of str
        Names from :data:`METRICS` to record.  ``peak_p99_s`` and
        ``batch_slot_h`` cost a second pass over the run, so they are left out
        by default.
    progress : bool, optional
        Force the progress bar on or off (see :func:`progress_enabled`).
    **extensions
        Extension fields applied to every string spec.

    Returns
    -------
    pandas.DataFrame
        Columns ``seed``, ``policy``, ``reserve``, then ``metrics``; rows in
        seed-major order (every policy of the first seed, then the next seed).
    """
    import pandas as pd

    pols = [parse_policy(p, **extensions) for p in _policy_list(policies)]
    names = _check_metrics(metrics)
    base = Scenario() if _checks.instance("base", base, Scenario, none_ok=True) is None else base
    for p in pols:
        p.check_fits(base.slots)
    runs = [(base.with_(seed=s), p) for s in _check_seeds(seeds) for p in pols]
    rows = []
    for sc, pol in _iterate(runs, progress, "simulating"):
        r = simulate(sc, pol)
        row: dict[str, Any] = {"seed": sc.seed, "policy": pol.spec, "reserve": pol.reserve}
        row.update({m: _metric(r, sc, m) for m in names})
        rows.append(row)
    return pd.DataFrame(rows)


def spread(frame: "pandas.DataFrame", metric: str, by: str = "policy") -> "pandas.DataFrame":
    """Lowest, median and highest value of a metric across seeds, per group.

    Parameters
    ----------
    frame : pandas.DataFrame
        A table with a ``seed`` column, such as :func:`sweep_seeds` returns.
    metric : str
        The column summarised (its unit is kept).
    by : str
        The column that names a group (``policy``, ``reserve``, ...).

    Returns
    -------
    pandas.DataFrame
        Index: the values of ``by`` in order of first appearance; columns
        ``low``, ``median``, ``high`` and ``seeds`` (how many seeds were run).
    """
    for name in ("seed", metric, by):
        if name not in frame.columns:
            raise ValueError(f"frame has no column {name!r} (columns: {', '.join(map(str, frame.columns))})")
    grouped = frame.groupby(by, sort=False)[metric]
    out = grouped.agg(low="min", median="median", high="max", seeds="count")
    return out


def seeds_meeting(frame: "pandas.DataFrame", metric: str, limit: float, by: str = "reserve") -> "pandas.Series":
    """How many seeds keep ``metric`` at or below ``limit``, per value of ``by``.

    Parameters
    ----------
    frame : pandas.DataFrame
        A :func:`sweep_seeds` table.
    metric : str
        The column compared with the limit (for example ``p99_s``).
    limit : float
        The target, in the metric's unit; a run meets it when ``metric <= limit``.
    by : str
        The column that names a group.

    Returns
    -------
    pandas.Series
        Seeds that meet the target, indexed by the values of ``by`` in order of
        first appearance.
    """
    for name in ("seed", metric, by):
        if name not in frame.columns:
            raise ValueError(f"frame has no column {name!r} (columns: {', '.join(map(str, frame.columns))})")
    return (frame[metric] <= limit).groupby(frame[by], sort=False).sum().astype(int)


def smallest_meeting(frame: "pandas.DataFrame", metric: str, limit: float, by: str = "reserve") -> "pandas.Series":
    """Per seed, the smallest value of ``by`` whose run keeps ``metric <= limit``.

    Read the answer off a full-resolution grid: a grid that skips values
    reports the next value it holds, not the smallest one.

    Returns
    -------
    pandas.Series
        Indexed by seed; ``None`` where no value in the grid meets the target.
    """
    import pandas as pd

    for name in ("seed", metric, by):
        if name not in frame.columns:
            raise ValueError(f"frame has no column {name!r} (columns: {', '.join(map(str, frame.columns))})")
    out = {}
    for seed, part in frame.groupby("seed", sort=False):
        ok = part.loc[part[metric] <= limit, by]
        out[seed] = ok.min() if len(ok) else None
    return pd.Series(out, name=f"smallest {by}", dtype=object).rename_axis("seed")


def smallest_reserve(
    limit_s: float,
    seeds: Iterable[int] = SEEDS,
    base: Scenario | None = None,
    *,
    metric: str = "p99_s",
    kind: str = "reserve",
    max_reserve: int | None = None,
    **extensions: object,
) -> "pandas.DataFrame":
    """Per seed, the smallest headroom R (every integer tried, from 0 up) that meets a target.

    For each seed the scan runs ``reserve:0``, ``reserve:1``, ... and stops at the
    first R whose ``metric`` is at most ``limit_s``: full resolution, and no
    more runs than needed.

    Parameters
    ----------
    limit_s : float
        The target, in the metric's unit (seconds for the wait metrics).
    seeds : iterable of int
        Seeds of the scenario's random draw (default :data:`SEEDS`).
    base : Scenario, optional
        The scenario whose ``seed`` is replaced (the anchor scenario by default).
    metric : str
        A name from :data:`METRICS` (default ``p99_s``).
    kind : str
        ``reserve`` or ``hybrid``: the policy family scanned.
    max_reserve : int, optional
        Largest R tried (the pool's slot count by default).
    **extensions
        Extension fields of the policy.

    Returns
    -------
    pandas.DataFrame
        One row per seed: ``seed``, ``reserve`` (``None`` if no R up to
        ``max_reserve`` meets the target), ``metric_at_reserve``, ``metric_below``
        (the value at R - 1, ``None`` when R = 0), and ``batch_done`` and
        ``util`` (mean fraction of slots busy) at R.
    """
    import pandas as pd

    _checks.choice("kind", kind, ("reserve", "hybrid"))
    _checks.number("limit_s", limit_s)
    _check_metrics([metric])
    base = Scenario() if _checks.instance("base", base, Scenario, none_ok=True) is None else base
    _checks.keywords("smallest_reserve", extensions, EXTENSIONS)
    top = base.slots if max_reserve is None else max_reserve
    top = _checks.integer("max_reserve", top, lo=0, hi=base.slots, hi_name="slots")
    rows = []
    for seed in _check_seeds(seeds):
        sc = base.with_(seed=seed)
        below = None
        found: dict[str, Any] = {"seed": seed, "reserve": None, "metric_at_reserve": None,
                                 "metric_below": None, "batch_done": None, "util": None}
        for r in range(top + 1):
            res = simulate(sc, parse_policy(f"{kind}:{r}", **extensions))
            value = _metric(res, sc, metric)
            if value <= limit_s:
                found.update(reserve=r, metric_at_reserve=value, metric_below=below,
                             batch_done=res.batch_done, util=res.util)
                break
            below = value
        rows.append(found)
    return pd.DataFrame(rows)
