"""ipywidgets explorers for the slot-pool chapters.

The explorers are defined once in :mod:`lanes.display.explorers` (controls, model call,
charts); :func:`lab` gives a definition its JupyterLab form, and the web book runs the
same definition in the reader's browser.  Each explorer is built by :func:`explorer_box` (an ``ipywidgets.VBox``): a row of
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

from lanes.pool.scenario import Scenario

__all__ = [
    "FALLBACK_PREFIX",
    "WIDGET_VIEW_MIME",
    "explorer_box",
    "fallback_text",
    "headroom_explorer",
    "lab",
    "littles_explorer",
    "policy_explorer",
    "preemption_explorer",
    "starvation_explorer",
]

from lanes.display import explorers as _ex
from lanes.display.explorers import AGING_CHOICES, BATCH_DURATIONS, CLOCKS  # noqa: F401 - the controls' choices, named here too

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
        explorer_call = ""  # the explorer's call (lanes.display.explorers.encode_call): the book runs it live

        def _repr_mimebundle_(self, **kwargs: Any) -> dict[str, Any]:
            bundle = super()._repr_mimebundle_(**kwargs) or {}
            text = fallback_text(self.explorer_title)
            bundle["text/plain"] = text
            call = f' data-lanes-explorer="{html.escape(self.explorer_call)}"' if self.explorer_call else ""
            bundle["text/html"] = f'<p class="lanes-explorer-fallback"{call}><em>{html.escape(text)}</em></p>'
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


def lab(explorer: "_ex.Explorer") -> Any:
    """The JupyterLab form of ``explorer`` (:mod:`lanes.display.explorers`): ipywidgets controls, a matplotlib figure.

    Its controls are the definition's; each change calls ``explorer.view`` and draws its charts
    with :func:`lanes.display.explorers.to_matplotlib`, the same charts the web book draws as SVG.
    """
    import ipywidgets as w

    controls: dict[str, Any] = {}
    for c in explorer.controls:
        if c.kind == "int":
            controls[c.name] = slider(c.label, c.value, int(c.lo), int(c.hi), int(c.step))
        elif c.kind == "float":
            controls[c.name] = w.FloatSlider(
                value=c.value, min=c.lo, max=c.hi, step=c.step, description=c.label, continuous_update=False,
                style={"description_width": "initial"},
            )
        elif c.kind == "choice":
            controls[c.name] = dropdown(c.label, list(c.options), c.value)
        else:
            controls[c.name] = w.Checkbox(value=c.value, description=c.label)

    def render(**values: Any) -> tuple[Any, dict[str, Any]]:
        view = explorer.view(**values)
        n = len(view.charts)
        fig, axes = figure_axes(n, (8 if n == 1 else 10, 3.2))
        for chart, ax in zip(view.charts, axes):
            _ex.to_matplotlib(chart, ax)
        return fig, dict(view.rows)

    box = explorer_box(controls, render, explorer.title)
    box.explorer_call = explorer.call
    return box


def littles_explorer(hold_s: float = 8.0) -> Any:
    """Little's law and Poisson bursts (:func:`lanes.display.explorers.littles`) in JupyterLab."""
    return lab(_ex.littles(hold_s))


def policy_explorer(scenario: Scenario | None = None) -> Any:
    """Pick a policy of the anchor table (:func:`lanes.display.explorers.policy`) in JupyterLab."""
    return lab(_ex.policy(scenario))


def headroom_explorer(scenario: Scenario | None = None) -> Any:
    """Move the headroom R and the batch job length (:func:`lanes.display.explorers.headroom`) in JupyterLab."""
    return lab(_ex.headroom(scenario))


def preemption_explorer(scenario: Scenario | None = None) -> Any:
    """Preemption knobs (:func:`lanes.display.explorers.preemption`) in JupyterLab."""
    return lab(_ex.preemption(scenario))


def starvation_explorer(scenario: Scenario | None = None, deadline_s: int = 4 * 3600) -> Any:
    """Batch floor and aging (:func:`lanes.display.explorers.starvation`) in JupyterLab."""
    return lab(_ex.starvation(scenario, deadline_s=deadline_s))

