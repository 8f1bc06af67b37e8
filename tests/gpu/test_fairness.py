"""Token-fair tenants versus round-robin by request."""

import pytest

from lanes.gpu.fairness import Tenant, schedule

A = Tenant("A", 200, 100)
B = Tenant("B", 8000, 1000)


class TestCost:
    def test_card_costs(self):
        assert A.cost() == 500
        assert B.cost() == 11_000

    def test_weights_are_parameters(self):
        assert B.cost(input_weight=1, output_weight=1) == 9000


class TestRoundRobin:
    def test_b_takes_22_of_23(self):
        r = schedule([A, B], policy="round-robin", capacity_weighted_tokens=1_150_000)
        assert r.shares["B"] == pytest.approx(22 / 23)
        assert round(r.shares["B"], 2) == 0.96

    def test_equal_request_counts(self):
        r = schedule([A, B], policy="round-robin", capacity_weighted_tokens=1_150_000)
        assert r.requests["A"] == r.requests["B"] == 100


class TestTokenFair:
    def test_about_an_even_split(self):
        r = schedule([A, B], policy="token-fair")
        assert r.shares["A"] == pytest.approx(0.5, abs=0.02)
        assert r.shares["B"] == pytest.approx(0.5, abs=0.02)

    def test_a_gets_about_22_requests_per_b_request(self):
        r = schedule([A, B], policy="token-fair")
        assert r.requests["A"] / r.requests["B"] == pytest.approx(22, rel=0.1)

    def test_admits_the_tenant_furthest_behind(self):
        r = schedule([A, B], policy="token-fair", capacity_weighted_tokens=12_000)
        assert r.order[:3] == ("A", "B", "A")

    def test_shares_sum_to_one(self):
        r = schedule([A, B, Tenant("C", 1000, 10)], policy="token-fair")
        assert sum(r.shares.values()) == pytest.approx(1)


class TestValidation:
    def test_negative_tokens(self):
        with pytest.raises(ValueError, match=r"output_tokens must be an integer >= 0 \(got -1\)"):
            Tenant("A", 10, -1)

    def test_unknown_policy(self):
        with pytest.raises(ValueError, match="policy must be one of round-robin, token-fair"):
            schedule([A, B], policy="lottery")

    def test_duplicate_names(self):
        with pytest.raises(ValueError, match="unique names"):
            schedule([A, A])

    def test_zero_capacity(self):
        with pytest.raises(ValueError, match="capacity_weighted_tokens must be a number > 0"):
            schedule([A, B], capacity_weighted_tokens=0)
