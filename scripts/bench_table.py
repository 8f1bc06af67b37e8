"""Benchmarks of the slot pool, printed as ratios (not timed tests).

1. The anchor table: the seed's 114-line program against ``python -m lanes
   table --tick 1``, both as whole processes (interpreter start-up included), in turn
   for several rounds; wall and CPU time (user + system of the child), the
   ratio of the medians, and a check that every figure is identical (the kit
   names each row by its spec, ``hybrid:8`` for the seed's ``reserve 8+pre``).
   Target: lanes at least 5x faster.
2. The matched M/G/64 day (5 requests/s, holds uniform on 4-12 s, 6 h, no
   batch) in lanes against Ciw 3.2.7 in this process, CPU time (Ciw is installed
   from the package index when missing).  Target: at least 30x, on the 1 s clock
   (lanes' holds are whole seconds, as the seed draws them; Ciw's continuous); the
   event-driven figure (every arrival and end its own instant) is printed beside it.
3. A 6-hour anchor day event-driven (the default clock; target under 1 s) and on
   the 0.02 s clock (``preempt`` and ``hybrid:8``, draws included, CPU time), each
   through the fast loop and through the readable model (:mod:`lanes.pool.model`),
   with the ratio between them.

The seed's program is read out of ../shared/seeds/ when that folder exists
(it is not part of this repository); otherwise part 1 is skipped.

    python scripts/bench_table.py [--rounds N] [--no-ciw]
"""

from __future__ import annotations

import argparse
import importlib
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SEED = ROOT.parent / "shared" / "seeds" / "000_d8ef3ce34be3f789.txt"
CIW = "ciw==3.2.7"


def seed_program() -> str | None:
    """The anchor program's source, cut out of the seed document, or None."""
    if not SEED.exists():
        return None
    text = SEED.read_text()
    start = text.index('"""lanes.py:')
    tail = 'if __name__ == "__main__":\n    main()'
    return text[start : text.index(tail, start) + len(tail)] + "\n"


def timed(cmd: list[str]) -> tuple[float, float, str]:
    """Wall and CPU seconds (the child's user + system) of one whole process, and what it printed."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    out = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True, check=True,
                         env={**os.environ, "PYTHONPATH": str(ROOT)}).stdout
    wall = time.perf_counter() - t0
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return wall, (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime), out


def anchor_table(rounds: int) -> None:
    source = seed_program()
    if source is None:
        print(f"1. seed program not found at {SEED}: skipped")
        return
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "seed_lanes.py"
        path.write_text(source)
        runs: dict[str, list[tuple[float, float]]] = {"seed": [], "lanes": []}
        for _ in range(rounds):  # in turn, so load on the machine hits both alike
            w, c, seed_out = timed([sys.executable, str(path)])
            runs["seed"].append((w, c))
            w, c, ours = timed([sys.executable, "-m", "lanes", "table", "--tick", "1"])
            runs["lanes"].append((w, c))
            if [line[14:] for line in ours.splitlines()] != [line[14:] for line in seed_out.splitlines()]:
                sys.exit("MISMATCH: python -m lanes table --tick 1 differs from the seed's figures")
    med = {k: (statistics.median(w for w, _ in v), statistics.median(c for _, c in v)) for k, v in runs.items()}
    print(f"1. anchor table, whole processes, medians of {rounds} (figures identical every round):")
    for k, (w, c) in med.items():
        print(f"   {k:<6} wall {w * 1000:7.0f} ms, CPU {c * 1000:7.0f} ms")
    print(f"   ratio seed / lanes: {med['seed'][0] / med['lanes'][0]:.1f}x wall, "
          f"{med['seed'][1] / med['lanes'][1]:.1f}x CPU (target >= 5x)")


def mg64_day(rounds: int) -> None:
    try:
        ciw = importlib.import_module("ciw")
    except ImportError:
        subprocess.run([sys.executable, "-m", "pip", "install", "-q", CIW], check=True)
        ciw = importlib.import_module("ciw")
    import lanes

    def ours(tick: float = 1) -> float:
        sc = lanes.Scenario(slots=64, hours=6, backlog=0, trough_rate=5, peak_rate=5, seed=1, tick_s=tick)
        lanes.draw_stream.cache_clear()
        return sum(lanes.simulate(sc, "priority").wait_s)

    def theirs() -> float:
        ciw.seed(1)
        net = ciw.create_network(arrival_distributions=[ciw.dists.Exponential(5.0)],
                                 service_distributions=[ciw.dists.Uniform(4.0, 12.0)], number_of_servers=[64])
        q = ciw.Simulation(net)
        q.simulate_until_max_time(6 * 3600)
        return sum(r.waiting_time for r in q.get_all_records())

    t_ours = statistics.median(_times(ours, rounds))
    t_event = statistics.median(_times(lambda: ours(0), rounds))
    t_ciw = statistics.median(_times(theirs, max(1, rounds // 3)))
    print(f"2. M/G/64 day (5/s, holds 4-12 s, 6 h), CPU: lanes {t_ours * 1000:.0f} ms on the 1 s clock, Ciw "
          f"{ciw.__version__} {t_ciw * 1000:.0f} ms; ratio {t_ciw / t_ours:.0f}x (target >= 30x); lanes event-driven "
          f"{t_event * 1000:.0f} ms ({t_ciw / t_event:.0f}x)")


def step_clock_day() -> None:
    import lanes
    from lanes.pool import model

    for tick, target in ((0, "target < 1 s"), (0.02, "")):
        for spec in ("preempt", "hybrid:8"):
            sc = lanes.Scenario(tick_s=tick)
            times = {}
            for name, run in (("fast loop", lanes.simulate), ("model", model.simulate)):
                lanes.draw_stream.cache_clear()
                times[name] = min(_times(lambda: run(sc, spec), 2))
            clock = "event-driven" if not tick else f"at the {tick:g} s clock"
            print(f"3. 6 h anchor day {clock}, {spec}, CPU with its draws: fast loop {times['fast loop']:.2f} s"
                  f"{f' ({target})' if target else ''}, readable model {times['model']:.2f} s "
                  f"({times['model'] / times['fast loop']:.1f}x the fast loop)")


def _times(f, rounds: int) -> list[float]:
    """CPU seconds of this process for each of ``rounds`` calls (steadier than wall time on a shared machine)."""
    out = []
    for _ in range(rounds):
        t0 = time.process_time()
        f()
        out.append(time.process_time() - t0)
    return out


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--no-ciw", action="store_true", help="skip the Ciw comparison")
    args = ap.parse_args()
    sys.path.insert(0, str(ROOT))
    print(f"load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} CPUs")
    anchor_table(args.rounds)
    if not args.no_ciw:
        mg64_day(args.rounds)
    step_clock_day()
    return 0


if __name__ == "__main__":
    sys.exit(main())
