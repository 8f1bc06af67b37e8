"""Matplotlib figures for the chapters on the inside of a lane and on batching.

Every function draws on an ``ax`` (a new figure when omitted) and returns what
it drew on, so a notebook can combine panels.  matplotlib is imported here,
never by ``import lanes`` or by the model modules.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING

from .batcher import BatchRun
from .continuous import BatchingResult, DecodeStep
from .jobstore import BatchLaneResult
from .lane import OUTCOMES, LaneResult

if TYPE_CHECKING:  # pragma: no cover
    from matplotlib.axes import Axes

__all__ = [
    "OUTCOME_COLORS",
    "plot_batch_lane",
    "plot_batching_timeline",
    "plot_latency_over_time",
    "plot_microbatch",
    "plot_outcomes",
    "plot_queue_length",
    "plot_step_cost",
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


def _axes(ax: "Axes | None", figsize: tuple[float, float] = (8, 3.2)) -> "Axes":
    if ax is not None:
        return ax
    import matplotlib.pyplot as plt

    _, ax = plt.subplots(figsize=figsize, layout="constrained")
    return ax


def _surge(ax: "Axes", result: LaneResult) -> None:
    for t in result.scenario.tenants:
        if t.surge_rate_per_s is not None and t.surge_end_s > t.surge_start_s:
            ax.axvspan(t.surge_start_s, t.surge_end_s, color="#f5d195", alpha=0.35, lw=0)
            return


def plot_queue_length(results: Sequence[LaneResult], ax: "Axes | None" = None) -> "Axes":
    """Queue length once per second for each run; the surge window shaded."""
    ax = _axes(ax)
    _surge(ax, results[0])
    for r in results:
        ax.plot(r.queue_len_t_s, r.queue_len, label=r.policy.name, lw=1.4)
    ax.set_xlabel("time (s)")
    ax.set_ylabel("requests waiting")
    ax.legend(fontsize=8, loc="upper left")
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
    ax = _axes(ax)
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
                ys.append(lat[min(len(lat) - 1, int(q * len(lat)))])
        ax.plot(xs, ys, marker=".", lw=1.4, label=r.policy.name)
    ax.axhline(results[0].scenario.deadline_s, color="black", ls="--", lw=1, label="client deadline")
    ax.set_xlabel("arrival time (s)")
    ax.set_ylabel(f"p{round(q * 100)} latency (s)")
    ax.set_yscale("log")
    ax.legend(fontsize=8, loc="upper left")
    return ax


def plot_outcomes(results: Sequence[LaneResult], ax: "Axes | None" = None, *, tenant: str | None = None) -> "Axes":
    """One horizontal bar per run: the share of requests in each outcome."""
    ax = _axes(ax, (8, 0.5 + 0.55 * len(results)))
    labels = [r.policy.name for r in results]
    left = [0.0] * len(results)
    for outcome in OUTCOMES:
        shares = []
        for r in results:
            n = sum(1 for x in r.records if tenant is None or x.tenant == tenant)
            shares.append(100 * r.count(outcome, tenant) / n if n else 0.0)
        if any(shares):
            ax.barh(labels, shares, left=left, color=OUTCOME_COLORS[outcome], label="on time" if outcome == "served" else outcome)
            left = [a + b for a, b in zip(left, shares)]
    ax.set_xlim(0, 100)
    ax.set_xlabel("share of requests (%)" + (f", tenant {tenant}" if tenant else ""))
    ax.invert_yaxis()
    ax.legend(fontsize=8, ncol=6, loc="lower center", bbox_to_anchor=(0.5, 1.0), frameon=False)
    return ax


def plot_batch_lane(results: Sequence[BatchLaneResult], ax: "Axes | None" = None) -> "Axes":
    """Items finished over the hours (in-house solid, with provider dashed), one colour per run."""
    ax = _axes(ax)
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
    ax.legend(fontsize=8, loc="upper left")
    return ax


def plot_step_cost(steps: Sequence[DecodeStep], axes: Sequence["Axes"] | None = None) -> list["Axes"]:
    """Two panels against batch size: decode step time (ms) and tokens per second."""
    if axes is None:
        import matplotlib.pyplot as plt

        _, axes = plt.subplots(1, 2, figsize=(9, 3.2), layout="constrained")
    a, b = axes
    xs = [s.batch for s in steps]
    a.plot(xs, [1e3 * s.step_s for s in steps], marker="o", label="step time")
    a.plot(xs, [1e3 * s.compute_s for s in steps], ls=":", label="compute alone")
    a.set_xscale("log", base=2)
    a.set_ylim(bottom=0)
    a.set_xlabel("sequences in the step")
    a.set_ylabel("decode step (ms)")
    a.legend(fontsize=8)
    b.plot(xs, [s.tokens_per_s for s in steps], marker="o", color="#2b6a24")
    b.set_xscale("log", base=2)
    b.set_yscale("log")
    b.set_xlabel("sequences in the step")
    b.set_ylabel("output tokens per second")
    return [a, b]


def plot_microbatch(runs: Mapping[str, BatchRun], axes: Sequence["Axes"] | None = None) -> list["Axes"]:
    """Batch sizes in order (left) and total time (right) for labelled micro-batcher runs."""
    if axes is None:
        import matplotlib.pyplot as plt

        _, axes = plt.subplots(1, 2, figsize=(9, 3.2), layout="constrained", gridspec_kw={"width_ratios": [2, 1]})
    a, b = axes
    n = len(runs)
    width = 0.8 / n
    for i, (label, r) in enumerate(runs.items()):
        a.bar([k + i * width for k in range(r.batches)], r.batch_sizes, width=width, label=label)
    a.set_xlabel("batch number (in order)")
    a.set_ylabel("requests in the batch")
    a.legend(fontsize=8)
    labels = list(runs)
    b.bar(labels, [1e3 * r.total_s for r in runs.values()], color=[f"C{i}" for i in range(n)])
    b.set_ylabel("total time (ms)")
    return [a, b]


def plot_batching_timeline(results: Sequence[BatchingResult], ax: "Axes | None" = None) -> "Axes":
    """Sequences decoding at each step over time, one line per mode; slots dashed."""
    ax = _axes(ax)
    for r in results:
        ax.step(r.step_start_s, r.step_active, where="post", lw=1.2, label=f"{r.mode}")
    ax.axhline(results[0].slots, color="black", ls="--", lw=1, label=f"{results[0].slots} slots")
    ax.set_xlabel("time (s)")
    ax.set_ylabel("sequences decoding")
    ax.set_ylim(0, results[0].slots * 1.15)
    ax.legend(fontsize=8, loc="lower left")
    return ax
