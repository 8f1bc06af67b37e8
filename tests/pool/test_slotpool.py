"""The slot-pool simulator: the anchor table, properties, series (the independent reading is in test_pool_model.py)."""

from __future__ import annotations

import math
from collections import Counter

import pytest
from hypothesis import given, settings

import lanes
from lanes import Scenario, run_table, simulate
from lanes.pool.arrivals import draw_stream, poisson_count

from strategies import runs, scenarios

#: The anchor table printed by the seed's program (000_d8ef3ce34be3f789.txt,
#: "Run it with python3 lanes.py").  This is the specification.
SEED_TABLE = """\
64 slots, 6 h, interactive 2-5 req/s x 4-12 s, batch backlog 10000 x 60-180 s

policy         inter p50    p99    max  wait>2s  batch done  preempted  slot use
fifo              15368s 18576s 18623s   100.0%      10,000          0      100%
priority              2s    22s    54s    47.4%       6,501          0      100%
reserve 4             1s    15s    36s    29.1%       6,284          0       98%
reserve 8             0s     7s    19s    11.1%       5,859          0       94%
reserve 16            0s     2s     5s     0.4%       4,670          0       84%
preempt               0s     0s     0s     0.0%       3,944     20,474      100%
reserve 8+pre         0s     0s     0s     0.0%       5,139      3,951       92%"""

#: The seed's row labels and the specs the kit prints instead (one name per policy); every figure stays.
SEED_LABELS = {"reserve 4    ": "reserve:4    ", "reserve 8    ": "reserve:8    ", "reserve 16   ": "reserve:16   ",
               "reserve 8+pre": "hybrid:8     "}
ANCHOR_TABLE = "\n".join(next((line.replace(a, b, 1) for a, b in SEED_LABELS.items() if line.startswith(a)), line)
                         for line in SEED_TABLE.splitlines())


@pytest.fixture(scope="module")
def anchor():
    return run_table(lanes.anchor())


class TestAnchorTable:
    def test_text_matches_the_seed_exactly(self, anchor):
        assert anchor.text() == ANCHOR_TABLE
        assert [line[14:] for line in anchor.text().splitlines()] == [line[14:] for line in SEED_TABLE.splitlines()]

    def test_the_default_clock_is_event_driven_and_the_anchor_is_its_one_second_clock(self, anchor):
        assert Scenario().tick_s == 0 and lanes.anchor().tick_s == 1
        assert lanes.anchor() == Scenario(tick_s=1) and lanes.anchor(seed=4) == Scenario(tick_s=1, seed=4)
        assert run_table(policies="reserve:8")["reserve:8"].row() != anchor["reserve:8"].row()

    def test_rows_carry_unrounded_values(self, anchor):
        row = anchor["reserve:8"].row()
        assert row["policy"] == "reserve:8"
        assert row["p99"] == 7 and row["batch_done"] == 5859
        assert 0.1105 < row["late"] < 0.1115 and row["late"] != round(row["late"], 3)
        assert 0.944 < row["util"] < 0.945

    def test_table_and_single_runs_agree(self, anchor):
        for spec in ("priority", "hybrid:8"):
            assert simulate(lanes.anchor(), spec).row() == anchor[spec].row()


class TestTheCommandLine:
    """``python -m lanes table`` prints the same rows, at the default clock and at ``--tick 1``."""

    @pytest.fixture(scope="class")
    @classmethod
    def reference_rows(cls, anchor):
        return anchor.rows()

    def test_rows_equal_the_cli_json_rows(self, reference_rows):
        import json
        import subprocess
        import sys

        out = subprocess.run([sys.executable, "-m", "lanes", "table", "--json", "--tick", "1"], capture_output=True,
                             text=True, timeout=120, check=True).stdout
        assert json.loads(out) == reference_rows

    def test_rows_print_as_the_anchor_table(self, reference_rows):
        lines = ANCHOR_TABLE.splitlines()[:3]
        for spec, row in zip(lanes.DEFAULT_POLICIES, reference_rows):
            lines.append(
                f"{spec:<14}{row['p50']:>9}s{row['p99']:>6}s{row['max']:>6}s{row['late']:>9.1%}"
                f"{row['batch_done']:>12,}{row['preempted']:>11,}{row['util']:>10.0%}"
            )
        assert "\n".join(lines) == ANCHOR_TABLE


class TestProperties:
    @settings(max_examples=80, deadline=None)
    @given(runs())
    def test_conservation(self, run):
        scenario, policy = run
        r = simulate(scenario, policy)
        _, running_inter, running_batch, *_ = r.day.log[-1]  # the pool at the day's last instant
        assert r.batch_done + running_batch + r.batch_queued == scenario.backlog
        queued_inter = r.n_arrivals - r.n_interactive
        assert r.day.interactive_done + running_inter + queued_inter == r.n_arrivals
        assert all(0 <= i + b <= scenario.slots for i, b in zip(r.day.busy_interactive, r.day.busy_batch))

    @settings(max_examples=40, deadline=None)
    @given(runs())
    def test_deterministic_for_a_seed(self, run):
        scenario, policy = run
        first = simulate(scenario, policy)
        draw_stream.cache_clear()
        second = simulate(scenario, policy)
        assert first.row() == second.row()
        assert first.wait_s == second.wait_s and first.day.busy_batch == second.day.busy_batch

    @settings(max_examples=60, deadline=None)
    @given(runs())
    def test_no_preemption_without_a_preempting_policy(self, run):
        scenario, policy = run
        r = simulate(scenario, policy)
        if not policy.preempts:
            assert r.preempted == 0 and not any(r.day.preempted_per_tick)
        assert sum(r.day.preempted_per_tick) == r.preempted

    @settings(max_examples=60, deadline=None)
    @given(runs(extensions=False))
    def test_reserve_never_violated(self, run):
        scenario, policy = run
        r = simulate(scenario, policy)
        if policy.kind in ("reserve", "hybrid"):  # at every instant a batch job started, at any clock
            for before, (t, inter, batch, _, _, started, _) in zip([(0,) * 7, *r.day.log], r.day.log):
                if started > before[5]:
                    assert scenario.slots - inter - batch >= policy.reserve, t

    @settings(max_examples=60, deadline=None)
    @given(runs())
    def test_littles_law_within_edge_effects(self, run):
        # L = lambda * W over the window: the slot-seconds booked by admitted
        # requests equal their service times, except for requests still in a
        # slot at the end, each cut short by at most its own service time, and
        # at most `slots` of them.  So |L - lambda W| <= slots * max_service / T.
        scenario, policy = run
        r = simulate(scenario, policy)
        T = scenario.ticks
        L = r.day.mean_busy_interactive
        lam = r.n_interactive / T
        W = sum(r.day.wait_service_s) / r.n_interactive if r.n_interactive else 0.0
        assert abs(L - lam * W) <= scenario.slots * scenario.inter_service_s[1] / T + 1e-12

    def test_littles_law_against_the_scenario_rates(self):
        # Under priority interactive work is never starved of slots for long, so
        # the busy interactive slots average the mean rate (3.5/s) times the mean
        # service (8 s) = 28.  75,000 arrivals give a relative sampling error of
        # about 0.4% (count) and 0.3% (service mean); 2% is five sigma.
        r = simulate(Scenario(), "reserve:16")
        expected = (2.0 + 5.0) / 2 * (4 + 12) / 2
        assert r.day.mean_busy_interactive == pytest.approx(expected, rel=0.02)


class TestDraws:
    def test_poisson_count_matches_the_cdf(self):
        lam = 3.0
        cdf = 0.0
        for k in range(8):
            cdf += math.exp(-lam) * lam**k / math.factorial(k)
            assert poisson_count(lam, cdf - 1e-9) == k
        assert poisson_count(0.0, 0.999) == 0

    def test_poisson_count_terminates_when_rounding_never_reaches_u(self):
        assert poisson_count(5.0, 1.0 - 1e-17) >= 0
        assert poisson_count(5.0, 1.5) > 0  # u above any reachable total still returns

    @settings(max_examples=30, deadline=None)
    @given(scenarios())
    def test_stream_matches_the_library_draws(self, scenario):
        import random

        rng = random.Random(scenario.seed)
        s = draw_stream(scenario)
        assert list(s.batch_service_s) == [rng.randint(*scenario.batch_service_s) for _ in range(scenario.backlog)]
        when, holds = [], []
        for t in range(scenario.ticks):
            k = poisson_count(lanes.rate_per_s(scenario, t), rng.random())
            when += [t] * k
            holds += [rng.randint(*scenario.inter_service_s) for _ in range(k)]
        assert (list(s.arrival_tick), list(s.inter_service_s)) == (when, holds)


class TestResultSeries:
    def test_series_lengths_and_totals(self, anchor):
        r = anchor["hybrid:8"]
        T = r.scenario.ticks
        assert len(r.day.busy_interactive) == len(r.day.busy_batch) == T
        assert r.day.batch_done_cumulative[-1] == r.batch_done == r.day.batch_done_by(T)
        assert len(r.wait_s) == len(r.day.wait_arrival_tick) == r.n_interactive
        total_busy = sum(r.day.busy_interactive) + sum(r.day.busy_batch)
        assert total_busy / (T * r.scenario.slots) == r.util

    def test_wait_counts_count_each_admitted_wait_by_its_whole_seconds(self, anchor):
        for r in (anchor["priority"], anchor["fifo"], simulate(Scenario(hours=0.5, tick_s=0.1), "priority")):
            counts = r.day.wait_counts
            assert len(counts) == int(r.max_s) + 1 and sum(counts) == r.n_interactive
            by_second = Counter(int(w) for w in r.wait_s)  # the same count, made another way
            assert counts == [by_second[k] for k in range(len(counts))]

    def test_window_covers_the_whole_day(self, anchor):
        r = anchor["priority"]
        w = r.window(0, r.scenario.ticks)
        assert (w["p50"], w["p99"], w["max"]) == (r.p50_s, r.p99_s, r.max_s)
        assert w["late"] == r.late_fraction

    def test_frames(self, anchor):
        pytest.importorskip("pandas")
        df = anchor.to_frame()
        assert list(df.index) == list(lanes.DEFAULT_POLICIES)
        assert df.loc["preempt", "preempted"] == 20474
        per_tick = anchor["fifo"].day.to_frame()
        assert len(per_tick) == 21600 and per_tick["busy_batch"].max() == 64


class TestStreamSharing:
    def test_pool_size_and_preempt_cost_reuse_the_draws(self):
        sc = Scenario(hours=0.25)
        assert draw_stream(sc.with_(slots=16, preempt_cost_s=60)) is draw_stream(sc)

    def test_workload_knobs_redraw(self):
        sc = Scenario(hours=0.25)
        assert draw_stream(sc.with_(seed=4)) is not draw_stream(sc)
        assert draw_stream(sc.with_(inter_service_s=(4, 13))).inter_service_s != draw_stream(sc).inter_service_s
