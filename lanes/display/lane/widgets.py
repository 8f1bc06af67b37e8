"""ipywidgets explorers for the chapter on the inside of a lane.

Built with :func:`lanes.display.pool.widgets.explorer_box`: controls above a figure and a
small table, re-rendered when a control is released.  ipywidgets, matplotlib
and pandas are imported inside the functions.
"""

from __future__ import annotations

from typing import Any

from lanes.lane.interactive import LanePolicy, LaneScenario, TenantLoad, simulate_lane
from ..pool.widgets import figure_axes, explorer_box

__all__ = ["lane_explorer"]


def lane_explorer(scenario: LaneScenario | None = None) -> Any:
    """Queue limit, order and surge rate of one lane: latency over time and outcomes.

    Parameters
    ----------
    scenario : LaneScenario, optional
        The base scenario; its first tenant's surge rate is replaced by the slider.
    """
    import ipywidgets as w

    from .plots import plot_latency_over_time

    base = scenario or LaneScenario(
        tenants=(TenantLoad("a", 6.0, surge_rate_per_s=12.0, surge_start_s=60, surge_end_s=180),), duration_s=300
    )
    style = {"description_width": "initial"}
    controls = {
        "max_queue": w.IntSlider(value=0, min=0, max=200, step=5, description="max queue (0 = none)", continuous_update=False, style=style),
        "order": w.Dropdown(options=["fifo", "adaptive-lifo"], value="fifo", description="order", style=style),
        "drop_expired": w.Checkbox(value=False, description="drop expired"),
        "surge": w.FloatSlider(value=12.0, min=6.0, max=20.0, step=1.0, description="surge rate (req/s)", continuous_update=False, style=style),
    }

    def render(max_queue: int, order: str, drop_expired: bool, surge: float) -> tuple[Any, dict[str, Any]]:
        first, *rest = base.tenants
        sc = base.with_(tenants=(TenantLoad(first.name, first.rate_per_s, surge, first.surge_start_s, first.surge_end_s), *rest))
        timeout = 2.0 if order == "adaptive-lifo" else None
        pol = LanePolicy(max_queue=max_queue or None, order=order, drop_expired=drop_expired, queue_timeout_s=timeout)
        r = simulate_lane(sc, pol)
        fig, (ax,) = figure_axes()
        plot_latency_over_time([r], ax)
        s = r.summary()
        rows = {k: (f"{v:.2f}" if isinstance(v, float) else v) for k, v in s.items()}
        rows["capacity (req/s)"] = f"{sc.capacity_per_s:g}"
        return fig, rows

    return explorer_box(controls, render, "One lane under a surge: move the queue limit, the order and the surge")
