"""ipywidgets explorers for the chapters on the inside of a lane and on batching.

Built with :func:`lanes.widgets.explorer_box`: controls above a figure and a
small table, re-rendered when a control is released.  ipywidgets, matplotlib
and pandas are imported inside the functions.
"""

from __future__ import annotations

from typing import Any

from .batcher import simulate_batches
from .lane import LanePolicy, LaneScenario, TenantLoad, simulate_lane
from .widgets import figure_axes, explorer_box

__all__ = ["lane_explorer", "microbatch_explorer"]


def lane_explorer(scenario: LaneScenario | None = None) -> Any:
    """Queue limit, order and surge rate of one lane: latency over time and outcomes.

    Parameters
    ----------
    scenario : LaneScenario, optional
        The base scenario; its first tenant's surge rate is replaced by the slider.
    """
    import ipywidgets as w

    from .plots_lane import plot_latency_over_time

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


def microbatch_explorer(requests: int = 20, model_call_s: float = 0.05) -> Any:
    """Micro-batcher on the virtual clock: move ``max_wait_s``, ``max_batch`` and the arrival spacing."""
    import ipywidgets as w

    from .plots_lane import plot_microbatch

    style = {"description_width": "initial"}
    controls = {
        "max_wait_ms": w.IntSlider(value=20, min=0, max=300, step=10, description="max_wait (ms)", continuous_update=False, style=style),
        "max_batch": w.IntSlider(value=8, min=1, max=20, description="max_batch", continuous_update=False, style=style),
        "gap_ms": w.IntSlider(value=0, min=0, max=50, step=5, description="gap between arrivals (ms)", continuous_update=False, style=style),
    }

    def render(max_wait_ms: int, max_batch: int, gap_ms: int) -> tuple[Any, dict[str, Any]]:
        arrivals = [k * gap_ms / 1000 for k in range(requests)]
        r = simulate_batches(arrivals, max_batch=max_batch, max_wait_s=max_wait_ms / 1000, model_call_s=model_call_s)
        fig, axes = figure_axes(2, (9, 3.2))
        plot_microbatch({f"max_wait {max_wait_ms} ms": r}, axes)
        return fig, {
            "batches": r.batches,
            "batch sizes": " ".join(map(str, r.batch_sizes)),
            "total time (ms)": f"{1e3 * r.total_s:.0f}",
            "mean latency (ms)": f"{1e3 * r.mean_latency_s:.0f}",
        }

    return explorer_box(controls, render, f"Micro-batcher, {requests} requests, {1e3 * model_call_s:g} ms per call")
