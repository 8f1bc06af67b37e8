"""Benchmark: the anchor table from the seed's program against ``python -m lanes table``.

All are timed as whole processes (interpreter start-up included), in turn,
several rounds, so that load on the machine hits each alike: the seed's
program, ``python -m lanes table`` (default: two worker processes unless the
load average already fills the CPUs) and ``python -m lanes table --jobs 1``.  Prints the median and
best wall time of each, the speed-up (seed / lanes, from the medians and from
the bests), the load average seen, and what ``python -m lanes table`` imports
before it simulates (``python -X importtime``).  Every output is compared with
the seed's: the script fails if one digit differs.

Last it prints a breakdown of one table, in this process: interpreter
start-up, imports, the random draws, each policy's run and the table's text,
beside the budget a given speed-up leaves (``--target``, default 15x) and the
floor of the draws themselves (the generator's 32-bit words, at least one per
``randint`` and two per ``random()``, fetched in one call).

The seed's program is read out of ../shared/seeds/ when that folder exists (it
is not part of this repository); otherwise only our times are printed.

    python scripts/bench_table.py [--rounds N]
"""

from __future__ import annotations

import argparse
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SEED = ROOT.parent / "shared" / "seeds" / "000_d8ef3ce34be3f789.txt"
OURS = {
    "python -m lanes table": [sys.executable, "-m", "lanes", "table"],
    "python -m lanes table --jobs 1": [sys.executable, "-m", "lanes", "table", "--jobs", "1"],
}


def seed_program() -> str | None:
    """The anchor program's source, cut out of the seed document, or None."""
    if not SEED.exists():
        return None
    text = SEED.read_text()
    start = text.index('"""lanes.py:')
    tail = 'if __name__ == "__main__":\n    main()'
    end = text.index(tail, start) + len(tail)
    return text[start:end] + "\n"


def timed(cmd: list[str]) -> tuple[float, str]:
    """Wall time of one whole process, seconds, and what it printed."""
    t0 = time.perf_counter()
    out = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True, check=True).stdout
    return time.perf_counter() - t0, out


def import_report(top: int = 8) -> list[str]:
    """What ``python -m lanes table`` imports before it simulates, from ``-X importtime``.

    Counts the modules imported after the interpreter's own start-up (``site``
    and what it pulls in), which is what the command itself adds.
    """
    err = subprocess.run(
        [sys.executable, "-X", "importtime", "-m", "lanes", "table"], cwd=ROOT, capture_output=True, text=True, check=True
    ).stderr
    rows = []
    for line in err.splitlines():
        m = re.match(r"import time:\s+(\d+) \|\s+(\d+) \|( +)(\S+)", line)
        if m:
            rows.append((int(m[1]), int(m[2]), len(m[3]) - 1, m[4]))
    after_site = rows[[name for *_, name in rows].index("site") + 1 :] if any(r[3] == "site" for r in rows) else rows
    outer = [(cum, name) for _, cum, depth, name in after_site if depth == 0]
    total_ms = sum(cum for cum, _ in outer) / 1000
    lines = [f"imports of python -m lanes table after start-up: {total_ms:.1f} ms, {len(after_site)} modules"]
    for cum, name in sorted(outer, reverse=True)[:top]:
        lines.append(f"  {cum / 1000:7.1f} ms  {name}")
    return lines


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rounds", type=int, default=7)
    ap.add_argument("--target", type=float, default=15.0, help="speed-up whose time budget the breakdown shows")
    args = ap.parse_args()
    source = seed_program()
    times: dict[str, list[float]] = {name: [] for name in OURS}
    seed_times: list[float] = []
    loads = [os.getloadavg()[0]]
    with tempfile.TemporaryDirectory() as tmp:
        seed_cmd = None
        if source is None:
            print(f"seed program not found at {SEED}: timing lanes only")
        else:
            path = Path(tmp) / "seed_lanes.py"
            path.write_text(source)
            seed_cmd = [sys.executable, str(path)]
        startup = [timed([sys.executable, "-c", "pass"])[0] for _ in range(3)]
        for _ in range(args.rounds):  # in turn, so load on the machine hits all alike
            outputs = {}
            for name, cmd in OURS.items():
                t, outputs[name] = timed(cmd)
                times[name].append(t)
            if seed_cmd:
                t, seed_out = timed(seed_cmd)
                seed_times.append(t)
                if any(out != seed_out for out in outputs.values()):
                    print("MISMATCH: python -m lanes table differs from the seed's output", file=sys.stderr)
                    return 1
            loads.append(os.getloadavg()[0])
    width = max(map(len, OURS)) + 2
    cpus = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()

    def show(name: str, ts: list[float]) -> None:
        print(f"{name:<{width}} median {statistics.median(ts) * 1000:8.1f} ms, best {min(ts) * 1000:8.1f} ms")

    print(f"{args.rounds} rounds; load average {min(loads):.1f} to {max(loads):.1f} on {cpus} CPUs; "
          f"python -c pass: {statistics.median(startup) * 1000:.0f} ms")
    for name in OURS:
        show(name, times[name])
    if seed_times:
        show("seed lanes.py (same table)", seed_times)
        for name in OURS:
            med = statistics.median(seed_times) / statistics.median(times[name])
            best = min(seed_times) / min(times[name])
            print(f"speed-up, seed / {name}: {med:.1f}x (medians), {best:.1f}x (bests)")
        print("(outputs identical in every round)")
    print("\n".join(import_report()))

    sys.path.insert(0, str(ROOT))
    from lanes import Scenario, simulate
    from lanes.pool.arrivals import draw_stream

    cold, warm = [], []
    for i in range(args.rounds):
        scenario = Scenario(seed=1000 + i)  # a new seed: nothing cached
        t0 = time.perf_counter()
        simulate(scenario, "reserve:8")
        cold.append(time.perf_counter() - t0)
        draw_stream(scenario)
        t0 = time.perf_counter()
        simulate(scenario, "reserve:8")  # same scenario, new policy knob: draws re-used
        warm.append(time.perf_counter() - t0)
    print(f"one 6-hour run in process, median of {args.rounds}: {statistics.median(cold) * 1000:.1f} ms with its "
          f"random draws, {statistics.median(warm) * 1000:.1f} ms re-using them (what a policy slider does)")
    imports_ms = float(import_report(top=0)[0].split(": ")[1].split(" ms")[0])
    breakdown(args.rounds, args.target, statistics.median(startup) * 1000, imports_ms,
              statistics.median(seed_times) * 1000 if seed_times else None)
    return 0


def breakdown(rounds: int, target: float, startup_ms: float, imports_ms: float, seed_ms: float | None) -> None:
    """Where one ``python -m lanes table`` spends its time, against the budget of a ``target`` speed-up."""
    import random

    from lanes import DEFAULT_POLICIES, Scenario, run_table, simulate
    from lanes.pool.arrivals import draw_stream

    scenario = Scenario()
    med = lambda f: statistics.median(_times(f, rounds)) * 1000  # noqa: E731
    from lanes.pool.arrivals import _draw

    def fresh_draw():  # the last few streams are cached: clear them so every round draws
        _draw.cache_clear()
        draw_stream(scenario)

    draw_ms = med(fresh_draw)
    stream = draw_stream(scenario)
    runs = {spec: med(lambda spec=spec: simulate(scenario, spec, stream=stream)) for spec in DEFAULT_POLICIES}
    table = run_table(scenario, stream=stream)
    text_ms = med(table.text)
    # The generator's words the anchor draws take, at the least: one per randint, two per random().
    words = len(stream.batch_service_s) + 2 * scenario.ticks + stream.n_arrivals
    floor_ms = med(lambda: random.Random(scenario.seed).getrandbits(32 * words))
    parts = [("python start-up (python -c pass)", startup_ms), ("imports (-X importtime, after site)", imports_ms),
             ("random draws (draw_stream)", draw_ms), *((f"run {spec}", ms) for spec, ms in runs.items()),
             ("table text", text_ms)]
    total = sum(ms for _, ms in parts)
    print(f"breakdown of one table (medians of {rounds}, in process; start-up and imports as measured above):")
    for name, ms in parts:
        print(f"  {ms:8.1f} ms  {name}")
    print(f"  {total:8.1f} ms  sum")
    print(f"  floor of the draws: {words} words of the generator in one call, {floor_ms:.1f} ms")
    if seed_ms is not None:
        budget = seed_ms / target
        print(f"  budget for {target:g}x: seed {seed_ms:.0f} ms / {target:g} = {budget:.0f} ms; start-up alone is "
              f"{startup_ms / budget:.0%} of it, start-up + imports + draws {(startup_ms + imports_ms + draw_ms) / budget:.0%}")


def _times(f, rounds: int) -> list[float]:
    out = []
    for _ in range(rounds):
        t0 = time.perf_counter()
        f()
        out.append(time.perf_counter() - t0)
    return out


if __name__ == "__main__":
    sys.exit(main())
