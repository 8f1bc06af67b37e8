#!/usr/bin/env python
"""Grade lanes exercise notebooks: a thin command over ``lanes.exercises.classroom`` and ``.sandbox``.

    python scripts/grade.py init                             # once per course: the course secret
    python scripts/grade.py tokens --roster roster.csv       # each student's STUDENT value, to hand out
    python scripts/grade.py submissions/ --roster roster.csv --csv gradebook.csv --feedback feedback/
    python scripts/grade.py submissions/ --shard 2/4 --json shard-2.json      # one share of the students
    python scripts/grade.py merge shard-*.json --json report.json --csv gradebook.csv
    python scripts/grade.py exercises/ --forms-only          # practice feedback, no keys, no secret

Run it from the instructor's private checkout: the answer keys ``solutions/NN_slug/key.py``
(``--solutions``) and the course secret (``.lanes-course-secret``, git-ignored; ``--secret``)
are needed to award points. See ``book/grading.md`` for the whole procedure.

**Step 1** executes each notebook in a bubblewrap box (``lanes.exercises.sandbox``): all
namespaces new, a root holding only the interpreter, a read-only copy of ``lanes`` and the
job folder, a fresh unprivileged uid, a cgroup per job where the machine allows it
(rlimits otherwise, with one warning line). The box exports only the answers, as JSON.
**Step 2** is a fresh ``python -I`` process per student running ``lanes.exercises.judge``: it
checks every answer's form again and recomputes the expected values for the student's variant.
Each student's time is bounded (``--max-copies``, ``--judge-timeout``, ``--student-time``).

Who handed a notebook in comes from ``--roster`` or the folder layout (a folder per login,
or ``<login>_....ipynb``), or ``--student`` for one student's own folder; the notebook's
``STUDENT`` must be that student's token. Of several copies per student and set, the
latest counts. Writes the JSON report (``--json``: ``submissions`` with ``score`` and
``possible`` each), and optionally a gradebook (``--csv``) and per-student feedback
(``--feedback DIR``). Exit status: 1 when the total is below ``--pass-mark``, 0 otherwise,
2 on a usage error (one line on stderr).
"""

from __future__ import annotations

import argparse
import json
import os
import pathlib
import signal
import sys
import time
import traceback

ROOT = pathlib.Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

# nbformat validates with jsonschema, which at import builds 39 parser grammars for the
# "iri" string formats when rfc3987_syntax is installed (about 2 s of CPU per process; the
# notebook schema uses no string format), so this process goes without them.
sys.modules.setdefault("rfc3987_syntax", None)  # type: ignore[assignment]

try:  # what reads the notebooks: the grading extra (pip install -e ".[grading]")
    import nbformat  # noqa: E402,F401
except ImportError:
    sys.exit("grade.py: grading needs nbformat and IPython: pip install -e \".[grading]\" (or -r requirements.txt)")

from lanes.exercises import classroom, sandbox  # noqa: E402
from lanes.exercises import variants  # noqa: E402

SOLUTIONS = ROOT / "solutions"
EXERCISES = ROOT / "exercises"
SECRET_FILE = ROOT / ".lanes-course-secret"
DEFAULT_REPORT = ROOT / "build" / "grade_report.json"


def _secret_path(arg: pathlib.Path | None) -> pathlib.Path:
    return arg or pathlib.Path(os.environ.get("LANES_COURSE_SECRET_FILE", SECRET_FILE))


def _load_secret(path: pathlib.Path) -> str:
    return variants.load_course_secret(path, allow_test=os.environ.get("LANES_TEST_SECRET") == "1")


def cmd_init(argv: list[str]) -> int:
    ap = argparse.ArgumentParser(prog="grade.py init", description="Write a new course secret (git-ignored).")
    ap.add_argument("--secret", type=pathlib.Path, help=f"where (default {SECRET_FILE.name} at the checkout root)")
    ap.add_argument("--force", action="store_true", help="replace an existing secret (changes every token)")
    args = ap.parse_args(argv)
    path = _secret_path(args.secret)
    if path.exists() and not args.force:
        print(f"grade.py init: {path} exists; --force replaces it (every student's token changes)", file=sys.stderr)
        return 2
    path.parent.mkdir(parents=True, exist_ok=True)
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "w") as f:
        f.write(variants.new_course_secret() + "\n")
    print(f"wrote a new course secret to {path} (keep it private; it is git-ignored)")
    return 0


def cmd_tokens(argv: list[str]) -> int:
    ap = argparse.ArgumentParser(prog="grade.py tokens", description="Each student's STUDENT value (CSV on stdout).")
    ap.add_argument("--roster", type=pathlib.Path, required=True)
    ap.add_argument("--secret", type=pathlib.Path)
    args = ap.parse_args(argv)
    try:
        secret = _load_secret(_secret_path(args.secret))
        roster = classroom.load_roster(args.roster)
    except (OSError, ValueError) as e:
        print(f"grade.py tokens: {e}", file=sys.stderr)
        return 2
    import csv

    out = csv.writer(sys.stdout)
    out.writerow(["login", "name", "STUDENT"])
    for login in sorted(roster.names):
        out.writerow([login, classroom._safe_cell(roster.names[login]), variants.student_token(login, secret)])
    return 0


def _write_outputs(rep: dict, args) -> None:
    args.json.parent.mkdir(parents=True, exist_ok=True)
    args.json.write_text(json.dumps(rep, indent=2) + "\n")
    print(f"report: {args.json}")
    if getattr(args, "csv", None):
        classroom.write_gradebook(rep, args.csv)
        print(f"gradebook: {args.csv}")
    if getattr(args, "feedback", None):
        written = classroom.write_feedback(rep, args.feedback)
        print(f"feedback: {len(written)} file(s) in {args.feedback}")


def cmd_merge(argv: list[str]) -> int:
    ap = argparse.ArgumentParser(prog="grade.py merge", description="Combine shard reports into one.")
    ap.add_argument("reports", nargs="+", type=pathlib.Path)
    ap.add_argument("--json", type=pathlib.Path, default=DEFAULT_REPORT)
    ap.add_argument("--csv", type=pathlib.Path)
    ap.add_argument("--feedback", type=pathlib.Path)
    ap.add_argument("--pass-mark", type=float, help="exit 1 below this fraction (default: the shards' own)")
    args = ap.parse_args(argv)
    try:
        rep = classroom.merge([json.loads(p.read_text()) for p in args.reports])
        if args.pass_mark is not None:
            rep["pass_mark"] = args.pass_mark
            rep = classroom._totals(rep)
    except (OSError, ValueError) as e:
        print(f"grade.py merge: {e}", file=sys.stderr)
        return 2
    _write_outputs(rep, args)
    print(f"TOTAL {rep['score']:g} / {rep['possible']:g} over {rep['students']} student(s)")
    return 0 if rep["passed"] else 1


def _shard(text: str) -> tuple[int, int]:
    try:
        k, n = (int(x) for x in text.split("/"))
    except ValueError:
        raise argparse.ArgumentTypeError(f"--shard must be K/N, such as 2/4 (got {text!r})") from None
    if not 1 <= k <= n:
        raise argparse.ArgumentTypeError(f"--shard K/N needs 1 <= K <= N (got {text!r})")
    return k, n


def print_report(subs, rep: dict) -> None:
    for s in subs:
        head = f"{s.path}  [{s.assignment or '?'}]  {s.status}"
        if s.login:
            head += f"  {s.login}"
        if not s.counted:
            head += "  (not counted)"
        if s.seconds:
            head += f"  ({s.seconds:g} s)"
        print(head)
        for m in s.messages:
            print(f"  ! {m}")
        for q in s.questions:
            note = q.messages[0] if q.messages else ("form ok" if q.form_ok else "")
            print(f"  {q.name:<8}  {q.score:>6g}  {q.possible:>4g}  {note}")
        print()
    print(f"TOTAL {rep['score']:g} / {rep['possible']:g} ({rep['fraction']:.1%}) over {rep['students']} "
          f"student(s); pass mark {rep['pass_mark']:.0%}: {'PASS' if rep['passed'] else 'FAIL'}")


class UsageError(Exception):
    """A bad argument: one line on stderr, exit status 2."""


def _usage(msg: str):
    raise UsageError(msg)


def main(argv: list[str] | None = None) -> int:
    try:
        return _main(argv)
    except UsageError as e:
        print(f"grade.py: {e}", file=sys.stderr)
        return 2


def _main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    sub = {"init": cmd_init, "tokens": cmd_tokens, "merge": cmd_merge}
    if argv and argv[0] in sub:
        return sub[argv[0]](argv[1:])
    ap = argparse.ArgumentParser(description="Grade lanes exercise notebooks (two steps, boxed).")
    ap.add_argument("paths", nargs="*", type=pathlib.Path, help="notebooks or folders (default: exercises/)")
    ap.add_argument("--roster", type=pathlib.Path, help="CSV: login[, file][, name] (who handed in what)")
    ap.add_argument("--student", help="every notebook is this login's (one student's own folder)")
    ap.add_argument("--solutions", type=pathlib.Path, default=SOLUTIONS, help="answer keys NN_slug/key.py")
    ap.add_argument("--secret", type=pathlib.Path, help=f"the course secret file (default {SECRET_FILE.name})")
    ap.add_argument("--shard", type=_shard, default=(1, 1), help="grade share K of N of the students (K/N)")
    ap.add_argument("--timeout", type=float, default=120.0, help="wall time per notebook, s (default 120)")
    ap.add_argument("--cpu-limit", type=int, default=120, help="CPU time per notebook, s (default 120)")
    ap.add_argument("--memory-mb", type=int, default=3072, help="memory per notebook, MiB (default 3072)")
    ap.add_argument("--max-procs", type=int, default=64, help="processes and threads per notebook (default 64)")
    ap.add_argument("--jobs", type=int, default=min(4, os.cpu_count() or 1), help="notebooks run at once")
    ap.add_argument("--max-copies", type=int, default=5, help="copies per student and set run, the latest (default 5)")
    ap.add_argument("--judge-timeout", type=float, default=300.0, help="step 2 time per notebook, s (default 300)")
    ap.add_argument("--student-time", type=float, default=3600.0,
                    help="grading time per student in all, s (default 3600)")
    ap.add_argument("--pass-mark", type=float, default=0.5, help="exit 1 below this fraction (default 0.5)")
    ap.add_argument("--json", type=pathlib.Path, default=DEFAULT_REPORT, help="JSON report path")
    ap.add_argument("--csv", type=pathlib.Path, help="also write a gradebook (CSV) here")
    ap.add_argument("--feedback", type=pathlib.Path, help="also write a markdown file per student here")
    ap.add_argument("--quiet", action="store_true", help="no progress lines")
    ap.add_argument("--forms-only", action="store_true", help="practice feedback: answer forms only, no keys")
    args = ap.parse_args(argv)
    if not 0 <= args.pass_mark <= 1:
        _usage(f"--pass-mark must be a fraction in [0, 1] (got {args.pass_mark})")
    for name in ("timeout", "cpu_limit", "memory_mb", "max_procs", "jobs", "max_copies", "judge_timeout",
                 "student_time"):
        if getattr(args, name) <= 0:
            _usage(f"--{name.replace('_', '-')} must be > 0 (got {getattr(args, name)})")
    paths = args.paths or [EXERCISES]
    missing = [str(p) for p in paths if not os.path.lexists(p)]
    if missing:
        _usage(f"no such file or folder: {', '.join(missing)}")
    roster = secret = None
    try:
        if args.student is not None:
            args.student = variants.check_login(args.student)
        if args.roster is not None:
            roster = classroom.load_roster(args.roster)
        if not args.forms_only:
            secret = _load_secret(_secret_path(args.secret))
    except (OSError, ValueError) as e:
        _usage(str(e))
    t0 = time.monotonic()
    limits = sandbox.Limits(timeout_s=args.timeout, cpu_s=args.cpu_limit, memory_mb=args.memory_mb,
                            nproc=args.max_procs)
    progress = (lambda *a: None) if args.quiet else (lambda msg: print(msg, file=sys.stderr, flush=True))
    solutions = None if args.forms_only else args.solutions.resolve()
    try:
        subs, isolation = classroom.grade(paths, solutions=solutions, limits=limits, jobs=args.jobs, secret=secret,
                                          roster=roster, student=args.student, shard=args.shard,
                                          hide=[ROOT, args.solutions, _secret_path(args.secret)], progress=progress,
                                          budget=classroom.Budget(args.max_copies, args.judge_timeout,
                                                                  args.student_time))
    except sandbox.SandboxError as e:
        print(f"grade.py: {e}", file=sys.stderr)
        return 2
    if not subs and args.shard == (1, 1):
        _usage(f"no notebooks found under {', '.join(map(str, paths))}")
    extra = {"timeout_s": args.timeout, "seconds": round(time.monotonic() - t0, 1)}
    if args.forms_only:
        problems = sum((s.status != classroom.GRADED) + sum(not q.form_ok for q in s.questions) for s in subs)
        for s in subs:
            print(f"{s.path}  [{s.assignment or '?'}]  {s.status}")
            for m in s.messages:
                print(f"  ! {m}")
            for q in s.questions:
                print(f"  {q.name:<8}  {'form ok' if q.form_ok else 'PROBLEM'}  {q.messages[0] if q.messages else ''}")
        print(f"{problems} problem(s). Form checks only: the values are graded by your instructor.")
        rep = {"forms_only": True, "problems": problems, "sandbox": isolation,
               "submissions": [{**{k: v for k, v in s.as_dict().items() if k not in ("score", "possible")},
                                "questions": {q.name: {"form_ok": q.form_ok, "messages": q.messages}
                                              for q in s.questions}} for s in subs]}
        _write_outputs(rep, argparse.Namespace(json=args.json))
        return 0 if problems == 0 else 1
    rep = classroom.report(subs, pass_mark=args.pass_mark, sandbox_line=isolation, shard=args.shard, extra=extra)
    print_report(subs, rep)
    _write_outputs(rep, args)
    return 0 if rep["passed"] else 1


def _terminate(signum, frame):
    raise KeyboardInterrupt  # so that the boxes are cleaned up on SIGTERM too


if __name__ == "__main__":
    signal.signal(signal.SIGTERM, _terminate)
    try:
        sys.exit(main())
    except KeyboardInterrupt:
        sys.exit(130)
    except SystemExit:
        raise
    except BaseException:
        traceback.print_exc()
        sys.exit(2)
