"""Run many scenario x policy combinations and collect one tidy table.

>>> from lanes.pool.sweep import sweep
>>> df = sweep(["reserve:0", "reserve:16"])          # doctest: +SKIP
>>> df[["policy", "p99_s", "batch_done"]]            # doctest: +SKIP

A progress bar (tqdm) is shown only in a live JupyterLab session, detected by
the ``JPY_SESSION_NAME`` variable that Jupyter Server sets for its kernels, and
only once a sweep has run for more than a second.  Under nbval, nbconvert,
pytest or a plain script the sweep is silent, so executed notebooks never
store a progress bar.  ``LANES_PROGRESS=1`` or ``0`` forces it on or off.
pandas and tqdm are imported inside the functions.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING, Any

from .policies import Policy, parse_policy
from .scenario import Scenario
from .engine import simulate

if TYPE_CHECKING:  # pragma: no cover
    import pandas

__all__ = ["METRICS", "progress_enabled", "sweep", "sweep_scenarios"]

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
    from tqdm.auto import tqdm

    return tqdm(items, desc=desc, delay=1.0, leave=False)


def _row(scenario: Scenario, pol: Policy, label: Any) -> dict[str, Any]:
    r = simulate(scenario, pol)
    row: dict[str, Any] = {}
    if label is not None:
        row["label"] = label
    row["policy"] = pol.spec
    for name in _POLICY_FIELDS:
        row[name] = getattr(pol, name)
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
        ``victim``, ``min_run_s``).

    Returns
    -------
    pandas.DataFrame
        Columns: ``policy``, the policy's fields, the scenario's fields (ranges
        as ``"60-180"``), then :data:`METRICS`.  Rows in scenario-major order.
    """
    if isinstance(policies, (str, Policy)):
        raise ValueError(f"policies must be a list of specs, e.g. ['priority', 'reserve:8'] (got {policies!r})")
    pols = [parse_policy(p, **extensions) for p in policies]
    if not pols:
        raise ValueError("policies must list at least one policy (got an empty list)")
    if scenarios is None:
        scs: list[Scenario] = [Scenario()]
    elif isinstance(scenarios, Scenario):
        scs = [scenarios]
    else:
        scs = list(scenarios)
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
        ...) or a policy extension (``floor``, ``aging_s``, ``victim``, ``min_run_s``).
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
    base = Scenario() if base is None else base
    if field in _POLICY_FIELDS and field != "reserve":
        runs = [(base, parse_policy(policy, **{**extensions, field: v}), v) for v in values]
    elif field in _SCENARIO_FIELDS:
        pol = parse_policy(policy, **extensions)
        runs = [(base.with_(**{field: v}), pol, v) for v in values]
    else:
        allowed = ", ".join(_SCENARIO_FIELDS + _POLICY_FIELDS[1:])
        raise ValueError(f"field must be one of {allowed} (got {field!r})")
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
