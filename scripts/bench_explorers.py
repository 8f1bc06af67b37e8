"""Benchmark: how long each explorer takes from a moved control to a new figure (target: 0.3 s).

Every explorer of ``lanes.display`` is built once; then each of its controls is
moved to each of up to ``--moves`` other values in turn, and the time from
setting the value to the new figure and table (the explorer's own ``observe``
callback: simulate, draw, render the PNG) is taken, wall and CPU of this
process.  Printed per explorer: the median and the slowest move, and per clock
for the explorers with a clock control, since a step-sized clock simulates many
more scheduling instants than the anchor's 1 s.  Nothing is asserted: it
prints ratios to the target.

    python scripts/bench_explorers.py [--moves N]
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
os.environ.setdefault("MPLBACKEND", "Agg")

TARGET_S = 0.3


def explorers() -> dict:
    """Every explorer the chapters show, by name: a function that builds it."""
    from lanes.display.gpu import widgets as gpu
    from lanes.display.lane import widgets as lane
    from lanes.display.pool import widgets as pool

    found = {}
    for module in (pool, lane, gpu):
        for name in dir(module):
            if name.endswith("_explorer") and callable(getattr(module, name)):
                found[f"{module.__name__.split('.')[-2]}.{name}"] = getattr(module, name)
    return found


def other_values(control, moves: int) -> list:
    """Up to ``moves`` values the control may take other than its own, spread over its range."""
    if isinstance(control.value, bool):
        return [not control.value]
    if hasattr(control, "options") and control.options:
        labels = getattr(control, "_options_values", None) or [o[1] if isinstance(o, tuple) else o
                                                                 for o in control.options]
        values = [v for v in labels if v != control.value]
    else:
        lo, hi, step = control.min, control.max, control.step or 1
        values = [v for v in (lo, hi, lo + (hi - lo) // 2, lo + (hi - lo) // 4) if v != control.value]
        values = [lo + round((v - lo) / step) * step for v in values]
    return list(dict.fromkeys(values))[:moves]


def time_moves(build, moves: int) -> list[tuple[str, float, float]]:
    """(what was moved, wall s, CPU s) for each move of each control of one explorer."""
    import matplotlib.pyplot as plt

    box = build()
    out = []
    for name, control in box.controls.items():
        start = control.value
        for value in other_values(control, moves):
            clock = f"{value:g} s" if name == "tick_s" else None
            if clock is None and "tick_s" in box.controls:
                clock = f"{box.controls['tick_s'].value:g} s"
            w0, c0 = time.perf_counter(), time.process_time()
            control.value = value  # the explorer's observe callback re-renders now
            out.append((f"{name}={value!r}" + (f" (clock {clock})" if clock else ""),
                        time.perf_counter() - w0, time.process_time() - c0))
            plt.close("all")
        control.value = start
        plt.close("all")
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--moves", type=int, default=3, help="values tried per control (default 3)")
    args = parser.parse_args(argv)
    if args.moves < 1:
        parser.error("--moves must be an integer >= 1")
    print(f"load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} CPUs; target {TARGET_S} s per move")
    worst_all = []
    for name, build in explorers().items():
        rows = time_moves(build, args.moves)
        if not rows:
            continue
        cpu = [c for _, _, c in rows]
        slow = max(rows, key=lambda r: r[2])
        anchor = [c for what, _, c in rows if "clock 1 s" in what]
        worst_all.append((slow[2], name, slow[0]))
        at_1s = f"  at the 1 s clock {statistics.median(anchor):5.2f} s" if anchor else ""
        print(f"{name:34} moves {len(rows):2}  median CPU {statistics.median(cpu):5.2f} s"
              f" ({statistics.median(cpu) / TARGET_S:4.1f}x target){at_1s}"
              f"  slowest {slow[2]:5.2f} s: {slow[0]}")
    worst_all.sort(reverse=True)
    over = [w for w in worst_all if w[0] > TARGET_S]
    print(f"{len(worst_all) - len(over)} of {len(worst_all)} explorers answer every move within {TARGET_S} s CPU")
    return 0


if __name__ == "__main__":
    sys.exit(main())
