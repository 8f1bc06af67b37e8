"""Matplotlib figures for the chapter on the inside of a lane.

Every function draws on an ``ax`` (a new figure when omitted) and returns what
it drew on, so a notebook can combine panels.  matplotlib is imported here,
never by ``import lanes`` or by the model modules.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING

from lanes._stats import percentile
from lanes.lane.jobstore import BatchLaneResult
from lanes.lane.interactive import OUTCOMES, LaneResult
from ..pool.plots import PANEL_WIDTH_IN, axes_or_new, integer_ticks, legend_below

if TYPE_CHECKING:  # pragma: no cover
    from matplotlib.axes import Axes

__all__ = [
    "OUTCOME_COLORS",
    "plot_batch_lane",
    "plot_latency_over_time",
    "plot_outcomes",
    "plot_queue_length",
]

#: One colour per request outcome, everywhere.
OUTCOME_COLORS = {
    "served": "#2b6a24",
    "late": "#e6a817",
    "rejected": "#b3154f",
    "expired": "#7f7f7f",
    "timed-out": "#bcbcbc",
    "unfinished": "#d9d9d9",
}


def _surge(ax: "Axes", result: LaneResult) -> None:
    for t in result.scenario.tenants:
        if t.surge_rate_per_s is not None and t.surge_end_s > t.surge_start_s:
            ax.axvspan(t.surge_start_s, t.surge_end_s, color="#f5d195", alpha=0.35, lw=0)
            return


def plot_queue_length(results: Sequence[LaneResult], ax: "Axes | None" = None) -> "Axes":
    """Queue length once per second for each run; the surge window shaded."""
    ax = axes_or_new(ax, (PANEL_WIDTH_IN, 4.0))  # room for the legend under the plot
    _surge(ax, results[0])
    for r in results:
        ax.plot(r.queue_len_t_s, r.queue_len, label=r.policy.name, lw=1.4)
    ax.set_xlabel("time (s)")
    ax.set_ylabel("requests waiting")
    integer_ticks(ax, "y")
    legend_below(ax)
    return ax


def plot_latency_over_time(
    results: Sequence[LaneResult],
    ax: "Axes | None" = None,
    *,
    bin_s: float = 10.0,
    q: float = 0.5,
    tenant: str | None = None,
) -> "Axes":
    """Quantile ``q`` of latency (arrival to answer) by arrival time, one line per run.

    Bins with no answered request are left out.  The client deadline is drawn
    as a dashed line and the surge window is shaded.
    """
    ax = axes_or_new(ax, (PANEL_WIDTH_IN, 4.0))  # room for the legend under the plot
    _surge(ax, results[0])
    for r in results:
        xs, ys = [], []
        n_bins = int(r.scenario.duration_s // bin_s) + 1
        for b in range(n_bins):
            lo, hi = b * bin_s, (b + 1) * bin_s
            lat = sorted(
                x.latency_s for x in r.records if x.latency_s is not None and lo <= x.arrival_s < hi and (tenant is None or x.tenant == tenant)
            )
            if lat:
                xs.append(lo + bin_s / 2)
                ys.append(percentile(lat, q))
        ax.plot(xs, ys, marker=".", lw=1.4, label=r.policy.name)
    ax.axhline(results[0].scenario.deadline_s, color="black", ls="--", lw=1, label="client deadline")
    ax.set_xlabel("arrival time (s)")
    ax.set_ylabel(f"p{round(q * 100)} latency (s)")
    ax.set_yscale("log")
    legend_below(ax)
    return ax


def plot_outcomes(results: Sequence[LaneResult], ax: "Axes | None" = None, *, tenant: str | None = None) -> "Axes":
    """One horizontal bar per run, its rule written above it: the share of requests in each outcome."""
    ax = axes_or_new(ax, (PANEL_WIDTH_IN, 1.4 + 0.8 * len(results)))
    ys = list(range(len(results)))
    left = [0.0] * len(results)
    for outcome in OUTCOMES:
        shares = []
        for r in results:
            n = sum(1 for x in r.records if tenant is None or x.tenant == tenant)
            shares.append(100 * r.count(outcome, tenant) / n if n else 0.0)
        if any(shares):
            ax.barh(ys, shares, left=left, height=0.45, color=OUTCOME_COLORS[outcome], label="on time" if outcome == "served" else outcome)
            left = [a + b for a, b in zip(left, shares)]
    for y, r in zip(ys, results):  # the rule's name above its bar: a tick label would not fit
        ax.text(0, y - 0.3, r.policy.name, va="bottom", ha="left")
    ax.set_yticks([])
    ax.set_ylim(len(results) - 0.5, -0.9)
    ax.set_xlim(0, 100)
    ax.set_xlabel("share of requests (%)" + (f", tenant {tenant}" if tenant else ""))
    legend_below(ax, ncol=2)
    return ax


def plot_batch_lane(results: Sequence[BatchLaneResult], ax: "Axes | None" = None) -> "Axes":
    """Items finished over the hours (in-house solid, with provider dashed), one colour per run."""
    ax = axes_or_new(ax, (PANEL_WIDTH_IN, 4.0))  # room for the legend under the plot
    for r in results:
        label = "overflow on" if r.scenario.overflow else "overflow off"
        (line,) = ax.plot(r.hours, r.done_in_house, lw=1.6, label=f"{label}: in-house")
        total = [a + b for a, b in zip(r.done_in_house, r.done_by_provider)]
        if any(r.done_by_provider):
            ax.plot(r.hours, total, lw=1.6, ls="--", color=line.get_color(), label=f"{label}: in-house + provider")
    r0 = results[0]
    ax.axhline(r0.scenario.items, color="black", lw=1, ls=":", label=f"{r0.scenario.items:,} items")
    ax.axvline(r0.scenario.deadline_h, color="#b3154f", lw=1, ls="--", label="deadline")
    ax.set_xlabel("hours since submission")
    ax.set_ylabel("items finished")
    integer_ticks(ax, "y")
    legend_below(ax)
    return ax
