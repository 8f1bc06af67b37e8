#!/usr/bin/env python
"""Benchmark the online judge: one policy judged over a pipe, tick by tick, on a 6-hour day.

    python scripts/bench_judge.py                       # examples/policies/hybrid.py, 3 runs
    python scripts/bench_judge.py --policy examples/policies/priority.py --runs 5

Prints, per run, the wall-clock time of the judged run (start-up included, the draws
excluded), the cost per tick, and the CPU time of the judge (less the draws) and, with
``--plain`` (the fallback child outside the sandbox), of the policy's process; then the
best and median.  It also checks the judged row against the fast engine's row
for the built-in named by ``--builtin``.  The target is 21,600 ticks in under 3 s.
Wall-clock figures depend on what else the machine runs: the CPU times say how much of
the wall time was the two processes' own work.
"""

from __future__ import annotations

import argparse
import pathlib
import resource
import statistics
import sys

ROOT = pathlib.Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

import lanes  # noqa: E402
from grading import online  # noqa: E402


def cpu(who: int) -> float:
    r = resource.getrusage(who)
    return r.ru_utime + r.ru_stime


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--policy", default=str(ROOT / "examples" / "policies" / "hybrid.py"))
    p.add_argument("--builtin", default="hybrid:8", help="built-in whose row the judged row must equal")
    p.add_argument("--runs", type=int, default=3)
    p.add_argument("--hours", type=float, default=6)
    p.add_argument("--plain", action="store_true",
                   help="run the policy in the plain fallback child (no sandbox), whose CPU time can be counted")
    args = p.parse_args(argv)
    if args.plain:
        online.launch = lambda job, limits: online.PlainChild(job, limits)
    source = pathlib.Path(args.policy).read_text()
    scenario = lanes.Scenario(hours=args.hours)
    expected = lanes.simulate(scenario, args.builtin).row()
    print(f"judging {args.policy} on {scenario.describe()} ({scenario.ticks:,} ticks)"
          f"{' in the plain child' if args.plain else ' in the sandbox'}")
    draw0 = cpu(resource.RUSAGE_SELF)
    lanes.draw_stream(scenario)
    draws_cpu = cpu(resource.RUSAGE_SELF) - draw0
    walls = []
    for i in range(args.runs):
        judge0, child0 = cpu(resource.RUSAGE_SELF), cpu(resource.RUSAGE_CHILDREN)
        v = online.judge(source, scenario)
        judge_cpu, child_cpu = cpu(resource.RUSAGE_SELF) - judge0, cpu(resource.RUSAGE_CHILDREN) - child0
        if not v.ok:
            print(f"run {i + 1}: not ok: {v.reason}")
            return 1
        same = {**v.row, "policy": expected["policy"]} == expected
        walls.append(v.elapsed_s)
        child = f"{child_cpu:.2f} s" if args.plain else "not counted (sandbox; use --plain)"
        print(f"run {i + 1}: {v.elapsed_s:.2f} s wall, {v.elapsed_s / scenario.ticks * 1e6:.0f} us per tick; "
              f"cpu: judge {judge_cpu - draws_cpu:.2f} s (less {draws_cpu:.2f} s of draws), policy process {child}; "
              f"row {'equals' if same else 'DIFFERS FROM'} {args.builtin}")
        if not same:
            return 1
    best, med = min(walls), statistics.median(walls)
    print(f"best {best:.2f} s ({best / scenario.ticks * 1e6:.0f} us per tick), median {med:.2f} s "
          f"({med / scenario.ticks * 1e6:.0f} us per tick)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
