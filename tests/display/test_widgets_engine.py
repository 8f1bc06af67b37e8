"""Engine explorers build, and moving a control re-renders figure and table."""

import pytest

pytest.importorskip("ipywidgets")
matplotlib = pytest.importorskip("matplotlib")
matplotlib.use("Agg")

import lanes  # noqa: E402
from lanes.gpu import kvpool  # noqa: E402
from lanes.display.gpu import widgets as we  # noqa: E402


def _changed(explorer, name, value):
    before = (explorer.image.value, explorer.table.value)
    explorer.controls[name].value = value
    return before != (explorer.image.value, explorer.table.value)


class TestEngineExplorers:
    def test_littles_chain(self):
        e = we.littles_chain_explorer()
        assert "79.75" in e.table.value and "43.1" in e.table.value
        assert _changed(e, "tpot_ms", 35)

    def test_goodput(self):
        e = we.goodput_explorer()
        assert "6,450" in e.table.value and "8,505" in e.table.value
        assert _changed(e, "hardware", "h200")

    def test_swap(self):
        e = we.swap_explorer()
        assert "7.6" in e.table.value and "swap" in e.table.value
        assert _changed(e, "link_gbps", 3.5)
        assert "recompute" in e.table.value

    def test_hol(self):
        e = we.hol_explorer()
        assert "1.80" in e.table.value
        assert _changed(e, "short_prompts", 3)

    def test_knee(self):
        e = we.knee_explorer()
        assert "0.69" in e.table.value
        assert _changed(e, "percentile", 0.9)

    def test_long_prompt(self):
        e = we.long_prompt_explorer()
        assert "301" in e.table.value and ">13<" in e.table.value
        assert _changed(e, "budget_tokens", 4096)

    def test_tenant(self):
        e = we.tenant_explorer()
        assert "11,000" in e.table.value and "96%" in e.table.value
        assert _changed(e, "output_weight", 1.0)

    def test_kv_headroom(self):
        e = we.kv_headroom_explorer(kvpool.KvScenario(seconds=600, warmup_s=100))
        assert _changed(e, "keep_tokens", 50_000)

    def test_preemption_cost(self):
        e = we.preemption_cost_explorer(lanes.Scenario(hours=0.5))
        assert "35" in e.table.value
        assert _changed(e, "checkpoint_s", 120)

    def test_sliders_do_not_update_while_dragging(self):
        e = we.long_prompt_explorer()
        assert all(c.continuous_update is False for c in e.controls.values())
