"""Answer key of set 01 (instructor only: never copied into exercises/)."""

from functools import lru_cache

import lanes
from grading.judge import choice, close


def q1(a, v):
    return close("q1_busy_slots", a["q1_busy_slots"], v.rate_per_s * v.hold_s, rel=1e-6, abs_tol=1e-9,
                 hint="Little's law: average number in the system from rate and time held")


@lru_cache(maxsize=None)
def _measured(rate, hold, seed):
    sc = lanes.Scenario(hours=1, trough_rate=rate, peak_rate=rate, inter_service_s=(hold, hold),
                        backlog=0, seed=seed)
    return lanes.simulate(sc, "priority").mean_busy_interactive


def q2(a, v):
    expected = _measured(v.sim_rate_per_s, v.sim_hold_s, v.seed)
    return close("q2_measured", a["q2_measured"], expected, rel=1e-4,
                 hint="check every parameter of the scenario, the seed included")


def q3(a, v):
    lo, hi = v.inter_service_s
    expected = v.slots - v.peak_rate * (lo + hi) / 2
    return close("q3_idle_at_peak", a["q3_idle_at_peak"], expected, rel=1e-6, abs_tol=1e-9,
                 hint="pool size minus the slots interactive work holds on average at the peak")


def q4(a, v):
    return choice("q4_choice", a["q4_choice"], "b", hint="what sets the two lanes apart?")
