"""Step simulator: card figures, closed forms, Little's law, ordering and validation."""

import math
import random

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from lanes.gpu.hardware import get_hardware, get_model
from lanes.gpu.steps import Request, simulate, step_cost

M = get_model("llama-3.1-8b")
H = get_hardware("h100-sxm")
F = H.achieved_flops_per_s(0.5)
CARD = [32768] + [500] * 10


class TestHeadOfLine:
    def test_fcfs_short_prompts_wait_180_s(self):
        r = simulate(CARD, order="fcfs")
        assert all(round(t, 2) == 1.80 for t in r.ttft_s[1:])

    def test_by_length_short_prompts_get_027_s(self):
        r = simulate(CARD, order="by-length")
        assert all(round(t, 2) == 0.27 for t in r.ttft_s[1:])

    def test_long_prompt_waits_one_more_step_016_s(self):
        fcfs, by_len = simulate(CARD, order="fcfs"), simulate(CARD, order="by-length")
        assert round(by_len.ttft_s[0] - fcfs.ttft_s[0], 2) == 0.16
        assert len(by_len.steps) == len(fcfs.steps) == 5

    def test_mean_ttft_178_to_041(self):
        assert round(simulate(CARD, order="fcfs").mean_ttft_s, 2) == 1.78
        assert round(simulate(CARD, order="by-length").mean_ttft_s, 2) == 0.41

    def test_four_full_steps_before_the_short_prompts(self):
        steps = simulate(CARD, order="fcfs").steps
        assert [s.prefill_tokens for s in steps] == [8192, 8192, 8192, 8192, 5000]

    def test_ttft_is_reported_in_input_order(self):
        r = simulate([500, 32768], order="by-length")
        assert r.ttft_s[0] < r.ttft_s[1]
        r = simulate([32768, 500], order="by-length")
        assert r.ttft_s[0] > r.ttft_s[1]


class TestLongPrompt:
    @pytest.fixture(scope="class")
    @classmethod
    def run(cls):
        return simulate([100_000], decoders=64, decoder_context_tokens=2048)

    def test_thirteen_chunks_of_8128(self, run):
        assert len(run.steps) == 13
        assert [s.prefill_tokens for s in run.steps[:12]] == [8128] * 12
        assert run.steps[-1].prefill_tokens == 100_000 - 12 * 8128
        assert all(s.decode_tokens == 64 for s in run.steps)

    def test_chunk1_is_266_plus_35_equals_301_ms(self, run):
        s = run.steps[0]
        assert round(s.linear_s * 1e3) == 266
        assert round(s.attention_s * 1e3) == 35
        assert round(s.duration_s * 1e3) == 301

    def test_each_later_chunk_adds_70_ms(self, run):
        full = run.steps[:12]
        for a, b in zip(full, full[1:]):
            assert round((b.duration_s - a.duration_s) * 1e3) == 70

    def test_decoders_itl_is_the_step_time_and_climbs(self, run):
        assert run.itl_s == tuple(s.duration_s for s in run.steps)
        assert list(run.itl_s[:12]) == sorted(run.itl_s[:12])


class TestClosedForms:
    """Where the simulator must agree exactly with the roofline formulas."""

    @pytest.mark.parametrize("prompt", [1, 500, 4096, 8192])
    def test_one_chunk_no_decoders_is_linear_plus_causal_attention(self, prompt):
        r = simulate([prompt], budget_tokens=8192)
        compute = (2 * M.params * prompt + M.attention_flops_per_pair * prompt**2 / 2) / F
        expected = max(compute, M.weight_bytes / H.hbm_bytes_per_s)  # tiny prompts: weight-read bound
        assert len(r.steps) == 1
        assert r.ttft_s[0] == pytest.approx(expected, rel=1e-12)

    def test_chunked_prompt_costs_the_same_flops_as_one_pass(self):
        whole = simulate([16384], budget_tokens=16384)
        chunked = simulate([16384], budget_tokens=4096)
        assert len(chunked.steps) == 4
        flops = lambda r: sum((s.linear_s + s.attention_s) for s in r.steps)  # noqa: E731
        assert flops(chunked) == pytest.approx(flops(whole), rel=1e-12)

    def test_decode_only_step_is_memory_bound_at_99_ms(self):
        cost = step_cost([(2048, 1)] * 64, model=M, hardware=H, mfu=0.5)
        assert cost.memory_s == pytest.approx((16.06e9 + 64 * 2048 * 131072) / 3.35e12)
        assert cost.duration_s == cost.memory_s
        assert round(cost.duration_s * 1e3, 1) == 9.9

    def test_decode_step_time_matches_the_goodput_formula(self):
        r = simulate([Request(1, output_tokens=3)], decoders=64, decoder_context_tokens=2048, budget_tokens=8192)
        # prefill of 1 token alongside 64 decoders, then two decode-only steps
        assert r.steps[1].duration_s == pytest.approx((16.06e9 + (64 * 2049 + 1) * 131072) / 3.35e12)

    def test_output_tokens_take_one_step_each(self):
        r = simulate([Request(100, output_tokens=5)])
        assert len(r.steps) == 5
        assert r.finish_s[0] == pytest.approx(r.steps[-1].end_s)
        assert len(r.itl_s) == 4


class TestLittlesLaw:
    """L = lambda x W on the simulator's own output, over a run with arrivals."""

    @pytest.fixture(scope="class")

    @classmethod
    def run(cls):
        rng = random.Random(3)
        t, reqs = 0.0, []
        for _ in range(300):
            t += rng.expovariate(4.0)
            reqs.append(Request(rng.randint(50, 3000), output_tokens=rng.randint(1, 60), arrival_s=t))
        return simulate(reqs, budget_tokens=2048)

    def test_time_average_in_system_equals_rate_times_mean_wait(self, run):
        # N(t) from arrivals and departures, integrated exactly.
        events = sorted([(a, 1) for a in run.arrival_s] + [(f, -1) for f in run.finish_s])
        area, n, last = 0.0, 0, 0.0
        for time, delta in events:
            area += n * (time - last)
            n, last = n + delta, time
        horizon = run.makespan_s
        lam = len(run.arrival_s) / horizon
        w = sum(run.time_in_system_s) / len(run.arrival_s)
        assert n == 0
        assert area / horizon == pytest.approx(lam * w, rel=1e-9)

    def test_step_gauge_agrees_with_rate_times_time(self, run):
        # The engine's own waiting+running gauge, sampled at step starts (zero while idle).
        gauge = sum(s.in_system * s.duration_s for s in run.steps) / run.makespan_s
        lam = len(run.arrival_s) / run.makespan_s
        w = sum(run.time_in_system_s) / len(run.arrival_s)
        assert gauge == pytest.approx(lam * w, rel=0.05)

    def test_every_request_finishes_after_it_arrives(self, run):
        assert all(f > a for a, f in zip(run.arrival_s, run.finish_s))
        assert all(0 < t <= f - a + 1e-12 for a, f, t in zip(run.arrival_s, run.finish_s, run.ttft_s))

    def test_no_step_exceeds_the_budget(self, run):
        assert all(s.tokens <= 2048 for s in run.steps)


class TestValidation:
    def test_negative_prompt_tokens(self):
        with pytest.raises(ValueError, match=r"prompt_tokens must be an integer >= 1 \(got -5\)"):
            simulate([-5])

    def test_zero_output_tokens(self):
        with pytest.raises(ValueError, match="output_tokens must be an integer >= 1"):
            Request(10, output_tokens=0)

    def test_negative_arrival(self):
        with pytest.raises(ValueError, match="arrival_s must be a number >= 0"):
            Request(10, arrival_s=-1)

    def test_budget_zero(self):
        with pytest.raises(ValueError, match=r"budget_tokens must be an integer >= 1 \(got 0\)"):
            simulate([10], budget_tokens=0)

    @pytest.mark.parametrize("mfu", [0, 1.5])
    def test_mfu_outside_unit_interval(self, mfu):
        with pytest.raises(ValueError, match=r"mfu must be a number in \(0, 1\]"):
            simulate([10], mfu=mfu)

    def test_unknown_order(self):
        with pytest.raises(ValueError, match="order must be one of fcfs, by-length"):
            simulate([10], order="sjf")

    def test_unknown_model(self):
        with pytest.raises(ValueError, match="model must be one of"):
            simulate([10], model="llama-4")

    def test_decoders_must_leave_room_in_the_budget(self):
        with pytest.raises(ValueError, match="decoders must be an integer in"):
            simulate([10], budget_tokens=64, decoders=64)

    def test_empty_request_list(self):
        with pytest.raises(ValueError, match="requests"):
            simulate([])


class TestIdle:
    def test_engine_idles_until_a_late_arrival(self):
        r = simulate([Request(100, arrival_s=5.0)])
        assert r.steps[0].start_s == 5.0
        assert math.isclose(r.finish_s[0], 5.0 + r.ttft_s[0])


class TestConservation:
    """Any prompt mix: every prompt token is prefilled once, every output token decoded once."""

    @settings(max_examples=60, deadline=None)
    @given(
        prompts=st.lists(st.tuples(st.integers(1, 20_000), st.integers(1, 8), st.floats(0, 5)), min_size=1, max_size=12),
        budget=st.integers(16, 8192),
        order=st.sampled_from(["fcfs", "by-length"]),
    )
    def test_tokens_are_conserved_and_budget_respected(self, prompts, budget, order):
        reqs = [Request(p, output_tokens=o, arrival_s=a) for p, o, a in prompts]
        r = simulate(reqs, budget_tokens=budget, order=order)
        assert sum(s.prefill_tokens for s in r.steps) == sum(q.prompt_tokens for q in reqs)
        assert sum(s.decode_tokens for s in r.steps) == sum(q.output_tokens - 1 for q in reqs)
        assert all(0 < s.tokens <= budget for s in r.steps)
        assert all(b.start_s >= a.end_s - 1e-12 for a, b in zip(r.steps, r.steps[1:]))
        assert all(t > 0 for t in r.ttft_s)
