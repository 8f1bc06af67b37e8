"""Chapter 8 (memory and throughput chains): every claim, recomputed with lanes."""

import pytest

from lanes.gpu import chains
from lanes.gpu.hardware import get_hardware, get_model

LLAMA8B, LLAMA70B, H100 = get_model("llama-3.1-8b"), get_model("llama-3.3-70b"), get_hardware("h100-sxm")


class TestLittlesLaw:
    def test_the_chain(self):
        ll = chains.littles_law(arrival_rate_per_s=10, ttft_s=0.5, output_tokens=300, tpot_s=0.025)
        assert ll.w_s == pytest.approx(0.5 + 299 * 0.025)
        assert ll.in_system == pytest.approx(79.75)
        assert ll.decoding == pytest.approx(74.75)
        # the cross-check: sequences decoding / TPOT = arrival rate x tokens after the first
        assert ll.tokens_per_s == pytest.approx(10 * 299)

    def test_most_requests_inside_are_decoding(self):
        ll = chains.littles_law()
        assert ll.decoding < ll.in_system
        assert ll.in_system - ll.decoding == pytest.approx(10 * 0.5)  # the rest wait for the first token

    def test_slower_steps_hold_about_a_third_more_requests(self):
        base, slow = chains.littles_law(), chains.littles_law(tpot_s=0.035)
        assert slow.in_system / base.in_system - 1 == pytest.approx(0.375, abs=0.01)


class TestKvInFlight:
    def test_the_chain(self):
        kv = chains.kv_in_flight(in_system=79.75, tokens_per_request=1650, w_s=7.975, pool_bytes=159.8e9,
                                 model=LLAMA70B)
        assert kv.kv_bytes_per_token == 320 * 1024
        assert kv.kv_bytes == pytest.approx(79.75 * 1650 * 327_680)
        assert round(kv.kv_bytes / 1e9, 1) == 43.1
        assert round(kv.ceiling_rps) == 37

    def test_the_pool_is_about_a_quarter_full_at_ten_per_second(self):
        kv = chains.kv_in_flight()
        assert 0.25 < kv.kv_bytes / 159.8e9 < 0.3

    def test_the_ceiling_falls_when_tpot_rises(self):
        rows = []
        for tpot in (0.015, 0.025, 0.035, 0.050):
            ll = chains.littles_law(tpot_s=tpot)
            rows.append(chains.kv_in_flight(in_system=ll.in_system, w_s=ll.w_s).ceiling_rps)
        assert rows == sorted(rows, reverse=True)
        assert round(rows[2]) == 27


class TestGoodput:
    def test_the_chain(self):
        g = chains.goodput()
        small = (LLAMA8B.weight_bytes + 64 * 2048 * LLAMA8B.kv_bytes_per_token) / H100.hbm_bytes_per_s
        assert g.tpot_small_s == pytest.approx(small)
        assert round(g.tpot_small_s * 1e3, 1) == 9.9 and round(g.tpot_large_s * 1e3, 1) == 15.1
        assert round(g.tokens_per_s_small) == 6450 and round(g.tokens_per_s_large) == 8505

    def test_more_throughput_and_no_goodput_at_128(self):
        g = chains.goodput()
        assert g.throughput_gain > 0.3
        assert g.goodput_small_tokens_per_s == g.tokens_per_s_small
        assert g.goodput_large_tokens_per_s == 0

    def test_largest_batch_at_target_is_64_and_shrinks_with_context(self):
        best = [chains.goodput(context_tokens=c).max_batch_at_target for c in (1024, 2048, 4096, 8192)]
        assert best[1] == 64
        assert best == sorted(best, reverse=True)
        for c, b in zip((1024, 2048, 4096, 8192), best):
            assert chains.goodput(context_tokens=c, batch_small=b, batch_large=b + 1).tpot_small_s <= 0.010
            assert chains.goodput(context_tokens=c, batch_small=b + 1, batch_large=b + 1).tpot_small_s > 0.010

    def test_throughput_keeps_rising_past_the_target(self):
        tps = [chains.goodput(batch_small=b, batch_large=b).tokens_per_s_small for b in range(1, 257)]
        assert all(b > a for a, b in zip(tps, tps[1:]))


class TestSwapOrRecompute:
    def test_the_chain(self):
        sw = chains.swap_vs_recompute()
        assert sw.swap_s_per_token == pytest.approx(2 * 131_072 / 50e9)
        assert round(sw.recompute_s_per_token * 1e6, 2) == 34.65
        assert round(sw.break_even_bytes_per_s / 1e9, 1) == 7.6

    def test_at_the_rated_link_swap_is_several_times_cheaper(self):
        sw = chains.swap_vs_recompute()
        assert sw.recompute_s_per_token / sw.swap_s_per_token > 6

    @pytest.mark.parametrize("gbps", [3, 4])
    def test_block_by_block_copies_lose_to_recompute(self, gbps):
        sw = chains.swap_vs_recompute(link_bytes_per_s=gbps * 1e9)
        assert sw.recompute_s_per_token < sw.swap_s_per_token
        assert gbps * 1e9 < sw.break_even_bytes_per_s

    def test_rebuilding_a_long_context_costs_more_per_token(self):
        costs = [chains.swap_vs_recompute(context_tokens=c).recompute_s_per_token for c in (1024, 4096, 16384, 32768)]
        assert costs == sorted(costs)
