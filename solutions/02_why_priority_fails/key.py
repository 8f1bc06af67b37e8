"""Answer key of set 02 (instructor only)."""

from functools import lru_cache

import lanes
from lanes.pool import theory
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


def _whole_seconds(rate, lo, hi):
    """A class whose service takes lo, lo + 1, ..., hi whole seconds, each as likely (q5)."""
    n, mean = hi - lo + 1, (lo + hi) / 2
    return theory.JobClass(rate, mean, mean * mean + (n * n - 1) / 12)


@lru_cache(maxsize=None)
def _one_slot_mean_wait(rate, inter_service_s, batch_service_s, seed):
    sc = lanes.Scenario(hours=4, slots=1, backlog=2000, batch_service_s=batch_service_s, trough_rate=rate,
                        peak_rate=rate, inter_service_s=inter_service_s, seed=seed, tick_s=0)
    waits = lanes.simulate(sc, "priority").wait_s
    return sum(waits) / len(waits)


def q5(a, v):
    # Cobham with a backlog; moments of the whole-second draws (rel 0.5% also takes a continuous uniform)
    cobham = theory.priority_wait_with_backlog_s(_whole_seconds(v.q5_rate_per_s, *v.q5_inter_service_s),
                                                 _whole_seconds(0, *v.batch_service_s))
    return [close("q5_cobham_s", a["q5_cobham_s"], cobham, rel=0.005,
                  hint="the users' load and the residual lives of both classes, as in Cobham's formula"),
            close("q5_simulated_s", a["q5_simulated_s"],
                  _one_slot_mean_wait(v.q5_rate_per_s, v.q5_inter_service_s, v.batch_service_s, v.seed), rel=1e-6,
                  hint="the mean wait of the admitted user requests of the one-slot run")]
