"""Figures render headless (Agg) with the expected artists."""

import pytest

matplotlib = pytest.importorskip("matplotlib")
matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

import lanes  # noqa: E402
from lanes.display.pool import plots  # noqa: E402
from lanes.pool.sweep import sweep_seeds  # noqa: E402

SC = lanes.Scenario(hours=1)


@pytest.fixture(autouse=True)
def _close():
    yield
    plt.close("all")


@pytest.fixture(scope="module")
def table():
    return lanes.run_table(SC, ["priority", "reserve:8", "preempt"])


class TestPlots:
    def test_occupancy_three_stacked_areas_and_the_pool_line(self, table):
        ax = plots.plot_occupancy(table["priority"])
        assert len(ax.collections) == 3
        assert len(ax.lines) == 1 and ax.lines[0].get_ydata()[0] == 64
        ax.figure.canvas.draw()

    def test_occupancy_draws_the_free_slots_as_a_grey_strip_on_top(self, table):
        from matplotlib.colors import to_hex

        ax = plots.plot_occupancy(table["reserve:8"])
        free = ax.collections[2]
        assert to_hex(free.get_facecolor()[0], keep_alpha=False) == plots.COLORS["free"]
        top = max(v[1] for path in free.get_paths() for v in path.vertices)
        assert top == pytest.approx(64)
        assert [t.get_text() for t in ax.get_legend().get_texts()][:3] == ["interactive", "batch", "free"]

    def test_integer_ticks_puts_ticks_on_whole_numbers_only(self):
        fig, ax = plt.subplots()
        ax.bar([0, 1, 2], [3, 1, 2])
        assert any(t % 1 for t in ax.get_xticks())  # matplotlib's own: -0.5, 0.0, 0.5, ...
        plots.integer_ticks(ax, "x")
        assert all(t % 1 == 0 for t in ax.get_xticks())
        with pytest.raises(ValueError, match="axis"):
            plots.integer_ticks(ax, "z")

    def test_littles_law_two_lines_agree(self, table):
        ax = plots.plot_littles_law(table["priority"])
        measured, predicted = (line.get_ydata() for line in ax.lines)
        assert len(ax.lines) == 2
        assert abs(sum(measured) - sum(predicted)) / sum(predicted) < 0.1

    def test_poisson_burst_one_bar_per_count(self):
        ax = plots.plot_poisson_burst(40, 50, k_max=80)
        assert len(ax.patches) == 81
        assert ax.patches[50].get_facecolor() != ax.patches[49].get_facecolor()

    def test_waits_over_day_one_line_per_result(self, table):
        ax = plots.plot_waits_over_day(list(table), bin_s=600)
        assert len(ax.lines) == 3
        assert len(ax.lines[0].get_xdata()) == 6

    def test_wait_ccdf_starts_at_late_share(self, table):
        ax = plots.plot_wait_ccdf([table["priority"]], max_wait_s=30)
        y = ax.lines[0].get_ydata()
        assert len(y) == 31 and y[2] == pytest.approx(table["priority"].late_fraction)

    def test_tradeoff_one_line_per_group_with_labels(self):
        pd = pytest.importorskip("pandas")
        df = pd.concat([sweep_seeds(["reserve:0", "reserve:8"], [SC.seed], sc).assign(batch_service_s=f"{sc.batch_service_s}")
                        for sc in (SC, SC.with_(batch_service_s=(30, 90)))])
        ax = plots.plot_tradeoff(df, group="batch_service_s")
        assert len(ax.lines) == 2
        assert [t.get_text() for t in ax.texts] == ["0", "8", "0", "8"]

    def test_spread_draws_each_median_and_its_range_over_the_seeds(self):
        pd = pytest.importorskip("pandas")
        runs = pd.DataFrame({"seed": [1, 2, 3] * 4, "policy": ["a"] * 6 + ["b"] * 6,
                             "cost": [0, 0, 0, 5, 5, 5] * 2, "done": [4, 9, 6, 1, 3, 2, 7, 7, 8, 0, 2, 1]})
        one = plots.plot_spread(runs[runs.policy == "a"], "done", "cost", x_offset=0.5)
        assert list(one.lines[0].get_xdata()) == [0.5, 5.5] and list(one.lines[0].get_ydata()) == [6, 2]
        band = one.collections[0].get_paths()[0].vertices
        assert (band[:, 1].min(), band[:, 1].max()) == (1, 9)
        assert [t.get_text() for t in one.get_legend().get_texts()] == ["range over 3 seeds", "median over seeds"]
        two = plots.plot_spread(runs, "done", "cost", lines="policy")
        assert [list(line.get_ydata()) for line in two.lines] == [[6, 2], [7, 1]]
        assert [t.get_text() for t in two.get_legend().get_texts()] == ["a", "b"]

    def test_busy_seconds_one_point_per_second_with_the_mean_and_the_pool(self, table):
        r = table["priority"]
        ax = plots.plot_busy_seconds(r, 1800, 1860, mean=12.5)
        busy = ax.lines[0]
        assert list(busy.get_ydata()) == list(r.day.busy_interactive[1800:1860])
        assert busy.get_xdata()[0] == 0.5 and busy.get_xdata()[-1] == 1859 / 3600
        assert [line.get_ydata()[0] for line in ax.lines[1:]] == [12.5, 64]
        assert len(plots.plot_busy_seconds(r, 0, 60).lines) == 2  # no mean: the pool line only

    def test_length_tails_start_at_every_request_and_end_at_the_longest(self):
        class Trace:
            name, prompt_tokens, output_tokens = "t", [30, 10, 20, 20], [5, 1]

        axes = plots.plot_length_tails([Trace], plots.panels(2))
        prompt, output = axes[0].lines[0], axes[1].lines[0]
        assert list(prompt.get_xdata()) == [10, 20, 20, 30] and list(prompt.get_ydata()) == [1, 0.75, 0.5, 0.25]
        assert list(output.get_ydata()) == [1, 0.5] and axes[1].get_xscale() == "log"

    def test_preemptions_and_batch_progress(self, table):
        ax = plots.plot_preemptions([table["preempt"], table["reserve:8"]])
        assert len(ax.lines) == 2 and max(ax.lines[1].get_ydata()) == 0
        ax2 = plots.plot_batch_progress(list(table), target=100, deadline_s=1800)
        assert len(ax2.lines) == 5  # three runs, target, deadline
        assert ax2.lines[0].get_ydata()[-1] == table["priority"].batch_done

    def test_draws_on_a_given_axes(self, table):
        fig, (a, b) = plt.subplots(1, 2)
        assert plots.plot_occupancy(table["preempt"], a) is a
        assert plots.plot_waits_over_day([table["preempt"]], b) is b
        fig.canvas.draw()

    def test_binned_rejects_zero_bin(self):
        with pytest.raises(ValueError, match="bin_s must be >= 1"):
            plots.binned([1, 2, 3], 0)

    def test_binned_means(self):
        assert plots.binned([1, 3, 5, 7, 9], 2) == [2, 6, 9]


class TestPanels:
    """A multi-panel figure drawn as one small figure per panel, readable on a phone."""

    def test_one_figure_per_panel_that_fits_a_phone_column(self):
        axes = plots.panels(3, sharey=True)
        figures = {id(ax.figure) for ax in axes}
        assert len(figures) == 3
        for ax in axes:
            width_px = ax.figure.get_size_inches()[0] * 100  # the inline backend's dpi
            assert width_px <= 358 - 5  # a 390 px phone's text column, with the tight box's margin

    def test_shared_axis_has_one_range_over_the_figures(self):
        axes = plots.panels(3, sharey=True)
        for ax, top in zip(axes, (1, 10, 100)):
            ax.plot([0, 1], [0, top])
        ranges = {ax.get_ylim() for ax in axes}
        assert len(ranges) == 1 and ranges.pop()[1] >= 100
        free = plots.panels(2)
        free[0].plot([0, 1], [0, 1])
        free[1].plot([0, 1], [0, 50])
        assert free[0].get_ylim() != free[1].get_ylim()

    @pytest.mark.parametrize("kw, word", [({"n": 0}, "n"), ({"n": 2.5}, "n"), ({"n": 2, "height": 0}, "height"),
                                          ({"n": 2, "sharey": "yes"}, "sharey")])
    def test_bad_input_names_the_parameter(self, kw, word):
        with pytest.raises(ValueError, match=rf"^{word} "):
            plots.panels(**kw)
