"""Matplotlib figures for the slot-pool chapters.

Every function draws on an ``ax`` (a new figure when omitted) and returns the
Axes, so a notebook can combine panels.  matplotlib is imported here, never by
``import lanes``.  Times on the x axis are in hours of the simulated window.
"""

from __future__ import annotations

from bisect import bisect_right

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from lanes.pool.littles import poisson_cdf, rate_curve
from lanes.pool.results import SlotPoolResult, percentile

if TYPE_CHECKING:  # pragma: no cover
    import pandas
    from matplotlib.axes import Axes

__all__ = [
    "axes_or_new",
    "binned",
    "integer_ticks",
    "legend_below",
    "panels",
    "plot_batch_progress",
    "plot_busy_seconds",
    "plot_length_tails",
    "plot_littles_law",
    "plot_occupancy",
    "plot_poisson_burst",
    "plot_preemptions",
    "plot_spread",
    "plot_tradeoff",
    "plot_wait_ccdf",
    "plot_waits_over_day",
]

#: Colours used for the two kinds of work, everywhere.
COLORS = {"interactive": "#1f77b4", "batch": "#ff7f0e", "free": "#d9d9d9"}


def axes_or_new(ax: "Axes | None", figsize: tuple[float, float] | None = None) -> "Axes":
    """``ax``, or the axes of a new figure of ``figsize`` (default one panel, :data:`PANEL_WIDTH_IN` wide)."""
    if ax is not None:
        return ax
    import matplotlib.pyplot as plt

    _, ax = plt.subplots(figsize=figsize or (PANEL_WIDTH_IN, PANEL_HEIGHT_IN), layout="constrained")
    return _wrapping(ax)


def _wrapping(ax: "Axes") -> "Axes":
    """``ax`` with its title and x label wrapped to the figure's width, whatever text they get later.

    A figure one panel wide has room for about 40 characters of title: a longer one,
    unwrapped, would widen the saved image (the inline backend's tight box) and
    shrink the whole figure on a phone.
    """
    ax.title.set_wrap(True)
    ax.xaxis.label.set_wrap(True)
    return ax


#: Width of one panel (inches) that a phone shows at full size: 3.4 in is 351 px at the
#: inline backend's 100 dpi (tight bounding box), inside the 358 px text column of a
#: 390 px screen, so 10-point labels stay 14 px tall there, as large as the book's code
#: text. No text in the plotting modules is set smaller than matplotlib's 10-point default.
PANEL_WIDTH_IN = 3.4

#: Default height of one panel (inches).
PANEL_HEIGHT_IN = 2.9


def panels(n: int, *, height: float = PANEL_HEIGHT_IN, sharex: bool = False, sharey: bool = False) -> list["Axes"]:
    """``n`` axes, each in a figure of its own, :data:`PANEL_WIDTH_IN` by ``height`` inches.

    A multi-panel figure drawn as separate small figures: JupyterLab and the
    book show them side by side where the page is wide enough and one under
    the other on a phone, each at a size whose labels can be read, where one
    wide figure would be shrunk to the screen.  ``sharex``/``sharey`` link the
    axes' limits across the figures, as ``plt.subplots(sharey=True)`` does
    (each panel keeps its own tick labels).  ``plt.show()`` shows them in order.
    """
    from lanes import _checks

    n = _checks.integer("n", n, lo=1, hi=12)
    height = _checks.number("height", height, lo=0.5, hi=12)
    for name, flag in (("sharex", sharex), ("sharey", sharey)):
        if type(flag) is not bool:
            raise ValueError(f"{name} must be True or False (got {flag!r})")
    import matplotlib.pyplot as plt

    axes = [_wrapping(plt.subplots(figsize=(PANEL_WIDTH_IN, height), layout="constrained")[1]) for _ in range(n)]
    for ax in axes[1:]:
        if sharex:
            ax.sharex(axes[0])
        if sharey:
            ax.sharey(axes[0])
    return axes


def legend_below(ax: "Axes", handles: Sequence[Any] | None = None, **kwargs: Any) -> Any:
    """``ax``'s legend (or one of ``handles``) under the plot, outside it.

    Inside a figure one panel wide a legend of several long entries covers the
    lines.  Needs the constrained layout of the figures these modules make;
    extra keywords go to ``Figure.legend``.
    """
    if handles is None:
        handles = ax.get_legend_handles_labels()[0]
    labels = [h.get_label() for h in handles]
    return ax.figure.legend(handles, labels, loc="outside lower center", frameon=False, **kwargs)


def integer_ticks(ax: "Axes", axis: str = "both") -> "Axes":
    """Put ticks on whole numbers only on ``axis`` (``"x"``, ``"y"`` or ``"both"``) of ``ax``.

    For axes that count things (slots, requests, batches, steps): no tick at
    -0.5 or 2.5 on an axis where only whole numbers exist.
    """
    from matplotlib.ticker import MaxNLocator

    if axis not in ("x", "y", "both"):
        raise ValueError(f"axis must be 'x', 'y' or 'both' (got {axis!r})")
    for name in ("x", "y") if axis == "both" else (axis,):
        getattr(ax, f"{name}axis").set_major_locator(MaxNLocator(integer=True))
    return ax


def binned(series: Sequence[float], bin_s: int) -> list[float]:
    """Mean of ``series`` over consecutive bins of ``bin_s`` ticks (the last bin may be short)."""
    if bin_s < 1:
        raise ValueError(f"bin_s must be >= 1 (got {bin_s})")
    return [sum(series[i : i + bin_s]) / len(series[i : i + bin_s]) for i in range(0, len(series), bin_s)]


def _hours(n: int, bin_s: int) -> list[float]:
    return [(i * bin_s + bin_s / 2) / 3600 for i in range(n)]


def plot_occupancy(result: SlotPoolResult, ax: "Axes | None" = None, *, bin_s: int = 60, title: str | None = None) -> "Axes":
    """Slots busy by kind over the day: interactive below, batch stacked on top, free slots grey above.

    Parameters
    ----------
    result : SlotPoolResult
        One run.
    ax : Axes, optional
        Where to draw.
    bin_s : int
        Averaging bin, seconds (60 = per-minute means).
    title : str, optional
        Axes title; the policy label by default.
    """
    ax = axes_or_new(ax)
    inter = binned(result.day.busy_interactive, bin_s)
    batch = binned(result.day.busy_batch, bin_s)
    x = _hours(len(inter), bin_s)
    free = [max(0.0, result.scenario.slots - i - b) for i, b in zip(inter, batch)]
    ax.stackplot(x, inter, batch, free, labels=["interactive", "batch", "free"],
                 colors=[COLORS["interactive"], COLORS["batch"], COLORS["free"]], alpha=0.85)
    ax.axhline(result.scenario.slots, color="black", lw=1, ls="--", label=f"{result.scenario.slots} slots")
    ax.set_xlim(0, result.scenario.ticks / 3600)
    ax.set_ylim(0, result.scenario.slots * 1.08)
    ax.set_xlabel("time (h)")
    ax.set_ylabel("busy slots")
    ax.set_title(result.spec if title is None else title)
    ax.legend(loc="lower right")
    return ax


def plot_littles_law(result: SlotPoolResult, ax: "Axes | None" = None, *, bin_s: int = 300) -> "Axes":
    """Measured busy interactive slots next to Little's law lambda(t) x W.

    Two lines: the simulator's busy interactive slots (mean per ``bin_s``) and
    the arrival rate times the mean interactive slot time.
    """
    ax = axes_or_new(ax)
    sc = result.scenario
    lo, hi = sc.inter_service_s
    hold = (lo + hi) / 2
    measured = binned(result.day.busy_interactive, bin_s)
    predicted = [lam * hold for lam in binned(rate_curve(sc), bin_s)]
    x = _hours(len(measured), bin_s)
    ax.plot(x, measured, color=COLORS["interactive"], lw=2, label="simulated busy interactive slots")
    ax.plot(x, predicted, color="black", ls="--", label=f"Little's law: rate x {hold:g} s")
    ax.set_xlabel("time (h)")
    ax.set_ylabel("busy slots")
    ax.set_xlim(0, sc.ticks / 3600)
    ax.set_ylim(0, None)
    ax.legend(loc="lower center")
    return ax


def plot_busy_seconds(result: SlotPoolResult, t0_s: int, t1_s: int, ax: "Axes | None" = None, *,
                      mean: float | None = None) -> "Axes":
    """Interactive slots busy at each second from ``t0_s`` to ``t1_s`` (x in hours), with the pool's
    size and, when given, a ``mean`` (Little's law's L) as lines."""
    ax = axes_or_new(ax)
    busy = result.day.busy_interactive[t0_s:t1_s]
    ax.plot([(t0_s + i) / 3600 for i in range(len(busy))], busy, lw=0.6, label="busy interactive slots, each second")
    if mean is not None:
        ax.axhline(mean, color="black", ls="--", label="Little's law mean")
    ax.axhline(result.scenario.slots, color="grey", ls=":", label="pool size")
    ax.set(xlabel="time (h)", ylabel="busy slots")
    ax.legend(loc="lower right")
    return ax


def plot_length_tails(traces: Sequence[Any], axes: Sequence["Axes"]) -> list["Axes"]:
    """The share of requests at least so long (log-log): prompt tokens on ``axes[0]``, output tokens on
    ``axes[1]``, one step line per trace (anything with those columns and a ``name``)."""
    for ax, field in zip(axes, ("prompt_tokens", "output_tokens")):
        for t in traces:
            lengths = sorted(getattr(t, field))
            n = len(lengths)
            ax.step(lengths, [1 - i / n for i in range(n)], where="post", label=t.name)
        name = field.replace("_", " ")
        ax.set(xscale="log", yscale="log", xlabel=name, title=name, ylabel="share of requests\nat least this long")
        ax.legend()
    return list(axes)


def plot_poisson_burst(mean: float, level: int, ax: "Axes | None" = None, *, k_max: int | None = None) -> "Axes":
    """Bar chart of Poisson(mean) busy-slot counts, bars at or above ``level`` highlighted.

    One bar per count from 0 to ``k_max`` (default ``mean + 5 sqrt(mean)``).
    """
    ax = axes_or_new(ax)
    if k_max is None:
        k_max = int(mean + 5 * mean**0.5) + 1
    ks = list(range(k_max + 1))
    pmf = [poisson_cdf(mean, k) - poisson_cdf(mean, k - 1) for k in ks]
    colors = [COLORS["batch"] if k >= level else COLORS["interactive"] for k in ks]
    ax.bar(ks, pmf, color=colors, width=0.85)
    ax.axvline(mean, color="black", ls="--", lw=1)
    ax.set_xlabel("busy interactive slots")
    ax.set_ylabel("probability")
    integer_ticks(ax, "x")
    ax.set_title(f"Poisson, mean {mean:g}: orange bars\nare bursts to {level} or more")
    return ax


def _window_stat(result: SlotPoolResult, bin_s: int, q: float | None) -> tuple[list[float], list[float]]:
    waits = result.wait_s
    ticks = result.day.wait_arrival_tick
    n_bins = -(-result.scenario.ticks // bin_s)
    groups: list[list[int]] = [[] for _ in range(n_bins)]
    for w, a in zip(waits, ticks):
        groups[a // bin_s].append(w)
    x, y = [], []
    for i, g in enumerate(groups):
        if g:
            g.sort()
            x.append((i * bin_s + bin_s / 2) / 3600)
            y.append(percentile(g, q) if q is not None else sum(g) / len(g))
    return x, y


def plot_waits_over_day(
    results: Sequence[SlotPoolResult], ax: "Axes | None" = None, *, bin_s: int = 600, q: float = 0.99, log: bool = False
) -> "Axes":
    """Interactive wait percentile per arrival window over the day, one line per run.

    Parameters
    ----------
    results : sequence of SlotPoolResult
        Runs to compare (labelled by policy).
    bin_s : int
        Window, seconds.
    q : float
        Percentile of the wait in each window (0.99 = p99).
    log : bool
        Log-scale y axis (for fifo's hours-long waits).
    """
    ax = axes_or_new(ax)
    for r in results:
        x, y = _window_stat(r, bin_s, q)
        ax.plot(x, y, marker=".", label=r.spec)
    ax.set_xlabel("arrival time (h)")
    ax.set_ylabel(f"p{round(q * 100)} wait (s)")
    if log:
        ax.set_yscale("symlog", linthresh=1)
    ax.legend()
    return ax


def plot_wait_ccdf(results: Sequence[SlotPoolResult], ax: "Axes | None" = None, *, max_wait_s: int = 60) -> "Axes":
    """Fraction of interactive requests waiting longer than x seconds, one step line per run."""
    ax = axes_or_new(ax)
    for r in results:
        waits = sorted(r.wait_s)
        n = max(1, len(waits))
        above = [(len(waits) - bisect_right(waits, x)) / n for x in range(max_wait_s + 1)]
        ax.step(range(max_wait_s + 1), above, where="post", label=r.spec)
    ax.set_yscale("log")
    ax.set_xlabel("wait x (s)")
    ax.set_ylabel("fraction waiting > x")
    ax.legend()
    return ax


def plot_tradeoff(
    frame: "pandas.DataFrame",
    ax: "Axes | None" = None,
    *,
    x: str = "batch_done",
    y: str = "p99_s",
    group: str | None = None,
    annotate: str | None = "reserve",
) -> "Axes":
    """Trade-off curve: interactive latency against batch output, one line per group.

    Parameters
    ----------
    frame : pandas.DataFrame
        A sweep table (see :func:`lanes.pool.sweep.sweep`).
    x, y : str
        Columns for the axes.
    group : str, optional
        Column whose values each get their own line (e.g. ``batch_service_s``).
    annotate : str, optional
        Column whose value labels each point (e.g. ``reserve``).
    """
    ax = axes_or_new(ax, figsize=(PANEL_WIDTH_IN, 3.4))
    groups: list[tuple[Any, Any]] = [(None, frame)] if group is None else list(frame.groupby(group, sort=False))
    for key, part in groups:
        label = None if key is None else f"{group} = {key}"
        (line,) = ax.plot(part[x], part[y], marker="o", label=label)
        if annotate is not None:
            for xv, yv, a in zip(part[x], part[y], part[annotate]):
                ax.annotate(str(a), (xv, yv), textcoords="offset points", xytext=(4, 4), color=line.get_color())
    ax.set_xlabel(x)
    ax.set_ylabel(y)
    if group is not None:
        ax.legend()
    return ax


def plot_spread(frame: "pandas.DataFrame", metric: str, by: str, ax: "Axes | None" = None, *,
                lines: str | None = None, x_offset: float = 0.0, marker: str = "o") -> "Axes":
    """The median (a line) and the range (a band) over seeds of ``metric`` at each value of ``by``.

    ``frame`` holds one row per run, with a ``seed`` column (a sweep's table).  ``lines``: a column
    whose every value gets a line and a band of its own, labelled with the value; without it, one
    line and band, labelled as the median and the range over the seeds.  ``x_offset`` shifts the x
    values (0.5 puts an hour's value in the middle of the hour).
    """
    from lanes.pool.sweep import spread

    ax = axes_or_new(ax)
    for name, part in [(None, frame)] if lines is None else frame.groupby(lines, sort=False):
        band = spread(part, metric, by)
        x = band.index + x_offset
        ax.fill_between(x, band["low"], band["high"], alpha=0.3,
                        label=f"range over {band['seeds'].max()} seeds" if name is None else None)
        ax.plot(x, band["median"], marker=marker, label="median over seeds" if name is None else name)
    ax.legend()
    return ax


def plot_preemptions(results: Sequence[SlotPoolResult], ax: "Axes | None" = None, *, bin_s: int = 600) -> "Axes":
    """Batch evictions per minute over the day, one line per run."""
    ax = axes_or_new(ax)
    for r in results:
        per_min = [v * 60 for v in binned(r.day.preempted_per_tick, bin_s)]
        ax.plot(_hours(len(per_min), bin_s), per_min, marker=".", label=r.spec)
    ax.set_xlabel("time (h)")
    ax.set_ylabel("evictions per minute")
    ax.legend()
    return ax


def plot_batch_progress(
    results: Sequence[SlotPoolResult],
    ax: "Axes | None" = None,
    *,
    target: int | None = None,
    deadline_s: int | None = None,
    labels: Sequence[str] | None = None,
) -> "Axes":
    """Cumulative batch jobs completed over the day, one line per run.

    Parameters
    ----------
    results : sequence of SlotPoolResult
        Runs to compare.
    target : int, optional
        Jobs that must be done by the deadline (horizontal line).
    deadline_s : int, optional
        The batch deadline, seconds (vertical line).
    labels : sequence of str, optional
        Line labels; policy labels by default.
    """
    ax = axes_or_new(ax)
    names = [r.spec for r in results] if labels is None else list(labels)
    for r, name in zip(results, names):
        done = r.day.batch_done_cumulative[59::60]
        ax.plot([(i + 1) / 60 for i in range(len(done))], done, label=name)
    if target is not None:
        ax.axhline(target, color="black", ls=":", lw=1)
    if deadline_s is not None:
        ax.axvline(deadline_s / 3600, color="black", ls="--", lw=1)
    ax.set_xlabel("time (h)")
    ax.set_ylabel("batch jobs done")
    ax.legend()
    return ax
