"""The one-server simulation of three orders of service, against the closed forms of lanes.pool.theory."""

import pytest

from lanes.lane import service_order as so
from lanes.pool import theory

RATES, SIZES = (4.0, 0.5, 0.3), (0.05, 0.4, 1.0)  # loads 0.2, 0.2, 0.3: three classes, total 0.7
MIX = [theory.JobClass.fixed(r, x) for r, x in zip(RATES, SIZES)]


@pytest.fixture(scope="module")
def runs():
    return so.simulate_orders(RATES, SIZES, jobs=150_000, seed=3)


def test_the_same_arrivals_under_every_order(runs):
    assert len({r.jobs for r in runs.values()}) == 1
    assert len({round(r.busy_fraction, 12) for r in runs.values()}) == 1  # the same work, kept busy
    assert runs["fcfs"].busy_fraction == pytest.approx(0.7, abs=0.02)


def test_fcfs_is_pollaczek_khinchine(runs):
    assert runs["fcfs"].mean_wait_all_s == pytest.approx(theory.mg1_wait_s(MIX), rel=0.06)
    assert max(runs["fcfs"].mean_wait_s) / min(runs["fcfs"].mean_wait_s) < 1.05  # the order ignores the class


def test_sjf_is_cobham_ranked_by_length(runs):
    assert runs["sjf"].mean_wait_s == pytest.approx(theory.sjf_waits_s(MIX), rel=0.08)


def test_srpt_is_schrage_miller(runs):
    assert runs["srpt"].mean_response_s == pytest.approx(theory.srpt_response_times_s(MIX), rel=0.08)


def test_the_conservation_law_holds_for_the_non_preemptive_orders(runs):
    law = theory.conservation_sum_s(MIX)
    for order in ("fcfs", "sjf"):
        assert sum(c.load * w for c, w in zip(MIX, runs[order].mean_wait_s)) == pytest.approx(law, rel=0.06)


def test_srpt_has_the_least_mean_response(runs):
    t = {o: r.mean_response_all_s for o, r in runs.items()}
    assert t["srpt"] < t["sjf"] < t["fcfs"]


def test_tie_rules_on_a_hand_made_stream():
    # one long job (1 s) at t = 0, a short one (0.25 s) at 0.5: SRPT preempts, SJF and FCFS do not
    times, sizes = [0.0, 0.5], [1.0, 0.25]
    assert so._serve("fcfs", times, sizes) == [1.0, 1.25]
    assert so._serve("srpt", times, sizes) == [1.25, 0.75]
    # an arrival at the instant the job in service ends: the job ends first, no preemption
    assert so._serve("srpt", [0.0, 1.0], [1.0, 0.5]) == [1.0, 1.5]
    # equal remaining work does not preempt (strictly shorter only)
    assert so._serve("srpt", [0.0, 0.5], [1.0, 0.5]) == [1.0, 1.5]
    # non-preemptive SJF: of two waiting, the shorter goes next though it came later
    assert so._serve("sjf", [0.0, 0.1, 0.2], [1.0, 0.5, 0.25]) == [1.0, 1.75, 1.25]


def test_mean_and_error():
    mean, err = so.mean_and_error([1.0, 2.0, 3.0])
    assert mean == 2.0 and err == pytest.approx(1 / 3**0.5)
    with pytest.raises(ValueError, match="at least 2"):
        so.mean_and_error([1.0])


@pytest.mark.parametrize("kwargs, match", [
    (dict(rates_per_s=(1.0,), service_s=(0.5, 0.5)), "one entry per class"),
    (dict(rates_per_s=(3.0,), service_s=(0.5,)), "load below 1"),
    (dict(rates_per_s=(1.0,), service_s=(0.0,)), r"service_s\[0\]"),
    (dict(rates_per_s=(1.0,), service_s=(0.5,), order="lifo"), "order must be one of"),
    (dict(rates_per_s=(1.0,), service_s=(0.5,), jobs=10), "jobs must be"),
])
def test_bad_input_names_the_parameter(kwargs, match):
    kwargs = {"order": "fcfs", **kwargs}
    with pytest.raises(ValueError, match=match):
        so.simulate_order(**kwargs)


def test_the_module_example_runs():
    import doctest

    assert doctest.testmod(so).failed == 0
