"""Policies over seeds, and the smallest reserve that meets a target: one tidy table per question.

>>> from lanes.pool.sweep import sweep_seeds
>>> df = sweep_seeds(["reserve:0", "reserve:16"])          # doctest: +SKIP
>>> df[["seed", "policy", "p99_s", "batch_done"]]          # doctest: +SKIP

A sweep is silent unless its caller hands it a ``progress`` function that
wraps the list of runs (a notebook passes :func:`lanes.display.progress.lab_progress`,
a line shown only in a live JupyterLab session).  pandas is imported inside the functions.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
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
    "backlog_mix",
    "seeds_meeting",
    "smallest_meeting",
    "smallest_reserve",
    "spread",
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

#: What a sweep's ``progress`` is: ``progress(runs, "simulating")`` returns an iterable over the runs.
Progress = Callable[[Sequence[Any], str], Iterable[Any]]


def _iterate(items: Sequence[Any], progress: Progress | None, desc: str) -> Iterable[Any]:
    if progress is None:
        return items
    if not callable(progress):
        raise ValueError(f"progress must be a function progress(runs, desc) or None (got {_checks.show(progress)})")
    return progress(items, desc)


def _metric(r: Any, scenario: Scenario, name: str) -> Any:
    if name == "peak_p99_s":
        return r.window(scenario.ticks // 2 - 1800, scenario.ticks // 2 + 1800)["p99"]
    if name == "batch_slot_h":
        return sum(r.day.busy_batch) / 3600
    return getattr(r, name)


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
    progress: Progress | None = None,
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
    progress : function, optional
        Shows how far the sweep is: ``progress(runs, desc)`` returns an iterable over the runs
        (:func:`lanes.display.progress.lab_progress` in a notebook); silent when omitted.
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


def backlog_mix(lengths_s: Sequence[int], weights: Sequence[float]) -> Callable[[Scenario], Any]:
    """A function ``draw(scenario) -> ArrivalStream``: the scenario's own draws, with each backlog
    job's slot time drawn instead from ``lengths_s`` (whole seconds) in proportion to ``weights``;
    pass its stream to :func:`~lanes.pool.engine.simulate` (``stream=``).

    The interactive arrivals are the scenario's (:func:`~lanes.pool.arrivals.draw_stream`); the
    backlog's lengths come from ``random.Random(f"backlog mix {seed}")``, so every policy of a seed
    sees the same jobs.  ``backlog_mix((60, 660), (9, 1))``: nine jobs in ten of 60 s, one of 660 s
    (a mean of 120 s, as the default 60 to 180 s).

    >>> from lanes.pool.sweep import backlog_mix
    >>> stream = backlog_mix((60, 660), (9, 1))(Scenario(hours=1, backlog=1000))
    >>> sorted(set(stream.batch_service_s)), len(stream.batch_service_s)
    ([60, 660], 1000)
    """
    import random
    from dataclasses import replace

    from .arrivals import draw_stream

    lengths = [_checks.integer("lengths_s", s, lo=1) for s in _checks.sequence("lengths_s", lengths_s,
                                                                                what="whole seconds", min_len=1)]
    shares = [_checks.number("weights", w, lo=0) for w in _checks.sequence("weights", weights, what="numbers",
                                                                            min_len=1)]
    if len(shares) != len(lengths) or not sum(shares) > 0:
        raise ValueError(f"weights must be one non-negative number per length, not all 0 (got {_checks.show(shares)} "
                         f"for {_checks.show(lengths)})")

    def draw(scenario: Scenario) -> Any:
        sc = _checks.instance("scenario", scenario, Scenario)
        rng = random.Random(f"backlog mix {sc.seed}")
        return replace(draw_stream(sc), batch_service_s=tuple(rng.choices(lengths, shares, k=sc.backlog)))

    return draw


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
        r, runs = scan_reserve(sc, lambda res: _metric(res, sc, metric) <= limit_s, kind=kind, max_reserve=top,
                               **extensions)
        at = runs[-1] if r is not None else None
        rows.append({"seed": seed, "reserve": r, "metric_at_reserve": None if at is None else _metric(at, sc, metric),
                     "metric_below": _metric(runs[-2], sc, metric) if at is not None and r > 0 else None,
                     "batch_done": None if at is None else at.batch_done, "util": None if at is None else at.util})
    return pd.DataFrame(rows)


def scan_reserve(
    scenario: Scenario,
    meets: Any,
    *,
    kind: str = "reserve",
    min_reserve: int = 0,
    max_reserve: int | None = None,
    stream: Any = None,
    **extensions: object,
) -> tuple[int | None, list]:
    """The smallest headroom R whose run meets a target: ``kind:0``, ``kind:1``, ... in order, no gaps
    (from ``kind:min_reserve`` when a rule has already ruled out the smaller R).

    Parameters
    ----------
    scenario : Scenario
        The workload and pool (its seed fixes the draws).
    meets : callable
        ``meets(result) -> bool`` on a :class:`~lanes.pool.results.SlotPoolResult`,
        e.g. ``lambda r: 0 <= r.p99_s <= 2`` (waits in seconds).
    kind : str
        ``reserve`` or ``hybrid``.
    min_reserve : int
        Smallest R tried, slots (0 by default).
    max_reserve : int, optional
        Largest R tried, slots (the pool's slot count by default).
    stream : ArrivalStream, optional
        Draws to replay (a trace), as :func:`~lanes.pool.engine.simulate` takes them.
    **extensions
        Extension fields of the policy.

    Returns
    -------
    (R, runs)
        R is the smallest headroom that meets the target (``None`` if none from
        ``min_reserve`` up to ``max_reserve`` does); ``runs`` are the results tried, in
        order of R, so ``runs[-1]`` is the run at R and ``runs[-2]`` the one at R - 1.
    """
    _checks.instance("scenario", scenario, Scenario)
    _checks.choice("kind", kind, ("reserve", "hybrid"))
    if not callable(meets):
        raise ValueError(f"meets must be a function of a result returning True or False (got {_checks.show(meets)})")
    top = scenario.slots if max_reserve is None else max_reserve
    top = _checks.integer("max_reserve", top, lo=0, hi=scenario.slots, hi_name="slots")
    runs = []
    for r in range(_checks.integer("min_reserve", min_reserve, lo=0), top + 1):
        runs.append(simulate(scenario, parse_policy(f"{kind}:{r}", **extensions), stream=stream))
        if meets(runs[-1]):
            return r, runs
    return None, runs
