"""Answer key of set 01 (instructor only: never copied into exercises/)."""

from functools import lru_cache

import lanes
from lanes.pool import erlang
from grading.judge import choice, close


def q1(a, v):
    return close("q1_busy_slots", a["q1_busy_slots"], v.rate_per_s * v.hold_s, rel=1e-6, abs_tol=1e-9,
                 hint="Little's law: average number in the system from rate and time held")


@lru_cache(maxsize=None)
def _measured(rate, hold, seed):
    sc = lanes.Scenario(hours=1, trough_rate=rate, peak_rate=rate, inter_service_s=(hold, hold),
                        backlog=0, seed=seed)
    return lanes.simulate(sc, "priority").day.mean_busy_interactive


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


@lru_cache(maxsize=None)
def _knee_run(slots, rate, inter_service_s, seed):
    """An interactive-only pool at a constant rate on the event-driven clock (q5)."""
    sc = lanes.Scenario(hours=1, slots=slots, backlog=0, trough_rate=rate, peak_rate=rate,
                        inter_service_s=inter_service_s, seed=seed, tick_s=0)
    waits = lanes.simulate(sc, "fifo").wait_s
    return sum(w > 0 for w in waits) / len(waits)


def q5(a, v):
    load = v.q5_rate_per_s * sum(v.inter_service_s) / 2
    return [close("q5_erlang_c", a["q5_erlang_c"], erlang.erlang_c(v.q5_slots, load), rel=1e-3,
                  hint="Erlang C with your slots and the load: rate times the mean hold"),
            close("q5_waited_share", a["q5_waited_share"], _knee_run(v.q5_slots, v.q5_rate_per_s,
                  v.inter_service_s, v.seed), rel=1e-6,
                  hint="of the admitted requests of that run, the share whose wait was above 0")]
