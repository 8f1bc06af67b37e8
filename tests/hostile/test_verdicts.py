"""A failing set-13 policy learns nothing from how it chose to fail.

Issue 41: a policy chose 1 of 13 failure verdicts from the hidden day's arrival count (3.7
bits per hidden day). Now what reaches the student is one of the judge's few fixed texts
(:data:`grading.online.VERDICTS`: by what the judge saw), each said once per set, with no
day, tick, id, exception or rule in it.
"""

from __future__ import annotations

import textwrap

import lanes
import pytest

from grading import online

DAY = lanes.anchor(hours=0.05, slots=12, backlog=60, trough_rate=0.6, peak_rate=1.6, seed=77)
LIMITS = online.JudgeLimits(decision_s=1.0, startup_s=20.0, run_s=60.0)

#: Ways to fail a policy may choose among (the attack picked one by the day's arrivals), by the
#: fixed text the judge must give for each.
FAILURES = {
    "crash": ["raise ValueError('day ' + str(obs.t))", "import os; os._exit(3)", "raise SystemExit(7)"],
    "invalid": ["return Decision(start=[10**9])", "return 'garbage'", "return Decision(start=(i for i in []))",
                "return Decision(evict=[j.id for j in obs.running if j.kind == 'interactive'][:1] or [10**9])",
                "return Decision(start=list(range(10**5)))", "return Decision(start=[float('nan')])"],
    "timeout": ["while True: pass"],
}


def _policy(body: str, at: int = 3) -> str:
    return ("from lanes.pool.protocol import Decision\n"
            f"def decide(obs):\n    if obs.t == {at}:\n" + textwrap.indent(body.replace("; ", "\n"), "        ")
            + "\n    return Decision()\n")


@pytest.mark.parametrize("kind", list(FAILURES))
def test_every_way_to_fail_gives_the_one_fixed_text_of_what_the_judge_saw(kind):
    for body in FAILURES[kind]:
        out = online.compare_on_days(_policy(body), [DAY], "priority", limits=LIMITS)
        assert out == [(False, online.VERDICTS[kind])], (body, out)


def test_a_set_says_each_text_once_and_never_which_day():
    days = [DAY.with_(seed=s) for s in (78, 79, 80, 81)]
    # chosen per day by what the policy saw (its arrivals so far), among many ways of one kind and another
    choose = ("from lanes.pool.protocol import Decision\n"
              "def decide(obs):\n"
              "    if obs.t == 30:\n"
              "        n = len(obs.waiting) + len(obs.running)\n"
              "        if n % 2:\n"
              "            raise KeyError(n)\n"
              "        return Decision(start=[10**9 + n])\n"
              "    return Decision()\n")
    out = online.compare_on_days(choose, days, "priority", limits=LIMITS)
    messages = [m for _, m in out if m]
    assert not any(ok for ok, _ in out) and len(messages) == len(set(messages)) >= 1, out
    assert set(messages) <= {online.VERDICTS["crash"], online.VERDICTS["invalid"]}, out
    text = " ".join(messages)
    assert not any(c.isdigit() for c in text) and "KeyError" not in text and "rule" not in text.replace("rules", "")
