#!/usr/bin/env python
"""Grade lanes exercise notebooks offline with Otter (``otter run``, no Docker).

    python scripts/grade.py                               # every notebook under exercises/
    python scripts/grade.py exercises/03_headroom/03_headroom.ipynb
    python scripts/grade.py submissions/ --pass-mark 0.6 --json build/grade_report.json

Each path is a notebook, a folder (searched for ``*.ipynb``) or any other file
(reported as "not a notebook").  A notebook is matched to its exercise set by
the assignment name Otter Assign wrote into its metadata, else by its file
name or a folder name such as ``03_headroom``.

Every notebook is graded by Otter Run in its own process group under a time
limit (``--timeout``, seconds per notebook): a notebook that loops forever is
stopped, scores 0, and the others are still graded.  Several notebooks are
graded at once (``--jobs``).  A notebook that raises, calls ``sys.exit``, has
cells deleted, or is not a notebook at all still gets a score and a message.

Prints a per-question score table and a total, writes a JSON report, and exits
with status 1 when the total is below the pass mark (``--pass-mark``, a
fraction of the points), 0 otherwise, 2 on a usage error.

The autograder zips come from ``build/autograder/`` (``--autograder-dir``).
Missing or stale zips (older than their master in ``solutions/``) are built
first with ``scripts/assign_exercises.py --no-execute --no-run-tests``.
"""

from __future__ import annotations

import argparse
import json
import os
import pathlib
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import traceback
import zipfile
from dataclasses import asdict, dataclass, field

ROOT = pathlib.Path(__file__).resolve().parents[1]
SOLUTIONS = ROOT / "solutions"
EXERCISES = ROOT / "exercises"
DEFAULT_AUTOGRADER_DIR = ROOT / "build" / "autograder"
DEFAULT_REPORT = ROOT / "build" / "grade_report.json"

#: Statuses of a graded submission.
GRADED, TIMEOUT, CRASHED, NOT_A_NOTEBOOK, UNKNOWN = "graded", "timeout", "crashed", "not_a_notebook", "unknown_assignment"


@dataclass
class Question:
    name: str
    possible: float
    score: float = 0.0
    messages: list[str] = field(default_factory=list)


@dataclass
class Submission:
    path: str
    assignment: str | None
    status: str = GRADED
    seconds: float = 0.0
    messages: list[str] = field(default_factory=list)
    questions: list[Question] = field(default_factory=list)

    @property
    def score(self) -> float:
        return sum(q.score for q in self.questions)

    @property
    def possible(self) -> float:
        return sum(q.possible for q in self.questions)

    def zero(self) -> None:
        for q in self.questions:
            q.score = 0.0


# --------------------------------------------------------------------------- autograders


def autograder_points(zip_path: pathlib.Path) -> dict[str, float]:
    """Question name -> points, read from the test files in an autograder zip."""
    points: dict[str, float] = {}
    with zipfile.ZipFile(zip_path) as zf:
        for name in sorted(zf.namelist()):
            m = re.fullmatch(r"tests/(\w+)\.py", name)
            if not m:
                continue
            src = zf.read(name).decode("utf-8")
            pm = re.search(r"^points\s*=\s*([0-9.]+)\s*$", src, flags=re.M)
            if pm:
                total = float(pm.group(1))
            else:  # no question total: sum the test cases' points
                total = sum(float(p) for p in re.findall(r"@test_case\(points=([0-9.]+)", src))
            points[m.group(1)] = total
    return dict(sorted(points.items(), key=lambda kv: _natural(kv[0])))


def _natural(s: str) -> list:
    return [int(t) if t.isdigit() else t for t in re.split(r"(\d+)", s)]


def ensure_autograders(ag_dir: pathlib.Path, wanted: set[str] | None = None) -> dict[str, pathlib.Path]:
    """Zips by slug; builds missing or stale ones from solutions/ when it can."""
    masters = {}
    if SOLUTIONS.is_dir():
        masters = {p.name: p / f"{p.name}.ipynb" for p in SOLUTIONS.iterdir() if (p / f"{p.name}.ipynb").is_file()}
    need = []
    for slug, master in masters.items():
        if wanted is not None and slug not in wanted:
            continue
        z = ag_dir / f"{slug}.zip"
        if not z.exists() or z.stat().st_mtime < master.stat().st_mtime:
            need.append(slug)
    if need:
        print(f"building autograder zips for: {', '.join(need)}", flush=True)
        cmd = [sys.executable, str(ROOT / "scripts" / "assign_exercises.py"), "--no-execute", "--no-run-tests",
               "--autograder-dir", str(ag_dir), "--out", tempfile.mkdtemp(prefix="lanes-assign-"), *need]
        proc = subprocess.run(cmd, capture_output=True, text=True)
        if proc.returncode != 0:
            print(proc.stdout + proc.stderr, file=sys.stderr)
            raise SystemExit(f"could not build the autograder zips (exit {proc.returncode})")
    return {z.stem: z for z in sorted(ag_dir.glob("*.zip"))}


# --------------------------------------------------------------------------- submissions


def collect(paths: list[pathlib.Path]) -> list[pathlib.Path]:
    out: list[pathlib.Path] = []
    for p in paths:
        if p.is_dir():
            for nb in sorted(p.rglob("*.ipynb")):
                if any(part.startswith(".") or part == "__pycache__" for part in nb.relative_to(p).parts):
                    continue
                out.append(nb)
        else:
            out.append(p)
    return list(dict.fromkeys(out))


def read_notebook(path: pathlib.Path):
    """(notebook, None) or (None, reason it is not a notebook)."""
    import nbformat

    if not path.exists():
        return None, "file not found"
    if path.suffix != ".ipynb":
        return None, f"not a Jupyter notebook (a {path.suffix or 'extension-less'} file; submit the .ipynb)"
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as e:
        return None, f"not a Jupyter notebook (cannot read it as text: {type(e).__name__})"
    try:
        nb = nbformat.reads(text, as_version=4)
        nbformat.validate(nb)
    except Exception as e:  # JSON errors, schema errors, wrong nbformat ...
        first = str(e).strip().splitlines()[0][:160] if str(e).strip() else type(e).__name__
        return None, f"not a Jupyter notebook (it does not parse as one: {first})"
    if not any(c.cell_type == "code" for c in nb.cells):
        return None, "not a Jupyter notebook with code (it has no code cells)"
    return nb, None


def match_assignment(path: pathlib.Path, nb, known: set[str]) -> str | None:
    if nb is not None:
        name = (nb.metadata.get("otter") or {}).get("assignment_name")
        if name in known:
            return name
    for cand in (path.stem, *[p.name for p in path.parents][:3]):
        if cand in known:
            return cand
    return None


_ASSIGNED = r"^\s*{name}\s*(?::[^=]*)?=(?!=)"


def structure_messages(nb, slug: str) -> dict[str, list[str]]:
    """Per question: which cells of the student template seem to be missing."""
    template = EXERCISES / slug / f"{slug}.ipynb"
    found: dict[str, list[str]] = {}
    if not template.is_file():
        return found
    import nbformat

    tmpl = nbformat.read(template, as_version=4)
    code = "\n".join(c.source for c in nb.cells if c.cell_type == "code")
    question = None
    for cell in tmpl.cells:
        if cell.cell_type != "code":
            continue
        if "otter_answer_cell" in cell.metadata.get("tags", []):
            for var in re.findall(r"^(\w+)\s*=\s*\.\.\.", cell.source, flags=re.M):
                q = (re.match(r"(q\d+)", var) or [None, None])[1]
                if q and not re.search(_ASSIGNED.format(name=re.escape(var)), code, flags=re.M):
                    found.setdefault(q, []).append(f"{var} is never assigned: was its answer cell deleted?")
        m = re.search(r'grader\.check\("(\w+)"\)', cell.source)
        if m:
            question = m.group(1)
            if f'grader.check("{question}")' not in code and f"grader.check('{question}')" not in code:
                found.setdefault(question, []).append("its grader.check cell is missing (deleted?)")
    return found


# --------------------------------------------------------------------------- running otter


_CHILD = r"""
import json, os, sys, traceback
sub, ag, out = sys.argv[1:4]
try:
    import otter.run
    results = otter.run.main(sub, autograder=ag, output_dir=out, no_logo=True)
    errors = []
    nb = getattr(results, "notebook", None)
    for i, cell in enumerate(getattr(nb, "cells", []) or []):
        for o in cell.get("outputs", []) if cell.get("cell_type") == "code" else []:
            if o.get("output_type") == "error":
                errors.append({"cell": i, "ename": o.get("ename", ""), "evalue": str(o.get("evalue", ""))[:200],
                               "source": "".join(cell.get("source", ""))[:120]})
    with open(os.path.join(out, "cell_errors.json"), "w") as f:
        json.dump(errors, f)
except BaseException:
    traceback.print_exc()
    sys.exit(3)
"""


def _descendants(pid: int) -> list[int]:
    """Process ids below ``pid`` (Linux /proc; empty elsewhere)."""
    children: dict[int, list[int]] = {}
    proc = pathlib.Path("/proc")
    if not proc.is_dir():
        return []
    for d in proc.iterdir():
        if not d.name.isdigit():
            continue
        try:
            stat = (d / "stat").read_text()
            ppid = int(stat.rsplit(")", 1)[1].split()[1])
        except (OSError, ValueError, IndexError):
            continue
        children.setdefault(ppid, []).append(int(d.name))
    out, todo = [], [pid]
    while todo:
        for c in children.get(todo.pop(), []):
            out.append(c)
            todo.append(c)
    return out


def _kill_tree(proc: subprocess.Popen) -> None:
    pids = _descendants(proc.pid)  # before the parent dies and they are re-parented
    for sig_target in [("pg", proc.pid), *[("pid", p) for p in pids]]:
        kind, pid = sig_target
        try:
            if kind == "pg":
                os.killpg(pid, signal.SIGKILL)
            else:
                os.kill(pid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError, OSError):
            pass
    try:
        proc.wait(timeout=10)
    except subprocess.TimeoutExpired:
        pass


@dataclass
class _Job:
    sub: Submission
    proc: subprocess.Popen
    workdir: pathlib.Path
    started: float
    log: object


def _start(sub: Submission, zip_path: pathlib.Path) -> _Job:
    workdir = pathlib.Path(tempfile.mkdtemp(prefix="lanes-grade-"))
    (workdir / "out").mkdir()
    log = open(workdir / "otter.log", "w")
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([str(ROOT), *[p for p in env.get("PYTHONPATH", "").split(os.pathsep) if p]])
    env.setdefault("PYTHONUNBUFFERED", "1")
    env["LANES_GRADE_JOB"] = workdir.name  # inherited by the kernel: lets tests find leftovers
    proc = subprocess.Popen(
        [sys.executable, "-c", _CHILD, str(pathlib.Path(sub.path).resolve()), str(zip_path), str(workdir / "out")],
        cwd=workdir, env=env, stdout=log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
        start_new_session=True,
    )
    return _Job(sub, proc, workdir, time.monotonic(), log)


def _tail(path: pathlib.Path, n: int = 6) -> str:
    try:
        lines = [l for l in path.read_text(errors="replace").splitlines() if l.strip() and "WARNING | Kernel" not in l]
    except OSError:
        return ""
    return " | ".join(lines[-n:])[-600:]


def _failure_lines(output: str) -> list[str]:
    msgs = []
    for m in re.finditer(r"^\s*(\w+(?:Error|Exception|Exit)\w*): ?(.*)$", output or "", flags=re.M):
        ename, text = m.group(1), m.group(2).strip()
        msgs.append(text if ename == "AssertionError" and text else f"{ename}: {text}" if text else ename)
    return list(dict.fromkeys(msgs))


def _finish(job: _Job, timed_out: bool, timeout_s: float) -> None:
    sub = job.sub
    job.log.close()
    sub.seconds = round(time.monotonic() - job.started, 1)
    results = job.workdir / "out" / "results.json"
    try:
        if timed_out:
            sub.status = TIMEOUT
            sub.zero()
            sub.messages.append(
                f"timed out: grading took longer than the {timeout_s:g} s limit, so every question scores 0. "
                "A cell probably never finishes (an infinite loop, or a very long sweep); fix it and grade again.")
            return
        if not results.is_file():
            sub.status = CRASHED
            sub.zero()
            sub.messages.append(
                "grading stopped before any test ran, so every question scores 0 (did a cell kill the kernel, "
                f"for example with os._exit() or exit()?). Last output: {_tail(job.workdir / 'otter.log')}")
            return
        data = json.loads(results.read_text())
        by_name = {t.get("name"): t for t in data.get("tests", [])}
        for q in sub.questions:
            t = by_name.get(q.name)
            if t is None:
                q.score = 0.0
                q.messages.append("no result for this question (its tests did not run)")
                continue
            q.score = float(t.get("score") or 0.0)
            if q.score < q.possible:
                q.messages.extend(_failure_lines(t.get("output", "")) or ["a test failed"])
        errs_path = job.workdir / "out" / "cell_errors.json"
        errs = json.loads(errs_path.read_text()) if errs_path.is_file() else []
        for e in errs:
            if e["ename"] == "SystemExit":
                sub.messages.append(
                    f"cell {e['cell']} called sys.exit() ({e['source'].splitlines()[0] if e['source'] else ''!r}); "
                    "grading went on with the next cell, but remove it")
            else:
                first = e["source"].splitlines()[0] if e["source"] else ""
                sub.messages.append(f"cell {e['cell']} raised {e['ename']}: {e['evalue']} (cell starts {first!r})")
    finally:
        shutil.rmtree(job.workdir, ignore_errors=True)


def grade(paths: list[pathlib.Path], *, ag_dir: pathlib.Path, timeout_s: float, jobs: int) -> list[Submission]:
    files = collect(paths)
    zips = ensure_autograders(ag_dir)
    known = set(zips)
    subs: list[Submission] = []
    todo: list[tuple[Submission, pathlib.Path]] = []
    for f in files:
        nb, problem = read_notebook(f)
        slug = match_assignment(f, nb, known)
        sub = Submission(path=str(f), assignment=slug)
        subs.append(sub)
        if slug is None:
            sub.status = UNKNOWN if nb is not None else NOT_A_NOTEBOOK
            sub.messages.append(problem or f"cannot tell which exercise set this is (known: {', '.join(sorted(known))})")
            continue
        sub.questions = [Question(q, p) for q, p in autograder_points(zips[slug]).items()]
        if nb is None:
            sub.status = NOT_A_NOTEBOOK
            sub.messages.append(f"{problem}; every question scores 0")
            continue
        for q in sub.questions:
            q.messages.extend(structure_messages(nb, slug).get(q.name, []))
        todo.append((sub, zips[slug]))

    running: list[_Job] = []
    while todo or running:
        while todo and len(running) < max(1, jobs):
            sub, z = todo.pop(0)
            running.append(_start(sub, z))
        time.sleep(0.2)
        for job in list(running):
            rc = job.proc.poll()
            late = time.monotonic() - job.started > timeout_s
            if rc is None and not late:
                continue
            if rc is None:
                _kill_tree(job.proc)
            else:
                for pid in _descendants(job.proc.pid):  # a kernel left behind, if any
                    try:
                        os.kill(pid, signal.SIGKILL)
                    except OSError:
                        pass
            _finish(job, timed_out=rc is None, timeout_s=timeout_s)
            running.remove(job)
    return subs


# --------------------------------------------------------------------------- reporting


def _fmt(x: float) -> str:
    return f"{x:g}"


def print_report(subs: list[Submission], total: float, possible: float, pass_mark: float) -> None:
    for s in subs:
        head = f"{s.path}  [{s.assignment or '?'}]  {s.status}"
        if s.seconds:
            head += f" in {s.seconds:g} s"
        print(head)
        for m in s.messages:
            print(f"  ! {m}")
        if s.questions:
            w = max(8, *(len(q.name) for q in s.questions))
            print(f"  {'question':<{w}}  {'score':>6}  {'of':>4}  note")
            for q in s.questions:
                note = q.messages[0] if q.messages else ""  # the first problem; the JSON report has all
                print(f"  {q.name:<{w}}  {_fmt(q.score):>6}  {_fmt(q.possible):>4}  {note}")
            pct = f" ({s.score / s.possible:.0%})" if s.possible else ""
            print(f"  {'total':<{w}}  {_fmt(s.score):>6}  {_fmt(s.possible):>4}{pct}")
        print()
    frac = total / possible if possible else 0.0
    verdict = "PASS" if frac >= pass_mark else "FAIL"
    print(f"TOTAL {_fmt(total)} / {_fmt(possible)} ({frac:.1%}); pass mark {pass_mark:.0%}: {verdict}")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description="Grade lanes exercise notebooks offline with otter run.")
    ap.add_argument("paths", nargs="*", type=pathlib.Path, help="notebooks or folders (default: exercises/)")
    ap.add_argument("--autograder-dir", type=pathlib.Path, default=DEFAULT_AUTOGRADER_DIR)
    ap.add_argument("--timeout", type=float, default=180, help="time limit per notebook, seconds (default 180)")
    ap.add_argument("--jobs", type=int, default=os.cpu_count() or 1, help="notebooks graded at once (default: CPUs)")
    ap.add_argument("--pass-mark", type=float, default=0.5,
                    help="exit 1 when the total is below this fraction of the points (default 0.5)")
    ap.add_argument("--json", type=pathlib.Path, default=DEFAULT_REPORT, help="JSON report path")
    args = ap.parse_args(argv)
    if not 0 <= args.pass_mark <= 1:
        ap.error(f"--pass-mark must be a fraction in [0, 1] (got {args.pass_mark})")
    if args.timeout <= 0:
        ap.error(f"--timeout must be > 0 seconds (got {args.timeout})")
    paths = args.paths or [EXERCISES]
    missing = [str(p) for p in paths if not p.exists()]
    if missing:
        ap.error(f"no such file or folder: {', '.join(missing)}")

    t0 = time.monotonic()
    subs = grade(paths, ag_dir=args.autograder_dir.resolve(), timeout_s=args.timeout, jobs=args.jobs)
    if not subs:
        ap.error(f"no notebooks found under {', '.join(map(str, paths))}")
    total = sum(s.score for s in subs)
    possible = sum(s.possible for s in subs)
    print_report(subs, total, possible, args.pass_mark)
    report = {
        "pass_mark": args.pass_mark,
        "score": total,
        "possible": possible,
        "fraction": total / possible if possible else 0.0,
        "passed": bool(possible) and total / possible >= args.pass_mark,
        "seconds": round(time.monotonic() - t0, 1),
        "timeout_s": args.timeout,
        "submissions": [
            {**{k: v for k, v in asdict(s).items() if k != "questions"}, "score": s.score, "possible": s.possible,
             "questions": {q.name: {"score": q.score, "possible": q.possible, "messages": q.messages} for q in s.questions}}
            for s in subs
        ],
    }
    args.json.parent.mkdir(parents=True, exist_ok=True)
    args.json.write_text(json.dumps(report, indent=2) + "\n")
    print(f"report: {args.json}")
    return 0 if report["passed"] else 1


if __name__ == "__main__":
    try:
        sys.exit(main())
    except KeyboardInterrupt:
        sys.exit(130)
    except SystemExit:
        raise
    except BaseException:
        traceback.print_exc()
        sys.exit(2)
