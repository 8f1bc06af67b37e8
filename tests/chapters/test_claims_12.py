"""Chapter 12 (real traffic): every claim of the text, computed with lanes.

Each test recomputes a claim through the functions the chapter calls and checks
that the number the chapter glues into its prose is that number, then checks
the statement the prose makes about it.
"""

from __future__ import annotations

import math
import statistics

import pytest

import lanes

from lanes.gpu import replay
from lanes.pool import traces
from glued_values import glued, referenced

STEM = "12_real_traffic"
TARGET_S = 2
BASE = lanes.Scenario()  # the anchor pool and backlog, scheduled at every step, as the chapter replays them
COARSE = lanes.anchor()  # the same on the anchor program's 1 s tick (the chapter's last section)
SEEDS = range(1, 7)  # the chapter's resampled hours and Poisson copies
SPOT = (1, 2)  # the seeds whose hours are rescanned here
SLOTS = 64  # the anchor pool the chapter replays into


@pytest.fixture(scope="module")
def text():
    return glued(STEM)


@pytest.fixture(scope="module")
def hours():
    conv, code = traces.load_trace("conv"), traces.load_trace("code")
    return {"conv": conv, "code": code, "conv_p": conv.as_poisson(1), "code_p": code.as_poisson(1)}


@pytest.fixture(scope="module")
def inputs(hours):
    return {k: replay.replay_inputs(t, BASE) for k, t in hours.items()}


@pytest.fixture(scope="module")
def over(hours, text):
    """Smallest R on every resampled hour and Poisson copy, by (hour, kind): the chapter's
    glued values, after the hours of the spot seeds are rescanned here."""
    out = {}
    for name in ("conv", "code"):
        t = hours[name]
        for kind, make in (("rs", t.resample), ("ps", t.as_poisson)):
            out[name, kind] = text[f"{name}_{kind}_r_seeds"]
            assert len(out[name, kind]) == len(SEEDS)
            for s in SPOT:
                assert replay.smallest_reserve(make(s), TARGET_S, BASE) == out[name, kind][SEEDS.index(s)], (name, kind, s)
    return out


def test_every_glued_name_in_the_text_is_computed(text):
    missing = referenced(STEM) - set(text)
    assert not missing, f"the text shows values no cell glues: {sorted(missing)}"


def test_the_hours_and_the_target(text, hours):
    assert text["target_s"] == TARGET_S
    for name in ("conv", "code"):
        assert text[f"{name}_n"] == hours[name].n_requests
        assert text[f"{name}_rate"] == pytest.approx(hours[name].rate_per_s)


class TestBurstiness:
    def test_ratios_are_the_traces(self, text, hours):
        for key, t in hours.items():
            assert text[f"{key}_vmr_s"] == pytest.approx(t.dispersion(1))
            assert text[f"{key}_vmr_min"] == pytest.approx(t.dispersion(60))
            assert text[f"{key}_peak_s"] == max(t.counts(1))

    def test_conversation_close_to_poisson_per_second_but_drifting_per_minute(self, text, hours):
        assert text["conv_vmr_s"] < 1.6
        # "by more than any Poisson stream of one fixed rate would": no copy comes near
        copies = [hours["conv"].as_poisson(s).dispersion(60) for s in SEEDS]
        assert text["conv_vmr_min"] > 5 * max(copies)

    def test_coding_hour_bursty_at_both_scales(self, text, hours):
        assert text["code_vmr_s"] > 10 and text["code_vmr_min"] > 100
        assert hours["code"].rate_per_s < 3  # "a mean under three per second"
        assert text["code_peak_s"] > 5 * text["code_p_peak_s"]
        # the copy shown never exceeds the count quoted; nor do the others by much
        assert max(max(hours["code"].as_poisson(s).counts(1)) for s in SEEDS) < text["code_peak_s"] / 3


class TestTails:
    def test_token_figures(self, text, hours):
        for name in ("conv", "code"):
            s = hours[name].summary()
            for k in ("prompt_p50", "prompt_p99", "output_p50", "output_p99", "output_max"):
                assert text[f"{name}_{k}"] == s[k]
            assert text[f"{name}_output_mean"] == pytest.approx(statistics.mean(hours[name].output_tokens))

    def test_median_below_mean_and_the_coding_hour_more_extreme(self, text):
        for name in ("conv", "code"):
            assert text[f"{name}_output_p50"] < text[f"{name}_output_mean"]
        assert text["code_output_p50"] < text["conv_output_p50"]
        assert text["code_output_max"] > text["conv_output_max"]
        assert text["code_top_share"] > text["conv_top_share"]

    def test_top_share(self, text, hours):
        for name in ("conv", "code"):
            s = sorted(hours[name].output_tokens, reverse=True)
            assert text[f"{name}_top_share"] == pytest.approx(sum(s[: round(0.1 * len(s))]) / sum(s))
        assert text["code_top_share"] > 0.4  # "the longest 10% carry" close to half


class TestLittlesLaw:
    def test_holds_and_l(self, text, hours, inputs):
        for name in ("conv", "code"):
            scenario, stream = inputs[name]
            holds = replay.hold_times_s(hours[name], batch=SLOTS)
            assert stream.inter_service_s == tuple(holds)  # the priced holds, not rounded up
            hold = statistics.mean(holds)
            assert text[f"{name}_hold_s"] == pytest.approx(hold)
            assert text[f"{name}_sub_s"] == pytest.approx(sum(h < 1 for h in holds) / len(holds))
            assert text[f"{name}_L"] == pytest.approx(hours[name].rate_per_s * hold)
            busy = replay.zero_wait_load(stream).mean_busy
            assert text[f"{name}_busy_mean"] == pytest.approx(busy)
            assert busy == pytest.approx(text[f"{name}_L"], rel=0.01)
            assert text[f"{name}_step_ms"] == pytest.approx(
                1000 * replay.hold_profile(hours[name], batch=SLOTS).decode_step_s)
        # "a fraction of a second": the coding hold, rounded to whole seconds, was 1.12 s
        assert text["code_hold_s"] < 0.5 and text["code_sub_s"] > 0.9  # "coding requests are quick"

    def test_the_busy_count_is_an_identity_not_a_test(self, inputs):
        """With no waiting the busy count is built from arrival and hold: its slot time is
        every hold cut at the hour's end, exactly; only the holds still running differ from
        rate x mean hold."""
        for name in ("conv", "code"):
            scenario, stream = inputs[name]
            end = scenario.ticks
            counted = sum(replay.zero_wait_load(stream).mean)
            at = [t + u for t, u in zip(stream.arrival_tick, stream.offsets_s)]  # each request's instant
            built = sum(min(a + h, end) - a for a, h in zip(at, stream.inter_service_s))
            assert counted == pytest.approx(built, rel=1e-9)
            assert 0 <= sum(stream.inter_service_s) - counted < 0.01 * counted

    def test_the_prose_calls_it_an_identity(self):
        from scripts import prose_tools as prose

        from glued_values import notebook

        text = [t for _, t, _ in prose.templated_cells(notebook(STEM)) if "{{conv_busy_mean" in t]
        assert len(text) == 1 and "identity, not a test" in text[0]
        assert "Little's law holds on the real hour" not in text[0]

    def test_short_outputs_hold_briefly_but_peak_high(self, text, inputs):
        assert text["code_hold_s"] < text["conv_hold_s"] and text["code_L"] < text["conv_L"]
        for key in ("conv", "code", "conv_p", "code_p"):
            scenario, stream = inputs[key]
            assert text[f"{key}_busy_max"] == replay.zero_wait_load(stream).peak
        # "more than the conversation hour ever holds", with a tenth of its mean load
        assert text["code_over_conv_peak"] == text["code_busy_max"] - text["conv_busy_max"] > 0
        assert text["code_L"] < text["conv_L"] / 10
        assert text["code_busy_max"] > 4 * text["code_p_busy_max"]
        assert text["code_busy_max"] > 20 * text["code_L"]  # "the mean does not size a pool"
        # the conversation hour and its copy reach similar heights
        assert 0.7 < text["conv_busy_max"] / text["conv_p_busy_max"] < 1.3


class TestHeadroom:
    def test_smallest_r(self, text, hours):
        for key in ("conv", "conv_p", "code", "code_p"):
            r = replay.smallest_reserve(hours[key], TARGET_S, BASE)
            assert text[f"r_{key}"] == r
            assert replay.replay(hours[key], f"reserve:{r}", BASE).p99_s <= TARGET_S
            if r:
                assert replay.replay(hours[key], f"reserve:{r - 1}", BASE).p99_s > TARGET_S

    def test_poisson_reserves_a_fraction_for_the_coding_hour(self, text):
        assert text["r_code"] > 4 * text["r_code_p"]

    def test_the_conversation_hour_goes_the_other_way(self, text):
        assert text["conv_copy_over_real"] == text["r_conv_p"] - text["r_conv"] > 0


class TestOverResampledHours:
    def test_ranges_are_the_runs(self, text, over):
        assert text["n_resamples"] == len(SEEDS)
        for (name, kind), rs in over.items():
            assert None not in rs
            assert text[f"{name}_{kind}_r_min"] == min(rs) and text[f"{name}_{kind}_r_max"] == max(rs)
        for kind in ("rs", "ps"):
            assert text[f"conv_{kind}_r_median"] == statistics.median(over["conv", kind])

    def test_conversation_copies_err_on_the_generous_side(self, over):
        rs, ps = over["conv", "rs"], over["conv", "ps"]
        assert statistics.median(ps) > statistics.median(rs)
        assert min(ps) >= max(rs)  # the dots of the figure: copies at or to the right

    def test_every_resampled_coding_hour_needs_more_than_any_poisson_copy(self, over, hours):
        assert min(over["code", "rs"]) > max(over["code", "ps"])
        # and on resamples the chapter does not show
        code = hours["code"]
        more = [replay.smallest_reserve(code.resample(s), TARGET_S, BASE) for s in (20, 21)]
        assert min(more) > max(over["code", "ps"])

    def test_the_coding_hour_needs_far_more_headroom_for_its_load(self, text, over):
        # "far more headroom for its load": the coding hour reserves more slots per busy slot
        assert text["r_code"] / text["code_L"] > 3 * text["r_conv"] / text["conv_L"]
        for s in range(len(SEEDS)):
            assert over["code", "rs"][s] / text["code_L"] > 3 * over["conv", "rs"][s] / text["conv_L"]


class TestPeakednessGuess:
    """Square-root staffing with the per-second ratio as peakedness, before the sweep."""

    @staticmethod
    def rule(t, z):
        from lanes.pool import theory

        load = t.rate_per_s * statistics.mean(replay.hold_times_s(t, batch=SLOTS))
        return math.ceil(theory.peaked_sqrt_staffing(load, z, 0.01) - load)

    def test_the_guesses_are_the_formula(self, text, hours):
        assert text["p_wait"] == 0.01
        for key, t in hours.items():
            assert text[f"guess_{key}"] == self.rule(t, t.dispersion(1))
            assert text[f"plain_{key}"] == self.rule(t, 1)

    def test_close_on_the_coding_hour_far_off_on_the_conversation_copy(self, text):
        assert text["plain_code"] < text["guess_code"]  # the ratio takes the guess up
        assert abs(text["guess_code"] - text["r_code"]) <= 1
        assert abs(text["guess_code_p"] - text["r_code_p"]) <= 1
        assert text["r_conv_p"] - text["guess_conv_p"] > 3  # "says nothing of what makes that copy hard"

    def test_hour_by_hour(self, text, hours, over):
        for name in ("conv", "code"):
            t = hours[name]
            for kind, make in (("rs", t.resample), ("ps", t.as_poisson)):
                rules = [self.rule(h, h.dispersion(1)) for h in map(make, SEEDS)]
                assert text[f"{name}_{kind}_guesses"] == rules
                assert text[f"{name}_{kind}_miss"] == [r - g for r, g in zip(over[name, kind], rules)]
        code_miss = text["code_rs_miss"] + text["code_ps_miss"]
        assert sorted(text["code_miss_abs"]) == sorted(abs(m) for m in code_miss)
        assert max(text["code_miss_abs"]) <= 3  # "within a few slots"
        assert text["conv_ps_miss_low"] == min(text["conv_ps_miss"]) > 3

    def test_the_conversation_copy_swings_slowly(self, text, hours, inputs):
        for key in ("conv", "conv_p"):
            t, (_, stream) = hours[key], inputs[key]
            whole = int(t.span_s // 60)
            n, work = [0] * whole, [0.0] * whole
            for a, h in zip(t.arrival_s, stream.inter_service_s):
                if int(a // 60) < whole:
                    n[int(a // 60)] += 1
                    work[int(a // 60)] += h
            mean_hold = [w / k for w, k in zip(work, n)]
            assert text[f"{key}_minute_corr"] == pytest.approx(statistics.correlation(n, mean_hold))
            assert text[f"{key}_minute_sd"] == pytest.approx(statistics.stdev(w / 60 for w in work))
        assert text["conv_minute_corr"] < -0.5 and abs(text["conv_p_minute_corr"]) < 0.2
        assert text["conv_p_minute_sd"] > 1.5 * text["conv_minute_sd"]


class TestPolicies:
    @pytest.fixture(scope="class")
    @classmethod
    def tables(cls, text):
        pols = ("priority", f"reserve:{text['r_code']}", f"reserve:{text['r_conv']}", "preempt", "hybrid:8")
        return {n: {r.policy.spec: r for r in replay.trace_table(n, BASE, policies=pols).results} for n in ("conv", "code")}

    def test_priority_leaves_users_waiting_on_both(self, text, tables):
        assert text["conv_priority_p99_s"] == tables["conv"]["priority"].p99_s > TARGET_S
        assert text["code_priority_p99_s"] == tables["code"]["priority"].p99_s > TARGET_S

    def test_the_reserve_beats_pure_preemption_on_the_coding_hour(self, text, tables):
        reserve = tables["code"][f"reserve:{text['r_code']}"]
        pre = tables["code"]["preempt"]
        assert text["code_reserve_batch"] == reserve.batch_done
        assert text["code_preempt_batch"] == pre.batch_done
        assert text["code_preempt_p99_s"] == pre.p99_s <= TARGET_S
        assert reserve.batch_done > 1.5 * pre.batch_done  # it was the other way on the 1 s tick
        # "evicts a batch job for all but ... of the arrivals": nearly every one
        assert text["code_preempt_spared"] == pre.n_arrivals - pre.preempted < 0.01 * pre.n_arrivals
        assert text["code_n"] == pre.n_arrivals
        assert text["cost_s"] == BASE.preempt_cost_s

    def test_hybrid_keeps_the_wait_at_zero_and_most_of_the_batch(self, text, tables):
        hyb, pre = tables["code"]["hybrid:8"], tables["code"]["preempt"]
        reserve = tables["code"][f"reserve:{text['r_code']}"]
        assert text["code_hybrid_batch"] == hyb.batch_done and text["code_hybrid_p99_s"] == hyb.p99_s == 0
        assert text["code_hybrid_evicted"] == hyb.preempted < 0.1 * hyb.n_arrivals  # "the reserve takes the rest"
        assert hyb.batch_done > 2 * pre.batch_done and hyb.batch_done > 0.95 * reserve.batch_done

    def test_the_conversation_hour(self, text, tables):
        pre, reserve = tables["conv"]["preempt"], tables["conv"][f"reserve:{text['r_conv']}"]
        assert text["conv_preempt_batch"] == pre.batch_done
        assert text["conv_reserve_batch"] == reserve.batch_done > pre.batch_done
        assert reserve.p99_s <= TARGET_S  # "the reserve that meets the target there"

    def test_on_every_resampled_coding_hour(self, text, hours):
        gaps = text["duel_gaps"]
        assert len(gaps) == len(SEEDS) and text["duel_gap_min"] == min(gaps) > 0
        code = hours["code"]
        for s in SPOT:
            hour = code.resample(s)
            r = replay.smallest_reserve(hour, TARGET_S, BASE)
            runs = {x.policy.kind: x for x in replay.trace_table(hour, BASE, policies=(f"reserve:{r}", "preempt")).results}
            assert gaps[SEEDS.index(s)] == runs["reserve"].batch_done - runs["preempt"].batch_done


class TestTheOneSecondTick:
    @pytest.fixture(scope="class")
    @classmethod
    def models(cls, hours):
        from lanes.pool.sweep import scan_reserve

        fine = replay.replay_inputs(hours["code"], BASE)
        sc, st = replay.replay_inputs(hours["code"], COARSE)
        out = {}
        for key, (scenario, stream) in (("real", fine), ("whole", (sc.with_(tick_s=0), st)), ("tick", (sc, st))):
            r = scan_reserve(scenario, lambda run: 0 <= run.p99_s <= TARGET_S, stream=stream)[0]
            out[key] = (statistics.mean(stream.inter_service_s), r, lanes.simulate(scenario, f"reserve:{r}", stream=stream),
                        lanes.simulate(scenario, "preempt", stream=stream))
        return out

    def test_the_table_is_the_runs(self, text, models):
        for key, (hold, r, reserve, pre) in models.items():
            assert text[f"{key}_hold_s"] == pytest.approx(hold)
            assert text[f"{key}_r"] == r
            assert text[f"{key}_reserve_batch"] == reserve.batch_done
            assert text[f"{key}_preempt_batch"] == pre.batch_done
            assert text[f"{key}_evicting"] == pytest.approx(pre.preempted / pre.n_arrivals)
            assert text[f"{key}_preempt_gain"] == pre.batch_done - reserve.batch_done

    def test_rounding_inflates_the_headroom_on_either_clock(self, text):
        assert text["real_r"] == text["r_code"] and text["real_hold_s"] == pytest.approx(text["code_hold_s"])
        assert text["whole_hold_s"] > 2 * text["real_hold_s"]
        assert text["whole_r"] == text["tick_r"] > 3 * text["real_r"]

    def test_the_tick_flatters_preemption(self, text):
        assert text["real_preempt_gain"] < 0 and text["whole_preempt_gain"] < 0 < text["tick_preempt_gain"]
        assert text["tick_evicting"] < 0.5 < 0.9 < text["whole_evicting"]  # "far less often"


def test_the_chapter_credits_the_data():
    from glued_values import notebook

    prose = "\n".join("".join(c["source"]) for c in notebook(STEM)["cells"] if c["cell_type"] == "markdown")
    for needle in ("Splitwise", "ISCA 2024", "Azure Public Dataset", "CC BY 4.0"):
        assert needle in prose
