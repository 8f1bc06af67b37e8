"""Chapter 9 (latency and fairness chains): every claim, recomputed with lanes."""

import math

import pytest

from lanes.gpu import chains, fairness, steps
from lanes.gpu.hardware import get_hardware, get_model
from lanes.lane import queueing
from lanes.pool.sweep import SEEDS

LLAMA8B, H100 = get_model("llama-3.1-8b"), get_hardware("h100-sxm")


class TestHeadOfLine:
    def test_the_chain(self):
        hol = chains.hol_blocking()
        assert hol.steps_ahead == 32768 // 8192 == 4
        assert round(hol.short_ttft_fcfs_s, 2) == 1.80
        assert round(hol.short_ttft_by_length_s, 2) == 0.27
        assert round(hol.long_delay_s, 2) == 0.16
        assert (round(hol.mean_ttft_fcfs_s, 2), round(hol.mean_ttft_by_length_s, 2)) == (1.78, 0.41)

    def test_sorted_by_length_every_short_prompt_finishes_in_the_first_step(self):
        reqs = [steps.Request(32768)] + [steps.Request(500)] * 10
        run = steps.simulate(reqs, order="by-length")
        first_end = run.steps[0].end_s
        assert all(t == pytest.approx(first_end) for t in run.ttft_s[1:])
        fcfs = steps.simulate(reqs, order="fcfs")
        assert run.ttft_s[0] - fcfs.ttft_s[0] == pytest.approx(run.steps[-1].duration_s, rel=0.5)

    def test_a_smaller_budget_does_not_fix_fcfs(self):
        waits = [chains.hol_blocking(budget_tokens=b).short_ttft_fcfs_s for b in (2048, 4096, 8192, 16384)]
        assert max(waits) / min(waits) < 1.05  # an eightfold range of budgets, a few percent of wait
        assert min(waits) > 5 * chains.hol_blocking().short_ttft_by_length_s


class TestChunkCap:
    """The remedy of the head-of-line chain: one prompt's share of each step capped."""

    def test_the_glued_figures_are_the_chain_with_and_without_the_cap(self):
        from glued_values import glued

        g = glued("09_chains_latency_and_fairness")
        kw = dict(decoders=g["cap_decoders"], decoder_context_tokens=g["cap_context"])
        none, capped = chains.chunk_cap(None, **kw), chains.chunk_cap(g["cap_shown"], **kw)
        assert (g["cap_decoders"], g["cap_context"], g["cap_shown"]) == (64, 2048, 2048)
        assert g["cap_short_none_s"] == pytest.approx(none.short_ttft_s)
        assert g["cap_short_s"] == pytest.approx(capped.short_ttft_s)
        assert g["cap_long_none_s"] == pytest.approx(none.long_ttft_s)
        assert g["cap_long_s"] == pytest.approx(capped.long_ttft_s)
        assert g["cap_tpot_none_ms"] == pytest.approx(none.decoder_tpot_s * 1e3)
        assert g["cap_tpot_ms"] == pytest.approx(capped.decoder_tpot_s * 1e3)
        assert g["cap_long_rise"] == pytest.approx(capped.long_ttft_s / none.long_ttft_s - 1)
        # "falls from ... to": the short prompts by more than 5x, the decoders' steps by 3x
        assert capped.short_ttft_s < none.short_ttft_s / 5
        assert capped.decoder_tpot_s < none.decoder_tpot_s / 3
        # "the long prompt pays ... more": a little, not nothing
        assert 0 < g["cap_long_rise"] < 0.05

    def test_no_step_gives_the_long_prompt_more_than_the_cap(self):
        reqs = [steps.Request(32768)] + [steps.Request(500)] * 10
        run = steps.simulate(reqs, budget_tokens=8192, decoders=64, decoder_context_tokens=2048,
                             max_chunk_tokens=2048)
        first = run.steps[0]
        assert first.prefill_tokens == 2048 + 10 * 500  # the long prompt's share and every short one
        assert max(s.prefill_tokens for s in run.steps[1:]) <= 2048


class TestP99Knee:
    def test_the_formula(self):
        k = chains.p99_knee(service_s=0.0665, p99_target_s=1.0)
        assert k.p99_factor == pytest.approx(-math.log(0.01))
        assert round(k.rho_max, 2) == 0.69
        assert (round(k.slope_high_load), round(k.slope_low_load)) == (11, 4)

    def test_the_busy_limit_is_not_a_law_it_moves_with_service_over_target(self):
        from glued_values import glued

        g = glued("09_chains_latency_and_fairness")
        k = chains.p99_knee(service_s=0.0665, p99_target_s=1.0)
        half = chains.p99_knee(service_s=0.0665, p99_target_s=0.5)
        double = chains.p99_knee(service_s=2 * 0.0665, p99_target_s=1.0)
        assert g["knee_rho"] == pytest.approx(k.rho_max)
        assert g["knee_rho_half_target"] == pytest.approx(half.rho_max) == pytest.approx(double.rho_max)
        assert half.rho_max < k.rho_max - 0.2
        assert g["knee_half_change"] == pytest.approx(half.rho_max - k.rho_max)  # "it falls to"

    @pytest.fixture(scope="class")
    @classmethod
    def text(cls):
        from glued_values import glued

        return glued("09_chains_latency_and_fairness")

    def test_the_lognormal_shape_and_run_lengths_are_stated(self, text):
        assert text["logn_sigma"] == 1.0
        assert text["logn_cv2"] == pytest.approx(math.e - 1)
        assert text["n_logn"] >= 50_000 > 10_000  # 10,000-request runs were too noisy to place the limit
        assert text["logn_extra_requests"] == text["n_logn"] - text["n_exp"] > 0  # "needs more to settle"

    def test_exponential_band_straddles_the_formula_just_past_its_limit(self, text):
        k = chains.p99_knee(service_s=0.0665, p99_target_s=1.0)
        assert text["exp_all_at"] < k.rho_max < text["exp_next"]
        assert text["exp_formula_next_s"] == pytest.approx(queueing.mm1_response_quantile_s(0.0665, text["exp_next"]))
        assert text["exp_lo_next_s"] < text["exp_formula_next_s"] < text["exp_hi_next_s"]

    def test_lognormal_limit_is_about_half_load(self, text):
        """Seeds of 50,000 requests per load: all meet 1 s at 0.4, none at 0.6, and 0.5 straddles it."""
        runs = {rho: [queueing.simulate_queue(rho, service="lognormal", service_s=0.0665, sigma=1.0,
                                              requests=text["n_logn"], seed=s).p99_response_s
                      for s in SEEDS] for rho in (0.4, 0.5, 0.6)}
        assert max(runs[0.4]) <= 1.0 < min(runs[0.6])
        assert min(runs[0.5]) < 1.0 < max(runs[0.5])
        assert (text["logn_all_at"], text["logn_mid"], text["logn_none_at"], text["logn_n_mid"]) == (0.4, 0.5, 0.6, 1)
        assert (text["logn_lo_mid_s"], text["logn_hi_mid_s"]) == pytest.approx((min(runs[0.5]), max(runs[0.5])))

    def test_a_longer_run_agrees(self):
        """A longer Lindley recursion at 0.6: p99 about 1.249 s (2 million customers), clear of the target."""
        p99 = queueing.simulate_queue(0.6, service="lognormal", service_s=0.0665, sigma=1.0,
                                      requests=300_000, seed=99).p99_response_s
        assert p99 == pytest.approx(1.249, abs=0.08)

    def test_pollaczek_khinchine_factor(self, text):
        from lanes.pool import theory

        s, rate = 0.0665, 5.0
        logn = theory.JobClass(rate, s, s * s * math.exp(text["logn_sigma"] ** 2))  # lognormal E[S^2]
        expo = theory.JobClass.exponential(rate, s)
        assert text["pk_factor"] == pytest.approx(theory.mg1_wait_s([logn]) / theory.mg1_wait_s([expo]))
        assert text["p99_ratio_mid"] > text["pk_factor"] > 1  # the tail moves more than the mean


def _prefill_mix(text):
    """The chapter's prefill server: short and long prompts at its load, and their total rate (1/s)."""
    from lanes.pool import theory

    short_s, long_s = steps.prefill_service_s(500), steps.prefill_service_s(32768)
    share = text["sjf_share_long"]
    rate = text["sjf_load"] / ((1 - share) * short_s + share * long_s)
    return [theory.JobClass.fixed(rate * (1 - share), short_s), theory.JobClass.fixed(rate * share, long_s)], rate


class TestShortestJobFirst:
    def test_cobham_prices_sjf_and_the_conservation_law_holds(self):
        from glued_values import glued
        from lanes.pool import theory

        text = glued("09_chains_latency_and_fairness")
        mix, rate = _prefill_mix(text)
        fcfs = theory.mg1_wait_s(mix)
        short, long_ = theory.sjf_waits_s(mix)
        assert (text["sjf_fcfs_ms"], text["sjf_short_ms"], text["sjf_long_ms"]) == pytest.approx(
            (fcfs * 1e3, short * 1e3, long_ * 1e3))
        assert short < fcfs < long_
        assert mix[0].load * short + mix[1].load * long_ == pytest.approx(theory.conservation_sum_s(mix))
        assert (mix[0].rate_per_s * short + mix[1].rate_per_s * long_) / rate < fcfs  # the mean falls


class TestOrdersSimulated:
    """Cobham, the conservation law and SRPT beside a simulation of the same prefill server."""

    @pytest.fixture(scope="class")
    @classmethod
    def case(cls):
        from glued_values import glued
        from lanes.lane import service_order

        text = glued("09_chains_latency_and_fairness")
        mix, rate = _prefill_mix(text)
        sims = [service_order.simulate_orders([c.rate_per_s for c in mix], [c.mean_s for c in mix],
                                              jobs=text["ord_jobs"], seed=s) for s in SEEDS]
        return text, mix, rate, sims

    @staticmethod
    def spread(sims, measure):
        from lanes.lane import service_order

        return service_order.mean_and_error([measure(runs) for runs in sims])

    def test_every_formula_lies_within_the_sampling_error(self, case):
        from lanes.pool import theory

        text, mix, rate, sims = case
        law = theory.conservation_sum_s(mix)
        sjf = theory.sjf_waits_s(mix)
        srpt = theory.srpt_response_times_s(mix)
        mean_t = lambda times: sum(c.rate_per_s * t for c, t in zip(mix, times)) / rate  # noqa: E731
        weighted = lambda run: sum(c.load * w for c, w in zip(mix, run.mean_wait_s))  # noqa: E731
        pairs = [
            (theory.mg1_wait_s(mix), lambda r: r["fcfs"].mean_wait_all_s),
            (sjf[0], lambda r: r["sjf"].mean_wait_s[0]), (sjf[1], lambda r: r["sjf"].mean_wait_s[1]),
            (law, lambda r: weighted(r["fcfs"])), (law, lambda r: weighted(r["sjf"])),
            (srpt[0] - mix[0].mean_s, lambda r: r["srpt"].mean_wait_s[0]),
            (srpt[1] - mix[1].mean_s, lambda r: r["srpt"].mean_wait_s[1]),
            (mean_t(srpt), lambda r: r["srpt"].mean_response_all_s),
        ]
        gaps = []
        for formula, measure in pairs:
            mean, err = self.spread(sims, measure)
            assert 0 < err < 0.05 * mean  # ten seeds pin each mean to a few percent
            gaps.append(abs(mean - formula) / err)
        assert max(gaps) < 3  # each formula within three standard errors of its simulation
        assert text["ord_max_gap_se"] == pytest.approx(max(gaps), rel=0.3)  # the table has more rows
        assert text["ord_law_ms"] == pytest.approx(law * 1e3)

    def test_the_glued_simulation_values_are_the_simulation(self, case):
        text, mix, _, sims = case
        got = {
            "ord_fcfs_resp_ms": self.spread(sims, lambda r: r["fcfs"].mean_response_all_s)[0],
            "ord_sjf_resp_ms": self.spread(sims, lambda r: r["sjf"].mean_response_all_s)[0],
            "ord_srpt_resp_ms": self.spread(sims, lambda r: r["srpt"].mean_response_all_s)[0],
            "ord_srpt_short_ms": self.spread(sims, lambda r: r["srpt"].mean_wait_s[0])[0],
            "ord_srpt_long_ms": self.spread(sims, lambda r: r["srpt"].mean_wait_s[1])[0],
            "ord_sjf_long_ms": self.spread(sims, lambda r: r["sjf"].mean_wait_s[1])[0],
        }
        for name, value in got.items():
            assert text[name] == pytest.approx(value * 1e3), name

    def test_the_winners_are_clear_of_the_sampling_error(self, case):
        """SRPT < SJF < FCFS in mean response, each gap many standard errors; SJF's short prompts
        wait less than FCFS's prompts, its long ones more; SRPT's long ones more still."""
        text, _, _, sims = case
        diff = lambda a, b: self.spread(sims, lambda r: a(r) - b(r))  # noqa: E731
        resp = {o: (lambda r, o=o: r[o].mean_response_all_s) for o in ("fcfs", "sjf", "srpt")}
        for better, worse in (("srpt", "sjf"), ("sjf", "fcfs")):
            mean, err = diff(resp[better], resp[worse])  # paired: the same arrivals under both orders
            assert mean < -10 * err, (better, worse)
        mean, err = diff(lambda r: r["sjf"].mean_wait_s[1], lambda r: r["srpt"].mean_wait_s[1])
        assert mean < -10 * err  # SRPT's long prompts pay more than SJF's
        assert text["ord_best"] == "SRPT"
        assert text["ord_srpt_resp_ms"] < text["ord_sjf_resp_ms"] < text["ord_fcfs_resp_ms"]

    def test_the_prose_pairs_each_order_with_its_own_value(self):
        from glued_values import notebook
        from scripts import prose_tools as prose

        template = " ".join(" ".join(t.split()) for _, t, _ in
                            prose.templated_cells(notebook("09_chains_latency_and_fairness")))
        assert ("{{ord_fcfs_resp_ms:.0f}} ms first come, first served, {{ord_sjf_resp_ms:.0f}} ms under SJF"
                " and {{ord_srpt_resp_ms:.0f}} ms under SRPT: the least of the three is {{ord_best}}'s") in template
        assert "its long ones pay: {{ord_srpt_long_ms:.0f}} ms of waiting, against {{ord_sjf_long_ms:.0f}} ms under SJF" \
            in template
        assert "the short prompts wait {{sjf_short_ms:.0f}} ms and the long ones {{sjf_long_ms:.0f}} ms" in template

    def test_the_two_non_preemptive_orders_agree_on_the_law_closer_than_the_law(self, case):
        text, _, _, _ = case
        between = abs(text["ord_fcfs_law_ms"] - text["ord_sjf_law_ms"])
        assert between < abs(text["ord_sjf_law_ms"] - text["ord_law_ms"]) / 5  # "far more closely"


class TestLongPrompt:
    def test_the_chain(self):
        lp = chains.long_prompt()
        achieved = H100.achieved_flops_per_s(0.5)
        assert lp.prompt_tokens_per_chunk == 8192 - 64
        assert lp.chunk1_linear_s == pytest.approx(2 * LLAMA8B.params * 8192 / achieved)
        assert round(lp.chunk1_linear_s * 1e3) == 266
        assert round(lp.chunk1_attention_s * 1e3) == 35
        assert round(lp.chunk1_s * 1e3) == 301
        assert round(lp.later_chunk_increment_s * 1e3) == 70
        assert lp.chunks == math.ceil(100_000 / 8128) == 13
        assert round(lp.itl_before_s * 1e3, 1) == 9.9

    def test_the_gap_climbs_chunk_after_chunk_and_peaks_in_the_last_full_one(self):
        run = steps.simulate([steps.Request(100_000)], budget_tokens=8192, decoders=64, decoder_context_tokens=2048)
        full = [s.duration_s for s in run.steps if s.prefill_tokens == 8128]
        assert all(b > a for a, b in zip(full, full[1:]))
        assert max(run.itl_s) == full[-1]
        assert run.steps[-1].prefill_tokens < 8128 and run.steps[-1].duration_s < full[-1]

    def test_a_quarter_budget_caps_the_step_but_takes_more_steps(self):
        big, small = chains.long_prompt(budget_tokens=8192), chains.long_prompt(budget_tokens=2048)
        assert small.itl_max_s < big.itl_max_s / 3
        assert small.chunks > 3 * big.chunks


class TestTenantCost:
    def test_output_token_weight_from_the_step_model(self):
        tw = chains.token_weights(decoders=64, decoder_context_tokens=2048, prompt_tokens=200)
        # independent recomputation from the catalog
        achieved = H100.achieved_flops_per_s(0.5)
        per_input = (2 * LLAMA8B.params + LLAMA8B.attention_flops_per_pair * 100) / achieved
        step = (LLAMA8B.weight_bytes + 64 * 2048 * LLAMA8B.kv_bytes_per_token) / H100.hbm_bytes_per_s
        assert tw.input_s_per_token == pytest.approx(per_input)
        assert tw.output_s_per_token == pytest.approx(step / 64)
        assert round(tw.output_weight, 1) == 4.8

    def test_in_a_mixed_step_an_output_token_costs_about_one_input_token(self):
        """The 4.76 weight holds for decode-only steps; beside a prefill chunk the step is compute-bound."""
        from glued_values import glued, notebook
        from scripts import prose_tools as prose

        text = glued("09_chains_latency_and_fairness")
        tw = chains.token_weights(decoders=64, decoder_context_tokens=2048, prompt_tokens=200)
        mixed = [(2048, 1)] * 64 + [(0, text["lp_chunk"])]
        cost = [steps.step_cost(s, model=LLAMA8B, hardware=H100, mfu=0.5).duration_s
                for s in (mixed, mixed + [(2048, 1)])]
        weight = (cost[1] - cost[0]) / tw.input_s_per_token
        assert text["tw_mixed_weight"] == pytest.approx(weight)
        assert 0.8 < weight < 1.3 and weight < tw.output_weight / 4
        template = next(t for _, t, _ in prose.templated_cells(notebook("09_chains_latency_and_fairness"))
                        if "{{tw_weight" in t and "{{tw_rule_batch" in t)
        assert "{{tw_mixed_weight" in template  # the limit of the weight is said where the weight is

    def test_the_rule_of_thumb_needs_far_fuller_steps(self):
        weights = {b: chains.token_weights(decoders=b).output_weight for b in (64, 128, 272, 273)}
        assert weights[272] > 3 >= weights[273]
        assert weights[64] > weights[128] > weights[273]  # fuller steps, cheaper output tokens

    def test_the_rule_of_thumb_step_does_not_fit_an_80_gb_h100(self):
        """273 sequences of 2,048 tokens: 273 x 2,048 x 128 KiB of KV + the weights > 80 GB."""
        from glued_values import glued, notebook
        from scripts import prose_tools as prose

        text = glued("09_chains_latency_and_fairness")
        seqs, ctx = text["tw_rule_batch"], text["tw_ctx"]
        assert (seqs, ctx) == (273, 2048)
        kv_per_token = 2 * 32 * 8 * 128 * 2  # K and V, 32 layers, 8 KV heads of 128, bf16 bytes
        assert LLAMA8B.kv_bytes_per_token == kv_per_token
        need = LLAMA8B.weight_bytes + seqs * ctx * kv_per_token
        assert text["rule_kv_gb"] == pytest.approx(seqs * ctx * kv_per_token / 1e9)
        assert text["rule_weights_gb"] == pytest.approx(LLAMA8B.weight_bytes / 1e9)
        assert text["rule_need_gb"] == pytest.approx(need / 1e9)
        assert text["rule_hbm_gb"] == H100.memory_bytes / 1e9 == 80
        assert text["rule_excess_gb"] == pytest.approx((need - H100.memory_bytes) / 1e9)
        assert need > H100.memory_bytes  # "more than the GPU can hold"
        fit_all = (H100.memory_bytes - LLAMA8B.weight_bytes) // (ctx * kv_per_token)
        fit_engine = (0.9 * H100.memory_bytes - LLAMA8B.weight_bytes) // (ctx * kv_per_token)
        assert (text["rule_fit_all"], text["rule_fit_engine"]) == (fit_all, fit_engine) == (238, 208)
        assert text["rule_engine_fraction"] == 0.9
        assert fit_engine < fit_all < seqs  # infeasible, even with all of the memory
        template = next(t for _, t, _ in prose.templated_cells(notebook("09_chains_latency_and_fairness"))
                        if "{{tw_rule_batch" in t)
        assert "{{rule_excess_gb:less|more}} than the\nGPU can hold" in template
        assert "infeasible here: all of the memory holds {{rule_fit_all}} sequences" in template

    def test_costs_with_the_computed_weight_and_the_rule_of_thumb(self):
        w = chains.token_weights().output_weight
        computed = chains.tenant_cost(output_weight=w)
        rule = chains.tenant_cost(output_weight=3.0)
        assert (rule.cost_a, rule.cost_b, rule.ratio) == (500, 11_000, 22)
        assert round(rule.round_robin_share_b, 2) == 0.96
        assert round(computed.ratio) == 19
        assert computed.round_robin_share_b > 0.9  # "B gets almost everything"

    def test_token_fair_splits_about_evenly_and_admits_more_of_a(self):
        w = chains.token_weights().output_weight
        tenants = [fairness.Tenant("A", 200, 100), fairness.Tenant("B", 8000, 1000)]
        rr = fairness.schedule(tenants, policy="round-robin", output_weight=w)
        fair = fairness.schedule(tenants, policy="token-fair", output_weight=w)
        assert abs(fair.shares["B"] - 0.5) < 0.02
        assert rr.requests["A"] == rr.requests["B"]
        assert fair.requests["A"] > 5 * fair.requests["B"]
        from glued_values import glued

        extra = glued("09_chains_latency_and_fairness")["tc_a_extra"]
        assert extra == fair.requests["A"] - rr.requests["A"] > 5 * rr.requests["A"]  # "many more"
