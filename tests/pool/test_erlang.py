"""Erlang B and C, M/M/c waits, square-root staffing, Allen-Cunneen: against published
values and against exact sums computed independently with fractions.Fraction."""

from __future__ import annotations

import math
import random
from fractions import Fraction

import pytest

from lanes.pool import erlang


def exact_erlang_b(c: int, a: Fraction) -> Fraction:
    """B = (a^c / c!) / sum_{k<=c} a^k / k!, summed exactly."""
    terms = [a**k / math.factorial(k) for k in range(c + 1)]
    return terms[-1] / sum(terms)


def exact_erlang_c(c: int, a: Fraction) -> Fraction:
    """C = (a^c/c! * c/(c-a)) / (sum_{k<c} a^k/k! + a^c/c! * c/(c-a)), summed exactly."""
    top = a**c / math.factorial(c) * Fraction(c) / (c - a)
    return top / (sum(a**k / math.factorial(k) for k in range(c)) + top)


class TestPublishedValues:
    def test_two_servers_at_one_erlang_wait_one_time_in_three(self):
        # the textbook M/M/2 case: P(wait) = a^2 / (2 + a) / (1 + a + a^2/(2 - a)) ... = 1/3
        assert exact_erlang_c(2, Fraction(1)) == Fraction(1, 3)
        assert erlang.erlang_c(2, 1.0) == pytest.approx(1 / 3, rel=1e-12)

    def test_erlang_b_table_ten_trunks_five_erlangs(self):
        # Erlang B tables list 1.84% blocking for 10 circuits offered 5 erlangs
        assert float(exact_erlang_b(10, Fraction(5))) == pytest.approx(0.0184, abs=5e-5)
        assert erlang.erlang_b(10, 5.0) == pytest.approx(float(exact_erlang_b(10, Fraction(5))), rel=1e-12)

    def test_two_call_takers_fewer_than_8_percent_wait_over_10_s(self):
        # A 9-1-1 staffing note (al911.org, "Call Calc"): 2 call takers, 60 s calls, 30 calls
        # an hour -> fewer than 8% of callers wait more than 10 s.  Load 0.5 erlang.
        a = Fraction(30, 3600) * 60
        assert exact_erlang_c(2, a) == Fraction(1, 10)
        tail = erlang.mmc_wait_tail(2, float(a), 60, 10)
        assert tail == pytest.approx(0.1 * math.exp(-1.5 * 10 / 60), rel=1e-12)
        assert tail < 0.08

    def test_64_slots_at_56_erlangs(self):
        exact = exact_erlang_c(64, Fraction(56))
        assert float(exact) == pytest.approx(0.2151, abs=5e-5)
        assert erlang.erlang_c(64, 56) == pytest.approx(float(exact), rel=1e-12)

    def test_pollaczek_khinchine_for_one_server(self):
        # M/D/1: mean wait rho S / (2 (1 - rho)); M/M/1: rho S / (1 - rho)
        rho, s = 0.8, 2.0
        assert erlang.allen_cunneen_wait_s(1, rho, s, hold_cv2=0.0) == pytest.approx(rho * s / (2 * (1 - rho)))
        assert erlang.mmc_mean_wait_s(1, rho, s) == pytest.approx(rho * s / (1 - rho))


def simulate_loss(servers, rate, hold, arrivals, seed):
    """M/G/c/c: the share of Poisson arrivals that find every server busy and are turned away."""
    rng = random.Random(seed)
    t, busy, lost = 0.0, [], 0
    for _ in range(arrivals):
        t += rng.expovariate(rate)
        busy = [end for end in busy if end > t]
        if len(busy) >= servers:
            lost += 1
        else:
            busy.append(t + hold(rng))
    return lost / arrivals


class TestErlangB:
    def test_known_values(self):
        assert erlang.erlang_b(1, 1.0) == 0.5  # one server, one erlang: a / (1 + a)
        assert erlang.erlang_b(1, 3.0) == pytest.approx(0.75)
        assert erlang.erlang_b(2, 1.0) == pytest.approx(0.2)  # (1/2) / (1 + 1 + 1/2)
        assert erlang.erlang_b(2, 2.0) == pytest.approx(0.4)  # 2 / (1 + 2 + 2)

    def test_the_recursion(self):
        for a in (0.5, 5.0, 40.0):
            for c in (1, 2, 10, 64):
                prev = erlang.erlang_b(c - 1, a) if c > 1 else 1.0
                assert erlang.erlang_b(c, a) == pytest.approx(a * prev / (c + a * prev), rel=1e-12)

    def test_it_is_the_truncated_poisson_and_below_the_infinite_pool_chance(self):
        from lanes.pool import littles

        a, c = Fraction(48), 64
        p = [a**k / math.factorial(k) for k in range(c + 1)]  # Poisson weights, unnormalised
        assert erlang.erlang_b(c, 48.0) == pytest.approx(float(p[c] / sum(p)), rel=1e-11)
        assert erlang.erlang_b(c, 48.0) < littles.poisson_tail(48.0, c) < erlang.erlang_c(c, 48.0)

    @pytest.mark.parametrize("hold", [lambda r: r.expovariate(1 / 8), lambda r: r.uniform(4, 12),
                                      lambda r: 8.0], ids=["exponential", "uniform", "fixed"])
    def test_insensitive_to_the_hold_time_distribution(self, hold):
        """5 servers offered 4 erlangs (0.5 req/s x 8 s): B = 19.9% whatever the holds' shape."""
        got = simulate_loss(5, 0.5, hold, 60_000, seed=11)
        assert got == pytest.approx(erlang.erlang_b(5, 4.0), abs=0.008)  # about 4 binomial errors


class TestNumerics:
    @pytest.mark.parametrize("c, a", [(1, Fraction(1, 2)), (8, Fraction(13, 2)), (64, Fraction(40)),
                                      (64, Fraction(63)), (200, Fraction(190))])
    def test_recurrence_matches_the_exact_sum(self, c, a):
        assert erlang.erlang_b(c, float(a)) == pytest.approx(float(exact_erlang_b(c, a)), rel=1e-11)
        assert erlang.erlang_c(c, float(a)) == pytest.approx(float(exact_erlang_c(c, a)), rel=1e-11)

    def test_no_overflow_for_a_thousand_servers(self):
        # a**1000 / 1000! overflows a float; the recurrence never forms it
        with pytest.raises(OverflowError):
            float(950.0**1000)
        got = erlang.erlang_c(1000, 950)
        assert got == pytest.approx(float(exact_erlang_c(1000, Fraction(950))), rel=1e-10)
        assert 0 < erlang.erlang_c(100_000, 99_000) < 1

    def test_limits(self):
        assert erlang.erlang_b(5, 0) == 0.0
        assert erlang.erlang_c(5, 0) == 0.0
        assert erlang.erlang_c(1, 0.5) == pytest.approx(0.5)  # M/M/1: P(wait) = rho
        assert erlang.erlang_c(10, 9.999) > 0.99

    def test_erlang_c_exceeds_erlang_b(self):
        for c, a in [(3, 2.0), (64, 56.0), (20, 5.0)]:
            assert erlang.erlang_c(c, a) > erlang.erlang_b(c, a)


class TestWaits:
    def test_tail_at_zero_is_p_wait_and_integrates_to_the_mean(self):
        c, a, s = 64, 56.0, 8.0
        assert erlang.mmc_wait_tail(c, a, s, 0) == erlang.erlang_c(c, a)
        # E[W] = integral of P(W > t) dt
        dt = 0.001
        area = sum(erlang.mmc_wait_tail(c, a, s, (i + 0.5) * dt) for i in range(20_000)) * dt
        assert area == pytest.approx(erlang.mmc_mean_wait_s(c, a, s), rel=1e-4)

    def test_mm2_mean_wait_against_a_simulation(self):
        # an independent check: FCFS M/M/2 by the Lindley-style recursion on two servers
        rng = random.Random(7)
        lam, s, c = 1.5, 1.0, 2
        free = [0.0, 0.0]
        t = total = 0.0
        n = 200_000
        for _ in range(n):
            t += rng.expovariate(lam)
            i = min(range(c), key=free.__getitem__)
            start = max(t, free[i])
            total += start - t
            free[i] = start + rng.expovariate(1 / s)
        assert total / n == pytest.approx(erlang.mmc_mean_wait_s(c, lam * s, s), rel=0.05)


class TestStaffing:
    def test_halfin_whitt_inverse(self):
        for p in (0.5, 0.2, 0.05, 0.01):
            assert erlang.halfin_whitt_wait_probability(erlang.halfin_whitt_beta(p)) == pytest.approx(p, rel=1e-9)

    def test_the_limit_is_erlang_c_for_a_large_pool(self):
        a, beta = 10_000.0, 1.0
        c = int(a + beta * math.sqrt(a))
        assert erlang.erlang_c(c, a) == pytest.approx(erlang.halfin_whitt_wait_probability(beta), abs=0.01)

    def test_square_root_staffing_is_within_a_server_or_two_of_exact(self):
        for a in (5.0, 20.0, 56.0, 200.0, 1000.0):
            for p in (0.5, 0.2, 0.05):
                guess, exact = erlang.sqrt_staffing(a, p), erlang.servers_for_wait(a, p)
                assert abs(guess - exact) <= 1, (a, p, guess, exact)
                assert erlang.erlang_c(exact, a) <= p < erlang.erlang_c(exact - 1, a) if exact - 1 > a else True

    def test_56_erlangs_at_one_in_five(self):
        assert erlang.sqrt_staffing(56, 0.2) == 64
        assert erlang.servers_for_wait(56, 0.2) == 65  # 64 give 21.5%, just above the target


class TestAllenCunneen:
    def test_exponential_is_the_exact_mmc_and_uniform_is_smaller(self):
        c, a, s = 64, 56.0, 8.0
        assert erlang.allen_cunneen_wait_s(c, a, s) == erlang.mmc_mean_wait_s(c, a, s)
        cv2 = (12 - 4) ** 2 / (3 * (12 + 4) ** 2)  # uniform on [4, 12]
        assert erlang.allen_cunneen_wait_s(c, a, s, hold_cv2=cv2) == pytest.approx(
            erlang.mmc_mean_wait_s(c, a, s) * (1 + cv2) / 2)


class TestValidation:
    @pytest.mark.parametrize("call, match", [
        (lambda: erlang.erlang_c(64, 64), "load must be below servers"),
        (lambda: erlang.erlang_c(64, 70.5), "load must be below servers"),
        (lambda: erlang.erlang_b(0, 1), "servers must be an integer >= 1"),
        (lambda: erlang.erlang_b(2.5, 1), "servers must be an integer"),
        (lambda: erlang.erlang_b(3, -1), "load must be a number >= 0"),
        (lambda: erlang.erlang_c(3, float("nan")), "load must be a number"),
        (lambda: erlang.mmc_mean_wait_s(3, 1, 0), "hold_s must be a number > 0"),
        (lambda: erlang.mmc_wait_tail(3, 1, 1, -1), "t_s must be a number >= 0"),
        (lambda: erlang.halfin_whitt_beta(1.0), "p_wait must be a number in"),
        (lambda: erlang.halfin_whitt_beta(0), "p_wait"),
        (lambda: erlang.halfin_whitt_wait_probability(0), "beta must be a number > 0"),
        (lambda: erlang.sqrt_staffing(0, 0.2), "load must be a number > 0"),
        (lambda: erlang.servers_for_wait(10, 1.5), "p_wait"),
        (lambda: erlang.allen_cunneen_wait_s(3, 1, 1, hold_cv2=-1), "hold_cv2"),
    ])
    def test_one_clear_value_error(self, call, match):
        with pytest.raises(ValueError, match=match):
            call()
