"""Every figure on the batching and scheduling card, within its rounding."""

import json
import math

import pytest

from lanes.gpu import chains


class TestLittlesLaw:
    def test_card(self):
        r = chains.littles_law()
        assert r.w_s == pytest.approx(7.975)
        assert r.in_system == pytest.approx(79.75)
        assert r.decoding == pytest.approx(74.75)
        assert r.tokens_per_s == pytest.approx(2990)

    def test_token_rate_is_arrival_rate_times_decoded_tokens(self):
        r = chains.littles_law(arrival_rate_per_s=3, output_tokens=101)
        assert r.tokens_per_s == pytest.approx(3 * 100)

    def test_negative_rate_is_rejected(self):
        with pytest.raises(ValueError, match="arrival_rate_per_s must be a number > 0"):
            chains.littles_law(arrival_rate_per_s=-1)


class TestKvInFlight:
    def test_card(self):
        r = chains.kv_in_flight()
        assert r.kv_bytes_per_token == 327_680
        assert round(r.kv_bytes / 1e9, 1) == 43.1
        assert round(r.ceiling_rps) == 37

    def test_pool_holds_about_487600_tokens(self):
        # The card rounds 159.8e9 / 327,680 = 487,671 to 487,600 (it used 159.78 GB).
        assert chains.kv_in_flight().pool_tokens == pytest.approx(487_600, rel=2e-4)

    def test_defaults_chain_from_littles_law(self):
        ll = chains.littles_law()
        r = chains.kv_in_flight(in_system=ll.in_system, w_s=ll.w_s)
        assert r == chains.kv_in_flight()


class TestGoodput:
    def test_batch_64(self):
        r = chains.goodput()
        assert round(r.tpot_small_s * 1e3, 1) == 9.9
        assert round(r.tokens_per_s_small, -1) == 6450
        assert r.goodput_small_tokens_per_s == r.tokens_per_s_small

    def test_batch_128(self):
        r = chains.goodput()
        assert round(r.kv_bytes_large / 1e9, 1) == 34.4
        assert round(r.tpot_large_s * 1e3, 1) == 15.1
        assert round(r.tokens_per_s_large) == 8505
        assert r.goodput_large_tokens_per_s == 0

    def test_32_percent_more_throughput(self):
        assert round(chains.goodput().throughput_gain, 2) == 0.32

    def test_64_is_the_largest_batch_meeting_10_ms(self):
        assert chains.goodput().max_batch_at_target == 64


class TestSwapVsRecompute:
    def test_card(self):
        r = chains.swap_vs_recompute()
        assert round(r.swap_s_per_token * 1e6, 1) == 5.2
        # 32.48 us linear + 2.17 us causal attention = 34.65 us; the card rounds the parts first (32.5 + 2.2).
        assert r.recompute_s_per_token == pytest.approx(34.7e-6, abs=0.06e-6)
        assert r.swap_bytes_per_token == 262_144
        assert round(r.break_even_bytes_per_s / 1e9, 1) == 7.6

    def test_slow_per_block_copies_lose(self):
        r = chains.swap_vs_recompute(link_bytes_per_s=3.5e9)
        assert r.swap_s_per_token > r.recompute_s_per_token

    def test_mfu_is_validated(self):
        with pytest.raises(ValueError, match=r"mfu must be a number in \(0, 1\] \(got 1.5\)"):
            chains.swap_vs_recompute(mfu=1.5)


class TestHolBlocking:
    def test_card(self):
        r = chains.hol_blocking()
        assert r.steps_ahead == 4
        assert round(r.short_ttft_fcfs_s, 2) == 1.80
        assert round(r.short_ttft_by_length_s, 2) == 0.27
        assert round(r.long_delay_s, 2) == 0.16
        assert round(r.mean_ttft_fcfs_s, 2) == 1.78
        assert round(r.mean_ttft_by_length_s, 2) == 0.41

    def test_budget_zero_is_rejected(self):
        with pytest.raises(ValueError, match=r"budget_tokens must be an integer >= 1 \(got 0\)"):
            chains.hol_blocking(budget_tokens=0)


class TestChunkCap:
    """Chain 5's remedy: a cap on one prompt's share of each step, under FCFS."""

    @pytest.fixture(scope="class")
    @classmethod
    def runs(cls):
        return {cap: chains.chunk_cap(cap) for cap in (None, 2048)}

    def test_no_cap_is_the_head_of_line_chain(self):
        hol, plain = chains.hol_blocking(), chains.chunk_cap(None, decoders=0)
        assert plain.short_ttft_s == hol.short_ttft_fcfs_s
        assert plain.long_ttft_s == hol.long_ttft_fcfs_s
        assert plain.max_chunk_tokens == 0

    def test_a_cap_at_the_budget_changes_nothing(self, runs):
        assert chains.chunk_cap(8192) == chains.ChunkCap(**{**runs[None].to_dict(), "max_chunk_tokens": 8192})

    def test_the_cap_lets_short_prompts_in_and_shortens_the_decoders_steps(self, runs):
        plain, capped = runs[None], runs[2048]
        assert round(plain.short_ttft_s, 2) == 1.81 and round(capped.short_ttft_s, 2) == 0.23
        assert round(plain.decoder_tpot_s * 1e3) == 362 and round(capped.decoder_tpot_s * 1e3) == 115
        # the long prompt pays little: the same tokens, in more, smaller steps
        assert 0 < capped.long_ttft_s - plain.long_ttft_s < 0.02 * plain.long_ttft_s

    def test_no_step_gives_one_prompt_more_than_the_cap(self):
        from lanes.gpu.steps import simulate

        run = simulate([5000, 300, 300], budget_tokens=4096, max_chunk_tokens=1000)
        assert [s.prefill_tokens for s in run.steps] == [1600, 1000, 1000, 1000, 1000]
        assert run.ttft_s[1:] == (run.steps[0].end_s,) * 2  # the short prompts share the first step

    @pytest.mark.parametrize("cap", [0, -5, 2.5, "4096"])
    def test_bad_cap_names_the_parameter(self, cap):
        with pytest.raises(ValueError, match=r"^max_chunk_tokens must be an integer"):
            chains.chunk_cap(cap)


class TestP99Knee:
    def test_card(self):
        r = chains.p99_knee()
        assert round(r.p99_factor, 1) == 4.6
        assert round(r.rho_max, 2) == 0.69
        assert round(r.slope_high_load) == 11
        assert r.slope_low_load == pytest.approx(4)

    def test_p99_at_rho_max_meets_the_target(self):
        r = chains.p99_knee()
        assert r.p99_factor * 0.0665 / (1 - r.rho_max) == pytest.approx(1.0)

    def test_percentile_must_be_below_one(self):
        with pytest.raises(ValueError, match="percentile"):
            chains.p99_knee(percentile=1)


class TestLongPrompt:
    def test_card(self):
        r = chains.long_prompt()
        assert r.chunks == 13 == math.ceil(100_000 / 8128)
        assert r.prompt_tokens_per_chunk == 8128
        assert round(r.chunk1_linear_s * 1e3) == 266
        assert round(r.chunk1_attention_s * 1e3) == 35
        assert round(r.chunk1_s * 1e3) == 301
        assert round(r.later_chunk_increment_s * 1e3) == 70

    def test_decoders_itl_goes_from_99_ms_to_301_ms_and_climbs(self):
        r = chains.long_prompt()
        assert round(r.itl_before_s * 1e3, 1) == 9.9
        assert r.itl_max_s > r.chunk1_s

    def test_unknown_hardware(self):
        with pytest.raises(ValueError, match="hardware must be one of"):
            chains.long_prompt(hardware="b200")


class TestTenantCost:
    def test_card(self):
        r = chains.tenant_cost()
        assert (r.cost_a, r.cost_b) == (500, 11_000)
        assert r.ratio == pytest.approx(22)
        assert round(r.round_robin_share_b, 2) == 0.96
        assert r.round_robin_share_b == pytest.approx(22 / 23)

    def test_fair_scheduler_splits_about_evenly(self):
        assert chains.tenant_cost().fair_share_b == pytest.approx(0.5, abs=0.02)

    def test_negative_tokens_are_rejected(self):
        with pytest.raises(ValueError, match=r"input_tokens must be an integer >= 1 \(got -200\)"):
            chains.tenant_cost(a_input_tokens=-200)


class TestAll:
    def test_keys_in_card_order(self):
        assert list(chains.all_chains()) == [
            "littles_law", "kv_in_flight", "goodput", "swap_vs_recompute",
            "hol_blocking", "p99_knee", "long_prompt", "tenant_cost",
        ]

    def test_to_dict_is_json_numbers(self):
        for name, r in chains.all_chains().items():
            d = json.loads(json.dumps(r.to_dict()))
            assert d and all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in d.values()), name
