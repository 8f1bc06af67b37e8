"""ipywidgets explorers for the slot-pool chapters.

Each explorer is built by :func:`explorer_box` (an ``ipywidgets.VBox``): a row of
controls above a figure (an ``Image`` widget holding a PNG) and a small table
(an ``HTML`` widget).  Sliders use ``continuous_update=False``, so a
simulation runs once when a slider is released, not on every pixel of the
drag.  Every explorer of a simulation has a ``clock`` control: the scheduling
clock ``Scenario.tick_s`` (1 s, the anchor's; 0.1 s; 0.02 s, a serving
engine's step; or event-driven).  The figure and table are set as widget values, so an explorer also
updates outside a live kernel (tests set ``explorer.controls["reserve"].value``
and read ``explorer.table.value``).

ipywidgets, matplotlib and pandas are imported inside the functions.
"""

from __future__ import annotations

import functools
import io
from collections.abc import Callable
from typing import Any

from lanes.pool.littles import busy_slots, poisson_tail
from lanes.pool.policies import DEFAULT_POLICIES
from lanes.pool.scenario import Scenario
from lanes.pool.engine import simulate

__all__ = [
    "FALLBACK_PREFIX",
    "WIDGET_VIEW_MIME",
    "explorer_box",
    "fallback_text",
    "headroom_explorer",
    "littles_explorer",
    "policy_explorer",
    "preemption_explorer",
    "starvation_explorer",
]

#: Batch job durations offered by the explorers (label -> inclusive range, s).
BATCH_DURATIONS: dict[str, tuple[int, int]] = {
    "60-180 s (mean 120 s)": (60, 180),
    "30-90 s (mean 60 s)": (30, 90),
    "15-45 s (mean 30 s)": (15, 45),
}

#: Aging thresholds offered by the starvation explorer (label -> seconds or None).
AGING_CHOICES: dict[str, int | None] = {"off": None, "30 min": 1800, "1 h": 3600, "2 h": 7200}

#: Scheduling clocks offered by the explorers (label -> ``Scenario.tick_s``, seconds; 0: event-driven).
CLOCKS: dict[str, float] = {"1 s (the anchor)": 1, "0.1 s": 0.1, "0.02 s (an engine step)": 0.02, "event-driven": 0}


def _png(fig: Any) -> bytes:
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=80)
    return buf.getvalue()


def figure_axes(n_axes: int = 1, figsize: tuple[float, float] = (8, 3.2)) -> tuple[Any, list[Any]]:
    """A pyplot-free Figure with ``n_axes`` side by side; ``figsize`` in inches. Shared by every explorer."""
    from matplotlib.figure import Figure  # no pyplot: nothing is shown twice, no global state

    fig = Figure(figsize=figsize, layout="constrained")
    axes = fig.subplots(1, n_axes)
    return fig, list(axes) if n_axes > 1 else [axes]


def _table_html(rows: dict[str, Any]) -> str:
    import pandas as pd

    return pd.Series(rows, name="value").to_frame().to_html(border=0)


def _summary(r: Any) -> dict[str, Any]:
    peak = r.window(r.scenario.ticks // 2 - 1800, r.scenario.ticks // 2 + 1800)
    return {
        "interactive p50 wait (s)": r.p50_s,
        "interactive p99 wait (s)": r.p99_s,
        "p99 wait in the peak hour (s)": peak["p99"],
        "waiting > 2 s": f"{r.late_fraction:.1%}",
        "batch jobs done": f"{r.batch_done:,}",
        "evictions": f"{r.preempted:,}",
        "slot use": f"{r.util:.0%}",
    }


#: First words of the text an explorer shows where no widget can be drawn.
FALLBACK_PREFIX = "Interactive explorer:"

#: The mime type of a live widget view (a reference to a model in the kernel).
WIDGET_VIEW_MIME = "application/vnd.jupyter.widget-view+json"


def fallback_text(title: str) -> str:
    """The plain-text stand-in for an explorer titled ``title``, shown where no kernel runs."""
    return (
        f"{FALLBACK_PREFIX} run this cell in JupyterLab (or on Binder or Colab) to use "
        f"its controls ({title}). The static figure and table beside it show the "
        "default settings."
    )


@functools.cache
def _explorer_class() -> type:
    """``Explorer``: an ``ipywidgets.VBox`` whose display carries a fallback for readers without a kernel.

    Built on first use, so importing this module does not import ipywidgets.
    """
    import html

    import ipywidgets as w

    class Explorer(w.VBox):
        """A VBox whose display data also holds a plain-text and HTML fallback.

        A live JupyterLab draws the widget view. Everywhere else (the web book,
        a notebook reopened before its cell runs, a viewer with no widget
        manager) the fallback says what the explorer is and how to use it,
        rather than ``VBox(children=(HTML(value=...``.
        """

        explorer_title = ""

        def _repr_mimebundle_(self, **kwargs: Any) -> dict[str, Any]:
            bundle = super()._repr_mimebundle_(**kwargs) or {}
            text = fallback_text(self.explorer_title)
            bundle["text/plain"] = text
            bundle["text/html"] = f'<p class="lanes-explorer-fallback"><em>{html.escape(text)}</em></p>'
            return bundle

    return Explorer


def explorer_box(controls: dict[str, Any], render: Callable[..., tuple[Any, dict[str, Any]]], title: str) -> Any:
    """Assemble controls, a figure and a table, and wire them to ``render``.

    Parameters
    ----------
    controls : dict of str to widget
        Named controls; their values are passed to ``render`` as keywords.
    render : callable
        ``render(**values) -> (matplotlib Figure, table rows)``.
    title : str
        A line of text shown above the controls, and in the fallback text.

    Returns
    -------
    ipywidgets.VBox
        An ``Explorer`` (a VBox) with attributes ``controls`` (the dict),
        ``image`` (the figure), ``table`` (the HTML table) and ``refresh()``
        (re-render now). Its display data holds the widget view for a live
        kernel plus a ``text/plain`` and ``text/html`` fallback
        (:func:`fallback_text`) for anywhere without one.
    """
    import ipywidgets as w

    image = w.Image(format="png", layout=w.Layout(max_width="640px"))
    table = w.HTML()

    def refresh(_change: Any = None) -> None:
        fig, rows = render(**{name: c.value for name, c in controls.items()})
        image.value = _png(fig)
        table.value = _table_html(rows)

    for c in controls.values():
        c.observe(refresh, names="value")
    box = _explorer_class()(
        [w.HTML(f"<b>{title}</b>"), w.HBox(list(controls.values()), layout=w.Layout(flex_flow="row wrap")), w.HBox([image, table])]
    )
    box.explorer_title = title
    box.controls = controls
    box.image = image
    box.table = table
    box.refresh = refresh
    refresh()
    return box


def slider(description: str, value: int, lo: int, hi: int, step: int = 1) -> Any:
    """An integer slider that reports only on release (explorers re-run a simulation per change)."""
    import ipywidgets as w

    return w.IntSlider(
        value=value, min=lo, max=hi, step=step, description=description, continuous_update=False, style={"description_width": "initial"}
    )


def dropdown(description: str, options: Any, value: Any) -> Any:
    """A dropdown with its description shown in full."""
    import ipywidgets as w

    return w.Dropdown(options=options, value=value, description=description, style={"description_width": "initial"})


def clock(sc: Scenario) -> Any:
    """A dropdown of :data:`CLOCKS`, set to the scenario's own clock (added to the choices if it is not one)."""
    options = dict(CLOCKS)
    if sc.tick_s not in options.values():
        options[f"{sc.tick_s:g} s"] = sc.tick_s
    return dropdown("clock", list(options.items()), sc.tick_s)


def littles_explorer(hold_s: float = 8.0) -> Any:
    """Little's law and Poisson bursts: move the peak rate and the slot time.

    Controls: ``peak_rate`` (requests/s at the peak, in tenths shown as a float
    slider), ``hold_s`` (mean interactive slot time, s).  The figure shows the
    simulated busy interactive slots against Little's law; the table gives
    L at the peak and the chance of a burst 10 slots above it.
    """
    import ipywidgets as w

    from .plots import plot_littles_law

    controls = {
        "peak_rate": w.FloatSlider(
            value=5.0, min=2.0, max=7.0, step=0.5, description="peak rate (req/s)", continuous_update=False,
            style={"description_width": "initial"},
        ),
        "hold_s": slider("mean slot time (s)", int(hold_s), 4, 16, 2),
        "tick_s": clock(Scenario()),
    }

    def render(peak_rate: float, hold_s: int, tick_s: float) -> tuple[Any, dict[str, Any]]:
        sc = Scenario(peak_rate=peak_rate, inter_service_s=(hold_s // 2, hold_s + hold_s // 2), backlog=0, tick_s=tick_s)
        r = simulate(sc, "priority")
        fig, (ax,) = figure_axes()
        plot_littles_law(r, ax)
        peak_l = busy_slots(peak_rate, hold_s)
        burst = int(peak_l) + 10
        rows = {
            "L at the peak (slots)": f"{peak_l:g}",
            "simulated mean busy (slots)": f"{r.day.mean_busy_interactive:.1f}",
            "Little's law mean (slots)": f"{busy_slots(sum(_rates(sc)) / sc.ticks, hold_s):.1f}",
            f"P(busy >= {burst}) at the peak": f"{poisson_tail(peak_l, burst):.1%}",
            "interactive p99 wait (s)": r.p99_s,
        }
        return fig, rows

    return explorer_box(controls, render, "Little's law: change the peak rate or the slot time")


def _rates(sc: Scenario) -> list[float]:
    from lanes.pool.littles import rate_curve

    return rate_curve(sc)


def policy_explorer(scenario: Scenario | None = None) -> Any:
    """Pick a policy of the anchor table and see slot occupancy and waits over the day.

    Controls: ``policy`` (one of :data:`lanes.DEFAULT_POLICIES`), ``tick_s`` (the clock).
    """
    from .plots import plot_occupancy, plot_waits_over_day

    sc = Scenario() if scenario is None else scenario
    controls = {"policy": dropdown("policy", list(DEFAULT_POLICIES), "priority"), "tick_s": clock(sc)}

    def render(policy: str, tick_s: float) -> tuple[Any, dict[str, Any]]:
        r = simulate(sc.with_(tick_s=tick_s), policy)
        fig, (a0, a1) = figure_axes(2, (10, 3.2))
        plot_occupancy(r, a0)
        plot_waits_over_day([r], a1, log=policy == "fifo")
        return fig, _summary(r)

    return explorer_box(controls, render, "Strict priority against fifo: pick a policy")


def headroom_explorer(scenario: Scenario | None = None) -> Any:
    """Move the headroom R and the batch job duration.

    Controls: ``reserve`` (slots kept free of batch), ``batch`` (batch job
    duration range), ``tick_s`` (the clock).  The backlog grows as jobs shrink, so the batch work
    offered stays the same (chunking, not less work).
    """
    from .plots import plot_occupancy

    sc = Scenario() if scenario is None else scenario
    work = sc.backlog * sum(sc.batch_service_s) / 2
    controls = {
        "reserve": slider("headroom R (slots)", 8, 0, 32),
        "batch": dropdown("batch job length", list(BATCH_DURATIONS), next(iter(BATCH_DURATIONS))),
        "tick_s": clock(sc),
    }

    def render(reserve: int, batch: str, tick_s: float) -> tuple[Any, dict[str, Any]]:
        rng = BATCH_DURATIONS[batch]
        chunked = sc.with_(batch_service_s=rng, backlog=round(work / (sum(rng) / 2)), tick_s=tick_s)
        r = simulate(chunked, f"reserve:{reserve}")
        fig, (ax,) = figure_axes()
        plot_occupancy(r, ax)
        rows = _summary(r)
        rows["batch slot-hours"] = f"{sum(r.day.busy_batch) / 3600:,.0f}"
        return fig, rows

    return explorer_box(controls, render, "Headroom: keep R slots free of batch")


def preemption_explorer(scenario: Scenario | None = None) -> Any:
    """Preemption knobs: eviction cost, headroom, victim order and minimum run time.

    Controls: ``preempt_cost_s`` (seconds of work redone per eviction),
    ``reserve`` (0 = pure preemption, otherwise ``hybrid:R``), ``victim``,
    ``min_run_s``, ``tick_s`` (the clock).
    """
    from .plots import plot_occupancy

    sc = Scenario() if scenario is None else scenario
    controls = {
        "preempt_cost_s": slider("eviction cost (s)", sc.preempt_cost_s, 0, 120, 5),
        "reserve": slider("headroom R (slots)", 0, 0, 24),
        "victim": dropdown("victim", ["youngest", "most_remaining"], "youngest"),
        "min_run_s": slider("minimum run (s)", 0, 0, 120, 10),
        "tick_s": clock(sc),
    }

    def render(preempt_cost_s: int, reserve: int, victim: str, min_run_s: int, tick_s: float) -> tuple[Any, dict[str, Any]]:
        policy = f"hybrid:{reserve}" if reserve else "preempt"
        r = simulate(sc.with_(preempt_cost_s=preempt_cost_s, tick_s=tick_s), policy, victim=victim, min_run_s=min_run_s)
        fig, (ax,) = figure_axes()
        plot_occupancy(r, ax, title=f"{r.spec}, eviction cost {preempt_cost_s} s")
        return fig, _summary(r)

    return explorer_box(controls, render, "Preemption: what does each eviction cost?")


def starvation_explorer(scenario: Scenario | None = None, deadline_s: int = 4 * 3600) -> Any:
    """Batch floor and aging: batch completion against a deadline next to interactive latency.

    Controls: ``policy`` (``preempt`` or ``hybrid:8``), ``floor`` (slots batch
    keeps), ``aging`` (a waiting time after which a batch job is never evicted), ``tick_s`` (the clock).
    The run without floor or aging is kept per policy and clock, so moving the floor runs one simulation.
    """
    from .plots import plot_batch_progress

    sc = Scenario() if scenario is None else scenario
    controls = {
        "policy": dropdown("policy", ["preempt", "hybrid:8"], "preempt"),
        "floor": slider("batch floor (slots)", 0, 0, 32, 4),
        "aging": dropdown("aging", list(AGING_CHOICES), "off"),
        "tick_s": clock(sc),
    }
    plain = functools.lru_cache(maxsize=8)(lambda policy, tick_s: simulate(sc.with_(tick_s=tick_s), policy))

    def render(policy: str, floor: int, aging: str, tick_s: float) -> tuple[Any, dict[str, Any]]:
        base = plain(policy, tick_s)
        r = simulate(sc.with_(tick_s=tick_s), policy, floor=floor, aging_s=AGING_CHOICES[aging])
        fig, (ax,) = figure_axes()
        plot_batch_progress([base, r], ax, deadline_s=deadline_s, labels=[f"{policy}", f"{policy}, floor {floor}, aging {aging}"])
        rows = _summary(r)
        rows[f"batch done by {deadline_s / 3600:g} h"] = f"{r.day.batch_done_by(deadline_s):,}"
        return fig, rows

    return explorer_box(controls, render, "Starvation: give batch a floor or let it age")
