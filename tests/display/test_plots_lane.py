"""Figures and explorers for chapters 6 and 7 draw what the models computed."""

import subprocess
import sys

import pytest

matplotlib = pytest.importorskip("matplotlib")
matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

from lanes.display.gpu import plots as engine_plots  # noqa: E402
from lanes.display.lane import plots as plots_lane  # noqa: E402
from lanes.gpu.batcher import simulate_batches  # noqa: E402
from lanes.gpu.continuous import BatchingScenario, decode_step_curve, simulate_batching  # noqa: E402
from lanes.lane.jobstore import BatchLaneScenario, simulate_batch_lane  # noqa: E402
from lanes.lane.interactive import LanePolicy, LaneScenario, TenantLoad, simulate_lane  # noqa: E402

SC = LaneScenario(tenants=(TenantLoad("a", 6.0, surge_rate_per_s=12.0, surge_start_s=20, surge_end_s=40),), duration_s=60)


@pytest.fixture(autouse=True)
def _close():
    yield
    plt.close("all")


class TestLaneFigures:
    def test_queue_length_lines_match_the_runs(self):
        runs = [simulate_lane(SC, LanePolicy()), simulate_lane(SC, LanePolicy(max_queue=5))]
        ax = plots_lane.plot_queue_length(runs)
        lines = ax.get_lines()
        assert [list(line.get_ydata()) for line in lines] == [list(r.queue_len) for r in runs]
        assert max(lines[1].get_ydata()) <= 5

    def test_latency_over_time_draws_the_deadline(self):
        ax = plots_lane.plot_latency_over_time([simulate_lane(SC, LanePolicy())], bin_s=5)
        assert any(list(line.get_ydata()) == [SC.deadline_s] * 2 for line in ax.get_lines())

    def test_outcome_bars_add_up_to_100(self):
        r = simulate_lane(SC, LanePolicy(max_queue=5, drop_expired=True))
        ax = plots_lane.plot_outcomes([r])
        assert sum(p.get_width() for p in ax.patches) == pytest.approx(100)

    def test_batch_lane_lines_end_at_the_totals(self):
        r = simulate_batch_lane(BatchLaneScenario(items=3000, deadline_h=30))
        ax = plots_lane.plot_batch_lane([r])
        assert ax.get_lines()[0].get_ydata()[-1] == r.done_in_house[-1]


class TestBatchingFigures:
    def test_step_cost_panels(self):
        steps = decode_step_curve([1, 16])
        a, b = engine_plots.plot_step_cost(steps)
        assert list(b.get_lines()[0].get_ydata()) == [s.tokens_per_s for s in steps]

    def test_microbatch_bars(self):
        runs = {"0 ms": simulate_batches(20, max_wait_s=0.0), "200 ms": simulate_batches(20, max_wait_s=0.2)}
        a, b = engine_plots.plot_microbatch(runs)
        assert len(a.patches) == runs["0 ms"].batches + runs["200 ms"].batches
        assert [p.get_height() for p in b.patches] == pytest.approx([1e3 * r.total_s for r in runs.values()])

    def test_batching_timeline(self):
        rs = [simulate_batching(BatchingScenario(requests=20), m) for m in ("static", "continuous")]
        ax = engine_plots.plot_batching_timeline(rs)
        assert len(ax.get_lines()) == 3


class TestExplorers:
    def test_lane_explorer_moves(self):
        pytest.importorskip("ipywidgets")
        from lanes.display.lane import widgets as widgets_lane

        e = widgets_lane.lane_explorer()
        before = e.table.value
        e.controls["max_queue"].value = 30
        assert e.table.value != before and "rejected" in e.table.value

    def test_microbatch_explorer_moves(self):
        pytest.importorskip("ipywidgets")
        from lanes.display.gpu import widgets as engine_widgets

        e = engine_widgets.microbatch_explorer()
        assert "8 8 4" in e.table.value
        e.controls["max_wait_ms"].value = 0  # no wait still takes the queue: same batches
        assert "8 8 4" in e.table.value
        e.controls["max_batch"].value = 5
        assert "5 5 5 5" in e.table.value


def test_models_import_no_heavy_modules():
    code = (
        "import sys, lanes.lane.interactive, lanes.lane.jobstore, lanes.gpu.continuous; "
        "print(sorted(m for m in ('numpy', 'pandas', 'matplotlib', 'ipywidgets') if m in sys.modules))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"
