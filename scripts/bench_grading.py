#!/usr/bin/env python
"""Time grading a class made from the masters: one run, then the same class as shards merged.

    python scripts/bench_grading.py                          # 100 students x every set with a key
    python scripts/bench_grading.py --students 4 --sets 3    # a small class
    python scripts/bench_grading.py --shards 4 --jobs 2

Builds each student's perfect submission of each set from the master notebooks (a folder
per login, the tokens of the test secret), grades the class once with ``scripts/grade.py
--jobs J``, then as ``--shards`` shard processes started together (``--jobs`` split between
them) and merged, and prints both wall times, notebooks per second, the score, the judge's
share of the run (from its progress line to the end), and the box's own cost per notebook
(starting ``python -c pass`` in a box against starting it plainly). Not a test:
timings depend on the machine and its load. Run it as root for the real box.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import pathlib
import statistics
import subprocess
import sys
import tempfile
import time

ROOT = pathlib.Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))


def box_overhead(reps: int = 20) -> tuple[float, float]:
    """Median seconds to run ``python -E -s -c pass`` plainly and in a box."""
    from grading import sandbox

    plain, boxed = [], []
    with sandbox.Box() as box:
        for _ in range(reps):
            t = time.perf_counter()
            subprocess.run([sys.executable, "-E", "-s", "-c", "pass"], check=True)
            plain.append(time.perf_counter() - t)
            job = pathlib.Path(tempfile.mkdtemp(dir=box.base))
            t = time.perf_counter()
            with box.popen([sys.executable, "-E", "-s", "-c", "pass"], job_dir=job) as p:
                p.wait(timeout=60)
            boxed.append(time.perf_counter() - t)
    return statistics.median(plain), statistics.median(boxed)


def _timed_run(argv: list, env: dict) -> tuple[float, float | None, str]:
    """Run ``grade.py`` with its progress lines: ``(wall seconds, seconds from the first
    'judging' line to the end or None, the output)``."""
    t = time.perf_counter()
    judged = None
    out = []
    with subprocess.Popen(argv, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True) as p:
        for line in p.stderr:
            out.append(line)
            if judged is None and line.startswith("judging "):
                judged = time.perf_counter()
    end = time.perf_counter()
    return end - t, (end - judged) if judged is not None else None, "".join(out)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--students", type=int, default=100, help="students in the class (default 100)")
    ap.add_argument("--sets", type=int, default=0, help="only the first N sets (default: every set with a key)")
    ap.add_argument("--jobs", type=int, default=os.cpu_count() or 1, help="notebooks at once, in all (default: CPUs)")
    ap.add_argument("--shards", type=int, default=4, help="shard processes for the second run (default 4)")
    args = ap.parse_args(argv)
    for name in ("students", "jobs", "shards"):
        if getattr(args, name) < 1:
            ap.error(f"--{name} must be >= 1 (got {getattr(args, name)})")
    spec = importlib.util.spec_from_file_location("assign_exercises", ROOT / "scripts" / "assign_exercises.py")
    assign = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(assign)
    import nbformat

    from lanes.exercises.variants import TEST_SECRET, student_token

    masters = [m for m in sorted((ROOT / "solutions").glob("*/*.ipynb"))
               if m.stem == m.parent.name and (m.parent / "key.py").is_file()]
    if args.sets:
        masters = masters[:args.sets]
    if not masters:
        raise SystemExit("no solutions/NN_slug/ with a master and a key.py: run this in the instructor's checkout")
    env = {**os.environ, "LANES_TEST_SECRET": "1", "PYTHONPATH": str(ROOT)}
    grade = [sys.executable, str(ROOT / "scripts" / "grade.py")]
    with tempfile.TemporaryDirectory(prefix="lanes-bench-") as tmp:
        tmp = pathlib.Path(tmp)
        subs = tmp / "subs"
        t0 = time.perf_counter()
        for m in masters:
            for i in range(args.students):
                login = f"s{i:04d}"
                (subs / login).mkdir(parents=True, exist_ok=True)
                nbformat.write(assign.solution_notebook(m, student_token(login, TEST_SECRET)),
                               subs / login / f"{m.stem}.ipynb")
        n = len(masters) * args.students
        print(f"class: {args.students} students x {len(masters)} sets = {n} notebooks "
              f"(built in {time.perf_counter() - t0:.1f} s); {os.cpu_count()} CPUs")
        plain, boxed = box_overhead()
        print(f"box overhead: python -c pass takes {plain * 1000:.0f} ms plainly, {boxed * 1000:.0f} ms in a box "
              f"(+{(boxed - plain) * 1000:.0f} ms per notebook, medians of 20)")

        serial, judging, log = _timed_run([*grade, str(subs), "--json", str(tmp / "one.json"), "--jobs",
                                           str(args.jobs), "--pass-mark", "0"], env)
        if not (tmp / "one.json").is_file():
            print(log[-4000:], file=sys.stderr)
            return 2
        rep = json.loads((tmp / "one.json").read_text())
        step1 = [s["seconds"] for s in rep["submissions"] if s["seconds"]]
        print(f"one run (--jobs {args.jobs}): {serial:.1f} s, {n / serial:.2f} notebooks/s ({serial / n:.2f} s per "
              f"notebook); score {rep['score']:g} / {rep['possible']:g}; step 1 median "
              f"{statistics.median(step1):.2f} s per notebook")
        print("judge: " + (f"{judging:.1f} s after the last notebook ran, {judging / serial:.0%} of the run"
                           if judging is not None else "not measured (no 'judging' progress line)"))

        t = time.perf_counter()
        per = max(1, args.jobs // args.shards)
        procs = [subprocess.Popen([*grade, str(subs), "--shard", f"{k}/{args.shards}", "--json",
                                   str(tmp / f"shard-{k}.json"), "--quiet", "--jobs", str(per), "--pass-mark", "0"],
                                  env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
                 for k in range(1, args.shards + 1)]
        for p in procs:
            p.wait()
        merge = subprocess.run([*grade, "merge", *[str(tmp / f"shard-{k}.json") for k in range(1, args.shards + 1)],
                                "--json", str(tmp / "merged.json"), "--pass-mark", "0"],
                               env=env, capture_output=True, text=True)
        sharded = time.perf_counter() - t
        if merge.returncode not in (0, 1):
            print(merge.stderr[-2000:], file=sys.stderr)
            return 2
        merged = json.loads((tmp / "merged.json").read_text())
        same = (merged["score"], merged["possible"]) == (rep["score"], rep["possible"])
        print(f"{args.shards} shards (--jobs {per} each) + merge: {sharded:.1f} s; score {merged['score']:g} / "
              f"{merged['possible']:g} ({'same as' if same else 'DIFFERS from'} one run)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
