"""Answer key of set 05 (instructor only)."""

from functools import lru_cache

import lanes
from grading.checks import all_of
from grading.judge import choice, close, equal


def _window(hours):
    return int((hours / 2 - 0.5) * 3600), int((hours / 2 + 0.5) * 3600)


@lru_cache(maxsize=None)
def _run(hours, slots, seed, policy, **extensions):
    return lanes.simulate(lanes.Scenario(hours=hours, slots=slots, seed=seed), policy, **extensions)


def _peak(v, what="p99", **extensions):
    return _run(v.hours, v.slots, v.seed, "priority", **extensions).window(*_window(v.hours))[what]


# Each question is one criterion: a p99 of whole seconds is shared by many variants, the
# share of late requests beside it is not.
def q1(a, v):
    return all_of(close("q1_peak_p99_floor", a["q1_peak_p99_floor"], _peak(v, floor=v.floor), abs_tol=1e-9,
                        hint="the p99 wait inside the peak window, with the floor"),
                  close("q1_peak_late_floor", a["q1_peak_late_floor"], _peak(v, "late", floor=v.floor),
                        abs_tol=1e-9, hint="the window's late share, with the floor"))


def q2(a, v):
    return all_of(close("q2_peak_change_s", a["q2_peak_change_s"], _peak(v, floor=v.floor) - _peak(v),
                        abs_tol=1e-9, hint="with the floor minus without it; check the sign convention"),
                  close("q2_late_change", a["q2_late_change"], _peak(v, "late", floor=v.floor) - _peak(v, "late"),
                        abs_tol=1e-9, hint="the late share with the floor minus without it"))


def q3(a, v):
    return choice("q3_choice", a["q3_choice"], "a", hint="which slots can interactive requests use?")


def q4(a, v):
    run = _run(v.hours, v.slots, v.seed, "preempt", aging_s=v.aging_s)
    return equal("q4_preempted_aging", a["q4_preempted_aging"], run.preempted,
                 hint="the evictions of preempt with your aging_s")


def q5(a, v):
    run = _run(v.hours, v.slots, v.seed, "preempt", aging_s=v.aging_s)
    return all_of(close("q5_p99_aging", a["q5_p99_aging"], run.p99_s, abs_tol=1e-9,
                        hint="the whole-run interactive p99 wait of that run"),
                  close("q5_late_fraction", a["q5_late_fraction"], run.late_fraction, abs_tol=1e-9,
                        hint="that run's share of late requests"))


def q6(a, v):
    return choice("q6_choice", a["q6_choice"], "b",
                  hint="when were the backlog's jobs queued, and what does the rule count?")
