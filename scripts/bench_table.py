"""Benchmark: the anchor table from the seed's program against ``python -m lanes table``.

Both are timed as whole processes, alternately, several rounds; the best of
each is compared, for the default (two worker processes where two CPUs are
free) and for a single process (``--jobs 1``).  The seed's program is read out of ../shared/seeds/ when that
folder exists (it is not part of this repository); otherwise only our times are
printed.  Also prints one 6-hour single-policy run timed in process.

    python scripts/bench_table.py [--rounds N]
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SEED = ROOT.parent / "shared" / "seeds" / "000_d8ef3ce34be3f789.txt"


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
    t0 = time.perf_counter()
    out = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True, check=True).stdout
    return time.perf_counter() - t0, out


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rounds", type=int, default=5)
    args = ap.parse_args()
    ours = {
        "python -m lanes table": [sys.executable, "-m", "lanes", "table"],
        "python -m lanes table --jobs 1": [sys.executable, "-m", "lanes", "table", "--jobs", "1"],
    }
    source = seed_program()
    best = {name: float("inf") for name in ours}
    best_seed = float("inf")
    with tempfile.TemporaryDirectory() as tmp:
        seed_cmd = None
        if source is None:
            print(f"seed program not found at {SEED}: timing lanes only")
        else:
            path = Path(tmp) / "seed_lanes.py"
            path.write_text(source)
            seed_cmd = [sys.executable, str(path)]
        for _ in range(args.rounds):  # alternate, so load on the machine hits all alike
            outputs = {}
            for name, cmd in ours.items():
                t, outputs[name] = timed(cmd)
                best[name] = min(best[name], t)
            if seed_cmd:
                t, seed_out = timed(seed_cmd)
                best_seed = min(best_seed, t)
                if any(out != seed_out for out in outputs.values()):
                    print("MISMATCH: python -m lanes table differs from the seed's output", file=sys.stderr)
                    return 1
    width = max(map(len, ours)) + 2
    for name in ours:
        print(f"{name:<{width}} best of {args.rounds}: {best[name] * 1000:8.1f} ms")
    if source is not None:
        print(f"{'seed lanes.py (same table)':<{width}} best of {args.rounds}: {best_seed * 1000:8.1f} ms")
        for name in ours:
            print(f"speed-up, seed / {name}: {best_seed / best[name]:.1f}x")
        print("(outputs identical; the default runs the policies in two processes where two CPUs are free)")

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
    print(f"one 6-hour run in process, best of {args.rounds}: {min(cold) * 1000:.1f} ms with its random draws, "
          f"{min(warm) * 1000:.1f} ms re-using them (what a policy slider does)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
