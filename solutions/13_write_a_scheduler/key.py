"""Answer key of set 13 (instructor only): the policies are judged online on hidden days."""

import lanes
from lanes.exercises.judge import Check, choice
from lanes.exercises.online import compare_on_days

#: Seeds of the hidden days: only here.  Large, so they cannot be found by trying seeds.
_HIDDEN = (0x5A17_C0DE_9E37_79B9, 0x2545_F491_4F6C_DD1D)


def _days(v):
    return [lanes.Scenario(hours=0.5, slots=v.slots, backlog=600, trough_rate=v.peak_rate / 2,
                           peak_rate=v.peak_rate, seed=secret ^ v.seed) for secret in _HIDDEN]


def _checks(results):
    return [Check(ok, message) for ok, message in results]


def q1(a, v):
    return _checks(compare_on_days(a["q1_policy"], _days(v), "preempt", floor=v.floor))


def q2(a, v):
    return _checks(compare_on_days(a["q2_policy"], _days(v), "preempt", aging_s=v.aging_s))


def q3(a, v):
    return choice("q3_choice", a["q3_choice"], "c",
                  hint="which of these rules needs to know how long a request will hold its slot?")
