#!/usr/bin/env python
"""Time grading a class made from the masters, in wall seconds and the machine's CPU seconds.

    python scripts/bench_grading.py                          # 100 students x every set with a key
    python scripts/bench_grading.py --students 10 --shards 0 # a small class, one run
    python scripts/bench_grading.py --shards 4 --jobs 2

Builds each student's perfect submission of each set from the master notebooks (a folder
per login, the tokens of the test secret) and prints:

- the parts, for one student's notebooks: step 1 run plainly (a fresh interpreter per notebook)
  and as the grader runs it (one box, a fork of a warmed-up process per notebook), the runner
  on an empty notebook (a fresh interpreter's fixed cost), and one judge process for that
  student (step 2): CPU seconds per notebook, and wall seconds;
- one run of ``scripts/grade.py --jobs J`` over the class: wall seconds, notebooks per second,
  the CPU the whole machine spent (``/proc/stat``: it counts the processes in the boxes, which
  no rusage of the grader sees, and is this run's cost only when nothing else runs), and the
  wall time a class of ``--project`` notebooks would take on the machine's otherwise idle CPUs
  at that cost;
- with ``--shards N``, the same class as N shard processes started together (``--jobs``
  split between them) and merged.

CPU seconds are what a loaded machine still measures fairly (wall time there is mostly
waiting); on a loaded machine they run higher too (shared caches), so compare runs made at
the same load. Not a test. Run it as root for the real box.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import pathlib
import resource
import shutil
import subprocess
import sys
import tempfile
import time

ROOT = pathlib.Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))


def _cpu() -> float:
    """CPU seconds (user + system) of this process's finished children so far."""
    r = resource.getrusage(resource.RUSAGE_CHILDREN)
    return r.ru_utime + r.ru_stime


def _machine_busy() -> float | None:
    """CPU seconds the whole machine has spent busy since boot (``/proc/stat``; ``None`` elsewhere)."""
    try:
        fields = pathlib.Path("/proc/stat").read_text().split("\n", 1)[0].split()[1:]
    except OSError:
        return None
    user, nice, system, _idle, _iowait, irq, softirq, *_ = map(int, fields)
    return (user + nice + system + irq + softirq) / os.sysconf("SC_CLK_TCK")


def _measured(run, machine: bool = False) -> tuple[float, float]:
    """``(CPU seconds, wall seconds)`` of ``run()``: CPU of this process's children, or with ``machine``
    the whole machine's busy CPU (which counts the processes in a box, reaped in its own PID
    namespace, that no rusage here sees; fair only on an otherwise idle machine)."""
    cpu = _machine_busy if machine and _machine_busy() is not None else _cpu
    c, t = cpu(), time.perf_counter()
    run()
    return cpu() - c, time.perf_counter() - t


def parts(notebooks: list[pathlib.Path], login: str) -> dict:
    """One student's notebooks (``NN_slug.ipynb``): step 1 plainly, step 1 in a box, the runner
    on an empty notebook, and the student's judge: CPU and wall seconds of each, in all."""
    import nbformat

    from grading import classroom, sandbox
    from lanes.exercises.variants import TEST_SECRET, student_token

    out = {}
    with tempfile.TemporaryDirectory(prefix="lanes-bench-parts-") as tmp, sandbox.Box() as box:
        tmp = pathlib.Path(tmp)
        os.chmod(tmp, 0o711)
        plain_argv = lambda *a: [sys.executable, "-E", "-s", "-c", (  # noqa: E731
            f"import sys, runpy; sys.path[:0] = [{str(ROOT)!r}]; "
            "runpy.run_module('grading.runner', run_name='__main__', alter_sys=True)"), *a]
        empty = tmp / "empty.ipynb"
        nbformat.write(nbformat.v4.new_notebook(), empty)
        slug = notebooks[0].stem
        out["empty"] = _measured(lambda: subprocess.run(plain_argv(str(empty), str(tmp / "e.json"), slug),
                                                         check=True))
        answers = {}

        def plain():
            for nb in notebooks:
                subprocess.run(plain_argv(str(nb), str(tmp / f"{nb.stem}.json"), nb.stem), check=True)
                answers[nb.stem] = json.loads((tmp / f"{nb.stem}.json").read_text())

        def boxed():  # as the grader runs them: one box, the notebooks one after another (runner --serve)
            job = pathlib.Path(tempfile.mkdtemp(dir=box.base))
            for k, nb in enumerate(notebooks, 1):
                shutil.copy(nb, job / f"{k}.ipynb")
            argv = sandbox.python_argv("grading.runner", "--serve", *(nb.stem for nb in notebooks))
            with box.popen(argv, job_dir=job, stdout=subprocess.PIPE) as p:
                out = p.communicate(timeout=600)[0]
            ran = 0
            while out:  # "<k> <status> <n>" and the n bytes of notebook k's answers, per notebook
                head, _, out = out.partition(b"\n")
                out = out[max(0, int(head.split()[2])):]
                ran += 1
            if ran != len(notebooks):
                raise SystemExit(f"the box ran {ran} of {len(notebooks)} notebooks")
            sandbox.remove_tree(job)

        out["plain"] = _measured(plain)
        out["boxed"] = _measured(boxed, machine=True)
        jobs = [{"id": i, "slug": slug, "student": student_token(login, TEST_SECRET), "refused": {},
                 "cell_errors": {}, "answers": answers[slug]["answers"]} for i, slug in enumerate(answers)]
        feed = json.dumps({"secret": TEST_SECRET, "hide": [], "site": str(box.site), "jobs": jobs})
        env = {**os.environ, "LANES_TEST_SECRET": "1"}
        out["judge"] = _measured(lambda: subprocess.run(
            [sys.executable, "-I", "-c", classroom.judge_program(), str(ROOT / "solutions")], input=feed,
            capture_output=True, text=True, check=True, env=env), machine=True)
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--students", type=int, default=100, help="students in the class (default 100)")
    ap.add_argument("--sets", type=int, default=0, help="only the first N sets (default: every set with a key)")
    ap.add_argument("--jobs", type=int, default=os.cpu_count() or 1, help="notebooks at once, in all (default: CPUs)")
    ap.add_argument("--shards", type=int, default=4, help="shard processes for a second run (default 4; 0: none)")
    ap.add_argument("--project", type=int, default=1400, help="notebooks of the class to project to (default 1400)")
    args = ap.parse_args(argv)
    for name in ("students", "jobs", "project"):
        if getattr(args, name) < 1:
            ap.error(f"--{name} must be >= 1 (got {getattr(args, name)})")
    if args.shards < 0:
        ap.error(f"--shards must be >= 0 (got {args.shards})")
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
        os.chmod(tmp, 0o711)
        subs = tmp / "subs"
        t0 = time.perf_counter()
        for m in masters:
            for i in range(args.students):
                login = f"s{i:04d}"
                (subs / login).mkdir(parents=True, exist_ok=True)
                nbformat.write(assign.solution_notebook(m, student_token(login, TEST_SECRET)),
                               subs / login / f"{m.stem}.ipynb")
        n, k = len(masters) * args.students, len(masters)
        print(f"class: {args.students} students x {k} sets = {n} notebooks "
              f"(built in {time.perf_counter() - t0:.1f} s); {os.cpu_count()} CPUs; "
              f"load average {os.getloadavg()[0]:.1f} at the start")

        p = parts(sorted((subs / "s0000").glob("*.ipynb")), "s0000")
        (pc, pw), (bc, bw), (jc, jw), (ec, _) = p["plain"], p["boxed"], p["judge"], p["empty"]
        print(f"parts, one student's {k} notebooks (CPU s per notebook): step 1 plainly {pc / k:.2f} in "
              f"{pw / k:.2f} s (a fresh interpreter each; {ec:.2f} of it is the runner on an empty notebook), "
              f"in the grader's box {bc / k:.2f} in {bw / k:.2f} s (one box, a fork each); step 2, the "
              f"judge: {jc / k:.2f} ({jc / (bc + jc):.0%} of step 1 + 2)")

        cpu, wall = _measured(lambda: subprocess.run(
            [*grade, str(subs), "--json", str(tmp / "one.json"), "--jobs", str(args.jobs), "--pass-mark", "0",
             "--quiet"], env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL), machine=True)
        if not (tmp / "one.json").is_file():
            print("grade.py wrote no report", file=sys.stderr)
            return 2
        rep = json.loads((tmp / "one.json").read_text())
        cpus = os.cpu_count() or 1
        print(f"one run (--jobs {args.jobs}): {wall:.1f} s wall, {n / wall:.2f} notebooks per second; "
              f"score {rep['score']:g} / {rep['possible']:g}")
        print(f"the machine was busy {cpu:.1f} CPU s during that run ({cpu / n:.2f} per notebook, "
              f"{cpu / (wall * cpus):.0%} of its {cpus} CPUs)")
        print(f"projected: {args.project} notebooks x {cpu / n:.2f} CPU s / {cpus} CPUs = "
              f"{args.project * cpu / n / cpus:.0f} s on otherwise idle CPUs (at this run's CPU cost per notebook)")
        if not args.shards:
            return 0
        each = max(1, args.jobs // args.shards)

        def sharded():
            procs = [subprocess.Popen([*grade, str(subs), "--shard", f"{i}/{args.shards}", "--json",
                                       str(tmp / f"shard-{i}.json"), "--quiet", "--jobs", str(each), "--pass-mark",
                                       "0"], env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
                     for i in range(1, args.shards + 1)]
            for proc in procs:
                proc.wait()
            subprocess.run([*grade, "merge", *[str(tmp / f"shard-{i}.json") for i in range(1, args.shards + 1)],
                            "--json", str(tmp / "merged.json"), "--pass-mark", "0"], env=env, capture_output=True)

        cpu, wall = _measured(sharded, machine=True)
        if not (tmp / "merged.json").is_file():
            print("merge wrote no report", file=sys.stderr)
            return 2
        merged = json.loads((tmp / "merged.json").read_text())
        same = (merged["score"], merged["possible"]) == (rep["score"], rep["possible"])
        print(f"{args.shards} shards (--jobs {each} each) + merge: {wall:.1f} s wall, {cpu:.1f} s CPU; score "
              f"{merged['score']:g} / {merged['possible']:g} ({'same as' if same else 'DIFFERS from'} one run)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
