"""Matplotlib figures for the engine chapters (the eight chains and where the model breaks).

Every function draws on an ``ax`` (a new figure when omitted) and returns the
Axes.  The numbers come from :mod:`lanes.gpu.chains`, :mod:`lanes.gpu.steps`,
:mod:`lanes.lane.queueing` and :mod:`lanes.gpu.kvpool`; nothing is computed here that a
model does not already compute.  matplotlib is imported here, never by
``import lanes``.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from lanes.gpu.batcher import BatchRun
from lanes.gpu.chains import goodput, kv_in_flight, littles_law, swap_vs_recompute
from lanes.gpu.continuous import BatchingResult, DecodeStep
from lanes.gpu.kvpool import KvPoolResult
from ..pool.plots import COLORS, PANEL_WIDTH_IN, axes_or_new, integer_ticks, legend_below, panels
from lanes.lane.queueing import QueueRun, mm1_response_quantile_s
from lanes.gpu.steps import StepResult

if TYPE_CHECKING:  # pragma: no cover
    from matplotlib.axes import Axes

    from lanes.gpu.fairness import FairnessResult

__all__ = [
    "plot_batching_timeline",
    "plot_microbatch",
    "plot_step_cost",
    "plot_goodput_cliff",
    "plot_itl",
    "plot_kv_ceiling",
    "plot_kv_pool",
    "plot_littles_check",
    "plot_p99_knee",
    "plot_step_timeline",
    "plot_swap_break_even",
    "plot_tenant_shares",
]


def plot_kv_ceiling(
    rates_per_s: Sequence[float],
    ax: "Axes | None" = None,
    *,
    ttft_s: float = 0.5,
    output_tokens: int = 300,
    tpot_s: float = 0.025,
    tokens_per_request: float = 1650,
    pool_bytes: float = 159.8e9,
    model: str = "llama-3.3-70b",
) -> "Axes":
    """KV in flight against arrival rate if W stayed fixed, with the pool and the naive ceiling.

    Each point is :func:`lanes.gpu.chains.littles_law` then
    :func:`lanes.gpu.chains.kv_in_flight` at one rate.
    """
    ax = axes_or_new(ax)
    kv_gb = []
    for rate in rates_per_s:
        ll = littles_law(arrival_rate_per_s=rate, ttft_s=ttft_s, output_tokens=output_tokens, tpot_s=tpot_s)
        kv = kv_in_flight(in_system=ll.in_system, tokens_per_request=tokens_per_request, w_s=ll.w_s, pool_bytes=pool_bytes, model=model)
        kv_gb.append(kv.kv_bytes / 1e9)
    ax.plot(list(rates_per_s), kv_gb, color=COLORS["interactive"], lw=2, label="KV in flight, W held fixed")
    ax.axhline(pool_bytes / 1e9, color="black", ls="--", lw=1, label=f"KV pool {pool_bytes / 1e9:.1f} GB")
    ax.axvline(kv.ceiling_rps, color="grey", ls=":", lw=1.5, label=f"naive ceiling {kv.ceiling_rps:.0f} req/s")
    ax.set_xlabel("arrival rate (requests/s)")
    ax.set_ylabel("KV cache in flight (GB)")
    ax.set_ylim(0, max(max(kv_gb), pool_bytes / 1e9) * 1.1)
    legend_below(ax)
    return ax


def plot_goodput_cliff(
    batch_sizes: Sequence[int],
    ax: "Axes | None" = None,
    *,
    context_tokens: int = 2048,
    tpot_target_s: float = 0.010,
    model: str = "llama-3.1-8b",
    hardware: str = "h100-sxm",
) -> "Axes":
    """TPOT (left axis) and throughput and goodput (right axis) against batch size.

    Each batch size is one call of :func:`lanes.gpu.chains.goodput`; the dashed
    line is the TPOT target.  Returns the left Axes (the right one is
    ``ax.right``).
    """
    ax = axes_or_new(ax)
    rows = [
        goodput(batch_small=b, batch_large=b, context_tokens=context_tokens, tpot_target_s=tpot_target_s, model=model, hardware=hardware)
        for b in batch_sizes
    ]
    xs = list(batch_sizes)
    ax.plot(xs, [r.tpot_small_s * 1e3 for r in rows], color="black", lw=2, label="TPOT")
    ax.axhline(tpot_target_s * 1e3, color="black", ls="--", lw=1, label=f"target {tpot_target_s * 1e3:g} ms")
    ax.set_xlabel("batch size (sequences)")
    ax.set_ylabel("TPOT (ms)")
    from matplotlib.ticker import MaxNLocator

    ax.xaxis.set_major_locator(MaxNLocator(nbins=6, integer=True))  # a panel's width holds six
    right = ax.twinx()
    right.plot(xs, [r.tokens_per_s_small for r in rows], color=COLORS["batch"], lw=2, label="throughput")
    right.plot(xs, [r.goodput_small_tokens_per_s for r in rows], color=COLORS["interactive"], lw=2, ls="-", drawstyle="steps-post", label="goodput")
    right.set_ylabel("tokens/s")
    right.set_ylim(0, max(r.tokens_per_s_small for r in rows) * 1.1)
    lines = ax.get_lines() + right.get_lines()
    legend_below(ax, lines, ncol=2)
    ax.right = right  # type: ignore[attr-defined]
    return ax


def plot_swap_break_even(
    bandwidths_bytes_per_s: Sequence[float],
    ax: "Axes | None" = None,
    *,
    context_tokens: int = 4096,
    mfu: float = 0.5,
    model: str = "llama-3.1-8b",
    hardware: str = "h100-sxm",
) -> "Axes":
    """Swap time per token against the copies' effective bandwidth, with recompute as a flat line."""
    ax = axes_or_new(ax)
    rows = [swap_vs_recompute(context_tokens=context_tokens, link_bytes_per_s=b, mfu=mfu, model=model, hardware=hardware) for b in bandwidths_bytes_per_s]
    gbps = [b / 1e9 for b in bandwidths_bytes_per_s]
    ax.plot(gbps, [r.swap_s_per_token * 1e6 for r in rows], color=COLORS["batch"], lw=2, label="swap out and back")
    ax.axhline(rows[0].recompute_s_per_token * 1e6, color=COLORS["interactive"], lw=2, label="recompute")
    ax.axvline(rows[0].break_even_bytes_per_s / 1e9, color="grey", ls=":", lw=1.5, label=f"break-even {rows[0].break_even_bytes_per_s / 1e9:.1f} GB/s")
    ax.axvspan(3, 4, color=COLORS["free"], alpha=0.6, label="per-block 32 KiB copies")
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel("effective copy bandwidth (GB/s)")
    ax.set_ylabel("time per token (us)")
    legend_below(ax)
    return ax


def plot_step_timeline(runs: Mapping[str, StepResult], ax: "Axes | None" = None, *, long_index: int = 0) -> "Axes":
    """One row per run: engine steps as bars, and each request's first token as a marker.

    Parameters
    ----------
    runs : mapping of label to StepResult
        For example ``{"FCFS": ..., "by length": ...}``.
    long_index : int
        Position of the long prompt among the requests (drawn as a star).
    """
    ax = axes_or_new(ax, (PANEL_WIDTH_IN, 1.8 + 0.9 * len(runs)))
    for row, (label, run) in enumerate(runs.items()):
        y = len(runs) - 1 - row
        for s in run.steps:
            ax.barh(y, s.duration_s, left=s.start_s, height=0.5, color=COLORS["free"], edgecolor="black", lw=0.6)
        shorts = [t + a for i, (t, a) in enumerate(zip(run.ttft_s, run.arrival_s)) if i != long_index]
        ax.plot(shorts, [y + 0.35] * len(shorts), "v", color=COLORS["interactive"], ms=7, label="short prompt's first token" if row == 0 else None)
        ax.plot([run.ttft_s[long_index] + run.arrival_s[long_index]], [y + 0.35], "*", color=COLORS["batch"], ms=12, label="long prompt's first token" if row == 0 else None)
    ax.set_yticks(range(len(runs)), list(reversed(list(runs))))
    ax.set_ylim(-0.6, len(runs) - 0.1)
    ax.set_xlabel("time (s); grey bars: engine steps")
    legend_below(ax)
    return ax


def plot_p99_knee(
    ax: "Axes | None" = None,
    *,
    service_s: float = 0.0665,
    p99_target_s: float = 1.0,
    runs: Mapping[str, Sequence[QueueRun]] | None = None,
    rho_max: float = 0.95,
    percentile: float = 0.99,
) -> "Axes":
    """M/M/1 p99 response time against utilisation, the target, and simulated points.

    Parameters
    ----------
    service_s : float
        Mean service time S of the curve (s).
    p99_target_s : float
        Target drawn as a dashed line (s).
    runs : mapping of label to QueueRun lists, optional
        Simulated p99s to overlay, one marker series per label.
    rho_max : float
        Right end of the curve.
    percentile : float
        Percentile of the curve, as a fraction (0.99: the p99).
    """
    ax = axes_or_new(ax)
    rhos = [i / 200 for i in range(0, int(rho_max * 200) + 1)]
    curve = [mm1_response_quantile_s(service_s, r, percentile) for r in rhos]
    factor = curve[0] / service_s
    ax.plot(rhos, curve, color="black", lw=2, label=f"M/M/1: {factor:.1f} S / (1 - rho)")
    ax.axhline(p99_target_s, color="grey", ls="--", lw=1, label=f"target {p99_target_s:g} s")
    markers = ["o", "s", "^", "D"]
    for k, (label, series) in enumerate((runs or {}).items()):
        ax.plot([r.rho for r in series], [r.p99_response_s for r in series], markers[k % 4], ms=6, label=label)
    ax.set_xlabel("utilisation rho")
    ax.set_ylabel(f"p{percentile * 100:g} response time (s)")
    ax.set_ylim(0, p99_target_s * 3)
    ax.set_xlim(0, 1)
    ax.legend(loc="upper left")
    return ax


def plot_itl(runs: Mapping[str, StepResult], ax: "Axes | None" = None) -> "Axes":
    """Inter-token latency the running decoders see at each decode step (ms), one line per run."""
    ax = axes_or_new(ax)
    for label, run in runs.items():
        itl = [d * 1e3 for d in run.itl_s]
        ax.plot(range(1, len(itl) + 1), itl, marker=".", lw=1.5, label=label)
    ax.set_yscale("log")
    ax.set_xlabel("decode step")
    ax.set_ylabel("inter-token latency (ms)")
    integer_ticks(ax, "x")
    ax.legend()
    return ax


def plot_tenant_shares(results: Sequence["FairnessResult"], ax: "Axes | None" = None) -> "Axes":
    """Each tenant's share of weighted tokens under each admission policy (stacked bars)."""
    ax = axes_or_new(ax, (PANEL_WIDTH_IN, 1.0 + 0.7 * len(results)))
    names = list(results[0].shares)
    palette = [COLORS["interactive"], COLORS["batch"], "#2ca02c", "#9467bd"]
    for y, res in enumerate(results):
        left = 0.0
        for k, name in enumerate(names):
            share = res.shares[name]
            ax.barh(y, share, left=left, color=palette[k % 4], label=f"tenant {name}" if y == 0 else None)
            ax.text(left + share / 2, y, f"{share:.0%}", ha="center", va="center")
            left += share
    ax.set_yticks(range(len(results)), [r.policy for r in results])
    ax.set_xlim(0, 1)
    ax.set_xlabel("share of weighted tokens")
    legend_below(ax, ncol=len(names))
    return ax


def plot_kv_pool(result: KvPoolResult, ax: "Axes | None" = None, *, bin_s: int = 30) -> "Axes":
    """KV blocks held by chats and by batch sequences over the run, against the pool size."""
    from ..pool.plots import binned

    ax = axes_or_new(ax)
    chat = binned(result.chat_blocks, bin_s)
    batch = binned(result.batch_blocks, bin_s)
    x = [(i * bin_s + bin_s / 2) / 60 for i in range(len(chat))]
    ax.stackplot(x, chat, batch, labels=["chats", "batch"], colors=[COLORS["interactive"], COLORS["batch"]], alpha=0.85)
    ax.axhline(result.scenario.pool_blocks, color="black", ls="--", lw=1, label="pool")
    ax.set_xlabel("time (min)")
    ax.set_ylabel("KV blocks held")
    integer_ticks(ax, "y")
    ax.set_title(f"{result.rule}: chat p99 wait {result.p99_wait_s} s", fontsize=10)
    ax.set_ylim(0, result.scenario.pool_blocks * 1.1)
    ax.legend(loc="lower right")
    return ax


def plot_littles_check(points: Sequence[Mapping[str, Any]], ax: "Axes | None" = None) -> "Axes":
    """Measured busy slots against lambda x W, one point per run, with the identity line.

    ``points`` are mappings with keys ``predicted`` and ``measured`` (and an
    optional ``label``).
    """
    ax = axes_or_new(ax)
    pred = [p["predicted"] for p in points]
    meas = [p["measured"] for p in points]
    top = max(pred + meas) * 1.1
    ax.plot([0, top], [0, top], color="grey", lw=1, ls="--", label="L = lambda W")
    ax.plot(pred, meas, "o", color=COLORS["interactive"], label="slot simulator")
    # Points within 3% of the axis of each other share one label, a line per run, written
    # to the left of the point and below it (the points lie near the diagonal), so labels
    # never overlap or leave the axes.
    spots: list[tuple[float, float, list[str]]] = []
    for p in points:
        if "label" not in p:
            continue
        near = [s for s in spots if abs(s[0] - p["predicted"]) < 0.03 * top and abs(s[1] - p["measured"]) < 0.03 * top]
        if near:
            near[0][2].append(str(p["label"]))
        else:
            spots.append((p["predicted"], p["measured"], [str(p["label"])]))
    for x, y, labels in spots:
        ax.annotate("\n".join(labels), (x, y), textcoords="offset points", xytext=(-6, -6), ha="right", va="top")
    ax.set_xlabel("lambda x W (slots)")
    ax.set_ylabel("measured mean busy slots")
    ax.set_xlim(0, top)
    ax.set_ylim(0, top)
    ax.legend(loc="upper left")
    return ax


def plot_step_cost(steps: Sequence[DecodeStep], axes: Sequence["Axes"] | None = None) -> list["Axes"]:
    """Two panels against batch size, one figure each: decode step time (ms) and tokens per second."""
    if axes is None:
        axes = panels(2)
    a, b = axes
    xs = [s.batch for s in steps]
    a.plot(xs, [1e3 * s.step_s for s in steps], marker="o", label="step time")
    a.plot(xs, [1e3 * s.compute_s for s in steps], ls=":", label="compute alone")
    a.set_xscale("log", base=2)
    a.set_ylim(bottom=0)
    a.set_xlabel("sequences in the step")
    a.set_ylabel("decode step (ms)")
    a.legend()
    b.plot(xs, [s.tokens_per_s for s in steps], marker="o", color="#2b6a24")
    b.set_xscale("log", base=2)
    b.set_yscale("log")
    b.set_xlabel("sequences in the step")
    b.set_ylabel("output tokens per second")
    return [a, b]


def plot_microbatch(runs: Mapping[str, BatchRun], axes: Sequence["Axes"] | None = None) -> list["Axes"]:
    """Two panels, one figure each: batch sizes in order and total time, for labelled micro-batcher runs."""
    if axes is None:
        axes = panels(2)
    a, b = axes
    n = len(runs)
    width = 0.8 / n
    for i, (label, r) in enumerate(runs.items()):
        a.bar([k + i * width for k in range(r.batches)], r.batch_sizes, width=width, label=label)
    a.set_xlabel("batch number (in order)")
    a.set_ylabel("requests in the batch")
    integer_ticks(a, "both")
    legend_below(a)
    labels = [label.replace(" ", "\n") for label in runs]  # narrow labels: a word per line
    b.bar(labels, [1e3 * r.total_s for r in runs.values()], color=[f"C{i}" for i in range(n)])
    b.set_ylabel("total time (ms)")
    return [a, b]


def plot_batching_timeline(results: Sequence[BatchingResult], ax: "Axes | None" = None) -> "Axes":
    """Sequences decoding at each step over time, one line per mode; slots dashed."""
    ax = axes_or_new(ax, (PANEL_WIDTH_IN, 3.2))
    for r in results:
        ax.step(r.step_start_s, r.step_active, where="post", lw=1.2, label=f"{r.mode}")
    ax.axhline(results[0].slots, color="black", ls="--", lw=1, label=f"{results[0].slots} slots")
    ax.set_xlabel("time (s)")
    ax.set_ylabel("sequences decoding")
    integer_ticks(ax, "y")
    ax.set_ylim(0, results[0].slots * 1.15)
    ax.legend(loc="lower left")
    return ax
