"""Chapter 1 (slots and Little's law): every claim of the text, computed with lanes.

Each test recomputes a claim through the same functions the chapter calls and
checks that the number the chapter glues into its prose is that number.
"""

from __future__ import annotations

from collections import Counter

import pytest

import lanes
from lanes.display.pool import plots
from lanes.pool import littles
from lanes.pool.sweep import SEEDS
from glued_values import glued, notebook, referenced

STEM = "01_slots_and_littles_law"
SC = lanes.anchor()  # the chapter's base scenario, on the anchor's 1 s clock
HOLD_S = (SC.inter_service_s[0] + SC.inter_service_s[1]) / 2
MID = SC.ticks // 2


@pytest.fixture(scope="module")
def text():
    return glued(STEM)


@pytest.fixture(scope="module")
def free_runs():
    """The pool with no batch work, on each of the ten seeds."""
    return {s: lanes.simulate(SC.with_(backlog=0, seed=s), "priority") for s in SEEDS}


def peak_hour(run):
    return run.day.busy_interactive[MID - 1800 : MID + 1800]


def test_every_glued_name_in_the_text_is_computed(text):
    missing = referenced(STEM) - set(text)
    assert not missing, f"the text shows values no cell glues: {sorted(missing)}"


def test_the_prose_under_the_first_reveal_does_not_state_its_answer(text):
    """The markdown right after the busy-at-peak reveal is on the same screen as the question."""
    import re

    cells = notebook(STEM)["cells"]
    ask = next(k for k, c in enumerate(cells) if "my_guess_busy_at_peak = None" in "".join(c["source"]))
    assert "hide-output" in cells[ask + 1]["metadata"].get("tags", [])
    after = "".join(next(c for c in cells[ask + 2:] if c["cell_type"] == "markdown")["source"])
    for name in ("busy_peak", "busy_trough", "idle_peak", "idle_trough"):
        assert not re.search(rf"(?<![\d.]){text[name]:g}(?![\d.])", after), name


def test_ten_seeds_are_used():
    assert len(SEEDS) >= 10


class TestLittlesLaw:
    def test_busy_and_idle_slots_at_trough_and_peak(self, text):
        assert HOLD_S == 8
        busy_peak, busy_trough = SC.peak_rate * HOLD_S, SC.trough_rate * HOLD_S
        budget = littles.slot_budget(SC.slots, SC.trough_rate, SC.peak_rate, HOLD_S)
        assert (budget.busy_peak, budget.busy_trough) == (busy_peak, busy_trough) == (40, 16)
        assert (budget.idle_peak, budget.idle_trough) == (24, 48)
        assert (text["busy_peak"], text["busy_trough"]) == (40, 16)
        assert (text["idle_peak"], text["idle_trough"]) == (24, 48)
        # "fewer slots at midday and many more in the quiet hours"
        assert text["idle_peak_vs_trough"] == -text["idle_trough_vs_peak"] == 24 - 48
        assert (text["slots"], text["hold_s"], text["peak_rate"], text["trough_rate"]) == (64, 8, 5, 2)

    def test_holding_times_are_uniform_not_exponential(self, free_runs):
        counts = Counter(free_runs[SC.seed].day.wait_service_s)
        lo, hi = SC.inter_service_s
        assert set(counts) == set(range(lo, hi + 1))
        mean = sum(counts.values()) / len(counts)
        assert all(abs(c - mean) / mean < 0.05 for c in counts.values())

    def test_simulator_follows_the_law_bin_by_bin(self, free_runs, text):
        run = free_runs[SC.seed]
        measured = plots.binned(run.day.busy_interactive, 300)
        predicted = [lam * HOLD_S for lam in plots.binned(plots.rate_curve(SC), 300)]
        gap = max(abs(m - p) for m, p in zip(measured, predicted))
        assert gap == pytest.approx(text["bin_gap_max"])
        assert gap < 3  # small next to a curve that climbs from 16 to 40
        top = max(range(len(predicted)), key=predicted.__getitem__)
        rise, fall = measured[top] - measured[0], measured[-1] - measured[top]
        assert (rise, fall) == pytest.approx((text["busy_rise"], text["busy_fall"]))
        assert rise > 10 and fall < -10  # "they rise ... and fall back"
        assert text["n_arrivals"] == run.n_arrivals

    def test_hour_by_hour_the_two_sides_differ_a_little(self, free_runs):
        run = free_runs[SC.seed]
        for hour in range(int(SC.hours)):
            served = [s for s, a in zip(run.day.wait_service_s, run.day.wait_arrival_tick) if a // 3600 == hour]
            lam_w = len(served) / 3600 * (sum(served) / len(served))
            measured = sum(run.day.busy_interactive[hour * 3600 : (hour + 1) * 3600]) / 3600
            assert abs(lam_w - measured) < 0.1

    def test_the_law_holds_on_all_ten_seeds(self, free_runs, text):
        gaps, means = [], []
        for run in free_runs.values():
            lam = run.n_arrivals / SC.ticks
            w = sum(run.day.wait_service_s) / run.n_interactive
            gaps.append(abs(lam * w - run.day.mean_busy_interactive))
            means.append(run.day.mean_busy_interactive)
        assert max(gaps) == pytest.approx(text["law_gap_max"]) and max(gaps) < 0.01
        assert (min(means), max(means)) == pytest.approx((text["law_L_low"], text["law_L_high"]))
        assert max(means) - min(means) > 10 * max(gaps)  # draws differ far more than the law's error


class TestBursts:
    def test_standard_deviation_at_the_peak(self, text):
        assert text["sd_peak"] == pytest.approx(40 ** 0.5)

    def test_poisson_chance_of_a_burst_to_50(self, text):
        p = littles.poisson_tail(40, 50)
        assert p == pytest.approx(text["p_burst"]) and round(p, 3) == 0.070
        assert text["burst_level"] == 50

    def test_simulated_peak_hours_a_little_below_the_model_and_never_free_of_bursts(self, free_runs, text):
        shares = [sum(b >= 50 for b in peak_hour(r)) / 3600 for r in free_runs.values()]
        assert (min(shares), max(shares)) == pytest.approx((text["burst_share_low"], text["burst_share_high"]))
        assert all(0 < s < text["p_burst"] for s in shares)
        assert text["burst_share_vs_model"] == pytest.approx(max(shares) - text["p_burst"])
        assert -0.01 < text["burst_share_vs_model"] < 0  # "a little less than the model"


class TestMisconceptionAverageIsNotAGuarantee:
    def test_busiest_second_on_every_seed(self, free_runs, text):
        busiest = [max(peak_hour(r)) for r in free_runs.values()]
        assert min(busiest) == text["peak_max_low"]
        assert min(busiest) > 40 + 15  # far above the mean on every seed

    def test_interactive_alone_fills_the_pool_on_some_seeds(self, free_runs, text):
        full = sum(max(peak_hour(r)) == SC.slots for r in free_runs.values())
        waited = sum(r.max_s > 0 for r in free_runs.values())
        assert full == text["seeds_full"] and full >= 1
        assert waited == text["seeds_wait"] and waited >= 1
        assert text["n_seeds"] == len(SEEDS)

    def test_one_peak_hour_second_by_second(self, free_runs, text):
        hour = peak_hour(free_runs[SC.seed])
        assert (min(hour), max(hour)) == (text["hour_low"], text["hour_high"])
        assert min(hour) < 40 - 10 and max(hour) >= SC.slots - 5


class TestPeakRateTable:
    def test_demand_above_the_pool(self, text):
        p5 = littles.poisson_tail(littles.busy_slots(5, HOLD_S), SC.slots + 1)
        p6 = littles.poisson_tail(littles.busy_slots(6, HOLD_S), SC.slots + 1)
        assert (p5, p6) == pytest.approx((text["p_over_5"], text["p_over_6"]))
        assert p6 > 10 * p5
        assert text["p_over_6_vs_5"] == pytest.approx(p6 - p5) and p6 - p5 > 0  # "it rises to"
        assert text["idle_at_6"] == SC.slots - 6 * HOLD_S == 16


class TestErlangC:
    """P(wait) at the peak from Erlang C, and the sqrt(L) growth of the spare slots."""

    def test_p_wait_at_five_and_six_per_second(self, text):
        from lanes.pool import erlang

        sc = lanes.anchor()
        hold = sum(sc.inter_service_s) / 2
        assert text["pwait_5"] == pytest.approx(erlang.erlang_c(sc.slots, 5.0 * hold))
        assert text["pwait_6"] == pytest.approx(erlang.erlang_c(sc.slots, 6.0 * hold))
        # a queue makes waiting likelier than demand exceeding the pool
        assert text["pwait_5"] > text["p_over_5"] and text["pwait_6"] > text["p_over_6"]
        assert text["pwait_ratio_6_off"] == pytest.approx(text["pwait_6"] / text["p_over_6"])

    def test_like_for_like_tail_is_all_slots_busy_not_one_more(self, text):
        """An arrival waits when it finds N >= slots; 'demand > pool' is N >= slots + 1."""
        from lanes.pool import erlang

        L6 = 6.0 * HOLD_S
        full = littles.poisson_tail(L6, SC.slots)
        assert text["p_full_6"] == pytest.approx(full) and round(full, 4) == 0.0156
        assert text["p_over_6"] == pytest.approx(littles.poisson_tail(L6, SC.slots + 1))
        assert text["p_over_6"] < full
        ratio = erlang.erlang_c(SC.slots, L6) / full
        assert text["pwait_ratio_6"] == pytest.approx(ratio) and 1 < ratio < 1.2
        # most of the naive 1.6x is the off-by-one: the remainder is under a quarter of it
        assert ratio - 1 < (text["pwait_ratio_6_off"] - 1) / 4
        off = text["pwait_ratio_6_off"]
        assert text["pwait_gap_offbyone"] == pytest.approx((off - ratio) / (off - 1))
        assert text["pwait_gap_offbyone"] > 0.5  # the off-by-one makes most of the gap

    def test_slots_for_one_percent_and_the_sqrt_rule(self, text):
        from lanes.pool import erlang

        L = text["busy_peak"]
        c = erlang.servers_for_wait(L, text["wait_target"])
        assert text["slots_1pct"] == c and erlang.erlang_c(c, L) <= 0.01 < erlang.erlang_c(c - 1, L)
        assert text["spare_1pct"] == c - L
        assert text["sqrt_peak_spare"] == pytest.approx((c - L) / L ** 0.5)
        # the same target at four times the load needs far less than four times the spare slots
        assert erlang.servers_for_wait(4 * L, 0.01) - 4 * L < 2.2 * (c - L)


class TestErlangB:
    """The chance that the pool is full when what cannot start is turned away, beside Erlang C."""

    def test_p_full_at_six_per_second_from_erlang_b(self, text):
        from lanes.pool import erlang

        L6 = 6.0 * HOLD_S
        b, c = erlang.erlang_b(SC.slots, L6), erlang.erlang_c(SC.slots, L6)
        assert text["pblock_6"] == pytest.approx(b) and round(b, 4) == 0.0045
        assert text["pwait_over_block_6"] == pytest.approx(c / b) and round(c / b, 1) == 3.9
        assert c == pytest.approx(SC.slots * b / (SC.slots - L6 * (1 - b)))  # C from B
        # a loss system is full less often than the infinite pool has every slot busy
        assert b < text["p_full_6"] < c

    def test_the_table_shows_it_beside_erlang_c_and_the_prose_says_when_each_applies(self):
        from scripts import prose_tools as prose

        nb = notebook(STEM)
        table = next(c for c in nb["cells"] if c["cell_type"] == "code"
                     and "erlang.erlang_c(sc.slots, L_peak)" in "".join(c["source"]))
        assert '"P(full), Erlang B": erlang.erlang_b(sc.slots, L_peak)' in "".join(table["source"])
        template = next(t for _, t, _ in prose.templated_cells(nb) if "{{pblock_6" in t)
        flat = " ".join(template.split())
        assert "Erlang B applies when what cannot start is turned away" in flat
        assert "Erlang C applies when what cannot start waits" in flat
        assert "*insensitive*" in flat
        # the paragraph names the column of the Poisson chance it compares with, not "the last column"
        assert "The column `P(demand > pool)` is the Poisson chance" in flat
        assert "the last column" not in flat.replace("(`lanes.pool.erlang.erlang_b(slots, L)`, the last column)", "")
