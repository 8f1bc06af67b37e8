#!/usr/bin/env python
"""Time grading every exercise set of one student (the issue's budget: under 60 s in total).

    python scripts/bench_grading.py                 # student "bench", all sets with a key
    python scripts/bench_grading.py --student jdoe42 --jobs 2

Builds each set's perfect submission for the student from its master notebook, grades them
all in one run of ``scripts/grade.py`` and prints the wall time and the score. Not a test:
timings depend on the machine and its load.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import pathlib
import subprocess
import sys
import tempfile
import time

ROOT = pathlib.Path(__file__).resolve().parents[1]


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--student", default="bench", help="student identifier (default: bench)")
    ap.add_argument("--jobs", type=int, help="passed to grade.py --jobs")
    args = ap.parse_args(argv)
    spec = importlib.util.spec_from_file_location("assign_exercises", ROOT / "scripts" / "assign_exercises.py")
    assign = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(assign)
    import nbformat

    masters = [m for m in sorted((ROOT / "solutions").glob("*/*.ipynb"))
               if m.stem == m.parent.name and (m.parent / "key.py").is_file()]
    if not masters:
        raise SystemExit("no solutions/NN_slug/ with a master and a key.py: run this in the instructor's checkout")
    with tempfile.TemporaryDirectory(prefix="lanes-bench-") as tmp:
        for m in masters:
            nbformat.write(assign.solution_notebook(m, args.student), pathlib.Path(tmp) / f"{m.stem}.ipynb")
        report = pathlib.Path(tmp) / "report.json"
        cmd = [sys.executable, str(ROOT / "scripts" / "grade.py"), tmp, "--json", str(report), "--quiet"]
        if args.jobs:
            cmd += ["--jobs", str(args.jobs)]
        t0 = time.perf_counter()
        proc = subprocess.run(cmd, capture_output=True, text=True)
        seconds = time.perf_counter() - t0
        if not report.is_file():
            print(proc.stdout[-2000:] + proc.stderr[-2000:], file=sys.stderr)
            return 2
        data = json.loads(report.read_text())
    print(f"graded {len(masters)} sets of student {args.student!r} in {seconds:.1f} s "
          f"(score {data['score']:g} / {data['possible']:g})")
    for s in data["submissions"]:
        print(f"  {pathlib.Path(s['path']).stem:<36} step 1 {s['seconds']:5.1f} s  {s['score']:g} / {s['possible']:g}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
