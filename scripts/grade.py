#!/usr/bin/env python
"""Grade lanes exercise notebooks in two steps that trust nothing from the student's process.

    python scripts/grade.py                                  # every notebook under exercises/
    python scripts/grade.py exercises/03_headroom/03_headroom.ipynb --student jdoe42
    python scripts/grade.py submissions/ --csv gradebook.csv --json build/grade_report.json

Run it from the instructor's checkout: the answer keys ``solutions/NN_slug/key.py`` are
needed (``--solutions``). A notebook's set comes from its metadata (``metadata.lanes.set``),
else its file or folder name, so a renamed copy (``..-Copy1.ipynb``) is still graded.

**Step 1** executes each notebook in a child process (``lanes.exercises.runner``) in a
scratch folder that holds only the notebook and a copy of the ``lanes`` package: no tests,
no keys, no ``solutions/``. Running as root (as in CI), the child runs as a fresh
unprivileged uid in its own mount namespace, where the repository is hidden under an empty
file system and ``/tmp`` is private, and in a network namespace with no way out; it has
limits on CPU time, address space, file size and process count, and a wall-clock timeout.
Afterwards every process of that uid is killed, including any that detached into a new
session, and the scratch folder is removed. The child exports only the answers (the set's
variables and ``STUDENT``) as JSON. Not running as root, the notebook runs as this user
under the same limits but can read what this user can: a warning says so; use that only
for ``--forms-only`` practice feedback.

``--forms-only`` needs no keys: it runs the notebooks the same way and reports each
answer's form only (the practice feedback a student's fork gets).

**Step 2** is one fresh ``python -I`` process running ``lanes.exercises.judge``: it imports the
installed ``lanes``, checks every answer's form again, recomputes every expected value for
each student's variant with the set's key, and hands the scores to this process through a
pipe; only this process writes the report, after step 1's processes are gone.

Prints a score table per notebook (and progress lines while it works), writes a JSON report
(``--json``) and optionally a gradebook (``--csv``: a row per student, a column per
question, the total), and exits with status 1 when the total is below the pass mark
(``--pass-mark``), 0 otherwise, 2 on a usage error.
"""

from __future__ import annotations

import argparse
import csv
import ctypes
import errno
import json
import os
import pathlib
import random
import re
import resource
import shutil
import signal
import stat
import subprocess
import sys
import tempfile
import time
import traceback
from dataclasses import asdict, dataclass, field

ROOT = pathlib.Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from lanes.exercises import all_sets, get_set  # noqa: E402

SOLUTIONS = ROOT / "solutions"
EXERCISES = ROOT / "exercises"
DEFAULT_REPORT = ROOT / "build" / "grade_report.json"

#: Statuses of a graded submission.
GRADED, TIMEOUT, CRASHED, NOT_A_NOTEBOOK, UNKNOWN, NO_KEY = (
    "graded", "timeout", "crashed", "not_a_notebook", "unknown_assignment", "no_key")

#: Largest answers file step 1 may leave (bytes).
MAX_ANSWERS_BYTES = 1 << 20


@dataclass
class Question:
    name: str
    possible: float
    score: float = 0.0
    messages: list[str] = field(default_factory=list)
    form_ok: bool | None = None


@dataclass
class Submission:
    path: str
    assignment: str | None
    student: str | None = None
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


@dataclass(frozen=True)
class Limits:
    timeout_s: float = 120.0
    cpu_s: int = 120
    memory_mb: int = 3072
    nproc: int = 64
    file_mb: int = 64


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
    """(notebook dict, None) or (None, the reason it is not a notebook)."""
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


_COPY = re.compile(r"^(.*?)(?:[-_ ]?copy\d*|\s*\(\d+\))+$", re.I)


def match_assignment(path: pathlib.Path, nb, known: set[str]) -> str | None:
    """The set of a notebook: its metadata first, then its file and folder names."""
    if nb is not None:
        for name in ((nb.metadata.get("lanes") or {}).get("set"),
                     (nb.metadata.get("otter") or {}).get("assignment_name")):
            if name in known:
                return name
    for cand in (path.stem, *[p.name for p in path.parents][:3]):
        m = _COPY.match(cand)
        for c in (cand, m.group(1) if m else None):
            if c in known:
                return c
    return None


def _clean(text: object, limit: int = 200) -> str:
    """Student-controlled text made safe to print: no control characters or escapes, bounded."""
    return "".join(c if c.isprintable() else "?" for c in str(text)[:limit])


def _assigns(source: str, var: str) -> bool:
    return re.search(rf"^\s*{re.escape(var)}\s*(?::[^=\n]*)?=(?!=)", source, re.M) is not None


def cell_errors_by_variable(nb, variables: tuple, errors: list) -> tuple[dict, list]:
    """Errors of cells that assign an answer variable, and the other cells' errors."""
    by_var: dict[str, str] = {}
    other: list[str] = []
    for e in errors:
        try:
            index, text = int(e["cell"]), _clean(e["error"])
            source = nb.cells[index].source
        except (KeyError, TypeError, ValueError, IndexError):
            continue
        hit = [v for v in variables if _assigns(source, v)]
        for v in hit:
            by_var.setdefault(v, text)
        if not hit:
            first = _clean(source.strip().splitlines()[0], 60) if source.strip() else ""
            other.append(f"cell {index} raised {text} (cell starts {first!r})")
    return by_var, other


# --------------------------------------------------------------------------- the sandbox

_libc = ctypes.CDLL(None, use_errno=True)
CLONE_NEWNS, CLONE_NEWNET = 0x00020000, 0x40000000
PR_SET_CHILD_SUBREAPER = 36
MS_RDONLY, MS_NOSUID, MS_NODEV, MS_REMOUNT, MS_BIND, MS_REC, MS_PRIVATE = 1, 2, 4, 32, 4096, 16384, 1 << 18


def _mount(source, target, fstype, flags, data=None) -> None:
    enc = lambda s: None if s is None else str(s).encode()  # noqa: E731
    if _libc.mount(enc(source), enc(target), enc(fstype), ctypes.c_ulong(flags), enc(data)) != 0:
        e = ctypes.get_errno()
        raise OSError(e, f"mount {target}: {os.strerror(e)}")


def _unshare_mounts() -> None:
    """A private mount namespace, and a network namespace with no way out (loopback only)."""
    if _libc.unshare(CLONE_NEWNS | CLONE_NEWNET) != 0 and _libc.unshare(CLONE_NEWNS) != 0:
        e = ctypes.get_errno()
        raise OSError(e, f"unshare: {os.strerror(e)}")
    _mount(None, "/", None, MS_REC | MS_PRIVATE)


def _namespaces_work() -> bool:
    """Whether this process may create a mount namespace (tried in a throwaway child)."""
    if os.geteuid() != 0 or not sys.platform.startswith("linux"):
        return False
    pid = os.fork()
    if pid == 0:
        try:
            _unshare_mounts()
            _mount("none", "/mnt", "tmpfs", MS_NOSUID | MS_NODEV, "size=1m")
            os._exit(0)
        except BaseException:
            os._exit(1)
    _, status = os.waitpid(pid, 0)
    return os.waitstatus_to_exitcode(status) == 0


def _blocked_ancestor(path: pathlib.Path) -> pathlib.Path | None:
    """The highest folder above ``path`` that other users cannot enter, if any."""
    found = None
    for parent in reversed(path.parents):
        try:
            if not os.stat(parent).st_mode & stat.S_IXOTH:
                return parent if found is None else found
        except OSError:
            return None
    return found


def _uid_processes(uid: int) -> list[int]:
    """Live processes of ``uid``; zombies of ours (we are their subreaper) are reaped on the way."""
    pids = []
    for d in pathlib.Path("/proc").iterdir():
        if d.name.isdigit():
            try:
                if d.stat().st_uid != uid:
                    continue
                fields = (d / "stat").read_text().rsplit(")", 1)[1].split()
            except (OSError, IndexError):
                continue
            if fields[0] in "ZX":  # a zombie runs nothing; reap it when it is our child
                if int(fields[1]) == os.getpid():
                    try:
                        os.waitpid(int(d.name), os.WNOHANG)
                    except ChildProcessError:
                        pass
                continue
            pids.append(int(d.name))
    return pids


def _descendants(pid: int) -> list[int]:
    children: dict[int, list[int]] = {}
    for d in pathlib.Path("/proc").iterdir():
        if d.name.isdigit():
            try:
                ppid = int((d / "stat").read_text().rsplit(")", 1)[1].split()[1])
            except (OSError, ValueError, IndexError):
                continue
            children.setdefault(ppid, []).append(int(d.name))
    out, todo = [], [pid]
    while todo:
        for c in children.get(todo.pop(), []):
            out.append(c)
            todo.append(c)
    return out


def kill_uid(uid: int) -> None:
    """SIGKILL every process of ``uid`` (as that uid: ``kill(-1)``), until none is left."""
    for _ in range(100):
        if not _uid_processes(uid):
            return
        pid = os.fork()
        if pid == 0:
            try:
                os.setgroups([])
                os.setgid(uid)
                os.setuid(uid)
                os.kill(-1, signal.SIGKILL)
            finally:
                os._exit(0)
        os.waitpid(pid, 0)
        time.sleep(0.02)
    raise RuntimeError(f"could not stop the processes of uid {uid}")


class Sandbox:
    """Where step 1 runs: scratch folders, a copy of ``lanes``, a uid and limits per job."""

    def __init__(self, limits: Limits, hide: list[pathlib.Path]):
        import lanes

        self.limits = limits
        self.root = os.geteuid() == 0
        if sys.platform.startswith("linux"):  # orphans of a job become our children, not init's
            _libc.prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0)
        self.namespaces = _namespaces_work()
        self.hide = [p.resolve() for p in hide if p.exists()]
        self.base = pathlib.Path(tempfile.mkdtemp(prefix="lanes-grade-"))
        os.chmod(self.base, 0o711)
        self.site = self.base / "site"
        shutil.copytree(pathlib.Path(lanes.__file__).parent, self.site / "lanes",
                        ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
        for d, _, files in os.walk(self.site):
            os.chmod(d, 0o755)
            for f in files:
                os.chmod(os.path.join(d, f), 0o644)
        self.used_uids: set[int] = set()
        prefixes = {pathlib.Path(os.path.realpath(p)) for p in (sys.base_prefix, sys.prefix)}
        self.expose = sorted(prefixes)

    @property
    def isolation(self) -> str:
        if self.root and self.namespaces:
            return "unprivileged uid, private mount namespace, no network, limits"
        if self.root:
            return "unprivileged uid and limits (no mount namespace: files readable by others stay readable)"
        return "limits only (not root: the notebook runs as this user and can read what this user can)"

    def close(self) -> None:
        shutil.rmtree(self.base, ignore_errors=True)

    def _pick_uid(self) -> int:
        while True:
            uid = random.randrange(59000, 65000)
            if uid in self.used_uids or _uid_processes(uid):
                continue
            try:
                import pwd

                pwd.getpwuid(uid)
                continue
            except KeyError:
                self.used_uids.add(uid)
                return uid

    def start(self, notebook: pathlib.Path, slug: str, n: int) -> "Job":
        job_dir = self.base / f"job-{n}"
        job_dir.mkdir(mode=0o700)
        shutil.copyfile(notebook, job_dir / "submission.ipynb")
        uid = self._pick_uid() if self.root else None
        if uid is not None:
            for p in (job_dir, job_dir / "submission.ipynb"):
                os.chown(p, uid, uid)
        ns = self.root and self.namespaces
        inside = pathlib.Path("/tmp/work") if ns else job_dir
        site = pathlib.Path("/tmp/site") if ns else self.site
        boot = (f"import sys; sys.path[:0] = [{str(site)!r}]; "
                "from lanes.exercises.runner import main; sys.exit(main())")
        cmd = [sys.executable, "-E", "-s", "-c", boot, str(inside / "submission.ipynb"),
               str(inside / "answers.json"), slug]
        env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": str(inside), "TMPDIR": str(inside),
               "LANG": "C.UTF-8", "MPLBACKEND": "Agg", "OPENBLAS_NUM_THREADS": "1", "OMP_NUM_THREADS": "1",
               "MKL_NUM_THREADS": "1", "PYTHONDONTWRITEBYTECODE": "1", "IPYTHONDIR": str(inside / ".ipython")}
        lim = self.limits
        hide, expose, job_s, site_s = self.hide, self.expose, str(job_dir), str(self.site)

        err_r, err_w = os.pipe()

        def preexec() -> None:  # runs in the child, as root when the grader is root
            try:
                setup()
            except BaseException as e:
                os.write(err_w, f"{type(e).__name__}: {e}".encode()[:300])
                raise

        def setup() -> None:
            if ns:
                _unshare_mounts()  # then hold the folders to bring back, before covering them
                keep = {p: os.open(p, os.O_PATH | os.O_DIRECTORY) for p in [job_s, site_s, *map(str, expose)]}
                covered = [*hide]
                for p in expose:
                    blocked = _blocked_ancestor(p)
                    if blocked is not None:
                        covered.append(blocked)
                covered = [p for p in covered if not any(p != c and p.is_relative_to(c) for c in covered)]
                for p in dict.fromkeys(covered):  # an empty file system over the repository and closed homes
                    _mount("none", p, "tmpfs", MS_NOSUID | MS_NODEV, "size=1m,mode=755")
                for p in ("/tmp", "/var/tmp", "/dev/shm"):
                    if os.path.isdir(p):
                        _mount("none", p, "tmpfs", MS_NOSUID | MS_NODEV, "size=256m,mode=1777")
                for src, dst, ro in [(job_s, "/tmp/work", False), (site_s, "/tmp/site", True),
                                     *[(str(p), str(p), True) for p in expose]]:
                    if src in map(str, expose) and not any(pathlib.Path(src).is_relative_to(c) for c in covered):
                        continue  # reachable as it is
                    os.makedirs(dst, exist_ok=True)
                    _mount(f"/proc/self/fd/{keep[src]}", dst, None, MS_BIND | MS_REC)
                    if ro:
                        _mount(None, dst, None, MS_REMOUNT | MS_BIND | MS_RDONLY | MS_REC)
                for fd in keep.values():
                    os.close(fd)
            resource.setrlimit(resource.RLIMIT_CPU, (lim.cpu_s, lim.cpu_s + 2))  # SIGXCPU, then SIGKILL
            resource.setrlimit(resource.RLIMIT_AS, (lim.memory_mb << 20, lim.memory_mb << 20))
            resource.setrlimit(resource.RLIMIT_FSIZE, (lim.file_mb << 20, lim.file_mb << 20))
            resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
            if uid is not None:
                os.setgroups([])
                os.setgid(uid)
                os.setuid(uid)
                resource.setrlimit(resource.RLIMIT_NPROC, (lim.nproc, lim.nproc))
            os.chdir(inside)

        try:
            proc = subprocess.Popen(cmd, env=env, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                                    stderr=subprocess.DEVNULL, preexec_fn=preexec, start_new_session=True,
                                    close_fds=True, cwd="/")
        except subprocess.SubprocessError:
            os.close(err_w)
            why = os.read(err_r, 400).decode(errors="replace")
            raise RuntimeError(f"sandbox setup failed: {why}") from None
        finally:
            for fd in (err_r, err_w):
                try:
                    os.close(fd)
                except OSError:
                    pass
        return Job(proc=proc, uid=uid, dir=job_dir, started=time.monotonic())

    def stop(self, job: "Job") -> None:
        """Kill everything the job started and remove its folder (and, without namespaces, its temp files)."""
        try:
            os.killpg(job.proc.pid, signal.SIGKILL)
        except OSError:
            pass
        if job.uid is not None:
            kill_uid(job.uid)
        else:
            for pid in _descendants(job.proc.pid):
                try:
                    os.kill(pid, signal.SIGKILL)
                except OSError:
                    pass
        try:
            job.proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            pass
        if job.uid is not None and not self.namespaces:
            for tmp in {tempfile.gettempdir(), "/tmp", "/var/tmp", "/dev/shm"}:
                try:
                    entries = list(os.scandir(tmp))
                except OSError:
                    continue
                for entry in entries:
                    try:
                        if entry.stat(follow_symlinks=False).st_uid == job.uid:
                            if entry.is_dir(follow_symlinks=False):
                                shutil.rmtree(entry.path, ignore_errors=True)
                            else:
                                os.unlink(entry.path)
                    except OSError:
                        pass

    def answers(self, job: "Job") -> tuple[dict | None, str]:
        """The exported answers, read as data (no symlinks, bounded size), or (None, why)."""
        path = job.dir / "answers.json"
        try:
            fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
        except OSError as e:
            return None, "missing" if e.errno == errno.ENOENT else "unreadable"
        try:
            st = os.fstat(fd)
            if not stat.S_ISREG(st.st_mode) or st.st_size > MAX_ANSWERS_BYTES:
                return None, "unreadable"
            with os.fdopen(fd, "rb") as f:
                fd = None
                data = json.loads(f.read(MAX_ANSWERS_BYTES + 1))
        except (OSError, ValueError):
            return None, "unreadable"
        finally:
            if fd is not None:
                os.close(fd)
        if not isinstance(data, dict) or not isinstance(data.get("answers"), dict):
            return None, "unreadable"
        return data, ""


@dataclass
class Job:
    proc: subprocess.Popen
    uid: int | None
    dir: pathlib.Path
    started: float


# --------------------------------------------------------------------------- grading


def _step1_failure(rc: int | None, timed_out: bool, limits: Limits, why: str = "") -> str:
    if timed_out:
        return (f"timed out: the notebook ran longer than the {limits.timeout_s:g} s limit, so every question "
                "scores 0. A cell probably never finishes (an infinite loop, or a very long sweep)")
    if rc == -signal.SIGXCPU:
        return f"stopped: the notebook used more than {limits.cpu_s} s of CPU time, so every question scores 0"
    if rc == 0 and why == "unreadable":
        return ("the answers the notebook exported were overwritten or damaged afterwards (by a process the "
                "notebook started?), so every question scores 0")
    return ("the notebook stopped before its answers could be read (did a cell kill the process, for example "
            f"with os._exit(), or run out of memory?), so every question scores 0 (exit status {rc})")


#: Step 2's program (``-c``, not ``-m``, so that the keys and the judge share one module).
JUDGE = "import sys; from lanes.exercises.judge import main; sys.exit(main(sys.argv[1:]))"


def run_judge(jobs: list[dict], solutions: pathlib.Path | None, timeout_s: float) -> dict[int, dict]:
    """Step 2: scores from a fresh isolated interpreter, keyed by job id (forms only without keys)."""
    if not jobs:
        return {}
    proc = subprocess.run([sys.executable, "-I", "-c", JUDGE, "--forms-only" if solutions is None else str(solutions)],
                          input=json.dumps(jobs), capture_output=True, text=True, timeout=timeout_s,
                          cwd=tempfile.gettempdir())
    if proc.stderr.strip():
        print(proc.stderr.rstrip(), file=sys.stderr)
    if proc.returncode != 0:
        raise SystemExit(f"the judge failed (exit {proc.returncode}); is lanes installed (pip install -e .)?")
    return {r["id"]: r for r in json.loads(proc.stdout)}


def grade(paths: list[pathlib.Path], *, solutions: pathlib.Path | None, limits: Limits, jobs: int,
          student: str | None = None, progress=print) -> tuple[list[Submission], str]:
    """Grade notebooks; ``solutions=None`` runs the public form checks only (no keys needed)."""
    files = collect(paths)
    known = set(all_sets())
    subs: list[Submission] = []
    todo: list[tuple[Submission, object]] = []
    for f in files:
        nb, problem = read_notebook(f)
        slug = match_assignment(f, nb, known)
        sub = Submission(path=str(f), assignment=slug)
        subs.append(sub)
        if slug is None:
            sub.status = UNKNOWN if nb is not None else NOT_A_NOTEBOOK
            sub.messages.append(problem or f"cannot tell which exercise set this is (known: {', '.join(sorted(known))})")
            continue
        sub.questions = [Question(q.name, q.points) for q in get_set(slug).questions]
        if nb is None:
            sub.status = NOT_A_NOTEBOOK
            sub.messages.append(f"{problem}; every question scores 0")
            continue
        if solutions is not None and not (solutions / slug / "key.py").is_file():
            sub.status = NO_KEY
            sub.messages.append(f"no answer key {solutions / slug / 'key.py'}: grade from the instructor's "
                                "checkout (the student repository has no solutions/)")
            continue
        todo.append((sub, nb))
    if not todo:
        return subs, "nothing to run"

    box = Sandbox(limits, hide=[ROOT] + ([solutions] if solutions is not None else []))
    exported: dict[int, dict] = {}
    running: list[tuple[int, Job]] = []
    try:
        queue = list(enumerate(todo))
        done = 0
        while queue or running:
            while queue and len(running) < max(1, jobs):
                i, (sub, nb) = queue.pop(0)
                try:
                    running.append((i, box.start(pathlib.Path(sub.path), sub.assignment, i)))
                except Exception as e:  # the sandbox could not start
                    sub.status = CRASHED
                    sub.messages.append(f"could not start the sandbox: {type(e).__name__}: {e}")
            time.sleep(0.05)
            for i, job in list(running):
                rc = job.proc.poll()
                late = time.monotonic() - job.started > limits.timeout_s
                if rc is None and not late:
                    continue
                sub, nb = todo[i]
                box.stop(job)
                sub.seconds = round(time.monotonic() - job.started, 1)
                data, why = box.answers(job) if rc is not None else (None, "")
                shutil.rmtree(job.dir, ignore_errors=True)
                running.remove((i, job))
                done += 1
                if data is None:
                    sub.status = TIMEOUT if rc is None else CRASHED
                    sub.messages.append(_step1_failure(rc, rc is None, limits, why))
                else:
                    exported[i] = data
                progress(f"[{done}/{len(todo)}] {sub.path}: step 1 {sub.status} in {sub.seconds:g} s")
    finally:  # also on an interrupt or an error: stop what still runs, then remove every scratch folder
        try:
            for _, job in running:
                try:
                    box.stop(job)
                except Exception as e:
                    print(f"warning: could not stop a job cleanly: {e}", file=sys.stderr)
        finally:
            isolation = box.isolation
            box.close()

    judge_jobs = []
    for i, data in exported.items():
        sub, nb = todo[i]
        spec = get_set(sub.assignment)
        answers = data.get("answers") if isinstance(data.get("answers"), dict) else {}
        refused = data.get("refused") if isinstance(data.get("refused"), dict) else {}
        errors = data.get("errors") if isinstance(data.get("errors"), list) else []
        by_var, other = cell_errors_by_variable(nb, spec.variables, errors)
        sub.messages.extend(other[:10])
        own = data.get("student")
        who = student if student is not None else own
        if student is not None and type(own) is str and own.strip().lower() != student:
            sub.messages.append(f"the notebook's STUDENT is {_clean(own.strip(), 40)!r} but it is graded as {student!r} "
                                "(--student): its answers may be for another variant")
        if type(who) is not str:
            sub.messages.append("STUDENT is not a string: graded as the default variant")
            who = ""
        try:
            from lanes.exercises.variants import normalise_student

            who = normalise_student(who)
        except ValueError as e:
            sub.messages.append(f"{e}: graded as the default variant")
            who = ""
        sub.student = who
        if not who:
            sub.messages.append("STUDENT is empty: graded as the default variant")
        judge_jobs.append({"id": i, "slug": sub.assignment, "student": who,
                           "answers": {k: v for k, v in answers.items() if k in spec.variables},
                           "refused": {k: _clean(v) for k, v in refused.items() if k in spec.variables},
                           "cell_errors": by_var})
    if judge_jobs:
        progress(f"judging {len(judge_jobs)} notebook(s) in a fresh interpreter ...")
    results = run_judge(judge_jobs, solutions, timeout_s=max(600.0, 30.0 * len(judge_jobs)))
    for i, res in results.items():
        sub = todo[i][0]
        if "error" in res:
            sub.status = CRASHED
            sub.messages.append(f"the judge could not grade this set: {res['error']}")
            continue
        for q in sub.questions:
            r = res["questions"].get(q.name, {})
            q.score = float(r.get("score", 0.0))
            q.messages.extend(str(m) for m in r.get("messages", []))
            q.form_ok = bool(r.get("form_ok"))
    return subs, isolation


# --------------------------------------------------------------------------- reporting


def _fmt(x: float) -> str:
    return f"{x:g}"


def print_forms_report(subs: list[Submission]) -> int:
    """Practice feedback: each question's form check; the number of problems found."""
    problems = 0
    for s in subs:
        print(f"{s.path}  [{s.assignment or '?'}]  {s.status}")
        for m in s.messages:
            print(f"  ! {m}")
        problems += s.status != GRADED
        for q in s.questions:
            ok = bool(q.form_ok)
            problems += not ok
            print(f"  {q.name:<8}  {'form ok' if ok else 'PROBLEM'}  {q.messages[0] if q.messages else ''}")
        print()
    print(f"{problems} problem(s). Form checks only: the values are graded by your instructor.")
    return problems


def print_report(subs: list[Submission], total: float, possible: float, pass_mark: float) -> None:
    for s in subs:
        head = f"{s.path}  [{s.assignment or '?'}]  {s.status}"
        if s.student:
            head += f"  student {s.student!r}"
        if s.seconds:
            head += f"  ({s.seconds:g} s)"
        print(head)
        for m in s.messages:
            print(f"  ! {m}")
        if s.questions:
            w = max(8, *(len(q.name) for q in s.questions))
            print(f"  {'question':<{w}}  {'score':>6}  {'of':>4}  note")
            for q in s.questions:
                note = q.messages[0] if q.messages else ""
                print(f"  {q.name:<{w}}  {_fmt(q.score):>6}  {_fmt(q.possible):>4}  {note}")
            pct = f" ({s.score / s.possible:.0%})" if s.possible else ""
            print(f"  {'total':<{w}}  {_fmt(s.score):>6}  {_fmt(s.possible):>4}{pct}")
        print()
    frac = total / possible if possible else 0.0
    verdict = "PASS" if frac >= pass_mark else "FAIL"
    print(f"TOTAL {_fmt(total)} / {_fmt(possible)} ({frac:.1%}); pass mark {pass_mark:.0%}: {verdict}")


def write_gradebook(subs: list[Submission], path: pathlib.Path) -> None:
    """A row per student, a column per set and question, and the total; the best copy counts."""
    columns: list[tuple[str, str]] = []
    rows: dict[str, dict] = {}
    for s in subs:
        if not s.assignment:
            continue
        for q in s.questions:
            if (s.assignment, q.name) not in columns:
                columns.append((s.assignment, q.name))
        who = s.student if s.student else f"(no STUDENT) {s.path}"
        row = rows.setdefault(who, {"sets": {}})
        best = row["sets"].get(s.assignment)
        if best is None or s.score > best.score:
            row["sets"][s.assignment] = s
    columns.sort()
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["student", *[f"{a}:{q}" for a, q in columns], "total", "possible"])
        for who in sorted(rows):
            sets = rows[who]["sets"]
            cells, total, possible = [], 0.0, 0.0
            for a, qn in columns:
                s = sets.get(a)
                q = next((q for q in s.questions if q.name == qn), None) if s else None
                cells.append(_fmt(q.score) if q else "")
            for s in sets.values():
                total += s.score
                possible += s.possible
            w.writerow([who, *cells, _fmt(total), _fmt(possible)])


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description="Grade lanes exercise notebooks (two steps, sandboxed).")
    ap.add_argument("paths", nargs="*", type=pathlib.Path, help="notebooks or folders (default: exercises/)")
    ap.add_argument("--student", help="grade every notebook as this student's variant (overrides STUDENT)")
    ap.add_argument("--solutions", type=pathlib.Path, default=SOLUTIONS,
                    help="folder with the answer keys NN_slug/key.py (default: solutions/)")
    ap.add_argument("--timeout", type=float, default=Limits.timeout_s, help="wall time per notebook, s (default 120)")
    ap.add_argument("--cpu-limit", type=int, default=Limits.cpu_s, help="CPU time per notebook, s (default 120)")
    ap.add_argument("--memory-mb", type=int, default=Limits.memory_mb, help="address space per notebook (default 3072)")
    ap.add_argument("--max-procs", type=int, default=Limits.nproc, help="processes and threads per notebook (default 64)")
    ap.add_argument("--jobs", type=int, default=min(4, os.cpu_count() or 1), help="notebooks run at once")
    ap.add_argument("--pass-mark", type=float, default=0.5,
                    help="exit 1 when the total is below this fraction of the points (default 0.5)")
    ap.add_argument("--json", type=pathlib.Path, default=DEFAULT_REPORT, help="JSON report path")
    ap.add_argument("--csv", type=pathlib.Path, help="also write a gradebook (CSV) here")
    ap.add_argument("--quiet", action="store_true", help="no progress lines")
    ap.add_argument("--forms-only", action="store_true",
                    help="practice feedback without keys: run the notebooks and check answer forms only")
    args = ap.parse_args(argv)
    if not 0 <= args.pass_mark <= 1:
        ap.error(f"--pass-mark must be a fraction in [0, 1] (got {args.pass_mark})")
    for name in ("timeout", "cpu_limit", "memory_mb", "max_procs", "jobs"):
        if getattr(args, name) <= 0:
            ap.error(f"--{name.replace('_', '-')} must be > 0 (got {getattr(args, name)})")
    paths = args.paths or [EXERCISES]
    missing = [str(p) for p in paths if not p.exists()]
    if missing:
        ap.error(f"no such file or folder: {', '.join(missing)}")
    if args.student is not None:
        from lanes.exercises.variants import normalise_student

        try:
            args.student = normalise_student(args.student)
        except ValueError as e:
            ap.error(f"--student: {e}")

    t0 = time.monotonic()
    limits = Limits(timeout_s=args.timeout, cpu_s=args.cpu_limit, memory_mb=args.memory_mb, nproc=args.max_procs)
    progress = (lambda *a: None) if args.quiet else (lambda msg: print(msg, file=sys.stderr, flush=True))
    solutions = None if args.forms_only else args.solutions.resolve()
    subs, isolation = grade(paths, solutions=solutions, limits=limits, jobs=args.jobs,
                            student=args.student, progress=progress)
    if not subs:
        ap.error(f"no notebooks found under {', '.join(map(str, paths))}")
    if not isolation.startswith("unprivileged uid, private"):
        print(f"warning: sandbox is {isolation}; grade as root on Linux for real grades", file=sys.stderr)
    if args.forms_only:
        problems = print_forms_report(subs)
        report = {"forms_only": True, "problems": problems, "sandbox": isolation,
                  "submissions": [{**{k: v for k, v in asdict(s).items() if k != "questions"},
                                   "questions": {q.name: {"form_ok": q.form_ok, "messages": q.messages}
                                                 for q in s.questions}} for s in subs]}
        args.json.parent.mkdir(parents=True, exist_ok=True)
        args.json.write_text(json.dumps(report, indent=2) + "\n")
        print(f"report: {args.json}")
        return 0 if problems == 0 else 1
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
        "sandbox": isolation,
        "submissions": [
            {**{k: v for k, v in asdict(s).items() if k != "questions"}, "score": s.score, "possible": s.possible,
             "questions": {q.name: {"score": q.score, "possible": q.possible, "messages": q.messages}
                           for q in s.questions}}
            for s in subs
        ],
    }
    args.json.parent.mkdir(parents=True, exist_ok=True)
    args.json.write_text(json.dumps(report, indent=2) + "\n")
    print(f"report: {args.json}")
    if args.csv:
        write_gradebook(subs, args.csv)
        print(f"gradebook: {args.csv}")
    return 0 if report["passed"] else 1


def _terminate(signum, frame):
    raise KeyboardInterrupt  # so that the sandbox is cleaned up on SIGTERM too


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
