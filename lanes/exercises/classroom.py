"""Grading a class: submissions read as data, identity from the hand-in, scores from two steps.

What ``scripts/grade.py`` runs; this module holds the logic, the script parses arguments.

**Submissions are data.** Under a submissions folder, every name ending ``.ipynb`` is a
submission; folders are walked without following links. Only regular files are read
(``O_NOFOLLOW``, at most :data:`MAX_NOTEBOOK_BYTES`): a link, FIFO, device or folder named
``*.ipynb`` is refused with one line, and no message quotes a submission's bytes. An
nbformat 3 notebook is converted to 4. ``metadata.lanes`` and its ``set`` are used only
when they have the right types. Every error while reading or grading one notebook is
caught and reported for that notebook; the report and gradebook are always written.

**Identity comes from the hand-in** (``STUDENT`` in the notebook must agree, but never
decides): the roster (:mod:`.roster`: keyed on login, LMS user id, e-mail or file name) and
the layout of the LMS export (:mod:`.lms`: Canvas, Gradescope, Moodle, GitHub Classroom, a
folder per student, ``<login>_...`` files), or ``student=`` (every notebook is that
student's). The notebook's ``STUDENT`` must be the student's token
(:func:`lanes.exercises.variants.student_token`); otherwise the mismatch is flagged and the
notebook is graded as the roster's student anyway.

**One copy counts.** Several submissions of one student for one set are all graded and
flagged; the **latest** counts, never the best, by the rule of :mod:`.lms` (the export's own
time, its upload order, the copy number in the name, the path; never a file's time).
Deadlines and the late policy are :mod:`.deadlines`'. What is written (report, gradebook,
feedback; every roster student included) is :mod:`.gradebook`'.

**Shards.** ``shard=(k, n)`` grades the students whose login hashes to ``k`` (of ``n``;
submissions without a login go to shard 1); :func:`merge` combines the shards' reports
into what one run gives.
"""

from __future__ import annotations

import hashlib
import json
import os
import pathlib
import re
import shutil
import stat
import subprocess
import sys
import tempfile
import time
from dataclasses import asdict, dataclass, field

from . import sandbox
from .deadlines import Deadlines
from .gradebook import feedback_markdown, merge, report, write_feedback, write_gradebook
from .lms import Exports, copy_number
from .registry import all_sets, get_set
from .roster import Roster, load_roster
from .variants import check_login, normalise_student, student_token, token_mismatch

__all__ = ["MAX_NOTEBOOK_BYTES", "Question", "Roster", "Submission", "collect", "feedback_markdown",
           "grade", "load_roster", "merge", "read_notebook", "report", "shard_of", "write_feedback",
           "write_gradebook"]

#: Statuses of a submission.
GRADED, TIMEOUT, CRASHED, NOT_A_NOTEBOOK, UNKNOWN, NO_KEY, REFUSED, UNIDENTIFIED = (
    "graded", "timeout", "crashed", "not_a_notebook", "unknown_assignment", "no_key", "refused", "unidentified")

#: Largest notebook read (bytes), and largest answers file step 1 may leave.
MAX_NOTEBOOK_BYTES = 16 << 20
MAX_ANSWERS_BYTES = 1 << 20


@dataclass
class Question:
    name: str
    possible: float
    score: float = 0.0
    messages: list = field(default_factory=list)
    form_ok: bool | None = None


@dataclass
class Submission:
    """One handed-in file and what became of it (``login`` is the roster identifier)."""

    path: str
    assignment: str | None = None
    login: str | None = None
    name: str = ""
    student: str | None = None  # the STUDENT value (token) graded
    notebook_student: str | None = None  # the notebook's own STUDENT, as it was written (cleaned)
    status: str = GRADED
    counted: bool = False
    submitted: str | None = None  # the export's own submission time (ISO 8601, UTC), if it has one
    late: bool | None = None  # None: not known (no deadline, or no time in the export)
    late_s: float | None = None  # seconds after the deadline and grace, where known
    factor: float = 1.0  # the late policy's multiplier of the score
    order: tuple = ()  # which copy is later (see lanes.exercises.lms); not reported
    seconds: float = 0.0
    messages: list = field(default_factory=list)
    questions: list = field(default_factory=list)

    @property
    def recency(self) -> tuple:
        """Sort key of copies: the later copy sorts last (see :mod:`.lms`; never a file time)."""
        return self.order or (False, 0.0, 0, copy_number(pathlib.Path(self.path).stem), self.path)

    @property
    def score(self) -> float:
        return round(sum(q.score for q in self.questions) * self.factor, 6)

    @property
    def possible(self) -> float:
        return sum(q.possible for q in self.questions)

    def as_dict(self) -> dict:
        d = {k: v for k, v in asdict(self).items() if k not in ("questions", "order")}
        d["score"], d["possible"] = round(self.score, 6), self.possible
        d["questions"] = {q.name: {"score": q.score, "possible": q.possible, "messages": q.messages,
                                   "form_ok": q.form_ok} for q in self.questions}
        return d


def _clean(text: object, limit: int = 200) -> str:
    """Text made safe to print: no control characters or escapes, bounded."""
    return "".join(c if c.isprintable() else "?" for c in str(text)[:limit])


# --------------------------------------------------------------------------- reading


def collect(paths: list) -> list[tuple[pathlib.Path, pathlib.Path, str | None]]:
    """``(path, root, refusal)`` for every submission under ``paths``; links are never followed.

    ``root`` is the folder given (for identity), or the file's own folder for a file given
    directly. ``refusal`` is one line when the entry is not a regular file.
    """
    out: list = []
    for given in map(pathlib.Path, paths):
        try:
            st = os.lstat(given)
        except OSError:
            out.append((given, given.parent, "not found"))
            continue
        if stat.S_ISDIR(st.st_mode):
            _walk(given, given, out)
        else:
            out.append((given, given.parent, _refusal(given)))
    seen, unique = set(), []
    for item in out:
        if item[0] not in seen:
            seen.add(item[0])
            unique.append(item)
    return unique


def _walk(folder: pathlib.Path, root: pathlib.Path, out: list) -> None:
    try:
        entries = sorted(os.scandir(folder), key=lambda e: e.name)
    except OSError:
        return
    for e in entries:
        p = pathlib.Path(e.path)
        if e.is_symlink() or not e.is_dir(follow_symlinks=False):
            if e.name.endswith(".ipynb") and not e.name.startswith("."):
                out.append((p, root, _refusal(p)))
        elif e.name.endswith(".ipynb"):
            out.append((p, root, _refusal(p)))
        elif not e.name.startswith(".") and e.name != "__pycache__":
            _walk(p, root, out)


def _refusal(path: pathlib.Path) -> str | None:
    try:
        st = os.lstat(path)
    except OSError:
        return "not found"
    if stat.S_ISLNK(st.st_mode):
        return "refused: a symbolic link, not a file (hand in the notebook itself)"
    if stat.S_ISDIR(st.st_mode):
        return "refused: a folder, not a notebook file"
    if not stat.S_ISREG(st.st_mode):
        return "refused: not a regular file (a FIFO, socket or device)"
    return None


def read_notebook(path: pathlib.Path, limit: int = MAX_NOTEBOOK_BYTES):
    """``(notebook, mtime_ns, None)`` or ``(None, mtime_ns, why)``; never quotes the file's bytes."""
    import nbformat

    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC)
    except OSError as e:
        return None, 0, ("refused: a symbolic link, not a file" if os.path.islink(path)
                         else f"cannot be opened ({os.strerror(e.errno or 0)})")
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            return None, 0, "refused: not a regular file"
        if st.st_size > limit:
            return None, st.st_mtime_ns, f"refused: larger than {limit >> 20} MiB"
        data = b""
        while len(data) <= limit:
            chunk = os.read(fd, 1 << 20)
            if not chunk:
                break
            data += chunk
        if len(data) > limit:
            return None, st.st_mtime_ns, f"refused: larger than {limit >> 20} MiB"
    finally:
        os.close(fd)
    mtime = st.st_mtime_ns
    if path.suffix != ".ipynb":
        return None, mtime, f"not a Jupyter notebook (a {_clean(path.suffix, 12) or 'extension-less'} file; submit the .ipynb)"
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        return None, mtime, "not a Jupyter notebook (it is not UTF-8 text)"
    try:
        raw = json.loads(text)
    except ValueError as e:
        where = f" (line {e.lineno}, column {e.colno})" if hasattr(e, "lineno") else ""
        return None, mtime, f"not a Jupyter notebook (it is not valid JSON{where})"
    if not isinstance(raw, dict) or type(raw.get("nbformat")) is not int:
        return None, mtime, "not a Jupyter notebook (its JSON has no nbformat version)"
    if raw["nbformat"] not in (3, 4):
        return None, mtime, f"not a Jupyter notebook this grader reads (nbformat {raw['nbformat']}; save it as 4)"
    try:
        import warnings

        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            nb = nbformat.reads(text, as_version=4)
            nbformat.validate(nb)
    except Exception:
        return None, mtime, f"not a Jupyter notebook (it does not follow the nbformat {raw['nbformat']} schema)"
    if not any(c.get("cell_type") == "code" for c in nb.cells):
        return None, mtime, "not a Jupyter notebook with code (it has no code cells)"
    return nb, mtime, None


_COPY = re.compile(r"^(.*?)(?:[-_ ]?copy\d*|\s*\(\d+\))+$", re.I)


def match_assignment(path: pathlib.Path, nb, known, messages: list) -> str | None:
    """The set of a notebook: its metadata (type-checked) first, then its file and folder names."""
    if nb is not None:
        meta = nb.get("metadata")
        meta = meta if isinstance(meta, dict) else {}
        for key, inner in (("lanes", "set"), ("otter", "assignment_name")):
            block = meta.get(key)
            if block is None:
                continue
            if not isinstance(block, dict):
                messages.append(f"metadata.{key} is not an object: ignored")
                continue
            name = block.get(inner)
            if name is not None and type(name) is not str:
                messages.append(f"metadata.{key}.{inner} is not a string: ignored")
                continue
            if name in known:
                return name
    names = [path.stem, *[p.name for p in path.parents][:3]]
    for cand in names:
        m = _COPY.match(cand)
        for c in (cand, m.group(1) if m else None):
            if c in known:
                return c
        for slug in known:  # Canvas-style names: login_..._NN_slug
            if cand.endswith("_" + slug) or (m and m.group(1).endswith("_" + slug)):
                return slug
    return None


# --------------------------------------------------------------------------- identity


def shard_of(login: str | None, n: int) -> int:
    """The shard (1..n) of ``login``; submissions without a login belong to shard 1."""
    if login is None:
        return 1
    return int.from_bytes(hashlib.sha256(login.encode()).digest()[:8], "big") % n + 1


# --------------------------------------------------------------------------- grading

_ASSIGN = r"^\s*{}\s*(?::[^=\n]*)?=(?!=)"


def cell_errors_by_variable(nb, variables: tuple, errors: list) -> tuple[dict, list]:
    """Errors of cells that assign an answer variable, and the other cells' errors."""
    by_var: dict = {}
    other: list = []
    for e in errors[:100]:
        try:
            index, text = int(e["cell"]), _clean(e["error"])
            source = nb.cells[index].source
        except (KeyError, TypeError, ValueError, IndexError, AttributeError):
            continue
        source = source if isinstance(source, str) else ""
        hit = [v for v in variables if re.search(_ASSIGN.format(re.escape(v)), source, re.M)]
        for v in hit:
            by_var.setdefault(v, text)
        if not hit:
            first = _clean(source.strip().splitlines()[0], 60) if source.strip() else ""
            other.append(f"cell {index} raised {text} (cell starts {first!r})")
    return by_var, other


def _step1_failure(rc, timed_out: bool, limits: sandbox.Limits, why: str = "") -> str:
    import signal

    if timed_out:
        return (f"timed out: the notebook ran longer than the {limits.timeout_s:g} s limit, so every question "
                "scores 0. A cell probably never finishes (an infinite loop, or a very long sweep)")
    if rc in (-signal.SIGXCPU, 128 + signal.SIGXCPU):
        return f"stopped: the notebook used more than {limits.cpu_s} s of CPU time, so every question scores 0"
    if rc == 0 and why == "unreadable":
        return ("the answers the notebook exported were overwritten or damaged afterwards (by a process the "
                "notebook started?), so every question scores 0")
    return ("the notebook stopped before its answers could be read (did a cell kill the process, for example "
            f"with os._exit(), or run out of memory?), so every question scores 0 (exit status {rc})")


def _answers(job_dir: pathlib.Path) -> tuple[dict | None, str]:
    raw = sandbox.read_file(job_dir / "answers.json", MAX_ANSWERS_BYTES)
    if raw is None:
        return None, "missing" if not os.path.lexists(job_dir / "answers.json") else "unreadable"
    try:
        data = json.loads(raw)
    except ValueError:
        return None, "unreadable"
    if not isinstance(data, dict) or not isinstance(data.get("answers"), dict):
        return None, "unreadable"
    return data, ""


def _judge_program() -> str:
    """Step 2's program (``-c``, not ``-m``, so that the keys and the judge share one module),
    importing the same ``lanes`` as this process (``-I`` ignores ``PYTHONPATH``)."""
    import lanes

    here = str(pathlib.Path(lanes.__file__).resolve().parents[1])
    return (f"import sys; sys.path.insert(0, {here!r}); "
            "from lanes.exercises.judge import main; sys.exit(main(sys.argv[1:]))")


def run_judge(jobs: list, solutions: pathlib.Path | None, secret: str | None, timeout_s: float) -> dict:
    """Step 2: scores from a fresh isolated interpreter, keyed by job id (forms only without keys)."""
    if not jobs:
        return {}
    proc = subprocess.run([sys.executable, "-I", "-c", _judge_program(), "--forms-only" if solutions is None else str(solutions)],
                          input=json.dumps({"secret": secret, "jobs": jobs}), capture_output=True, text=True,
                          timeout=timeout_s, cwd=tempfile.gettempdir())
    if proc.stderr.strip():
        print(proc.stderr.rstrip()[-4000:], file=sys.stderr)
    if proc.returncode != 0:
        raise RuntimeError(f"the judge failed (exit {proc.returncode}); is lanes installed (pip install -e .)?")
    return {r["id"]: r for r in json.loads(proc.stdout)}


def grade(paths: list, *, solutions: pathlib.Path | None, limits: sandbox.Limits, jobs: int = 2,
          secret: str | None = None, roster: Roster | None = None, student: str | None = None,
          shard: tuple[int, int] = (1, 1), hide=(), progress=print, deadlines: Deadlines | None = None
          ) -> tuple[list[Submission], str]:
    """Grade the submissions under ``paths``: ``(submissions, the box's one-line description)``.

    ``solutions=None`` checks answer forms only (practice feedback, no keys, no secret,
    no identity needed). Otherwise ``secret`` is the course secret (the tokens and the
    capstone's hidden seeds come from it). ``deadlines`` marks late copies and applies the
    late policy (:mod:`.deadlines`).
    """
    known = set(all_sets())
    exports = Exports(roster, known)
    forms_only = solutions is None
    subs: list[Submission] = []
    todo: list[tuple[Submission, object]] = []
    for path, root, refusal in collect(paths):
        sub = Submission(path=str(path))
        try:
            _identify(sub, exports.origin(path, root), student, forms_only)
            if shard_of(sub.login, shard[1]) != shard[0]:
                continue
            subs.append(sub)
            if roster is not None and sub.login:
                sub.name = roster.names.get(sub.login, "")
            if refusal:
                sub.status = REFUSED if refusal.startswith("refused") else NOT_A_NOTEBOOK
                sub.messages.append(refusal)
                sub.assignment = match_assignment(path, None, known, [])
            else:
                nb, _, problem = read_notebook(path)
                sub.assignment = match_assignment(path, nb, known, sub.messages)
                if problem:
                    sub.status = REFUSED if problem.startswith("refused") else NOT_A_NOTEBOOK
                    sub.messages.append(problem)
                elif sub.assignment is None:
                    sub.status = UNKNOWN
                    sub.messages.append(f"cannot tell which exercise set this is (known: {', '.join(sorted(known))})")
                elif not forms_only and not (solutions / sub.assignment / "key.py").is_file():
                    sub.status = NO_KEY
                    sub.messages.append(f"no answer key {solutions / sub.assignment / 'key.py'}: grade from the "
                                        "instructor's checkout (the student repository has no solutions/)")
                elif not forms_only and sub.login is None:
                    sub.status = UNIDENTIFIED  # whose variant to grade is unknown: not run
                else:
                    todo.append((sub, nb))
            if sub.assignment is not None:
                sub.questions = [Question(q.name, q.points) for q in get_set(sub.assignment).questions]
                if sub.status != GRADED:
                    sub.messages[-1] += "; every question scores 0"
        except Exception as e:  # one notebook never stops the class
            sub.status = CRASHED
            sub.messages.append(f"could not be read ({type(e).__name__})")
            if sub not in subs:
                subs.append(sub)
    _mark_counted(subs, forms_only, deadlines or Deadlines())
    isolation = "nothing was run"
    if todo:
        isolation = _run_step1_and_judge(todo, solutions=solutions, limits=limits, jobs=jobs, secret=secret,
                                         hide=hide, progress=progress)
    subs.sort(key=lambda s: s.path)
    return subs, isolation


def _identify(sub: Submission, origin, student: str | None, forms_only: bool) -> None:
    """Set the login (unless forms only), the export's time and the copy order of ``sub``."""
    if student is not None:
        sub.login = check_login(student)
    elif not forms_only:
        sub.login = origin.login
        if sub.login is None:
            sub.messages.append(origin.why)
        elif origin.note:
            sub.messages.append(origin.note)
    when = origin.submitted
    sub.submitted = when.isoformat() if when is not None else None
    sub.late = origin.late
    sub.order = (when is not None, when.timestamp() if when else 0.0, origin.upload,
                 copy_number(pathlib.Path(sub.path).stem), sub.path)


def _mark_counted(subs: list[Submission], forms_only: bool, deadlines: Deadlines) -> None:
    """Mark lateness, flag copies and choose the one that counts per (login, set): the latest
    (``Submission.order``), or under the ``refuse`` policy the latest on time; apply the policy."""
    import datetime as dt

    groups: dict = {}
    for s in subs:
        if s.assignment:
            when = dt.datetime.fromisoformat(s.submitted) if s.submitted else None
            s.late, s.late_s = deadlines.lateness(s.assignment, when, s.late)
            if s.late:
                s.messages.append("handed in late" + (f" ({s.late_s / 3600:.2f} h after the deadline and grace)"
                                                     if s.late_s is not None else " (flagged by the LMS)"))
        if forms_only or (s.login and s.assignment):
            groups.setdefault((s.login, s.assignment) if not forms_only else (s.path,), []).append(s)
    for key, group in groups.items():
        group.sort(key=lambda s: s.recency)
        on_time = [s for s in group if not s.late]
        latest = on_time[-1] if deadlines.policy == "refuse" and on_time else group[-1]
        latest.counted = True
        if latest.late and deadlines.policy != "count":
            latest.factor = 0.0 if deadlines.policy == "refuse" else 1.0 - deadlines.penalty
            latest.messages.append(f"late policy: this copy earns {latest.factor:.0%} of its score")
        if len(group) > 1:
            why = "the latest on time" if latest is not group[-1] else "the latest"
            for s in group:
                s.messages.append(f"{len(group)} copies of set {s.assignment} were handed in by {s.login}: "
                                  + (f"this one ({why}) counts" if s is latest else
                                     f"only {why} counts ({pathlib.Path(latest.path).name}); this one does not"))


def _run_step1_and_judge(todo, *, solutions, limits, jobs, secret, hide, progress) -> str:
    box = sandbox.Box(hide=hide, prefix="lanes-grade-")
    warn = sandbox.cgroup_warning()
    if warn:
        print(warn, file=sys.stderr)
    exported: dict = {}
    running: list = []
    try:
        queue = list(enumerate(todo))
        done = 0
        while queue or running:
            while queue and len(running) < max(1, jobs):
                i, (sub, nb) = queue.pop(0)
                try:
                    import nbformat

                    job_dir = pathlib.Path(tempfile.mkdtemp(prefix="job-", dir=box.base))
                    (job_dir / "submission.ipynb").write_text(nbformat.writes(nb), encoding="utf-8")
                    argv = sandbox.python_argv("lanes.exercises.runner", f"{sandbox.JOB}/submission.ipynb",
                                               f"{sandbox.JOB}/answers.json", sub.assignment)
                    running.append((i, job_dir, box.popen(argv, job_dir=job_dir, limits=limits)))
                except Exception as e:
                    sub.status = CRASHED
                    sub.messages.append(f"could not start the sandbox: {type(e).__name__}: {_clean(e)}")
            time.sleep(0.02)
            for item in list(running):
                i, job_dir, p = item
                rc = p.poll()
                late = p.expired()
                if rc is None and not late:
                    continue
                sub, nb = todo[i]
                p.kill()
                sub.seconds = round(p.elapsed, 1)
                data, why = _answers(job_dir) if rc is not None else (None, "")
                shutil.rmtree(job_dir, ignore_errors=True)
                running.remove(item)
                done += 1
                if data is None:
                    sub.status = TIMEOUT if rc is None else CRASHED
                    sub.messages.append(_step1_failure(rc, rc is None, limits, why))
                else:
                    exported[i] = data
                progress(f"[{done}/{len(todo)}] {sub.path}: step 1 {sub.status} in {sub.seconds:g} s")
    finally:
        try:
            for _, _, p in running:
                p.kill()
        finally:
            isolation = box.isolation
            box.close()

    judge_jobs = []
    for i, data in exported.items():
        sub, nb = todo[i]
        try:
            spec = get_set(sub.assignment)
            answers = data.get("answers") if isinstance(data.get("answers"), dict) else {}
            refused = data.get("refused") if isinstance(data.get("refused"), dict) else {}
            errors = data.get("errors") if isinstance(data.get("errors"), list) else []
            by_var, other = cell_errors_by_variable(nb, spec.variables, errors)
            sub.messages.extend(other[:10])
            own = data.get("student")
            sub.notebook_student = _clean(own, 60) if type(own) is str else None
            if solutions is None:  # practice feedback: the notebook's own STUDENT, if it is a valid one
                try:
                    who = normalise_student(own)
                except ValueError:
                    who = ""
            else:
                who = student_token(sub.login, secret)
                try:
                    mine = normalise_student(own)
                except ValueError:
                    mine = None
                why = token_mismatch(mine, sub.login, secret)
                if why:
                    sub.messages.append(f"STUDENT in the notebook is not {sub.login}'s token ({why}): graded as "
                                        f"{sub.login}'s variant (set STUDENT to the token your instructor gave you)")
            sub.student = who
            judge_jobs.append({"id": i, "slug": sub.assignment, "student": who,
                               "answers": {k: v for k, v in answers.items() if k in spec.variables},
                               "refused": {k: _clean(v) for k, v in refused.items() if k in spec.variables},
                               "cell_errors": by_var})
        except Exception as e:
            sub.status = CRASHED
            sub.messages.append(f"its answers could not be read ({type(e).__name__})")
    if judge_jobs:
        progress(f"judging {len(judge_jobs)} notebook(s) in a fresh interpreter ...")
    try:
        results = run_judge(judge_jobs, solutions, secret, timeout_s=max(600.0, 30.0 * len(judge_jobs)))
    except Exception as e:  # the report is written all the same
        print(f"error: {_clean(e)}", file=sys.stderr)
        results = {j["id"]: {"error": "the judge failed (see the grader's log)"} for j in judge_jobs}
    for i, res in results.items():
        sub = todo[i][0]
        if "error" in res:
            sub.status = CRASHED
            sub.messages.append(f"the judge could not grade this set: {_clean(res['error'])}")
            continue
        for q in sub.questions:
            r = res["questions"].get(q.name, {})
            q.score = float(r.get("score", 0.0))
            q.messages.extend(_clean(m) for m in r.get("messages", []))
            q.form_ok = bool(r.get("form_ok"))
    return isolation
