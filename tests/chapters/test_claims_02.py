"""Chapter 2 (why priority fails): every claim of the text, computed with lanes.

Each test recomputes a claim through the functions the chapter calls and checks
that the number the chapter glues into its prose is that number.
"""

from __future__ import annotations

import pytest

import lanes
from lanes.pool import littles
from lanes.pool.sweep import SEEDS, spread, sweep_seeds
from glued_values import glued, referenced

STEM = "02_why_priority_fails"
SC = lanes.anchor()  # the chapter's base scenario, on the anchor's 1 s clock
MID = SC.ticks // 2
MEAN_BATCH_S = (SC.batch_service_s[0] + SC.batch_service_s[1]) / 2


@pytest.fixture(scope="module")
def text():
    return glued(STEM)


@pytest.fixture(scope="module")
def runs():
    return sweep_seeds(["fifo", "priority"], SEEDS, SC)


@pytest.fixture(scope="module")
def prio_runs():
    return {s: lanes.simulate(SC.with_(seed=s), "priority") for s in SEEDS}


@pytest.fixture(scope="module")
def anchor():
    return lanes.run_table(SC)


def test_every_glued_name_in_the_text_is_computed(text):
    missing = referenced(STEM) - set(text)
    assert not missing, f"the text shows values no cell glues: {sorted(missing)}"


def test_setting(text):
    assert SC.seed == 3  # the text calls the anchor draw 'seed 3'
    assert (text["backlog"], text["batch_lo_s"], text["batch_hi_s"]) == (SC.backlog, *SC.batch_service_s)
    assert text["late_after_s"] == lanes.LATE_AFTER_S == 2
    budget = littles.slot_budget(SC.slots, SC.trough_rate, SC.peak_rate, 8)
    assert (text["idle_peak"], text["idle_trough"]) == (budget.idle_peak, budget.idle_trough)


class TestMisconceptionPriorityMeansNoWait:
    def test_seed_3(self, anchor, text):
        prio, fifo = anchor["priority"], anchor["fifo"]
        assert (prio.p50_s, prio.p99_s) == (text["prio_p50_s"], text["prio_p99_s"]) == (2, 22)
        assert prio.late_fraction == pytest.approx(text["prio_late"])
        assert prio.p99_s > 10 * prio.p50_s  # the median is repaired, the tail is not
        assert text["fifo_p50_gain_s"] == prio.p50_s - fifo.p50_s < 0  # "fifo is far worse"
        assert fifo.p50_s / 3600 == pytest.approx(text["fifo_p50_h"]) and fifo.p50_s > 4 * 3600

    def test_priority_leaves_users_waiting_on_every_seed(self, runs, text):
        prio = runs[runs.policy == "priority"]
        assert (prio.p99_s.min(), prio.p99_s.max()) == (text["prio_p99_low_s"], text["prio_p99_high_s"])
        assert (prio.late_fraction.min(), prio.late_fraction.max()) == pytest.approx(
            (text["prio_late_low"], text["prio_late_high"]))
        assert (prio.p99_s > 10 * lanes.LATE_AFTER_S / 2).all()
        assert (prio.late_fraction > 0.4).all()
        assert (prio.batch_done.min(), prio.batch_done.max()) == (text["prio_done_low"], text["prio_done_high"])
        assert text["n_seeds"] == len(SEEDS) >= 10

    def test_one_runs_p99_is_given_with_an_interval_that_supports_the_conclusion(self, runs, text):
        prio = runs[runs.policy == "priority"]
        n = len(prio)
        # the lowest and highest of n seeds miss the median only if all n fall on one side of it
        assert text["seeds_confidence"] == pytest.approx(1 - 2 * 0.5**n) and n == text["n_seeds"]
        assert text["prio_p99_low_s"] <= text["prio_p99_s"] <= text["prio_p99_high_s"]
        assert text["target_s"] == lanes.LATE_AFTER_S  # the 2 s of "late"
        assert text["prio_p99_low_s"] > 5 * text["target_s"]  # "the whole interval lies far above"

    def test_fifo_makes_users_wait_hours_and_finishes_the_backlog(self, runs, text):
        fifo = runs[runs.policy == "fifo"]
        assert sorted(fifo.p50_s / 3600) == pytest.approx(sorted(text["fifo_p50_seeds_h"]))
        assert fifo.p50_s.min() > 4 * 3600
        assert (fifo.late_fraction == 1).all()
        assert (fifo.batch_done == SC.backlog).all()


class TestSlotsOverTheDay:
    def test_the_pool_is_full_at_every_tick(self, anchor, text, runs):
        for spec in ("fifo", "priority"):
            r = anchor[spec]
            assert all(i + b == SC.slots for i, b in zip(r.day.busy_interactive, r.day.busy_batch)), spec
        assert spread(runs, "util")["low"].min() == pytest.approx(text["util_low"])
        assert text["util_low"] > 0.999

    def test_interactive_swells_at_midday_and_batch_shrinks(self, anchor):
        r = anchor["priority"]
        first = slice(0, 3600)
        peak = slice(MID - 1800, MID + 1800)
        mean = lambda xs: sum(xs) / len(xs)
        assert mean(r.day.busy_interactive[peak]) > mean(r.day.busy_interactive[first]) + 10
        assert mean(r.day.busy_batch[peak]) < mean(r.day.busy_batch[first]) - 10


class TestWhenUsersWait:
    def hourly(self, run):
        return [run.window(h * 3600, (h + 1) * 3600)["p99"] for h in range(int(SC.hours))]

    def test_first_hour_median_is_over_twice_any_later_hour(self, prio_runs, text):
        import statistics

        table = [self.hourly(r) for r in prio_runs.values()]
        medians = [statistics.median(col) for col in zip(*table)]
        assert medians[0] == text["band_first_median_s"]
        assert max(medians[1:]) == text["band_later_median_max_s"]
        assert medians[0] > 2 * max(medians[1:])
        assert text["band_first_ratio"] == pytest.approx(medians[0] / max(medians[1:]))
        low = min(min(row) for row in table)
        assert low == text["band_low_min_s"] and low > 2 * lanes.LATE_AFTER_S

    def test_first_hour_against_peak_hour(self, prio_runs, text):
        first_worse = peak_later = 0
        for r in prio_runs.values():
            first, peak = r.window(0, 3600), r.window(MID - 1800, MID + 1800)
            first_worse += first["p99"] > peak["p99"]
            peak_later += peak["late"] > first["late"]
        assert (first_worse, peak_later) == (text["first_worse"], text["peak_later"])
        assert first_worse >= len(SEEDS) - 1 and peak_later == len(SEEDS)
        # "around the peak, more users compete"
        assert text["peak_minus_trough_rate"] == SC.peak_rate - SC.trough_rate > 0

    def test_batch_holds_almost_every_slot_at_the_start(self, anchor, text):
        r = anchor["priority"]
        assert r.day.busy_batch[0] == text["batch_at_start"] and r.day.busy_batch[0] >= SC.slots - 5
        assert r.day.batch_done_by(SC.batch_service_s[0]) == 0  # nothing ends before the shortest job
        assert text["slots"] == SC.slots


class TestTheTrickle:
    def test_littles_law_for_batch_completions_in_the_peak_hour(self, anchor, text):
        r = anchor["priority"]
        batch_at_peak = sum(r.day.busy_batch[MID - 1800 : MID + 1800]) / 3600
        gap = littles.batch_trickle_interval_s(MEAN_BATCH_S, batch_at_peak)
        assert gap == pytest.approx(MEAN_BATCH_S / batch_at_peak)
        simulated = r.day.batch_done_by(MID + 1800) - r.day.batch_done_by(MID - 1800)
        assert (text["batch_at_peak"], text["gap_s"]) == pytest.approx((batch_at_peak, gap))
        assert text["done_simulated"] == simulated
        assert text["done_estimate"] == pytest.approx(3600 / gap)
        assert abs(simulated - 3600 / gap) / simulated < 0.02  # "agree closely"
        assert text["ten_gaps_s"] == pytest.approx(10 * gap) and 20 < 10 * gap < 90
        assert text["mean_batch_s"] == MEAN_BATCH_S


class TestReferenceTable:
    def test_free_strip_only_with_headroom(self, anchor):
        assert anchor["fifo"].util == anchor["priority"].util == 1.0
        free = {spec: 1 - anchor[spec].util for spec in ("reserve:16", "hybrid:8")}
        assert 0 < free["hybrid:8"] < free["reserve:16"]
        assert anchor["hybrid:8"].preempted > 0 and anchor["reserve:16"].preempted == 0


class TestOneSlotInClosedForm:
    """One slot, strict priority, a backlog that never runs out: Cobham's formula against the simulator."""

    ONE = SC.with_(slots=1, trough_rate=0.05, peak_rate=0.05, hours=24)

    @pytest.fixture(scope="class")
    @classmethod
    def waits(cls):
        out = {}
        for s in (cls.ONE, cls.ONE.with_(batch_service_s=(15, 45))):
            out[s.batch_service_s] = [lanes.simulate(s.with_(seed=k), "priority").day.waits_frame()["wait_s"].mean()
                                      for k in SEEDS]
        return out

    def test_the_backlog_never_runs_out_in_the_window(self):
        assert self.ONE.backlog * MEAN_BATCH_S > 10 * self.ONE.ticks
        assert (self.ONE.hours, self.ONE.peak_rate, self.ONE.trough_rate) == (24, 0.05, 0.05)

    def test_mean_residual_is_65_s_not_half_the_mean(self, text):
        from lanes.pool.theory import JobClass

        assert text["one_residual_s"] == JobClass.uniform(0, *SC.batch_service_s).residual_s == 65
        assert text["one_residual_short_s"] == 65 / 4
        assert text["one_residual_change_s"] == 65 / 4 - 65  # "the residual falls to a quarter"
        assert text["mean_batch_s"] / 2 < text["one_residual_s"]

    def test_cobham_lies_inside_the_simulated_range_for_both_job_lengths(self, waits, text):
        from lanes.pool import theory

        users = theory.JobClass.uniform(0.05, *SC.inter_service_s)
        for lengths, key in (((60, 180), ""), ((15, 45), "_short")):
            formula = theory.priority_wait_with_backlog_s(users, theory.JobClass.uniform(0, *lengths))
            sim = waits[lengths]
            assert text[f"one_formula{key}_s"] == pytest.approx(formula)
            assert (text[f"one_sim{key}_lo_s"], text[f"one_sim{key}_hi_s"]) == pytest.approx((min(sim), max(sim)))
            assert min(sim) <= formula <= max(sim) * 1.01  # the 1 s tick rounds waits a little down
        assert text["one_formula_short_s"] < text["one_formula_s"] / 3
        # "{{one_residual_share}} of it is the batch job's mean residual life": most of it
        assert text["one_residual_share"] == pytest.approx(text["one_residual_s"] / text["one_formula_s"])
        assert text["one_residual_share"] > 0.5

    def test_preemptive_resume_leaves_users_their_own_wait_only(self, text):
        from lanes.pool import theory

        users = theory.JobClass.uniform(0.05, *SC.inter_service_s)
        assert text["one_users_load"] == pytest.approx(0.4)
        assert text["one_alone_s"] == pytest.approx(theory.mg1_wait_s([users]))
        assert text["one_alone_s"] < text["one_formula_short_s"] / 5


class TestManySlotsSpread:
    """The pool of many slots, the mean length held at 120 s: the spread does not lengthen the wait."""

    KEYS = ["const", "base", "wide", "m60", "m30"]

    @pytest.fixture(scope="class")
    @classmethod
    def runs(cls):
        """The chapter's glued runs (five spreads, ten seeds), two spreads rerun on seed 3."""
        import pandas as pd

        from lanes.pool.sweep import backlog_mix

        df = pd.DataFrame(glued(STEM)["spread_runs"], columns=["jobs", "seed", "p99_s"])
        names = list(dict.fromkeys(df["jobs"]))
        assert len(names) == len(cls.KEYS) and sorted(set(df["seed"])) == list(SEEDS)
        p99 = df.set_index(["jobs", "seed"])["p99_s"]
        const = lanes.simulate(SC.with_(batch_service_s=(120, 120)), "priority")
        assert const.p99_s == p99[names[0], SC.seed]
        mixed = lanes.simulate(SC, "priority", stream=backlog_mix((30, 480), (4, 1))(SC))
        assert mixed.p99_s == p99[names[4], SC.seed]
        assert p99[names[1], SC.seed] == text_value("prio_p99_s")  # 60 to 180 s is the chapter's own run
        return {k: df[df["jobs"] == n].set_index("seed")["p99_s"] for k, n in zip(cls.KEYS, names)}

    def test_the_glued_ranges(self, runs, text):
        for k in self.KEYS:
            assert (text[f"sp_{k}_lo_s"], text[f"sp_{k}_hi_s"]) == (runs[k].min(), runs[k].max())

    def test_the_mean_is_held_and_the_residual_lives(self, text):
        from lanes.pool.theory import JobClass

        assert text["sp_const_res_s"] == JobClass.fixed(0, 120).residual_s == 60
        assert text["sp_base_res_s"] == JobClass.uniform(0, 60, 180).residual_s == 65
        assert text["sp_wide_res_s"] == pytest.approx(JobClass.uniform(0, 1, 239).residual_s)
        assert 79 < text["sp_wide_res_s"] < 80
        assert 0.9 * 60 + 0.1 * 660 == 0.8 * 30 + 0.2 * 480 == 120 == text["mean_batch_s"]  # one mean
        assert text["sp_m60_res_s"] == pytest.approx((0.9 * 60**2 + 0.1 * 660**2) / 240) == pytest.approx(195)
        assert text["sp_m30_res_s"] == pytest.approx(text["sp_m60_res_s"])  # "share ... their residual life"

    def test_equal_lengths_are_the_worst_and_a_wider_spread_lowers_the_p99(self, runs, text):
        assert runs["const"].min() > max(runs[k].max() for k in self.KEYS[1:])  # "the worst"
        assert text["sp_wide_res_s"] > text["sp_base_res_s"]  # a longer residual life ...
        assert (runs["wide"] < runs["base"]).all()  # ... and yet a lower p99, on every seed
        assert text["sp_const_lo_s"] > text["sp_wide_hi_s"]  # "equal lengths ... are worse than a wide spread"

    def test_two_mixes_with_one_residual_life_differ(self, runs):
        assert runs["m30"].max() < runs["m60"].min()


def text_value(name):
    return glued(STEM)[name]
