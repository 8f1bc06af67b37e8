"""Decode step cost against batch size; static against continuous batching."""

import pytest

from lanes.gpu.continuous import BatchingScenario, decode_step_curve, simulate_batching


class TestDecodeStep:
    def test_one_or_sixteen_cost_about_the_same(self):
        one, sixteen = decode_step_curve([1, 16])
        assert sixteen.step_s < 1.2 * one.step_s
        assert sixteen.tokens_per_s > 13 * one.tokens_per_s

    def test_weights_dominate_small_batches(self):
        (one,) = decode_step_curve([1])
        assert one.weight_share > 0.95
        assert one.step_s == pytest.approx(one.memory_s)

    def test_tokens_per_s_grows_with_batch(self):
        tps = [s.tokens_per_s for s in decode_step_curve()]
        assert tps == sorted(tps)

    def test_validation(self):
        with pytest.raises(ValueError, match=r"batch size must be an integer >= 1 \(got 0\)"):
            decode_step_curve([0])


class TestStaticVsContinuous:
    def test_continuous_beats_static_on_throughput_and_latency(self):
        s = simulate_batching(mode="static")
        c = simulate_batching(mode="continuous")
        assert c.tokens_per_s > 1.2 * s.tokens_per_s
        assert c.summary()["p50 latency (s)"] < s.summary()["p50 latency (s)"]
        assert c.slot_use > s.slot_use

    def test_static_returns_a_batch_together(self):
        s = simulate_batching(BatchingScenario(requests=16, slots=16), "static")
        assert len(set(s.finish_s)) == 1
        assert len(s.step_active) == max(s.output_tokens)

    def test_continuous_returns_short_answers_early(self):
        c = simulate_batching(BatchingScenario(requests=16, slots=16), "continuous")
        short = min(range(16), key=lambda k: c.output_tokens[k])
        assert c.finish_s[short] < c.makespan_s / 2

    def test_never_more_than_slots(self):
        for mode in ("static", "continuous"):
            assert max(simulate_batching(mode=mode).step_active) <= 16

    def test_same_tokens_both_ways(self):
        s, c = simulate_batching(mode="static"), simulate_batching(mode="continuous")
        assert sum(s.step_active) == sum(c.step_active) == sum(c.output_tokens)

    def test_validation(self):
        with pytest.raises(ValueError, match=r"slots must be an integer >= 1 \(got 0\)"):
            BatchingScenario(slots=0)
        with pytest.raises(ValueError, match=r"mode must be one of static, continuous"):
            simulate_batching(mode="dynamic")
