"""Explorers build, and moving a control re-renders figure and table."""

import pytest

pytest.importorskip("ipywidgets")
matplotlib = pytest.importorskip("matplotlib")
matplotlib.use("Agg")

import lanes  # noqa: E402
from lanes.pool import widgets  # noqa: E402

SC = lanes.Scenario(hours=1)


def _changed(explorer, name, value):
    before = (explorer.image.value, explorer.table.value)
    explorer.controls[name].value = value
    return before != (explorer.image.value, explorer.table.value)


class TestExplorers:
    def test_policy_explorer_updates_on_policy(self):
        e = widgets.policy_explorer(SC)
        assert bytes(e.image.value).startswith(b"\x89PNG")
        assert _changed(e, "policy", "reserve:16")
        assert f"{lanes.simulate(SC, 'reserve:16').batch_done:,}" in e.table.value

    def test_headroom_explorer_updates_on_reserve_and_batch(self):
        e = widgets.headroom_explorer(SC)
        assert _changed(e, "reserve", 20)
        assert _changed(e, "batch", "15-45 s (mean 30 s)")

    def test_preemption_explorer_updates_on_cost(self):
        e = widgets.preemption_explorer(SC)
        assert _changed(e, "preempt_cost_s", 60)
        assert _changed(e, "victim", "most_remaining")

    def test_starvation_explorer_updates_on_floor(self):
        e = widgets.starvation_explorer(SC, deadline_s=1800)
        assert "batch done by 0.5 h" in e.table.value
        assert _changed(e, "floor", 16)

    def test_littles_explorer_updates_on_rate(self):
        e = widgets.littles_explorer()
        assert _changed(e, "peak_rate", 3.0)
        assert "24" in e.table.value  # L at the peak = 3 x 8

    def test_sliders_do_not_update_while_dragging(self):
        e = widgets.preemption_explorer(SC)
        sliders = [c for c in e.controls.values() if hasattr(c, "continuous_update")]
        assert sliders and all(c.continuous_update is False for c in sliders)
