"""M/M/1 formulas and the seeded single-queue simulation."""

import math

import pytest

from lanes.gpu import chains, steps
from lanes.lane import queueing


class TestFormula:
    def test_p99_factor_matches_the_card(self):
        assert queueing.mm1_response_quantile_s(1.0, 0.0) == pytest.approx(-math.log(0.01))
        assert queueing.mm1_response_quantile_s(0.0665, 0.5) == pytest.approx(chains.p99_knee().p99_low_load_s)

    def test_target_met_exactly_at_the_chain_limit(self):
        knee = chains.p99_knee()
        assert queueing.mm1_response_quantile_s(0.0665, knee.rho_max) == pytest.approx(1.0)

    @pytest.mark.parametrize("kw, match", [({"rho": 1}, "rho"), ({"percentile": 1}, "percentile"), ({"service_s": 0}, "service_s")])
    def test_validation(self, kw, match):
        args = {"service_s": 0.0665, "rho": 0.5, "percentile": 0.99, **kw}
        with pytest.raises(ValueError, match=match):
            queueing.mm1_response_quantile_s(**args)


class TestSimulation:
    def test_exponential_agrees_with_mm1(self):
        r = queueing.simulate_queue(0.5, requests=100_000, seed=1)
        assert r.measured_rho == pytest.approx(0.5, rel=0.03)
        assert r.mean_response_s == pytest.approx(0.0665 / 0.5, rel=0.05)
        assert r.p99_response_s == pytest.approx(queueing.mm1_response_quantile_s(0.0665, 0.5), rel=0.05)

    def test_lognormal_keeps_the_mean_and_fattens_the_tail(self):
        e = queueing.simulate_queue(0.5, requests=50_000, seed=3)
        ln = queueing.simulate_queue(0.5, service="lognormal", sigma=1.0, requests=50_000, seed=3)
        assert ln.mean_service_s == pytest.approx(0.0665, rel=0.05)
        assert ln.p99_response_s > 1.2 * e.p99_response_s

    def test_prefill_service_uses_the_step_roofline(self):
        assert steps.prefill_service_s(2048) == pytest.approx(0.0687, abs=0.001)
        r = queueing.simulate_queue(0.5, service="prefill", requests=5_000, seed=0, prefill_s=steps.prefill_service_s)
        assert 0.06 < r.mean_service_s < 0.08

    def test_same_seed_same_run_other_seed_differs(self):
        a = queueing.simulate_queue(0.6, requests=2_000, seed=5)
        assert a == queueing.simulate_queue(0.6, requests=2_000, seed=5)
        assert a != queueing.simulate_queue(0.6, requests=2_000, seed=6)

    def test_rho_limit_near_the_formula_and_lower_for_lognormal(self):
        exp_limit = queueing.rho_limit(1.0, step=0.05, requests=20_000, seed=1)
        ln_limit = queueing.rho_limit(1.0, step=0.05, service="lognormal", sigma=1.0, requests=20_000, seed=1)
        assert 0.6 <= exp_limit <= 0.75
        assert ln_limit < exp_limit

    def test_knee_sweep_one_run_per_rho(self):
        runs = queueing.knee_sweep([0.2, 0.4], requests=1_000)
        assert [r.rho for r in runs] == [0.2, 0.4]
        assert runs[0].p99_response_s < runs[1].p99_response_s

    @pytest.mark.parametrize("kw, match", [({"rho": 1.0}, "rho"), ({"service": "pareto"}, "service"), ({"requests": 10}, "requests")])
    def test_validation(self, kw, match):
        with pytest.raises(ValueError, match=match):
            queueing.simulate_queue(**{"rho": 0.5, **kw})
