"""The online judge limits what a policy computes by CPU time, not by the clock on the wall.

Issue 41: at load 15-20 an honest pasted policy failed "took too long" (2 s per decision and
10 s + 5 ms per tick of wall-clock time). Now a day's CPU time is the limit (``RLIMIT_CPU`` on
the policy's process, set before the policy loads), with generous wall-clock backstops. A
policy that is slow on the wall but light on the CPU (it sleeps a little every tick: what a
loaded machine does to an honest one) passes with the default limits; one that spins is
stopped by its CPU limit and told so.
"""

from __future__ import annotations

import lanes

from grading import online

#: 360 ticks: the old wall-clock limit of the whole day was 10 + 0.005 * 360 = 11.8 s.
DAY = lanes.anchor(hours=0.1, slots=12, backlog=120, trough_rate=0.6, peak_rate=1.6, seed=77)


def test_an_honest_policy_slow_on_the_wall_but_not_the_cpu_passes():
    # 40 ms asleep per tick (14.4 s in all, 0 CPU): as an honest policy descheduled at load 20
    slow = ("import time\nfrom lanes.pool.protocol import Decision\n"
            "def decide(obs):\n    time.sleep(0.04)\n"
            "    start = [r.id for r in obs.waiting][:obs.free]\n"
            "    return Decision(start=start + [b.id for b in obs.batch_queue][:obs.free - len(start)])\n")
    verdict = online.judge(slow, DAY)  # the default limits: the honest path
    assert verdict.ok, verdict.reason
    assert verdict.row == {**lanes.simulate(DAY, "priority").row(), "policy": "policy"}


def test_a_policy_that_spins_is_stopped_by_its_cpu_time():
    spin = "from lanes.pool.protocol import Decision\ndef decide(obs):\n    while obs.t >= 0:\n        pass\n"
    verdict = online.judge(spin, DAY, limits=online.JudgeLimits(cpu_s=2))
    assert not verdict.ok and verdict.timed_out and verdict.kind == "timeout", verdict
    assert verdict.reason == "the policy used more than its CPU time while running", verdict
    loads = "from lanes.pool.protocol import Decision\nwhile True:\n    pass\n"
    verdict = online.judge(loads, DAY, limits=online.JudgeLimits(cpu_s=1))
    assert not verdict.ok and verdict.reason == "the policy used more than its CPU time while starting", verdict
