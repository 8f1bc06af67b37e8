"""KV pool sized in blocks, headroom rules, eviction costs."""

import math

import pytest

from lanes.gpu import chains
from lanes.gpu import kvpool

SC = kvpool.KvScenario(seconds=1800, warmup_s=300)


class TestSizing:
    def test_pool_for_8b_on_h100(self):
        assert kvpool.pool_tokens_for() == 426_788

    def test_blocks_round_up(self):
        sc = kvpool.KvScenario()
        assert sc.blocks_for(16) == 1 and sc.blocks_for(17) == 2
        assert sc.pool_blocks == 426_788 // 16

    def test_decode_step_matches_the_goodput_chain(self):
        g = chains.goodput()
        assert kvpool.decode_step_s(64 * 2048) == pytest.approx(g.tpot_small_s)


class TestRules:
    def test_parse(self):
        assert kvpool.parse_rule("slots:8") == {"slots": 8}
        assert kvpool.parse_rule("slots:16+tokens:50000") == {"slots": 16, "tokens": 50000}

    @pytest.mark.parametrize("rule", ["slots", "blocks:4", "slots:x", "slots:1+slots:2", "", "slots:-1"])
    def test_bad_rules(self, rule):
        with pytest.raises(ValueError, match="rule"):
            kvpool.parse_rule(rule)


class TestSimulation:
    def test_long_batch_contexts_defeat_slot_headroom_and_token_headroom_fixes_it(self):
        long_sc = SC.with_(batch_tokens=32_000)
        by_slots = kvpool.simulate_kv_pool(long_sc, "slots:16")
        by_tokens = kvpool.simulate_kv_pool(long_sc, "tokens:50000")
        assert by_slots.p99_wait_s > 10
        assert by_tokens.p99_wait_s <= 2
        assert by_slots.late_fraction > 0.1 > by_tokens.late_fraction

    def test_uniform_slots_need_slot_headroom(self):
        short = SC.with_(batch_tokens=2_000)
        assert kvpool.simulate_kv_pool(short, "slots:16").p99_wait_s < kvpool.simulate_kv_pool(short, "tokens:50000").p99_wait_s

    def test_blocks_never_exceed_the_pool_or_sequences_the_cap(self):
        r = kvpool.simulate_kv_pool(SC.with_(batch_tokens=100_000), "slots:0")
        assert max(c + b for c, b in zip(r.chat_blocks, r.batch_blocks)) <= SC.pool_blocks
        assert r.mean_sequences <= SC.max_sequences

    def test_chats_alone_fill_the_pool_as_littles_law_says(self):
        r = kvpool.simulate_kv_pool(SC.with_(backlog=0), "slots:0")
        assert r.mean_kv_used == pytest.approx(SC.chat_kv_share, rel=0.1)
        assert r.batch_done == 0 and r.p99_wait_s == 0

    def test_seeded(self):
        assert kvpool.simulate_kv_pool(SC).row() == kvpool.simulate_kv_pool(SC).row()

    @pytest.mark.parametrize("kw, match", [({"batch_tokens": 10**7}, "batch_tokens"), ({"warmup_s": 1800}, "warmup_s"), ({"model": "gpt"}, "model")])
    def test_scenario_validation(self, kw, match):
        with pytest.raises(ValueError, match=match):
            SC.with_(**kw)


class TestPreemptionCosts:
    def test_swap_matches_the_chain_per_token(self):
        pc = kvpool.preemption_costs(4096)
        sw = chains.swap_vs_recompute()
        assert pc.swap_s == pytest.approx(sw.swap_s_per_token * 4096)
        assert pc.recompute_s == pytest.approx(sw.recompute_s_per_token * 4096)

    def test_order_for_a_long_context(self):
        pc = kvpool.preemption_costs()
        assert pc.swap_s < pc.swap_scattered_s < pc.recompute_s < pc.checkpoint_s
        assert pc.as_slot_costs(slots=1) == {"swap": 1, "swap, scattered copies": 10, "recompute": 14, "checkpoint restart": 35}

    def test_slot_costs_are_slot_seconds(self):
        # A prefill occupies the whole engine: on a 64-slot engine one engine-second
        # is 64 slot-seconds, so a 0.24 s recompute of 6,668 tokens is about 15.4.
        pc = kvpool.preemption_costs(6668)
        assert 0.2 < pc.recompute_s < 0.3
        costs = pc.as_slot_costs()
        assert costs == pc.as_slot_costs(slots=64)
        assert costs["recompute"] == math.ceil(64 * pc.recompute_s) == 16
        assert costs["swap"] == math.ceil(64 * pc.swap_s)
        assert costs["swap, scattered copies"] == math.ceil(64 * pc.swap_scattered_s)
        assert costs["checkpoint restart"] == math.ceil(pc.checkpoint_s)  # the job's own time
        assert pc.as_slot_costs(slots=8)["recompute"] == math.ceil(8 * pc.recompute_s)
        with pytest.raises(ValueError, match="slots"):
            pc.as_slot_costs(slots=0)

    def test_validation(self):
        with pytest.raises(ValueError, match="scattered_bytes_per_s"):
            kvpool.preemption_costs(scattered_bytes_per_s=0)


class TestReserveIsKept:
    def test_batch_never_eats_into_the_token_reserve(self):
        sc = SC.with_(chat_rate_per_s=0.0, batch_tokens=32_000)
        r = kvpool.simulate_kv_pool(sc, "tokens:100000")
        assert max(r.batch_blocks) <= sc.pool_blocks - sc.blocks_for(100_000)
        assert max(r.batch_blocks) > sc.pool_blocks - sc.blocks_for(100_000) - sc.blocks_for(32_000)

    def test_batch_never_eats_into_the_slot_reserve(self):
        sc = SC.with_(chat_rate_per_s=0.0, batch_tokens=2_000)
        r = kvpool.simulate_kv_pool(sc, "slots:16")
        assert max(r.batch_blocks) == (sc.max_sequences - 16) * sc.blocks_for(2_000)
