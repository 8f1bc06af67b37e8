"""Multi-seed sweeps: one row per seed and policy, spreads, and thresholds read at full resolution."""

import pytest

import lanes
from lanes.pool.sweep import (
    SEEDS,
    backlog_mix,
    seeds_meeting,
    smallest_meeting,
    scan_reserve,
    smallest_reserve,
    spread,
    sweep_seeds,
)

pd = pytest.importorskip("pandas")

SHORT = lanes.Scenario(hours=0.5, backlog=2000)


class TestSweepSeeds:
    def test_ten_seeds_including_the_anchor_seed(self):
        assert len(SEEDS) == 10 and lanes.Scenario().seed in SEEDS

    def test_rows_are_the_simulator_runs_seed_major(self):
        df = sweep_seeds(["priority", "reserve:8"], [1, 2], SHORT)
        assert list(zip(df["seed"], df["policy"])) == [(1, "priority"), (1, "reserve:8"),
                                                       (2, "priority"), (2, "reserve:8")]
        for _, row in df.iterrows():
            r = lanes.simulate(SHORT.with_(seed=int(row["seed"])), row["policy"])
            assert (row["p99_s"], row["batch_done"]) == (r.p99_s, r.batch_done)

    def test_costly_metrics_on_request(self):
        df = sweep_seeds(["priority"], [1], SHORT, metrics=["batch_slot_h"])
        r = lanes.simulate(SHORT.with_(seed=1), "priority")
        assert list(df.columns) == ["seed", "policy", "reserve", "batch_slot_h"]
        assert df.loc[0, "batch_slot_h"] == pytest.approx(sum(r.day.busy_batch) / 3600)

    def test_bad_input_is_named(self):
        with pytest.raises(ValueError, match="metrics must be names"):
            sweep_seeds(["priority"], [1], SHORT, metrics=["colour"])
        with pytest.raises(ValueError, match="seeds must be a non-empty list"):
            sweep_seeds(["priority"], [], SHORT)
        with pytest.raises(ValueError, match="seeds must not repeat"):
            sweep_seeds(["priority"], [1, 1], SHORT)
        with pytest.raises(ValueError, match="policies must be a list"):
            sweep_seeds("priority", [1], SHORT)


class TestBacklogMix:
    def test_each_job_takes_one_of_the_lengths_in_proportion_and_the_users_are_the_scenarios(self):
        from lanes.pool.arrivals import draw_stream

        sc = SHORT.with_(seed=4)
        mixed = backlog_mix((60, 660), (9, 1))(sc)
        plain = draw_stream(sc)
        assert set(mixed.batch_service_s) == {60, 660} and len(mixed.batch_service_s) == sc.backlog
        assert abs(mixed.batch_service_s.count(660) / sc.backlog - 0.1) < 0.03
        assert (mixed.arrival_tick, mixed.inter_service_s) == (plain.arrival_tick, plain.inter_service_s)
        assert backlog_mix((60, 660), (9, 1))(sc) == mixed  # the same seed draws the same jobs
        assert backlog_mix((60, 660), (9, 1))(sc.with_(seed=5)).batch_service_s != mixed.batch_service_s

    def test_a_run_on_the_mixed_draws_differs_from_the_scenarios_own(self):
        sc = SHORT.with_(seed=1)
        mixed = lanes.simulate(sc, "priority", stream=backlog_mix((30, 480), (8, 2))(sc))
        plain = lanes.simulate(sc, "priority")
        assert mixed.n_arrivals == plain.n_arrivals and mixed.batch_done != plain.batch_done

    def test_bad_input_is_named(self):
        with pytest.raises(ValueError, match="weights must be one"):
            backlog_mix((60, 660), (1,))
        with pytest.raises(ValueError, match="weights must be one"):
            backlog_mix((60,), (0,))
        with pytest.raises(ValueError, match="lengths_s"):
            backlog_mix((0, 60), (1, 1))


class TestSummaries:
    frame = pd.DataFrame({
        "seed": [1, 1, 1, 2, 2, 2],
        "reserve": [0, 1, 2, 0, 1, 2],
        "p99_s": [9, 2, 1, 9, 3, 2],
    })

    def test_spread_is_low_median_high_per_group(self):
        s = spread(self.frame, "p99_s", by="reserve")
        assert s.loc[1].tolist() == [2, 2.5, 3, 2]
        assert list(s.index) == [0, 1, 2]

    def test_seeds_meeting_counts_runs_at_or_below_the_limit(self):
        assert seeds_meeting(self.frame, "p99_s", 2).tolist() == [0, 1, 2]

    def test_smallest_meeting_per_seed(self):
        s = smallest_meeting(self.frame, "p99_s", 2)
        assert s.to_dict() == {1: 1, 2: 2}
        assert smallest_meeting(self.frame, "p99_s", 0).to_dict() == {1: None, 2: None}

    def test_missing_column_is_named(self):
        with pytest.raises(ValueError, match="no column 'late'"):
            spread(self.frame, "late")


class TestSmallestReserve:
    def test_agrees_with_a_full_grid(self):
        grid = sweep_seeds([f"reserve:{r}" for r in range(0, 25)], [1, 2], SHORT)
        scan = smallest_reserve(2, [1, 2], SHORT)
        assert scan["reserve"].tolist() == smallest_meeting(grid, "p99_s", 2).tolist()
        for _, row in scan.iterrows():
            at = grid[(grid.seed == row.seed) & (grid.reserve == row.reserve)]
            assert at["p99_s"].item() == row.metric_at_reserve <= 2
            assert at["util"].item() == row.util and at["batch_done"].item() == row.batch_done
            assert row.metric_below is None or row.metric_below > 2

    def test_none_when_out_of_reach(self):
        scan = smallest_reserve(-1, [1], SHORT, max_reserve=3)
        assert scan["reserve"].tolist() == [None]

    def test_bad_kind_is_named(self):
        with pytest.raises(ValueError, match="kind must be"):
            smallest_reserve(2, [1], SHORT, kind="preempt")

    def test_the_one_scan_with_shared_draws_and_a_target_of_its_own(self):
        sc = SHORT.with_(seed=2)
        r, runs = scan_reserve(sc, lambda res: 0 <= res.p99_s <= 2, stream=lanes.draw_stream(sc), max_reserve=24)
        assert [run.policy.reserve for run in runs] == list(range(r + 1))
        assert runs[-1].p99_s <= 2 < runs[-2].p99_s
        assert r == smallest_reserve(2, [2], SHORT)["reserve"].item()
        with pytest.raises(ValueError, match="meets must be a function"):
            scan_reserve(sc, 2)

    def test_a_scan_from_a_given_r_tries_nothing_below_it(self):
        sc = SHORT.with_(seed=2)
        r, _ = scan_reserve(sc, lambda res: 0 <= res.p99_s <= 2, max_reserve=24)
        later, runs = scan_reserve(sc, lambda res: 0 <= res.p99_s <= 2, min_reserve=r - 2, max_reserve=24)
        assert later == r and [run.policy.reserve for run in runs] == [r - 2, r - 1, r]
        assert scan_reserve(sc, lambda res: True, min_reserve=r + 1, max_reserve=24)[0] == r + 1
        assert scan_reserve(sc, lambda res: True, min_reserve=25, max_reserve=24) == (None, [])
        with pytest.raises(ValueError, match="^min_reserve must be an integer >= 0"):
            scan_reserve(sc, lambda res: True, min_reserve=-1)
