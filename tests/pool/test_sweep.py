"""Sweeps: tidy table, one row per run, quiet outside JupyterLab."""

import pytest

import lanes
from lanes.display.progress import progress_enabled
from lanes.pool.sweep import METRICS, sweep, sweep_scenarios

pd = pytest.importorskip("pandas")


class TestSweep:
    def test_rows_match_the_anchor_table(self):
        df = sweep(["priority", "reserve:16"])
        table = lanes.run_table(policies=["priority", "reserve:16"])
        assert list(df["policy"]) == ["priority", "reserve:16"]
        assert list(df["p99_s"]) == [r.p99_s for r in table]
        assert list(df["batch_done"]) == [r.batch_done for r in table]

    def test_columns_include_every_metric(self):
        df = sweep(["priority"])
        assert set(METRICS) <= set(df.columns)

    def test_scenario_major_order(self):
        scs = [lanes.Scenario(hours=0.5), lanes.Scenario(hours=0.5, peak_rate=4)]
        df = sweep(["priority", "preempt"], scs)
        assert list(zip(df["peak_rate"], df["policy"])) == [(5.0, "priority"), (5.0, "preempt"), (4.0, "priority"), (4.0, "preempt")]

    def test_batch_slot_hours_without_eviction(self):
        df = sweep(["priority"], lanes.Scenario(hours=0.5))
        r = lanes.simulate(lanes.Scenario(hours=0.5), "priority")
        assert df.loc[0, "batch_slot_h"] == pytest.approx(sum(r.day.busy_batch) / 3600)

    def test_sweep_scenarios_over_a_scenario_field(self):
        df = sweep_scenarios("hybrid:8", "preempt_cost_s", [0, 60], lanes.Scenario(hours=1))
        assert list(df["label"]) == [0, 60]
        assert list(df["preempt_cost_s"]) == [0, 60]

    def test_sweep_scenarios_over_an_extension(self):
        df = sweep_scenarios("preempt", "floor", [0, 8], lanes.Scenario(hours=1))
        assert list(df["floor"]) == [0, 8]
        assert df.loc[1, "batch_done"] > df.loc[0, "batch_done"]

    def test_unknown_field_is_named(self):
        with pytest.raises(ValueError, match="field must be one of .* \\(got 'colour'\\)"):
            sweep_scenarios("priority", "colour", [1])

    def test_single_spec_string_is_rejected(self):
        with pytest.raises(ValueError, match="policies must be a list"):
            sweep("priority")

    def test_reserve_larger_than_pool_is_rejected(self):
        with pytest.raises(ValueError, match="reserve must be an integer in"):
            sweep(["reserve:80"])


class TestProgress:
    def test_silent_under_pytest_even_in_a_jupyter_session(self, monkeypatch):
        monkeypatch.delenv("LANES_PROGRESS", raising=False)
        monkeypatch.setenv("JPY_SESSION_NAME", "/notebooks/03_headroom.ipynb")
        assert progress_enabled() is False

    def test_on_in_a_jupyterlab_kernel(self, monkeypatch):
        monkeypatch.delenv("LANES_PROGRESS", raising=False)
        monkeypatch.delenv("PYTEST_CURRENT_TEST", raising=False)
        monkeypatch.setenv("JPY_SESSION_NAME", "/notebooks/03_headroom.ipynb")
        assert progress_enabled() is True

    def test_off_without_a_jupyter_session(self, monkeypatch):
        monkeypatch.delenv("LANES_PROGRESS", raising=False)
        monkeypatch.delenv("PYTEST_CURRENT_TEST", raising=False)
        monkeypatch.delenv("JPY_SESSION_NAME", raising=False)
        assert progress_enabled() is False

    def test_environment_override_and_explicit_argument(self, monkeypatch):
        monkeypatch.setenv("LANES_PROGRESS", "1")
        assert progress_enabled() is True
        assert progress_enabled(False) is False

    def test_quiet_sweep_prints_nothing(self, monkeypatch, capsys):
        monkeypatch.delenv("LANES_PROGRESS", raising=False)
        sweep(["priority", "preempt"], lanes.Scenario(hours=0.25))
        out = capsys.readouterr()
        assert out.out == "" and out.err == ""

    def test_the_caller_hands_the_sweep_its_progress(self):
        seen = []

        def progress(runs, desc):
            seen.append((len(runs), desc))
            return runs

        df = sweep(["priority", "preempt"], lanes.Scenario(hours=0.25), progress=progress)
        assert seen == [(2, "simulating")] and len(df) == 2
        with pytest.raises(ValueError, match="progress must be a function"):
            sweep(["priority"], lanes.Scenario(hours=0.25), progress=True)


def test_the_clock_can_be_swept():
    df = sweep_scenarios("preempt", "tick_s", [1, 0.1], base=lanes.Scenario(hours=0.25, preempt_cost_s=3))
    assert list(df["label"]) == [1, 0.1]
    assert df["preempted"].iloc[1] > df["preempted"].iloc[0]
