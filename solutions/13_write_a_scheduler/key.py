"""Answer key of set 13 (instructor only): the policies are judged online on hidden days.

The hidden days' seeds come from the course secret and the student's identifier (as the
capstone's do), so they appear nowhere a student can read, and differ between students.
"""

import hashlib

import lanes
from grading.judge import Check, choice
from grading.online import compare_on_days

#: Hidden days per question.
HIDDEN_DAYS = 2


def hidden_seeds(student: str, secret: str | None = None) -> tuple:
    """The seeds of the hidden days: from the course secret and the identifier, never the public seed.

    64-bit, so that a policy cannot find them by trying seeds against what it sees.
    """
    from lanes.exercises.variants import course_secret

    secret = course_secret() if secret is None else secret
    return tuple(int.from_bytes(hashlib.sha256(f"lanes-13/{secret}/{student}/{k}".encode()).digest()[:8], "big")
                 for k in range(HIDDEN_DAYS))


def _days(v):
    return [lanes.Scenario(hours=0.5, slots=v.slots, backlog=600, trough_rate=v.peak_rate / 2,
                           peak_rate=v.peak_rate, seed=seed) for seed in hidden_seeds(v.student)]


def _checks(results):
    return [Check(ok, message) for ok, message in results]


def q1(a, v):
    return _checks(compare_on_days(a["q1_policy"], _days(v), "preempt", floor=v.floor))


def q2(a, v):
    return _checks(compare_on_days(a["q2_policy"], _days(v), "preempt", aging_s=v.aging_s))


def q3(a, v):
    return choice("q3_choice", a["q3_choice"], "c",
                  hint="which of these rules needs to know how long a request will hold its slot?")
