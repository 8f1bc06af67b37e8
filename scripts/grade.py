#!/usr/bin/env python
"""Grade lanes exercise notebooks: a thin command over ``grading.classroom`` and ``.sandbox``.

    python scripts/grade.py init                             # once per course: the course secret
    python scripts/grade.py tokens --roster roster.csv       # each student's STUDENT value, to hand out
    python scripts/grade.py rekey roster.csv gradescope.csv > gs-roster.csv   # another LMS's roster, same tokens
    python scripts/grade.py submissions/ --roster roster.csv --csv gradebook.csv --feedback feedback/
    python scripts/grade.py submissions/ --shard 2/4 --json shard-2.json      # one share of the students
    python scripts/grade.py merge shard-*.json --json report.json --csv gradebook.csv
    python scripts/grade.py exercises/ --forms-only          # practice feedback, no keys, no secret

Run it from the instructor's private checkout: the answer keys ``solutions/NN_slug/key.py``
(``--solutions``) and the course secret (``.lanes-course-secret``, git-ignored; ``--secret``)
are needed to award points. See ``book/grading.md`` for the whole procedure.

**Step 1** executes each student's notebooks in a bubblewrap box (``grading.sandbox``): all
namespaces new, a root holding only the interpreter, a read-only copy of ``lanes`` and the
job folder, a fresh unprivileged uid, a cgroup per job where the machine allows it
(rlimits otherwise, with one warning line); each notebook in a fresh fork of a process that
has imported ``lanes``, the box emptied of its processes and files between two
(``grading.runner --serve``). The box exports only the answers, as JSON.
**Step 2** is a fresh ``python -I`` process per student running ``grading.judge``: it
checks every answer's form again and recomputes the expected values for the student's variant.
Each student's time is bounded (``--max-copies``, ``--judge-timeout``, ``--student-time``).

Who handed a notebook in comes from ``--roster`` (the class: login, LMS ids, e-mail, name)
and the LMS export's layout (Canvas, Gradescope, Moodle, GitHub Classroom, a folder per
login, ``<login>_....ipynb``), or ``--student`` for one student's own folder; the
notebook's ``STUDENT`` must be that student's token. Of several copies per student and set,
the latest counts (the export's own time, else its upload order, else the copy number in
the name; never a file's time); ``--deadline``, ``--grace`` and ``--late`` mark late copies
and set the late policy. Every roster student has a row, a report entry and a feedback
file; a set not handed in scores 0 (``--sets`` names the sets assigned). Grading one
student's folder (or ``--student``, or any folder with ``--regrade``) writes a *regrade*
report that ``merge`` folds into the class's, replacing exactly the (student, set) pairs it
graded; give it ``--policy-from class.json`` so that it grades under the class's deadlines
and late policy (``merge`` refuses a regrade graded under another rule).

Writes the JSON report (``--json``), and optionally a gradebook (``--csv``, UTF-8 with a
BOM) and per-student feedback (``--feedback DIR``; files a previous run wrote there and
this one does not are removed). Exit status: 1 when the total is below ``--pass-mark``, 0
otherwise, 2 on a usage error (one line on stderr).
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

from grading import classroom, gradebook, sandbox  # noqa: E402
from grading.deadlines import Deadlines  # noqa: E402
from grading.lms import Exports  # noqa: E402
from lanes.exercises import variants  # noqa: E402
from lanes.exercises.registry import all_sets  # noqa: E402

SOLUTIONS = ROOT / "solutions"
EXERCISES = ROOT / "exercises"
SECRET_FILE = ROOT / ".lanes-course-secret"
DEFAULT_REPORT = ROOT / "build" / "grade_report.json"


def _secret_path(arg: pathlib.Path | None) -> pathlib.Path:
    return arg or pathlib.Path(os.environ.get("LANES_COURSE_SECRET_FILE", SECRET_FILE))


def _load_secret(path: pathlib.Path) -> str:
    return variants.load_course_secret(path, allow_test=os.environ.get("LANES_TEST_SECRET") == "1")


def cmd_init(argv: list[str]) -> int:
    ap = argparse.ArgumentParser(prog="grade.py init", description="Write a new course secret (git-ignored), "
                                 "or, with --restore, the one backed up (read from stdin).")
    ap.add_argument("--secret", type=pathlib.Path, help=f"where (default {SECRET_FILE.name} at the checkout root)")
    ap.add_argument("--force", action="store_true", help="replace an existing secret (changes every token)")
    ap.add_argument("--restore", action="store_true",
                    help="write the secret given on stdin (the backup of a lost one): the same tokens again")
    args = ap.parse_args(argv)
    path = _secret_path(args.secret)
    secret = variants.new_course_secret()
    if args.restore:
        try:
            secret = variants.check_course_secret(sys.stdin.readline().strip())
        except ValueError as e:
            print(f"grade.py init: --restore: {e}", file=sys.stderr)
            return 2
    if path.exists() and not args.force:
        try:
            same = args.restore and path.read_text(encoding="utf-8").strip() == secret
        except OSError:
            same = False
        if not same:
            print(f"grade.py init: {path} exists; --force replaces it (every student's token changes)", file=sys.stderr)
            return 2
    path.parent.mkdir(parents=True, exist_ok=True)
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "w") as f:
        f.write(secret + "\n")
    fingerprint = variants.secret_fingerprint(secret)
    if args.restore:
        print(f"restored the course secret to {path} (fingerprint {fingerprint}): the tokens are the ones handed out")
        return 0
    print(f"wrote a new course secret to {path} (fingerprint {fingerprint}; keep it private; it is git-ignored)\n"
          "Back it up now, where you can read it back: losing it changes every token, and then every "
          "notebook scores 0.\n"
          f"  - copy its one line into a password manager (or a private file outside this checkout): cat {path}\n"
          "  - a GitHub repository secret is write-only: it grades in CI but can never be read back, so it "
          "is no backup\n"
          f"  - to get it back: python scripts/grade.py init --restore{'' if args.secret is None else f' --secret {path}'}"
          " < backup.txt (or paste the line), and check the fingerprint")
    return 0


def cmd_tokens(argv: list[str]) -> int:
    ap = argparse.ArgumentParser(prog="grade.py tokens", description="Each student's STUDENT value (CSV on stdout).")
    ap.add_argument("--roster", type=pathlib.Path, required=True)
    ap.add_argument("--secret", type=pathlib.Path)
    args = ap.parse_args(argv)
    try:
        secret = _load_secret(_secret_path(args.secret))
        roster = _roster(args.roster)
    except (OSError, ValueError) as e:
        print(f"grade.py tokens: {e}", file=sys.stderr)
        return 2
    import csv

    out = csv.writer(sys.stdout)
    out.writerow(["login", "name", "STUDENT"])
    for login in sorted(roster.names):
        out.writerow([login, gradebook.safe_cell(roster.names[login]), variants.student_token(login, secret)])
    return 0


def cmd_rekey(argv: list[str]) -> int:
    ap = argparse.ArgumentParser(prog="grade.py rekey", description="Another LMS's roster keyed on the logins of the "
                                 "roster the tokens were made from (CSV on stdout): grading with it keeps every token.")
    ap.add_argument("old", type=pathlib.Path, help="the roster the tokens were made from (grade.py tokens --roster)")
    ap.add_argument("new", type=pathlib.Path, help="the other LMS's roster (its e-mail, ids, names)")
    args = ap.parse_args(argv)
    from grading.roster import rekey

    try:
        text, lines = rekey(args.old, args.new)
    except (OSError, ValueError) as e:
        print(f"grade.py rekey: {e}", file=sys.stderr)
        return 2
    for line in lines:
        print(f"warning: {line}", file=sys.stderr)
    sys.stdout.write(text)
    return 0


def _roster(path: pathlib.Path):
    """The roster, each skipped row named on stderr (the rest of the roster stands)."""
    roster = classroom.load_roster(path)
    for line in roster.problems:
        print(f"warning: {line}", file=sys.stderr)
    return roster


def _replacing(path: pathlib.Path) -> str:
    return " (replaced the previous one)" if path.exists() else ""


def _write_outputs(rep: dict, args) -> None:
    args.json.parent.mkdir(parents=True, exist_ok=True)
    note = _replacing(args.json)
    args.json.write_text(json.dumps(rep, indent=2) + "\n")
    print(f"report: {args.json}{note}")
    if getattr(args, "csv", None):
        note = _replacing(args.csv)
        classroom.write_gradebook(rep, args.csv)
        print(f"gradebook: {args.csv}{note}")
    if getattr(args, "canvas_csv", None):
        note = _replacing(args.canvas_csv)
        gradebook.write_canvas_gradebook(rep, args.canvas_csv, args.roster_table)
        print(f"Canvas gradebook (for its Import): {args.canvas_csv}{note}")
    if getattr(args, "gradescope_csv", None):
        note = _replacing(args.gradescope_csv)
        gradebook.write_gradescope_gradebook(rep, args.gradescope_csv, args.roster_table)
        print(f"Gradescope gradebook (for its score import): {args.gradescope_csv}{note}")
    if getattr(args, "moodle_csv", None):
        note = _replacing(args.moodle_csv)
        gradebook.write_moodle_gradebook(rep, args.moodle_csv, args.roster_table)
        print(f"Moodle gradebook (for its CSV import): {args.moodle_csv}{note}")
    if getattr(args, "feedback", None):
        written = classroom.write_feedback(rep, args.feedback)
        print(f"feedback: {len(written)} file(s) in {args.feedback}")


def cmd_merge(argv: list[str]) -> int:
    ap = argparse.ArgumentParser(prog="grade.py merge", description="Combine shard reports into one, and fold "
                                 "regrades in (a regrade replaces the rows of the students it graded).")
    ap.add_argument("reports", nargs="+", type=pathlib.Path, help="the class's report or every shard's, then regrades")
    ap.add_argument("--json", type=pathlib.Path, default=DEFAULT_REPORT)
    ap.add_argument("--csv", type=pathlib.Path)
    ap.add_argument("--feedback", type=pathlib.Path)
    ap.add_argument("--canvas-csv", type=pathlib.Path, help="also write a gradebook Canvas imports (needs --roster: "
                    "Canvas's gradebook export)")
    ap.add_argument("--gradescope-csv", type=pathlib.Path, help="also write a gradebook Gradescope imports (needs "
                    "--roster with SIDs or e-mails)")
    ap.add_argument("--moodle-csv", type=pathlib.Path, help="also write a gradebook Moodle imports (needs --roster "
                    "with e-mails)")
    ap.add_argument("--roster", type=pathlib.Path, help="the class roster, for --canvas-csv, --gradescope-csv and "
                    "--moodle-csv")
    ap.add_argument("--pass-mark", type=float, help="exit 1 below this fraction (default: the shards' own)")
    args = ap.parse_args(argv)
    try:
        args.roster_table = _roster(args.roster) if args.roster is not None else None
        if args.canvas_csv is not None and args.roster_table is None:
            raise ValueError("--canvas-csv needs --roster (Canvas's gradebook export, with its ID column)")
        if args.moodle_csv is not None and args.roster_table is None:
            raise ValueError("--moodle-csv needs --roster (with the students' e-mails)")
        if args.gradescope_csv is not None and args.roster_table is None:
            raise ValueError("--gradescope-csv needs --roster (with the students' SIDs or e-mails)")
        rep = classroom.merge([json.loads(p.read_text()) for p in args.reports])
        if args.pass_mark is not None:
            rep["pass_mark"] = args.pass_mark
            rep = gradebook.totals(rep)
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
            note = gradebook.question_note(q)  # as the feedback says
            print(f"  {q.name:<8}  {q.score:>6g}  {q.possible:>4g}  {note}")
        print()
    nobody = [s for s in subs if s.login is None]
    if nobody:  # listed again at the end, so that a hand-in that counts for nobody is never missed
        print(f"counted for nobody ({len(nobody)} file(s) no roster student could be matched to):")
        for s in nobody:
            print(f"  {s.path}: {s.messages[0] if s.messages else s.status}")
    nothing = [login for login, e in rep["class"].items() if all(c["path"] is None for c in e["sets"].values())]
    if nothing:
        print(f"handed nothing in (every set scores 0): {', '.join(nothing)}")
    print(f"sets: {', '.join(rep['sets']) or 'none'} ({rep['sets_rule']})")
    print(f"TOTAL {rep['score']:g} / {rep['possible']:g} ({rep['fraction']:.1%}) over {rep['students']} "
          f"student(s); pass mark {rep['pass_mark']:.0%}: {'PASS' if rep['passed'] else 'FAIL'}")


def _sets(text: str | None) -> list | None:
    """``--sets``: slugs or set numbers, comma-separated; ``None`` when not given."""
    if text is None:
        return None
    known = sorted(all_sets())
    out = []
    for item in (x.strip() for x in text.split(",") if x.strip()):
        hit = [k for k in known if k == item or (item.isdigit() and k.startswith(f"{int(item):02d}_"))]
        if not hit:
            raise ValueError(f"--sets: no set {item!r} (known: {', '.join(known)})")
        out.append(hit[0])
    if not out:
        raise ValueError("--sets needs at least one set")
    return sorted(set(out))


def _scope(paths: list, roster, student: str | None, shard: tuple, regrade: list | None = None) -> tuple[str, dict]:
    """Whom a run's report covers: ``("regrade", those students)`` for ``--regrade`` (the students
    identified), ``--student`` or when every path given is a roster student's own folder, else
    ``("class", the roster's share of this shard)``."""
    names = roster.names if roster is not None else {}
    if student is not None:
        return "regrade", {student: names.get(student, "")}
    if regrade is not None:
        return "regrade", {s.login: names.get(s.login, s.name) for s in regrade if s.login}
    if roster is not None:
        exports = Exports(roster)
        own = [exports.student_folder(p) if p.is_dir() else None for p in paths]
        if own and all(own):
            return "regrade", {login: names[login] for login in own}
    return "class", {x: n for x, n in names.items() if classroom.shard_of(x, shard[1]) == shard[0]}


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
    sub = {"init": cmd_init, "tokens": cmd_tokens, "merge": cmd_merge, "rekey": cmd_rekey}
    if argv and argv[0] in sub:
        return sub[argv[0]](argv[1:])
    ap = argparse.ArgumentParser(description="Grade lanes exercise notebooks (two steps, boxed).")
    ap.add_argument("paths", nargs="*", type=pathlib.Path, help="notebooks or folders (default: exercises/)")
    ap.add_argument("--roster", type=pathlib.Path, help="the class: a CSV with login (or e-mail), and optionally "
                    "name, LMS ids, e-mail, file (see book/grading.md)")
    ap.add_argument("--sets", help="the sets assigned, comma-separated slugs or numbers (default: every set "
                    "anyone handed in)")
    ap.add_argument("--deadline", action="append", default=[], metavar="[SET=]TIME",
                    help="ISO 8601 deadline for every set, or SET=TIME for one (repeatable; UTC without offset)")
    ap.add_argument("--grace", type=float, default=0.0, help="minutes of grace after each deadline (default 0)")
    ap.add_argument("--late", default="count", help="late policy: count, refuse or penalty:F (default count)")
    ap.add_argument("--policy-from", type=pathlib.Path, metavar="REPORT",
                    help="use the deadlines, grace and late policy recorded in this report (a regrade: the "
                    "class's report)")
    ap.add_argument("--regrade", action="store_true",
                    help="a regrade: the report covers only the students and sets graded here, and merge "
                    "replaces just those in the class's report")
    ap.add_argument("--student", help="every notebook is this login's (one student's own folder; a regrade)")
    ap.add_argument("--solutions", type=pathlib.Path, default=SOLUTIONS, help="answer keys NN_slug/key.py")
    ap.add_argument("--secret", type=pathlib.Path, help=f"the course secret file (default {SECRET_FILE.name})")
    ap.add_argument("--shard", type=_shard, default=(1, 1), help="grade share K of N of the students (K/N)")
    ap.add_argument("--timeout", type=float, default=600.0,
                    help="wall-clock backstop per notebook, s (default 600: five times the CPU limit, so a "
                    "loaded machine fails no honest notebook)")
    ap.add_argument("--cpu-limit", type=int, default=120, help="CPU time per notebook, s (default 120)")
    ap.add_argument("--memory-mb", type=int, default=3072, help="memory per notebook, MiB (default 3072)")
    ap.add_argument("--max-procs", type=int, default=64, help="processes and threads per notebook (default 64)")
    ap.add_argument("--jobs", type=int, default=min(4, os.cpu_count() or 1),
                    help="students graded at once (a box running their notebooks, or their judge)")
    ap.add_argument("--max-copies", type=int, default=5, help="copies per student and set run, the latest (default 5)")
    ap.add_argument("--judge-timeout", type=float, default=300.0, help="step 2 time per notebook, s (default 300)")
    ap.add_argument("--student-time", type=float, default=3600.0,
                    help="grading time per student in all, s (default 3600)")
    ap.add_argument("--pass-mark", type=float, default=0.5, help="exit 1 below this fraction (default 0.5)")
    ap.add_argument("--json", type=pathlib.Path, default=DEFAULT_REPORT, help="JSON report path")
    ap.add_argument("--csv", type=pathlib.Path, help="also write a gradebook (CSV) here")
    ap.add_argument("--feedback", type=pathlib.Path, help="also write a markdown file per student here")
    ap.add_argument("--canvas-csv", type=pathlib.Path, help="also write a gradebook Canvas imports here (needs "
                    "--roster: Canvas's gradebook export)")
    ap.add_argument("--gradescope-csv", type=pathlib.Path, help="also write a gradebook Gradescope imports here "
                    "(needs --roster with SIDs or e-mails)")
    ap.add_argument("--moodle-csv", type=pathlib.Path, help="also write a gradebook Moodle imports here (needs "
                    "--roster with e-mails)")
    ap.add_argument("--quiet", action="store_true", help="no progress lines")
    ap.add_argument("--forms-only", action="store_true", help="practice feedback: answer forms only, no keys")
    ap.add_argument("--runs-only", action="store_true",
                    help="with --forms-only: count as problems only notebooks that match no set or do not run to "
                    "their end (blank exercises are well formed)")
    args = ap.parse_args(argv)
    if args.runs_only and not args.forms_only:
        _usage("--runs-only goes with --forms-only (it checks that notebooks run, not their answers)")
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
            roster = _roster(args.roster)
        args.roster_table = roster
        if args.canvas_csv is not None and (roster is None or not any("ID" in c for c in roster.lms.values())):
            raise ValueError("--canvas-csv needs --roster with Canvas's ID column (the gradebook Canvas exports)")
        if args.gradescope_csv is not None and (roster is None or not (
                any("@" in k for k in roster.keys) or any("SID" in c for c in roster.lms.values()))):
            raise ValueError("--gradescope-csv needs --roster with the students' SIDs or e-mails (the roster "
                             "Gradescope exports)")
        if args.moodle_csv is not None and (roster is None or not any("@" in k for k in roster.keys)):
            raise ValueError("--moodle-csv needs --roster with the students' e-mails (Moodle's import matches by them)")
        if not args.forms_only:
            secret = _load_secret(_secret_path(args.secret))
        sets = _sets(args.sets)
        deadlines = Deadlines.parse(args.deadline, grace_min=args.grace, late=args.late, sets=set(all_sets()))
        if args.policy_from is not None:
            if args.deadline or args.grace or args.late != "count":
                raise ValueError("--policy-from takes the deadlines, grace and late policy from the report: "
                                 "give it without --deadline, --grace or --late")
            recorded = json.loads(args.policy_from.read_text(encoding="utf-8"))
            if not isinstance(recorded, dict) or "late_policy" not in recorded:
                raise ValueError(f"--policy-from: {args.policy_from} is not a report that records its deadline "
                                 "rule (grade the class again with this version of grade.py)")
            deadlines = Deadlines.from_dict(recorded["late_policy"], "--policy-from")
    except (OSError, ValueError) as e:
        _usage(str(e))
    t0 = time.monotonic()
    unzipped: dict = {}  # the folder an LMS's zip was unpacked to -> the zip
    try:
        return _grade_run(args, paths, roster, secret, sets, deadlines, t0, unzipped)
    finally:
        import shutil

        for folder in unzipped:
            shutil.rmtree(folder, ignore_errors=True)


def _grade_run(args, paths, roster, secret, sets, deadlines, t0, unzipped) -> int:
    import tempfile

    from grading import lms

    given = paths
    paths = []
    for p in given:
        if p.suffix.lower() == ".zip" and p.is_file() and not p.is_symlink():
            folder = pathlib.Path(tempfile.mkdtemp(prefix="lanes-lms-zip-"))
            unzipped[folder] = p
            try:
                problems = lms.unpack(p, folder)
            except (OSError, ValueError) as e:
                _usage(str(e))
            for line in problems:
                print(f"warning: {line}", file=sys.stderr)
            paths.append(folder)
        else:
            paths.append(p)
    limits = sandbox.Limits(timeout_s=args.timeout, cpu_s=args.cpu_limit, memory_mb=args.memory_mb,
                            nproc=args.max_procs)
    progress = (lambda *a: None) if args.quiet else (lambda msg: print(msg, file=sys.stderr, flush=True))
    solutions = None if args.forms_only else args.solutions.resolve()
    try:
        subs, isolation = classroom.grade(paths, solutions=solutions, limits=limits, jobs=args.jobs, secret=secret,
                                          roster=roster, student=args.student, shard=args.shard,
                                          hide=[ROOT, args.solutions, _secret_path(args.secret)], progress=progress,
                                          deadlines=deadlines,
                                          budget=classroom.Budget(args.max_copies, args.judge_timeout,
                                                                  args.student_time))
    except sandbox.SandboxError as e:
        print(f"grade.py: {e}", file=sys.stderr)
        return 2
    for s in subs:  # a notebook of a zip is named as in the zip
        for folder, archive in unzipped.items():
            if s.path.startswith(str(folder) + os.sep):
                s.path = classroom.shown(archive) + "/" + s.path[len(str(folder)) + 1:]
    if not subs and args.shard == (1, 1):
        _usage(f"no notebooks found under {', '.join(map(str, given))}")
    extra = {"timeout_s": args.timeout, "seconds": round(time.monotonic() - t0, 1)}
    if args.forms_only:
        problems = sum((s.status != classroom.GRADED) + (0 if args.runs_only else sum(not q.form_ok for q in s.questions))
                       for s in subs)
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
    flagged = [s for s in subs if s.late and s.late_s is None and deadlines.grace_s > 0]
    if flagged:
        extra["warnings"] = [f"{len(flagged)} copies are late by the LMS's own flag only: "
                             + classroom.FLAG_NO_GRACE.format(deadlines.grace_s / 60)]
        print(f"warning: {extra['warnings'][0]}", file=sys.stderr)
    scope, covered = _scope(given, roster, args.student, args.shard, subs if args.regrade else None)
    extra["deadlines"] = deadlines.describe()
    extra["late_policy"] = deadlines.as_dict()
    rep = classroom.report(subs, pass_mark=args.pass_mark, sandbox_line=isolation, shard=args.shard, roster=covered,
                           sets=sets, scope=scope, extra=extra)
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
