"""Chapter 3 (headroom): every claim of the text, computed with lanes.

Thresholds are read off sweeps that try every R.  Each test recomputes a claim
through the functions the chapter calls and checks that the number the chapter
glues into its prose is that number.  The sweeps over ten seeds are rerun here
on two seeds (:data:`SPOT`) and checked against the chapter's glued per-run
values; claims about every seed are checked on those values (nbval reruns the
chapter, so they are what a fresh run gives).
"""

from __future__ import annotations


import pytest

import lanes
from lanes.pool import littles
from lanes.pool.sweep import SEEDS, seeds_meeting, smallest_meeting, smallest_reserve, sweep_seeds
from glued_values import glued, notebook, referenced

STEM = "03_headroom"
SC = lanes.Scenario()  # the chapter's base scenario: a decision at every arrival and completion
COARSE = lanes.anchor()  # the coarse model the chapter sets beside it: one decision per second
TARGET_S = 2
HOLD_S = (SC.inter_service_s[0] + SC.inter_service_s[1]) / 2
DRAIN_S = (SC.batch_service_s[0] + SC.batch_service_s[1]) / 2
SHORT = SC.with_(batch_service_s=(15, 45), backlog=round(SC.backlog * DRAIN_S / 30))
METRICS = ["p99_s", "batch_done", "util"]
#: Seeds the ten-seed sweeps are rerun on here.
SPOT = (1, SC.seed)
GRID_R = [0, *range(10, 21)]


@pytest.fixture(scope="module")
def text():
    return glued(STEM)


@pytest.fixture(scope="module")
def curve():
    """Seed 3, every R from 0 to 20: the chapter's glued curve, with R = 1, 4 and 7 rerun here
    (from R = 10 on, and at R = 0, the curve is the grid's seed-3 row, which :func:`grid` checks)."""
    import pandas as pd

    g = glued(STEM)
    df = pd.DataFrame({"reserve": range(21), "p99_s": g["curve_p99_s"], "batch_done": g["curve_batch"]})
    df = df.set_index("reserve")
    rerun = sweep_seeds([f"reserve:{r}" for r in (1, 4, 7)], [SC.seed], SC, metrics=METRICS).set_index("reserve")
    assert rerun["p99_s"].tolist() == df.loc[rerun.index, "p99_s"].tolist()
    assert rerun["batch_done"].tolist() == df.loc[rerun.index, "batch_done"].tolist()
    return df


@pytest.fixture(scope="module")
def grid(curve):
    """Ten seeds, R = 0 and every R from 10 to 20: the chapter's glued runs, the spot seeds rerun."""
    import pandas as pd

    df = pd.DataFrame(glued(STEM)["grid_runs"], columns=["seed", "reserve", "p99_s", "batch_done", "util"])
    assert sorted(set(df["seed"])) == list(SEEDS) and sorted(set(df["reserve"])) == GRID_R
    rerun = sweep_seeds([f"reserve:{r}" for r in (0, 10, 16, 17, 18, 19)], SPOT, SC, metrics=METRICS)
    mine = df.set_index(["seed", "reserve"]).loc[list(zip(rerun["seed"], rerun["reserve"]))]
    assert mine["p99_s"].tolist() == rerun["p99_s"].tolist()
    assert mine["batch_done"].tolist() == rerun["batch_done"].tolist()
    assert mine["util"].tolist() == pytest.approx(rerun["util"].tolist())
    three = df[df["seed"] == SC.seed].set_index("reserve")  # the curve's R = 0 and 8 to 20 are these runs
    assert three["p99_s"].tolist() == curve.loc[three.index, "p99_s"].tolist()
    assert three["batch_done"].tolist() == curve.loc[three.index, "batch_done"].tolist()
    return df


@pytest.fixture(scope="module")
def scan_short():
    """Per seed, the smallest R for the short jobs: the chapter's glued values, the spot seeds rerun."""
    import pandas as pd

    per_seed = glued(STEM)["r_short_seeds"]
    assert len(per_seed) == len(SEEDS)
    rerun = smallest_reserve(TARGET_S, [SC.seed], SHORT)
    assert rerun["reserve"].tolist() == [per_seed[SEEDS.index(SC.seed)]]
    return pd.DataFrame({"seed": SEEDS, "reserve": per_seed})


def test_every_glued_name_in_the_text_is_computed(text):
    missing = referenced(STEM) - set(text)
    assert not missing, f"the text shows values no cell glues: {sorted(missing)}"


def test_target_and_seeds(text):
    assert SC.seed == 3  # the text calls the anchor draw 'seed 3'
    assert SC.tick_s == 0 and COARSE.tick_s == 1  # every run decides at every event; the coarse model once a second
    assert text["grid_lo"] == GRID_R[1]
    assert text["target_s"] == TARGET_S and text["n_seeds"] == len(SEEDS) >= 10


class TestSeedThree:
    def test_smallest_r_is_17_not_the_20_a_gappy_grid_reports(self, curve, text):
        p99 = curve["p99_s"]
        smallest = min(r for r in curve.index if p99[r] <= TARGET_S)
        assert smallest == text["r_anchor"] == 17
        assert p99[16] > TARGET_S
        gappy = [0, 2, 4, 6, 8, 10, 12, 16, 20]
        assert min(r for r in gappy if p99[r] <= TARGET_S) == text["r_coarse"] == 20
        assert text["p99_r0_s"] == p99[0] == lanes.run_table(SC, ["priority"])["priority"].p99_s

    def test_every_r_above_the_threshold_also_meets_it(self, curve, text):
        assert all(curve["p99_s"][r] <= TARGET_S for r in range(text["r_anchor"], 21))

    def test_each_step_of_r_gives_up_batch_jobs(self, curve):
        done = curve["batch_done"].tolist()
        assert all(a > b for a, b in zip(done, done[1:]))
        assert curve["p99_s"][20] < curve["p99_s"][0]


def test_the_smallest_r_on_seed_3_is_not_shown_before_or_beside_its_reveal(text):
    """Its figure is folded with the reveal, and the prose under them does not state it."""
    import re

    cells = notebook(STEM)["cells"]
    ask = next(k for k, c in enumerate(cells) if "my_guess_smallest_r = None" in "".join(c["source"]))
    k = ask + 1
    while cells[k]["cell_type"] == "code":  # the reveal and the figure drawn from it (and hidden values)
        tags = cells[k]["metadata"].get("tags", [])
        assert "hide-output" in tags or "prose-values" in tags, k
        k += 1
    first = "".join(cells[k]["source"]).split("## ")[0]
    assert not re.search(rf"R = {text['r_anchor']}\b", first)
    assert not re.search(rf"\b{text['r_coarse']} instead", first)


def test_one_runs_p99_at_r0_is_given_with_the_spread_over_seeds(grid, text):
    at_r0 = grid[grid.reserve == 0].p99_s
    assert (text["p99_r0_low_s"], text["p99_r0_high_s"]) == (at_r0.min(), at_r0.max())
    assert at_r0.min() < text["p99_r0_s"] < at_r0.max()


class TestAcrossTenSeeds:
    def test_thresholds_lie_inside_the_swept_range(self, grid, text):
        assert seeds_meeting(grid, "p99_s", TARGET_S).loc[GRID_R[1]] == text["meet_at_lo"] == 0

    def test_seeds_meeting_each_r(self, grid, text):
        meeting = seeds_meeting(grid, "p99_s", TARGET_S)
        assert meeting.loc[16] == 0  # square-root staffing's R meets the target on no seed
        assert meeting.loc[17] == text["meet_at_anchor"] == 5
        assert meeting.loc[18] == text["meet_at_anchor_plus1"] == 9
        assert text["miss_below_all"] == 1 and text["r_all_minus1"] == 18
        assert all(meeting.loc[r] == len(SEEDS) for r in range(19, 21))

    def test_smallest_r_per_seed(self, grid, text):
        per_seed = smallest_meeting(grid, "p99_s", TARGET_S)
        assert (min(per_seed), max(per_seed)) == (text["r_low"], text["r_high"]) == (17, 19)
        assert text["r_all"] == 19
        assert text["r_anchor"] == min(per_seed)  # seed 3 reaches the target as early as any seed
        assert text["later_seeds"] == sum(r > text["r_anchor"] for r in per_seed) == 5

    def test_band_entirely_at_target_only_from_r_all(self, grid, text):
        high = grid.groupby("reserve").p99_s.max()
        assert high.loc[text["r_all"]] <= TARGET_S < high.loc[text["r_all"] - 1]


class TestCoarseTick:
    """The same ten days on the one-second tick need fewer reserved slots, on every seed."""

    @pytest.fixture(scope="class")
    @classmethod
    def tick(cls):
        return smallest_reserve(TARGET_S, SEEDS, COARSE).set_index("seed")["reserve"]

    def test_the_tick_needs_fewer_slots_on_every_seed(self, tick, grid, text):
        per_seed = smallest_meeting(grid, "p99_s", TARGET_S)
        assert (tick.min(), tick.max()) == (text["tick_low"], text["tick_high"]) == (14, 17)
        assert text["tick_vs_step"] == [int(tick[s] - per_seed[s]) for s in SEEDS]
        assert max(text["tick_vs_step"]) == text["tick_vs_step_max"] < 0  # "on every seed fewer"

    def test_on_the_tick_an_arrival_is_seen_at_the_start_of_its_second(self):
        """What the text says the tick does: a request is seen at its second's start, before batch refills."""
        from lanes.pool.arrivals import draw_stream, on_the_clock

        stream = draw_stream(COARSE)
        clock = on_the_clock(COARSE, stream)
        assert clock.seen[:50] == list(stream.arrival_tick[:50])
        assert any(u > 0.5 for u in stream.offsets_s[:50])  # ... though it arrived later in that second
        fine = on_the_clock(SC, stream)
        assert fine.seen[:50] == [t + u for t, u in zip(stream.arrival_tick[:50], stream.offsets_s[:50])]


class TestCost:
    def test_batch_lost_and_idle_slots_at_r_all(self, grid, text):
        base = grid[grid.reserve == 0].set_index("seed")
        chosen = grid[grid.reserve == text["r_all"]].set_index("seed")
        loss = 1 - chosen.batch_done / base.batch_done
        idle = (1 - chosen.util) * SC.slots
        assert (loss.min(), loss.max()) == pytest.approx((text["loss_low"], text["loss_high"]))
        assert (idle.min(), idle.max()) == pytest.approx((text["idle_low"], text["idle_high"]))
        assert idle.max() < text["r_all"]  # a reserve of R leaves fewer than R idle


class TestRuleOfThumb:
    def test_drift_is_small_and_the_rule_overshoots_the_sweep(self, text):
        slope = littles.diurnal_max_slope(SC.trough_rate, SC.peak_rate, SC.ticks)
        drift = slope * HOLD_S * DRAIN_S
        rule = littles.headroom_slots(SC.peak_rate * HOLD_S, HOLD_S, DRAIN_S, drift_per_s=slope * HOLD_S)
        assert (text["drift"], text["rule"], text["drain_s"]) == pytest.approx((drift, rule, DRAIN_S))
        assert drift < 1
        assert rule > text["r_all"]
        assert text["rule_excess"] == rule - text["r_all"]  # "more than the"


class TestSquareRootStaffing:
    """The Halfin-Whitt first guess against the simulator's smallest R on ten seeds."""

    def test_the_formula_and_the_exact_erlang_count(self, text):
        from lanes.pool import erlang
        import math

        load = littles.busy_slots(SC.peak_rate, HOLD_S)
        assert text["p_wait"] == 0.01
        assert text["beta"] == pytest.approx(erlang.halfin_whitt_beta(0.01))
        assert text["r_sqrt"] == math.ceil(erlang.halfin_whitt_beta(0.01) * math.sqrt(load)) == 16
        assert text["r_erlang"] == erlang.servers_for_wait(load, 0.01) - load == 17
        # the exact count is the smallest with P(wait) <= 1%
        assert erlang.erlang_c(int(load) + 17, load) <= 0.01 < erlang.erlang_c(int(load) + 16, load)

    def test_beta_is_shown_to_enough_digits_to_give_the_r_the_text_states(self, text):
        """2.37 x sqrt(40) = 14.99 rounds up to 15; beta must be shown as 2.375 (-> 15.02 -> 16)."""
        import math
        import re

        from scripts import prose_tools as prose

        shown = re.search(r"\$\\beta\$ = ([0-9.]+)", prose.render(self._template(r"\beta$ = {{beta"), text))
        assert shown, "the text no longer shows beta"
        assert math.ceil(float(shown.group(1)) * math.sqrt(littles.busy_slots(SC.peak_rate, HOLD_S))) == text["r_sqrt"]
        assert text["beta_sqrt_load"] == pytest.approx(text["beta"] * math.sqrt(40))
        assert 15 < text["beta_sqrt_load"] < 15.05

    @staticmethod
    def _template(marker):
        from scripts import prose_tools as prose

        return next(t for _, t, _ in prose.templated_cells(notebook(STEM)) if marker in t)

    def test_p99_target_and_one_in_a_hundred_waiting_differ_widely(self, text):
        from lanes.pool import erlang

        load = littles.busy_slots(SC.peak_rate, HOLD_S)
        c = erlang.servers_for_wait(load, 0.01)
        tail = erlang.mmc_wait_tail(c, load, HOLD_S, TARGET_S)
        assert c == 57 and text["tail_at_c"] == pytest.approx(tail)
        assert tail < 0.01 / 50  # not 'about' the 1% of P(wait > 0)
        assert "waits at all" not in self._template("Which $p$?")

    def test_the_literal_mmc_reading_asks_for_less_than_any_seed_needs(self, grid, text):
        from lanes.pool import erlang

        load = littles.busy_slots(SC.peak_rate, HOLD_S)
        c = next(c for c in range(41, 200) if erlang.mmc_wait_tail(c, load, HOLD_S, TARGET_S) <= 0.01)
        assert text["r_mmc"] == c - load == 10
        assert text["r_mmc"] < smallest_meeting(grid, "p99_s", TARGET_S).min()
        assert text["r_mmc_vs_low"] == text["r_mmc"] - smallest_meeting(grid, "p99_s", TARGET_S).min()

    def test_the_folded_reveal_opens_with_the_guess_not_the_answer(self):
        cells = notebook(STEM)["cells"]
        ask = next(k for k, c in enumerate(cells) if "my_guess_r_sqrt = None" in "".join(c["source"]))
        first = "".join(cells[ask + 1]["outputs"][0]["text"]).splitlines()[0]
        assert first.startswith("your guess:")

    def test_it_falls_below_the_simulators_range_and_misses_by_as_much_as_the_rule_of_thumb(self, grid, text):
        per_seed = smallest_meeting(grid, "p99_s", TARGET_S)
        meeting = seeds_meeting(grid, "p99_s", TARGET_S)
        assert text["r_sqrt"] < per_seed.min()  # "falls below that range"
        assert text["sqrt_vs_low"] == text["r_sqrt"] - per_seed.min() < 0
        assert text["sqrt_meets"] == int(meeting.loc[text["r_sqrt"]]) == 0
        assert text["erlang_meets"] == int(meeting.loc[text["r_erlang"]]) == 5 < len(SEEDS)
        # "the formula is 3 short and the rule of thumb 3 over: ... miss by as much, on opposite sides"
        assert text["sqrt_short"] == text["r_all"] - text["r_sqrt"] == text["rule"] - text["r_all"] == text["rule_excess"]
        assert text["r_sqrt"] < text["r_all"] < text["rule"]

    def test_on_the_tick_the_formula_fell_inside_the_range(self, text):
        assert text["tick_low"] <= text["r_sqrt"] <= text["tick_high"]

    def test_it_cannot_see_shorter_batch_jobs(self, scan_short, text):
        assert text["r_sqrt"] > text["r_short_all"] == int(scan_short["reserve"].max())


class TestChunking:
    def test_same_total_work(self, text):
        assert SHORT.backlog * 30 == SC.backlog * DRAIN_S
        assert (text["short_lo_s"], text["short_hi_s"]) == SHORT.batch_service_s

    def test_short_jobs_need_less_headroom_on_every_seed(self, scan_short, grid, text):
        per_seed_short = scan_short.set_index("seed")["reserve"]
        per_seed_long = smallest_meeting(grid, "p99_s", TARGET_S)
        assert (per_seed_short.min(), per_seed_short.max()) == (text["r_short_low"], text["r_short_all"])
        assert all(per_seed_short[s] < per_seed_long[s] for s in SEEDS)
        assert per_seed_short.max() < per_seed_long.min()
        assert text["r_short_vs_long"] == per_seed_short.max() - per_seed_long.max() < 0  # "less headroom"

    def test_same_latency_more_work_at_the_common_r(self, grid, text):
        import pandas as pd

        rerun = sweep_seeds([f"reserve:{text['r_short_all']}"], SPOT, SHORT, metrics=["p99_s", "util", "preempted"])
        assert (rerun.preempted == 0).all()  # no eviction needed (reserve:R never evicts)
        common = pd.DataFrame(text["common_runs"], columns=["seed", "p99_s", "util"])
        assert list(common.seed) == list(SEEDS)
        spot = common.set_index("seed").loc[list(SPOT)]
        assert spot.p99_s.tolist() == rerun.p99_s.tolist() and spot.util.tolist() == pytest.approx(rerun.util.tolist())
        long_util = grid[grid.reserve == text["r_all"]].util
        assert common.p99_s.max() <= TARGET_S == text["target_s"]  # "every seed's p99 within the target"
        assert common.util.min() == pytest.approx(text["util_short_low"])
        assert long_util.max() == pytest.approx(text["util_long_high"])
        assert common.util.min() > long_util.max()
        assert text["util_short_vs_long"] == pytest.approx(common.util.min() - long_util.max())

    def test_users_wait_for_the_first_of_b_running_jobs_one_every_mean_over_b(self, text):
        """On seed 3 at each length's common R: batch slots held, and E[S] / B between two ends."""
        for jobs, r, key, mean in ((SC, text["r_all"], "long", DRAIN_S), (SHORT, text["r_short_all"], "short", 30)):
            run = lanes.simulate(jobs, f"reserve:{r}")
            held = sum(run.day.busy_batch) / jobs.ticks
            assert text[f"b_{key}"] == pytest.approx(held)
            assert text[f"gap_{key}_s"] == pytest.approx(mean / held)
            # Little's law: the jobs that ended in the day, against B / E[S] a second
            assert run.batch_done == pytest.approx(jobs.ticks * held / mean, rel=0.02)
        assert text["short_mean_s"] == 30
        assert text["gap_short_s"] < text["gap_long_s"] / 3  # "chunking helps through the mean"

    def test_mean_residual_life_of_the_original_jobs(self, text):
        from lanes.pool.theory import JobClass

        assert text["residual_long_s"] == JobClass.uniform(0, *SC.batch_service_s).residual_s == 65
        assert text["residual_long_s"] > DRAIN_S / 2  # "not half their mean"
        assert (text["long_lo_s"], text["long_hi_s"]) == SC.batch_service_s
        assert text["slots"] == SC.slots

    def test_rule_of_thumb_moves_the_same_way_and_overshoots_more(self, text):
        slope = littles.diurnal_max_slope(SC.trough_rate, SC.peak_rate, SC.ticks)
        rule_short = littles.headroom_slots(SC.peak_rate * HOLD_S, HOLD_S, 30, drift_per_s=slope * HOLD_S)
        assert rule_short == text["rule_short"] < text["rule"]
        assert rule_short / text["r_short_all"] > text["rule"] / text["r_all"]
        assert text["overshoot_change"] == pytest.approx(rule_short / text["r_short_all"] - text["rule"] / text["r_all"])


class TestOccupancyPanels:
    def test_free_strip_widens_with_r_and_batch_narrows_by_as_much(self, text):
        table = lanes.run_table(SC, ["reserve:0", f"reserve:{text['r_anchor']}", f"reserve:{text['r_all']}"])
        free = [SC.slots * (1 - r.util) for r in table]
        batch = [sum(r.day.busy_batch) / SC.ticks for r in table]
        inter = [r.day.mean_busy_interactive for r in table]
        assert free[0] < 0.1 and free[0] < free[1] < free[2]
        for i in (1, 2):
            assert (batch[0] - batch[i]) == pytest.approx(free[i] - free[0], abs=0.5)
        assert max(inter) - min(inter) < 0.5  # the interactive band looks alike


class TestTryItHalvedJobs:
    """Jobs of 30 to 90 s with the backlog's job count kept: half the work queued, so it can run out."""

    HALVED = SC.with_(batch_service_s=(30, 90))
    R = range(12, 18)

    @pytest.fixture(scope="class")
    @classmethod
    def half(cls):
        """The chapter's glued runs (ten seeds, R = 12 to 17), seed 7, one of the last to meet the target, rerun."""
        import pandas as pd

        df = pd.DataFrame(glued(STEM)["half_runs"], columns=["seed", "reserve", "p99_s", "batch_done"])
        assert sorted(set(df["seed"])) == list(SEEDS) and sorted(set(df["reserve"])) == list(cls.R)
        rerun = sweep_seeds([f"reserve:{r}" for r in cls.R], [7], cls.HALVED, metrics=["p99_s", "batch_done"])
        mine = df[df["seed"] == 7]
        assert mine["p99_s"].tolist() == rerun["p99_s"].tolist()
        assert mine["batch_done"].tolist() == rerun["batch_done"].tolist()
        return df

    def test_the_question_as_posed(self, text):
        assert self.HALVED.backlog == SC.backlog == text["backlog"] == 10_000  # the backlog kept
        assert (text["half_lo_s"], text["half_hi_s"]) == self.HALVED.batch_service_s == (30, 90)
        assert (text["half_r_first"], text["half_r_last"]) == (self.R[0], self.R[-1])

    def test_the_answer_and_the_range_swept(self, half, text):
        meet = seeds_meeting(half, "p99_s", TARGET_S)
        per_seed = smallest_meeting(half, "p99_s", TARGET_S)
        assert meet[self.R[0]] == text["half_meet_first"] == 0  # every threshold inside the sweep
        assert text["r_half_all"] == int(meet[meet == len(SEEDS)].index.min()) == per_seed.max()
        assert text["r_half_low"] == per_seed.min() < text["r_half_all"]
        assert text["half_saving"] == text["r_all"] - text["r_half_all"] > 0  # "saves ... slots"

    def test_the_backlog_runs_out_at_most_seeds_own_thresholds_but_not_at_the_answer(self, half, text):
        per_seed = smallest_meeting(half, "p99_s", TARGET_S)
        done = half.set_index(["seed", "reserve"])["batch_done"]
        ran_out = sum(done[s, per_seed[s]] == SC.backlog for s in SEEDS)
        assert text["half_ran_out"] == ran_out == 1
        lasts = sum(done[s, text["r_half_all"]] < SC.backlog for s in SEEDS)
        assert text["half_lasts_at_all"] == lasts == len(SEEDS)

    def test_the_days_work_queued_gives_the_same_answer(self, text):
        assert text["whole_day_backlog"] == 2 * SC.backlog
        r = text["r_half_all"]
        rerun = sweep_seeds([f"reserve:{r - 1}", f"reserve:{r}"], [7], self.HALVED.with_(backlog=2 * SC.backlog),
                            metrics=["p99_s", "batch_done"]).set_index("reserve")
        assert rerun.loc[r, "p99_s"] <= TARGET_S  # seed 7 meets the target at the answer
        assert (rerun["batch_done"] < 2 * SC.backlog).all()  # this backlog lasts the day
        assert text["whole_meet_all"] == len(SEEDS) and 0 <= text["whole_meet_below"] <= len(SEEDS)
        assert text["half_ran_out"] == 1  # "flatters 1 seed's threshold" (singular)


class TestSpreadAtTheReserve:
    """The mean held at 120 s, only the spread changed, at R = r_all: the residual life is no guide."""

    KEYS = ["const", "base", "wide", "m60", "m30"]

    @pytest.fixture(scope="class")
    @classmethod
    def runs(cls):
        """The chapter's glued runs (five spreads, ten seeds); the constant and one mix rerun on seed 3."""
        import pandas as pd

        from lanes.pool.sweep import backlog_mix

        g = glued(STEM)
        df = pd.DataFrame(g["spread_runs"], columns=["jobs", "seed", "p99_s", "clumping"])
        names = list(dict.fromkeys(df["jobs"]))
        assert len(names) == len(cls.KEYS) and sorted(set(df["seed"])) == list(SEEDS)
        at = df.set_index(["jobs", "seed"])
        r = f"reserve:{g['r_all']}"
        assert lanes.simulate(SC.with_(batch_service_s=(120, 120)), r).p99_s == at.loc[(names[0], SC.seed), "p99_s"]
        mixed = lanes.simulate(SC, r, stream=backlog_mix((60, 660), (9, 1))(SC))
        assert mixed.p99_s == at.loc[(names[3], SC.seed), "p99_s"]
        grid = pd.DataFrame(g["grid_runs"], columns=["seed", "reserve", "p99_s", "batch_done", "util"])
        base = grid[grid.reserve == g["r_all"]].set_index("seed")["p99_s"]
        assert base.tolist() == df[df["jobs"] == names[1]]["p99_s"].tolist()  # 60 to 180 s: the grid's runs
        return {k: df[df["jobs"] == n].set_index("seed") for k, n in zip(cls.KEYS, names)}

    def test_the_glued_figures(self, runs, text):
        for k in self.KEYS:
            p99 = runs[k]["p99_s"]
            assert (text[f"sp_{k}_lo_s"], text[f"sp_{k}_hi_s"]) == (p99.min(), p99.max())
            assert text[f"sp_{k}_meet"] == int((p99 <= TARGET_S).sum())
            assert text[f"sp_{k}_clump"] == pytest.approx(runs[k]["clumping"].median())

    def test_the_residual_lives(self, text):
        from lanes.pool.theory import JobClass

        assert text["sp_const_res_s"] == 60 and text["sp_base_res_s"] == 65
        assert text["sp_wide_res_s"] == pytest.approx(JobClass.uniform(0, 1, 239).residual_s)
        assert text["sp_m60_res_s"] == pytest.approx(195) and text["sp_m30_res_s"] == pytest.approx(195)

    def test_equal_lengths_are_the_worst_and_the_wide_spread_does_not_raise_the_p99(self, runs, text):
        p99 = {k: runs[k]["p99_s"] for k in self.KEYS}
        assert p99["const"].max() > max(p99[k].max() for k in self.KEYS[1:])  # "the worst"
        assert text["sp_const_meet"] < min(text[f"sp_{k}_meet"] for k in self.KEYS[1:])
        assert text["sp_base_meet"] == len(SEEDS)  # "against all 10"
        assert text["sp_wide_res_s"] > text["sp_base_res_s"]  # a longer residual life ...
        assert p99["wide"].max() <= p99["base"].max() and p99["wide"].min() <= p99["base"].min()  # "does not rise"

    def test_two_mixes_with_one_residual_life_differ(self, runs, text):
        assert text["sp_m60_hi_s"] > text["sp_m30_hi_s"] + 0.25
        assert text["sp_m60_meet"] < text["sp_m30_meet"]

    def test_equal_lengths_bunch_the_ends_of_batch_jobs(self, runs, text):
        assert text["sp_const_clump"] > 2 * text["sp_base_clump"]
        assert text["sp_const_clump"] == max(text[f"sp_{k}_clump"] for k in self.KEYS)


def test_a_backlog_of_another_size_draws_other_arrivals():
    """'a backlog of another size draws other arrivals, so these are other days'."""
    from lanes.pool.arrivals import draw_stream

    halved = SC.with_(batch_service_s=(30, 90))
    assert draw_stream(halved).arrival_tick != draw_stream(halved.with_(backlog=2 * SC.backlog)).arrival_tick
