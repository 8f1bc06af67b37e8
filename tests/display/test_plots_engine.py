"""Engine figures render headless with the expected artists."""

import pytest

matplotlib = pytest.importorskip("matplotlib")
matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

from lanes.gpu import chains, fairness, kvpool, steps  # noqa: E402
from lanes.lane import queueing  # noqa: E402
from lanes.display.gpu import plots as pe  # noqa: E402


@pytest.fixture(autouse=True)
def _close():
    yield
    plt.close("all")


class TestPlotsEngine:
    def test_goodput_cliff_goodput_drops_to_zero_past_the_target(self):
        ax = pe.plot_goodput_cliff(range(1, 129))
        tpot = ax.lines[0].get_ydata()
        goodput = ax.right.lines[1].get_ydata()
        assert tpot[63] < 10 < tpot[64]
        assert goodput[63] > 0 and goodput[64] == 0
        assert ax.lines[1].get_ydata()[0] == 10

    def test_kv_ceiling_line_reaches_pool_at_the_ceiling(self):
        ax = pe.plot_kv_ceiling([10, 20, 30])
        assert ax.lines[0].get_ydata()[0] == pytest.approx(43.1, abs=0.05)
        assert ax.lines[2].get_xdata()[0] == pytest.approx(chains.kv_in_flight().ceiling_rps)

    def test_swap_break_even_vertical_line(self):
        ax = pe.plot_swap_break_even([1e9, 50e9])
        assert ax.lines[2].get_xdata()[0] == pytest.approx(7.57, abs=0.01)

    def test_step_timeline_one_bar_per_step(self):
        reqs = [steps.Request(32768)] + [steps.Request(500)] * 10
        runs = {o: steps.simulate(reqs, order=o) for o in ("fcfs", "by-length")}
        ax = pe.plot_step_timeline(runs)
        assert len(ax.patches) == sum(len(r.steps) for r in runs.values())
        assert len(ax.lines) == 4

    def test_p99_knee_curve_and_points(self):
        runs = queueing.knee_sweep([0.3, 0.5], requests=1000)
        ax = pe.plot_p99_knee(runs={"sim": runs})
        assert ax.lines[0].get_ydata()[0] == pytest.approx(4.605 * 0.0665, rel=1e-3)
        assert list(ax.lines[2].get_xdata()) == [0.3, 0.5]

    def test_itl_one_line_per_run(self):
        run = steps.simulate([steps.Request(20_000)], decoders=8, decoder_context_tokens=100)
        ax = pe.plot_itl({"a": run, "b": run})
        assert len(ax.lines) == 2 and len(ax.lines[0].get_ydata()) == len(run.itl_s)

    def test_tenant_shares_bars_sum_to_one(self):
        ts = [fairness.Tenant("A", 200, 100), fairness.Tenant("B", 8000, 1000)]
        res = [fairness.schedule(ts, policy=p) for p in ("round-robin", "token-fair")]
        ax = pe.plot_tenant_shares(res)
        assert len(ax.patches) == 4
        assert sum(p.get_width() for p in ax.patches[:2]) == pytest.approx(1)

    def test_kv_pool_and_littles_check(self):
        r = kvpool.simulate_kv_pool(kvpool.KvScenario(seconds=120, warmup_s=0))
        ax = pe.plot_kv_pool(r, bin_s=30)
        assert len(ax.collections) == 2 and ax.lines[0].get_ydata()[0] == r.scenario.pool_blocks
        ax2 = pe.plot_littles_check([{"predicted": 1.0, "measured": 1.1, "label": "x"}])
        assert list(ax2.lines[1].get_ydata()) == [1.1] and ax2.texts[0].get_text() == "x"


def _whole(ticks) -> bool:
    return all(float(t).is_integer() for t in ticks)


class TestIntegerAxes:
    def test_microbatch_batch_numbers_and_sizes_are_whole(self):
        from lanes.gpu.batcher import simulate_batches

        r = simulate_batches([0.0] * 20, max_batch=8, max_wait_s=0.02, model_call_s=0.05)
        a, _ = pe.plot_microbatch({"run": r})
        assert _whole(a.get_xticks()) and _whole(a.get_yticks()), (a.get_xticks(), a.get_yticks())

    def test_goodput_batch_size_axis_is_whole(self):
        ax = pe.plot_goodput_cliff(range(1, 4))
        assert _whole(ax.get_xticks()), ax.get_xticks()
