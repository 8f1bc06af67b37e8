"""Calculators: Little's law, slot budget, Poisson bursts, trickle, headroom."""

import math

import pytest

from lanes.pool.littles import (
    batch_trickle_interval_s,
    busy_slots,
    diurnal_max_slope,
    headroom_slots,
    poisson_quantile,
    poisson_tail,
    rate_curve,
    slot_budget,
    zero_wait_busy,
)
from lanes.pool.arrivals import ArrivalStream, rate_per_s
from lanes.pool.scenario import Scenario


class TestLittlesLaw:
    def test_peak_and_trough_of_the_seed(self):
        assert busy_slots(5, 8) == 40
        assert busy_slots(2, 8) == 16

    def test_check_yourself_three_per_second_for_ten(self):
        assert busy_slots(3, 10) == 30

    def test_rate_curve_is_the_rate_at_every_second(self):
        sc = Scenario(hours=1)
        curve = rate_curve(sc)
        assert len(curve) == 3600 and curve[0] == sc.trough_rate and curve[1800] == sc.peak_rate
        assert curve[900] == rate_per_s(sc, 900)

    def test_zero_wait_busy_counts_requests_in_slots_from_arrival_to_arrival_plus_hold(self):
        # arrivals at 0 (hold 2), 0 (hold 1) and 3 (hold 4): busy in seconds 0-6, and 0 at 7, the last end
        stream = ArrivalStream((), (0, 0, 3), (2, 1, 4), seconds=5)
        assert zero_wait_busy(stream) == (2, 1, 0, 1, 1, 1, 1, 0)
        with pytest.raises(ValueError, match="^stream must be a ArrivalStream"):
            zero_wait_busy([0, 1])

    def test_zero_wait_busy_reads_a_traces_instants_and_sub_second_holds(self):
        # at 0.5 s for 0.3 s: never in a slot at a whole second; at 0.9 s for 0.2 s: in one at 1 s;
        # at 2.25 s for 1.5 s: at 3 s only
        stream = ArrivalStream((), (0, 0, 2), (0.3, 0.2, 1.5), (0.5, 0.9, 0.25), seconds=5)
        assert zero_wait_busy(stream) == (0, 1, 0, 1, 0)

    def test_slot_budget_leaves_24_to_48_idle(self):
        b = slot_budget(64, 2, 5, 8)
        assert (b.busy_trough, b.busy_peak, b.idle_peak, b.idle_trough) == (16, 40, 24, 48)

    @pytest.mark.parametrize("rate,hold", [(-1, 8), (5, -8), (float("nan"), 8), ("5", 8)])
    def test_rejects_bad_input(self, rate, hold):
        with pytest.raises(ValueError, match="must be"):
            busy_slots(rate, hold)

    def test_budget_rejects_peak_below_trough(self):
        with pytest.raises(ValueError, match="peak_rate must be >= trough_rate"):
            slot_budget(64, 5, 2, 8)


class TestPoisson:
    def test_burst_to_50_at_mean_40_is_routine(self):
        assert poisson_tail(40, 50) == pytest.approx(0.0703, abs=5e-4)

    def test_tail_at_zero_is_one_and_decreases(self):
        assert poisson_tail(40, 0) == pytest.approx(1.0)
        tails = [poisson_tail(40, k) for k in range(30, 70)]
        assert all(a > b for a, b in zip(tails, tails[1:]))

    def test_quantile_inverts_tail(self):
        k = poisson_quantile(40, 0.99)
        assert poisson_tail(40, k + 1) <= 0.01 < poisson_tail(40, k)

    def test_quantile_rejects_q_outside_unit_interval(self):
        with pytest.raises(ValueError, match=r"q must be a number in \(0, 1\)"):
            poisson_quantile(40, 1.0)


class TestTrickleAndHeadroom:
    def test_one_batch_end_every_1_9_s(self):
        assert batch_trickle_interval_s(120, 64) == pytest.approx(1.875)

    def test_trickle_rejects_zero_slots(self):
        with pytest.raises(ValueError, match="batch_slots must be a number > 0"):
            batch_trickle_interval_s(120, 0)

    def test_diurnal_slope_of_the_anchor_curve(self):
        assert diurnal_max_slope(2, 5, 21600) == pytest.approx(3 * math.pi / 21600)

    def test_shorter_batch_needs_less_headroom(self):
        long_, mid, short = (headroom_slots(40, 8, d) for d in (120, 60, 30))
        assert long_ > mid > short > 0

    def test_drift_adds_to_headroom(self):
        assert headroom_slots(40, 8, 120, drift_per_s=0.1) == headroom_slots(40, 8, 120) + 12

    def test_no_interactive_load_needs_no_headroom(self):
        assert headroom_slots(0, 8, 120) == 0
