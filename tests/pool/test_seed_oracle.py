"""Differential test against the seed's own program, when the seeds are present.

The course's source material (../shared/seeds/, outside this repository)
contains the anchor program.  When it is there, its constants are changed
(pool size, hours, backlog, service ranges, rates, preempt cost) and every
policy's metrics are compared with ``lanes``.  The program is exec'd from the
document, not copied into the repository.
"""

from __future__ import annotations

import types
from pathlib import Path

import pytest

import lanes

SEED_DOC = Path(__file__).resolve().parents[3] / "shared" / "seeds" / "000_d8ef3ce34be3f789.txt"

CASES = [
    dict(slots=16, hours=1, backlog=300, batch=(60, 180), inter=(4, 12), rates=(2.0, 5.0), cost=15, seed=3),
    dict(slots=8, hours=0.5, backlog=120, batch=(30, 90), inter=(2, 6), rates=(0.5, 2.0), cost=60, seed=7),
    dict(slots=24, hours=1, backlog=500, batch=(20, 40), inter=(1, 20), rates=(1.0, 3.0), cost=0, seed=99),
]


def seed_module(case: dict) -> types.ModuleType:
    text = SEED_DOC.read_text()
    start = text.index('"""lanes.py:')
    end = text.index('if __name__ == "__main__":', start)
    source = text[start:end]
    lo, hi = case["rates"]
    for old, new in [
        ("rng.randint(60, 180)", f"rng.randint{case['batch']}"),
        ("rng.randint(4, 12)", f"rng.randint{case['inter']}"),
        ("return 2.0 + 3.0 *", f"return {lo!r} + {hi - lo!r} *"),
    ]:
        assert old in source, old
        source = source.replace(old, new)
    mod = types.ModuleType("seed_lanes")
    exec(compile(source, "seed_lanes.py", "exec"), mod.__dict__)
    mod.SLOTS, mod.HOURS, mod.BATCH_JOBS, mod.PREEMPT_COST = case["slots"], case["hours"], case["backlog"], case["cost"]
    mod.T = int(case["hours"] * 3600)
    return mod


@pytest.mark.skipif(not SEED_DOC.exists(), reason=f"seed document not found at {SEED_DOC}")
@pytest.mark.parametrize("case", CASES, ids=lambda c: f"{c['slots']}slots-{c['hours']}h-seed{c['seed']}")
def test_every_policy_matches_the_seed_program(case):
    mod = seed_module(case)
    sc = lanes.Scenario(
        slots=case["slots"], hours=case["hours"], backlog=case["backlog"], batch_service_s=case["batch"],
        inter_service_s=case["inter"], trough_rate=case["rates"][0], peak_rate=case["rates"][1],
        preempt_cost_s=case["cost"], seed=case["seed"], tick_s=1,  # the seed program's clock
    )
    table = lanes.run_table(sc, ["fifo", "priority", "reserve:2", "reserve:6", "preempt", "hybrid:4"])
    for result, (pol, reserve) in zip(table, [("fifo", 0), ("priority", 0), ("reserve", 2), ("reserve", 6),
                                              ("preempt", 0), ("hybrid", 4)]):
        s = mod.simulate(pol, reserve, seed=case["seed"])
        ours = result.row()
        assert (ours["p50"], ours["p99"], ours["max"], ours["batch_done"], ours["preempted"]) == (
            s["p50"], s["p99"], s["max"], s["batch"], s["pre"]), result.policy.spec
        assert ours["late"] == s["late"] and ours["util"] == s["util"]
