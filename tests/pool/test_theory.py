"""lanes.pool.theory against textbook values, exact fractions and small seeded simulations."""

from __future__ import annotations

import heapq
import math
import random
from fractions import Fraction

import pytest

from lanes.pool import erlang, theory
from lanes.pool.theory import JobClass


class TestResidualLife:
    def test_uniform_60_to_180_has_a_mean_residual_of_65_s_not_60(self):
        batch = JobClass.uniform(0.1, 60, 180)
        assert batch.mean_s == 120
        # E[S^2] = (60^2 + 60 x 180 + 180^2) / 3 = 15,600; / (2 x 120) = 65 exactly
        assert Fraction(60**2 + 60 * 180 + 180**2, 3) / (2 * 120) == 65
        assert batch.residual_s == pytest.approx(65, rel=1e-12)
        assert batch.cv2 == pytest.approx(erlang_uniform_cv2(60, 180))

    def test_exponential_residual_is_the_mean_and_fixed_is_half(self):
        assert JobClass.exponential(1, 8).residual_s == pytest.approx(8)
        assert JobClass.fixed(1, 8).residual_s == pytest.approx(4)

    def test_a_quarter_length_job_leaves_a_quarter_of_the_residual(self):
        assert JobClass.uniform(1, 15, 45).residual_s == pytest.approx(65 / 4)

    def test_a_negative_variance_is_refused(self):
        with pytest.raises(ValueError, match="second_moment_s2 must be at least"):
            JobClass(1.0, 2.0, 3.9)
        with pytest.raises(ValueError, match="mean_s must be"):
            JobClass(1.0, 0, 1)
        with pytest.raises(ValueError, match="hi_s must be"):
            JobClass.uniform(1.0, 5, 4)


def erlang_uniform_cv2(lo, hi):
    """The cv^2 of a uniform hold as lanes.pool.erlang.allen_cunneen_wait_s documents it."""
    return (hi - lo) ** 2 / (3 * (hi + lo) ** 2)


class TestPollaczekKhinchine:
    def test_mm1_and_md1(self):
        rho, s = 0.8, 2.0
        assert theory.mg1_wait_s([JobClass.exponential(rho / s, s)]) == pytest.approx(rho * s / (1 - rho))
        assert theory.mg1_wait_s([JobClass.fixed(rho / s, s)]) == pytest.approx(rho * s / (2 * (1 - rho)))

    def test_agrees_with_allen_cunneen_for_one_server(self):
        job = JobClass.uniform(0.005, 60, 180)
        ac = erlang.allen_cunneen_wait_s(1, job.load, job.mean_s, hold_cv2=job.cv2)
        assert theory.mg1_wait_s([job]) == pytest.approx(ac, rel=1e-12)

    def test_wait_is_load_times_residual_over_idle_share(self):
        users, batch = JobClass.exponential(0.05, 8), JobClass.uniform(0.004, 60, 180)
        rho = users.load + batch.load
        expected = (users.load * users.residual_s + batch.load * batch.residual_s) / (1 - rho)
        assert theory.mg1_wait_s([users, batch]) == pytest.approx(expected)

    def test_overload_is_refused(self):
        with pytest.raises(ValueError, match="classes must bring a total load below 1"):
            theory.mg1_wait_s([JobClass.exponential(1, 1)])
        with pytest.raises(ValueError, match="classes must be a list of JobClass"):
            theory.mg1_wait_s([(1, 2, 8)])


class TestPriority:
    """Two classes of M/M/1, lambda = 1/4 each, S = 1: the textbook case, in exact fractions."""

    CLASSES = [JobClass.exponential(0.25, 1.0), JobClass.exponential(0.25, 1.0)]

    def test_cobham_two_equal_classes(self):
        w0 = Fraction(1, 4) * 2 / 2 * 2  # sum(lambda E[S^2]) / 2 = 1/2
        assert w0 == Fraction(1, 2)
        high, low = theory.cobham_waits_s(self.CLASSES)
        assert high == pytest.approx(float(w0 / Fraction(3, 4)))  # 2/3
        assert low == pytest.approx(float(w0 / (Fraction(3, 4) * Fraction(1, 2))))  # 4/3
        assert theory.mg1_wait_s(self.CLASSES) == pytest.approx(1.0)

    def test_conservation_law_holds_for_fcfs_priority_and_sjf(self):
        classes = [JobClass.exponential(0.05, 8), JobClass.uniform(0.003, 60, 180), JobClass.fixed(0.01, 2)]
        law = theory.conservation_sum_s(classes)
        fcfs = theory.mg1_wait_s(classes)
        assert law == pytest.approx(sum(c.load for c in classes) * fcfs)
        for ranking in ([0, 1, 2], [1, 0, 2], [2, 1, 0]):
            ranked = [classes[i] for i in ranking]
            waits = theory.cobham_waits_s(ranked)
            assert sum(c.load * w for c, w in zip(ranked, waits)) == pytest.approx(law, rel=1e-12)
        sjf = theory.sjf_waits_s(classes)
        assert sum(c.load * w for c, w in zip(classes, sjf)) == pytest.approx(law, rel=1e-12)

    def test_sjf_ranks_by_length_and_has_the_least_mean_wait(self):
        classes = [JobClass.uniform(0.003, 60, 180), JobClass.exponential(0.05, 8), JobClass.fixed(0.01, 2)]
        sjf = theory.sjf_waits_s(classes)
        assert sjf == pytest.approx(theory.cobham_waits_s([classes[2], classes[1], classes[0]])[::-1])
        rate = sum(c.rate_per_s for c in classes)
        mean_sjf = sum(c.rate_per_s * w for c, w in zip(classes, sjf)) / rate
        assert mean_sjf < theory.mg1_wait_s(classes)
        assert sjf[0] > theory.mg1_wait_s(classes)  # the longest jobs pay for it

    def test_preemptive_resume_two_equal_exponential_classes(self):
        high, low = theory.preemptive_resume_times_s(self.CLASSES)
        assert high == pytest.approx(4 / 3)  # M/M/1 alone at rho 1/4: S / (1 - rho)
        # with equal exponential jobs the total in system is that of M/M/1 at rho 1/2: mean 2
        assert (high + low) / 2 == pytest.approx(2.0)
        assert low == pytest.approx(8 / 3)

    def test_the_top_class_does_not_see_the_ones_below_under_preemption(self):
        users = JobClass.exponential(0.05, 8)
        alone = theory.preemptive_resume_times_s([users])[0]
        with_batch = theory.preemptive_resume_times_s([users, JobClass.uniform(0.004, 60, 180)])[0]
        assert with_batch == pytest.approx(alone)
        assert theory.cobham_waits_s([users, JobClass.uniform(0.004, 60, 180)])[0] > 2 * theory.cobham_waits_s([users])[0]

    def test_a_backlog_that_never_runs_out_is_cobhams_limit(self):
        users, batch = JobClass.uniform(0.05, 4, 12), JobClass.uniform(0.0, 60, 180)
        got = theory.priority_wait_with_backlog_s(users, batch)
        # (0.4 x 13/3 + 0.6 x 65) / 0.6: exact fractions
        exact = (Fraction(2, 5) * Fraction(13, 3) + Fraction(3, 5) * 65) / Fraction(3, 5)
        assert got == pytest.approx(float(exact), rel=1e-12)
        near = JobClass(0.6 / 120 * (1 - 1e-9), 120, batch.second_moment_s2)  # backlog load just below 1 - rho
        assert theory.cobham_waits_s([users, near])[0] == pytest.approx(got, rel=1e-6)
        with pytest.raises(ValueError, match="^users must bring a load below 1"):
            theory.priority_wait_with_backlog_s(JobClass.fixed(1, 1), batch)
        with pytest.raises(ValueError, match="^backlog must be"):
            theory.priority_wait_with_backlog_s(users, (0, 120, 15600))

    def test_cobham_against_a_seeded_simulation(self):
        users, batch = JobClass.uniform(0.3, 0.5, 1.5), JobClass.uniform(0.02, 6, 18)
        high, low = theory.cobham_waits_s([users, batch])
        sim = simulate_priority([(0.3, 0.5, 1.5), (0.02, 6, 18)], jobs=120_000, seed=7)
        assert sim[0] == pytest.approx(high, rel=0.05)
        assert sim[1] == pytest.approx(low, rel=0.08)


class TestSRPT:
    def test_one_class_is_first_come_first_served(self):
        one = [JobClass.fixed(5.0, 0.1)]
        assert theory.srpt_response_times_s(one)[0] == pytest.approx(theory.mg1_wait_s(one) + 0.1)

    def test_two_classes_by_hand(self):
        short, long_ = JobClass.fixed(4.0, 0.05), JobClass.fixed(0.5, 1.0)  # loads 0.2 and 0.5
        w0 = (4.0 * 0.05**2 + 0.5 * 0.05**2) / 2  # a long job counts only its last 0.05 s
        t_short = w0 / (1 - 0.2) + 0.05  # no shorter class stretches the wait or the run
        w0_long = (4.0 * 0.05**2 + 0.5 * 1.0) / 2
        t_long = w0_long / ((1 - 0.7) * (1 - 0.2)) + 0.05 + (1.0 - 0.05) / (1 - 0.2)
        assert theory.srpt_response_times_s([long_, short]) == pytest.approx((t_long, t_short))

    def test_srpt_beats_sjf_on_the_mean_and_the_short_class(self):
        mix = [JobClass.fixed(4.0, 0.05), JobClass.fixed(0.5, 1.0)]
        srpt = theory.srpt_response_times_s(mix)
        sjf = [w + c.mean_s for w, c in zip(theory.sjf_waits_s(mix), mix)]
        mean = lambda t: sum(c.rate_per_s * x for c, x in zip(mix, t)) / 4.5  # noqa: E731
        assert mean(srpt) < mean(sjf) and srpt[0] < sjf[0] and srpt[1] > sjf[1]

    def test_only_fixed_lengths_are_taken(self):
        with pytest.raises(ValueError, match="JobClass.fixed"):
            theory.srpt_response_times_s([JobClass.exponential(1.0, 0.5)])


def simulate_priority(streams, jobs, seed):
    """Non-preemptive priority M/G/1 (uniform service), event by event: mean wait per class."""
    rng = random.Random(seed)
    rate = sum(s[0] for s in streams)
    t, arrivals = 0.0, []
    for _ in range(jobs):
        t += rng.expovariate(rate)
        u, k = rng.random() * rate, 0
        while u > streams[k][0]:
            u -= streams[k][0]
            k += 1
        arrivals.append((t, k, rng.uniform(streams[k][1], streams[k][2])))
    waits = [[] for _ in streams]
    queue, free_at, i = [], 0.0, 0
    while i < len(arrivals) or queue:
        while i < len(arrivals) and (arrivals[i][0] <= free_at or not queue):
            a, k, s = arrivals[i]
            heapq.heappush(queue, (k, a, s))
            i += 1
        k, a, s = heapq.heappop(queue)
        start = max(free_at, a)
        waits[k].append(start - a)
        free_at = start + s
    return [sum(w[len(w) // 10:]) / len(w[len(w) // 10:]) for w in waits]


class TestResumeAndRepeat:
    def test_closed_forms(self):
        assert theory.resume_time_s(10, 0.1, 5) == pytest.approx(15)
        assert theory.repeat_time_s(1, 1) == pytest.approx(math.e - 1)
        assert theory.repeat_time_s(1, 3) == pytest.approx((math.exp(3) - 1) / 3)
        assert theory.repeat_time_s(120, 0.01, 2) == pytest.approx(math.expm1(1.2) * (100 + 2))
        assert theory.repeat_time_s(0, 5) == 0 and theory.repeat_time_s(7, 0) == 7
        assert theory.repeat_time_s(10, 1000) == math.inf

    def test_repeat_costs_more_and_the_gap_grows_faster_than_the_length(self):
        gaps = [theory.repeat_time_s(x, 0.01, 2) - theory.resume_time_s(x, 0.01, 2) for x in (30, 60, 120, 240)]
        assert all(g > 0 for g in gaps)
        assert all(b / a > 2 for a, b in zip(gaps, gaps[1:]))  # doubling the job more than doubles the waste
        # and a short job barely notices: the two agree to first order in rate x work
        assert theory.repeat_time_s(1, 1e-4, 2) == pytest.approx(theory.resume_time_s(1, 1e-4, 2), rel=1e-4)

    def test_repeat_against_a_seeded_simulation(self):
        rng, x, g, d, n = random.Random(11), 2.0, 0.5, 1.0, 40_000
        total = 0.0
        for _ in range(n):
            while True:
                hit = rng.expovariate(g)
                if hit >= x:
                    total += x
                    break
                total += hit + rng.expovariate(1 / d)
        assert total / n == pytest.approx(theory.repeat_time_s(x, g, d), rel=0.03)

    @pytest.mark.parametrize("name, kwargs", [("work_s", {"work_s": -1}), ("interrupt_rate_per_s",
                                               {"interrupt_rate_per_s": "fast"}), ("down_s", {"down_s": None})])
    def test_bad_input_names_the_parameter(self, name, kwargs):
        args = {"work_s": 1.0, "interrupt_rate_per_s": 0.1, "down_s": 1.0, **kwargs}
        for f in (theory.resume_time_s, theory.repeat_time_s):
            with pytest.raises(ValueError, match=f"^{name} must be"):
                f(**args)


class TestKingman:
    def test_exact_for_poisson_arrivals(self):
        job = JobClass.uniform(0.004, 60, 180)
        assert theory.kingman_wait_s(job.load, job.mean_s, service_cv2=job.cv2) == pytest.approx(
            theory.mg1_wait_s([job]))

    def test_burstier_arrivals_wait_in_proportion(self):
        base = theory.kingman_wait_s(0.5, 8, arrival_cv2=1, service_cv2=1)
        assert base == pytest.approx(8)
        assert theory.kingman_wait_s(0.5, 8, arrival_cv2=5, service_cv2=1) == pytest.approx(3 * base)

    def test_the_many_server_version_is_allen_cunneen(self):
        one = erlang.allen_cunneen_wait_s(1, 0.5, 8, arrival_cv2=5, hold_cv2=1)
        assert one == pytest.approx(theory.kingman_wait_s(0.5, 8, arrival_cv2=5, service_cv2=1))

    def test_bad_input(self):
        with pytest.raises(ValueError, match="^rho must be a number in"):
            theory.kingman_wait_s(1.0, 8)
        with pytest.raises(ValueError, match="^arrival_cv2 must be"):
            theory.kingman_wait_s(0.5, 8, arrival_cv2=-1)


class TestPeakedStaffing:
    def test_poisson_traffic_gives_the_square_root_rule(self):
        for load in (2.88, 40.0, 400.0):
            assert theory.peaked_sqrt_staffing(load, 1.0, 0.01) == erlang.sqrt_staffing(load, 0.01)

    def test_the_margin_grows_with_the_root_of_the_peakedness(self):
        beta = erlang.halfin_whitt_beta(0.01)
        assert beta == pytest.approx(2.3749, abs=1e-4)
        assert theory.peaked_sqrt_staffing(40, 4.0, 0.01) == math.ceil(40 + 2 * beta * math.sqrt(40))
        # chapter 12's coding hour: L = 2.88 slots, variance-to-mean 13.2 per second
        assert theory.peaked_sqrt_staffing(2.88, 13.19, 0.01) - 2.88 == pytest.approx(15, abs=1)

    def test_bad_input(self):
        with pytest.raises(ValueError, match="^peakedness must be"):
            theory.peaked_sqrt_staffing(40, 0, 0.01)
        with pytest.raises(ValueError, match="^p_wait must be"):
            theory.peaked_sqrt_staffing(40, 2, 1.5)


def test_the_module_examples_run():
    import doctest

    assert doctest.testmod(theory).failed == 0
