"""Answer key of set 02 (instructor only)."""

from functools import lru_cache

import lanes
from grading.checks import all_of
from grading.judge import choice, close


def q1(a, v):
    return choice("q1_choice", a["q1_choice"], "b", hint="what does priority decide, and what can it not do?")


@lru_cache(maxsize=None)
def _run(hours, slots, peak_rate, batch_service_s, seed):
    sc = lanes.Scenario(hours=hours, slots=slots, peak_rate=peak_rate, batch_service_s=batch_service_s, seed=seed)
    return lanes.simulate(sc, "priority")


def q2(a, v):
    run = _run(v.hours, v.slots, v.peak_rate, v.batch_service_s, v.seed)
    # one criterion: a p99 of whole seconds is shared by many runs, the late fraction is not
    return all_of(close("q2_p99_s", a["q2_p99_s"], run.p99_s, abs_tol=1e-9,
                        hint="the interactive p99 wait of the whole run, in seconds"),
                  close("q2_late_fraction", a["q2_late_fraction"], run.late_fraction, abs_tol=1e-6,
                        hint="a fraction between 0 and 1, not a percentage"))


def q3(a, v):
    expected = (sum(v.batch_service_s) / 2) / v.slots
    return close("q3_gap_s", a["q3_gap_s"], expected, rel=1e-6,
                 hint="how many batch jobs finish per second when every slot holds one?")


def q4(a, v):
    hold_s = sum(lanes.Scenario().inter_service_s) / 2
    users = v.peak_rate * hold_s  # Little's law at the peak
    gap = (sum(v.batch_service_s) / 2) / (v.slots - users)  # only the rest of the pool holds batch
    return [close("q4_user_slots", a["q4_user_slots"], users, rel=1e-6,
                  hint="arrival rate times the mean time a request holds its slot"),
            close("q4_gap_peak_s", a["q4_gap_peak_s"], gap, rel=1e-6, weight=2,
                  hint="as in q3, but only the slots users do not hold carry batch jobs")]
