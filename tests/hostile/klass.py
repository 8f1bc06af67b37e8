"""One class, graded once per test session as root through the box (``scripts/grade.py``).

The class folder (a folder per login, a roster) holds, side by side:

- **honest work**: every set's solution for ``alice``, ``bob`` and ``carol``, and every
  untouched student notebook for ``ursula`` (``tests/exercises/test_exercises.py``);
- **the hostile class** of issue 17 on set 01: a classmate's copy, invisible characters,
  four copies one per letter, another copy of the solutions on the disk, links, a FIFO,
  a root-only file, bad metadata, broken JSON, nbformat 3, survivors and SysV leftovers,
  formula names, an unlisted folder (``tests/grading/test_grading_class.py``);
- **the notebook attacks** on set 01, all handed in by ``attacker`` (always-equal answers,
  monkeypatching the judge, fake otter scores, a detached writer, reading the master,
  echoing the tests and the key into a message, a NameError, terminal escapes, the
  network), next to an honest renamed copy (``tests/grading/test_grading_robustness.py``);
- **the class breakers** of issue 30, also the attacker's: answers nested 200,000 and 988
  deep, a box filled with 3,000 nested folders and with files, a hand-in 1,000 folders
  deep, and names with terminal escapes and with bytes that are not UTF-8 (``BREAKERS``,
  ``BAD_NAMES``, ``DEEP_HANDIN``): each must fail only itself.

Every attack earns 0 on what it targets while the honest notebooks in the same run earn
full marks. :func:`grade_class` grades it once and also records what appeared in the
scratch folders, which SysV IPC objects are new and which marked processes survive.
The fixture ``graded_class`` (``tests/conftest.py``) calls it once per session.
"""

from __future__ import annotations

import csv
import importlib.util
import json
import os
import pathlib
import re
import subprocess
import sys
import tempfile

from lanes.exercises import get_set
from lanes.exercises.forms import Choice, Float, Int

ROOT = pathlib.Path(__file__).resolve().parents[2]
GRADE = ROOT / "scripts" / "grade.py"
SOLUTIONS = ROOT / "solutions"
EXERCISES = ROOT / "exercises"
SLUG = "01_slots_and_littles_law"
MASTER = SOLUTIONS / SLUG / f"{SLUG}.ipynb"
#: Set 01's points, read from its spec (the one place they are kept): the whole set's, and q4's
#: (the multiple-choice question the copies and the NameError below get wrong).
POSSIBLE = get_set(SLUG).possible
Q4_POINTS = get_set(SLUG).question("q4").points
#: Every process, file and name the attacks make carries this mark.
MARK = f"lanes-class-{os.getpid()}"
SECRET_BYTES = f"TOPSECRET-{os.getpid()}"
SCRATCH = ("/tmp", "/var/tmp", "/dev/shm", "/run/lock")
#: Honest students who hand in every set's solution, and the one who hands in every untouched notebook.
HONEST = ("alice", "bob", "carol")
UNTOUCHED = "ursula"
ATTACKER = "attacker"
#: The hostile class of issue 17: roster login -> name (two names are formulas).
ROSTER = {"alice": "Alice A", "dave": "Dave D", "mallory": "Mallory M", "eve": "Eve E", "frank": "Frank F",
          "grace": "Grace G", "heidi": "Heidi H", "ivan": "Ivan I", "judy": "Judy J", "oscar": "Oscar O",
          "peggy": '=HYPERLINK("http://example.invalid/x","click")', "trent": "+cmd|' /C calc'!A0",
          ATTACKER: "Attacker A", "bob": "Bob B", "carol": "Carol C", UNTOUCHED: "Ursula U"}


def skip_reason() -> str | None:
    """Why the class cannot be graded here (None when it can)."""
    import shutil

    if not sys.platform.startswith("linux") or os.geteuid() != 0 or shutil.which("bwrap") is None:
        return "the class is graded as root on Linux with bubblewrap (as in CI)"
    if not MASTER.is_file():
        return "no solutions/ in this checkout (student repository)"
    return None


_ASSIGN = None


def assign():
    """``scripts/assign_exercises.py`` as a module (loaded once)."""
    global _ASSIGN
    if _ASSIGN is None:
        spec = importlib.util.spec_from_file_location("assign_exercises", ROOT / "scripts" / "assign_exercises.py")
        _ASSIGN = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(_ASSIGN)
    return _ASSIGN


def masters() -> list[pathlib.Path]:
    """Sets with a master notebook and an answer key (the instructor's checkout)."""
    from lanes.exercises import all_sets

    return [SOLUTIONS / s / f"{s}.ipynb" for s in all_sets()
            if (SOLUTIONS / s / f"{s}.ipynb").is_file() and (SOLUTIONS / s / "key.py").is_file()]


def honest_sets() -> list[tuple[str, pathlib.Path]]:
    """(login, master) of the solutions handed in by the honest students: set i by HONEST[i % 3]."""
    return [(HONEST[i % len(HONEST)], m) for i, m in enumerate(masters())]


def token(login: str) -> str:
    from lanes.exercises.variants import TEST_SECRET, student_token

    return student_token(login, TEST_SECRET)


def honest(login: str, student: str | None = None, master: pathlib.Path = MASTER):
    """``master``'s solution as ``login`` hands it in (``STUDENT`` = their token unless given)."""
    return assign().solution_notebook(master, token(login) if student is None else student)


def _key_q4() -> str:
    """The key's letter of set 01's q4, read from the master's solution cell."""
    import nbformat

    for cell in nbformat.read(MASTER, as_version=4).cells:
        m = re.search(r'^q4_choice = (?:V\.shown_letter\("q4_choice", )?"([a-d])"', cell.source, re.M)
        if cell.cell_type == "code" and m:
            return m.group(1)
    raise AssertionError("no solution cell for q4_choice in " + str(MASTER))


def right_letter(login: str) -> str:
    """The letter under which ``login``'s variant of set 01 shows the right option of q4."""
    from lanes.exercises import get_set

    return get_set(SLUG).variant(token(login)).shown_letter("q4_choice", _key_q4())


def shown_labels(login: str) -> list[str]:
    """The labels under which ``login``'s variant of set 01 shows q4's four options, in its order."""
    from lanes.exercises import get_set

    return [shown for shown, _ in get_set(SLUG).variant(token(login)).options("q4_choice")]


def wrong_letter(login: str) -> str:
    return next(x for x in shown_labels(login) if x != right_letter(login))


def with_cell(nb, source: str, *, replace_var: str | None = None):
    """A copy of ``nb`` with the answer cell of ``replace_var`` replaced, or a cell appended."""
    import nbformat

    nb = nbformat.from_dict(json.loads(json.dumps(nb)))
    if replace_var:
        for cell in nb.cells:
            if cell.cell_type == "code" and re.search(rf"^{replace_var} =", cell.source, re.M):
                cell.source = source
                return nb
        raise AssertionError(f"no answer cell for {replace_var}")
    nb.cells.append(nbformat.v4.new_code_cell(source))
    return nb


def wrong(nb, login: str):
    """``login``'s ``nb`` with every answer wrong (q4 another letter than the right one)."""
    return with_cell(nb, wrong_answers(login))


def wrong_answers(login: str) -> str:
    """A cell setting every answer of set 01 wrong for ``login``: -1 for a number, another
    label than the right one for q4 (every variable of the set's spec, so a new one is covered)."""
    lines = [f"{var} = {wrong_letter(login)!r}" if isinstance(form, Choice) else f"{var} = -1.0"
             for q in get_set(SLUG).questions for var, form in q.answers]
    return "\n".join(lines) + "\n"


def always_equal_answers() -> str:
    """A cell setting every answer of set 01 to an object equal to anything: numbers alternate
    between a float and an int subclass (a Float form refuses both), a choice a str subclass."""
    lines, numbers = [], 0
    for q in get_set(SLUG).questions:
        for var, form in q.answers:
            if isinstance(form, (Float, Int)):
                cls = "AlwaysEqualInt(-1)" if numbers % 2 else "AlwaysEqualFloat(-1.0)"
                numbers += 1
            else:
                cls = 'AlwaysEqualStr("z")'
            lines.append(f"{var} = {cls}")
    return "\n".join(lines) + "\n"


# --------------------------------------------------------------------------- the hostile class

GLOB_MASTERS = f"""
import glob, json, os, time
t0 = time.monotonic()
paths = [p for depth in range(1, 5) for p in glob.glob("/" + "*/" * depth + "solutions/{SLUG}/*.ipynb")]
for top in sorted(os.listdir("/")):  # then every folder the box shows, at any depth (links not followed)
    if top in ("proc", "sys", "dev"):
        continue
    for folder, subfolders, files in os.walk("/" + top):
        if time.monotonic() - t0 > 20:
            break
        if folder.endswith("/solutions/{SLUG}"):
            paths += [os.path.join(folder, f) for f in files if f.endswith(".ipynb")]
found = []
for path in paths[:6]:
    nb = json.load(open(path))
    for cell in nb["cells"]:
        src = "".join(cell["source"])
        if cell["cell_type"] == "code" and "TEST CONFIG" not in src and "STUDENT =" not in src:
            try:
                exec(src.replace("# SOLUTION", ""), globals())
            except Exception:
                pass
    found.append(path)
"""

LEFTOVERS = f"""
import ctypes, os, pty, subprocess, sys
libc = ctypes.CDLL(None)
shm = libc.shmget(0x5eed, ctypes.c_size_t(3 << 30), 0o1000 | 0o666)   # 3 GiB of SysV shared memory
msq = libc.msgget(0x5eee, 0o1000 | 0o666)
for path in ("/run/lock/{MARK}", "/var/tmp/{MARK}", "/dev/shm/{MARK}", "/tmp/{MARK}"):
    try:
        open(path, "w").write("x")
    except OSError:
        pass
pid, fd = pty.fork()
if pid == 0:  # a setuid program on a terminal, left waiting for a password
    os.execv("/usr/bin/su", ["su", "-c", "sleep 300 {MARK}"])
for _ in range(8):
    subprocess.Popen([sys.executable, "-c", "import os\\nos.setsid()\\nwhile True:\\n    pass", "{MARK}"],
                     start_new_session=True)
"""

# --------------------------------------------------------------------------- the notebook attacks

WRONG = wrong_answers(ATTACKER) if MASTER.is_file() else ""  # (a student repository has no master)

ATTACKS = {
    "always_equal": """
class AlwaysEqualFloat(float):
    def __eq__(self, other): return True
    def __ne__(self, other): return False
    def __lt__(self, other): return False
    def __gt__(self, other): return False
    def __le__(self, other): return True
    def __ge__(self, other): return True
    def __sub__(self, other): return AlwaysEqualFloat(0.0)
    def __rsub__(self, other): return AlwaysEqualFloat(0.0)
    def __abs__(self): return AlwaysEqualFloat(0.0)
    __hash__ = float.__hash__
class AlwaysEqualInt(int):
    def __eq__(self, other): return True
    __hash__ = int.__hash__
class AlwaysEqualStr(str):
    def __eq__(self, other): return True
    def strip(self, *a): return self
    def lower(self): return self
    __hash__ = str.__hash__
""" + always_equal_answers(),
    "monkeypatch": WRONG + """
import builtins, math, lanes
import grading.judge as judge
builtins.abs = lambda x: 0
math.isclose = lambda *a, **k: True
lanes.simulate = lambda *a, **k: None
lanes.__dict__["Scenario"] = lambda *a, **k: None
judge.close = judge.equal = judge.choice = lambda *a, **k: judge.Check(True)
judge.grade_answers = lambda *a, **k: {}
""",
    "otter_scores": WRONG + """
import json, pathlib, sys, types
# What raised otter's in-kernel scores before: the kernel's checker and grader say "full marks".
fake = types.SimpleNamespace(score=POSSIBLE, possible=POSSIBLE, total=POSSIBLE, grade=1.0, passed=True)
otter_execute = types.ModuleType("otter.execute")
otter_execute.Checker = types.SimpleNamespace(_results=fake, results=fake, get_results=lambda: fake)
sys.modules["otter.execute"] = otter_execute
grader = types.SimpleNamespace(check=lambda *a: fake, check_all=lambda: fake, results=fake)
full = {"tests": [{"name": q, "score": p, "possible": p} for q, p in QUESTIONS], "score": POSSIBLE}
for p in ("results.json", "/tmp/results.json", "grading_results.json", "answers.json"):
    try:
        pathlib.Path(p).write_text(json.dumps(full))
    except OSError:
        pass
""".replace("POSSIBLE", f"{POSSIBLE:g}").replace(
        "QUESTIONS", repr([(q.name, q.points) for q in get_set(SLUG).questions])),
    "detached": WRONG + """
import subprocess, sys
code = '''
import json, time, pathlib, sys
for _ in range(600):  # lives 150 s unless the grader kills it
    time.sleep(0.25)
    for p in sys.argv[1:]:
        try:
            pathlib.Path(p).write_text(json.dumps({"score": 999, "possible": POSSIBLE}))
        except OSError:
            pass
'''
subprocess.Popen([sys.executable, "-c", code, "answers.json", REPORT, "/tmp/MARK-detached"],
                 start_new_session=True, stdin=subprocess.DEVNULL,
                 stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
""".replace("POSSIBLE", f"{POSSIBLE:g}"),
    "read_master": WRONG + """
import json, pathlib, lanes
found = []
for root in {pathlib.Path(lanes.__file__).resolve().parents[1], pathlib.Path(REPO)}:
    master = root / "solutions" / SLUG / (SLUG + ".ipynb")
    try:
        nb = json.loads(master.read_text())
    except OSError:
        continue
    for cell in nb["cells"]:
        src = "".join(cell["source"])
        if cell["cell_type"] == "code" and "TEST CONFIG" not in src and "STUDENT =" not in src:
            exec(src.replace("# SOLUTION", ""), globals())
    found.append(str(master))
""",
    "echo_tests": None,  # built by hostile_echo: an answer cell raising with the text of tests/ and the key
}
#: Submissions that once stopped or zeroed the whole class (issue 30), each on an honest
#: notebook of the attacker's: each must fail only itself (the last keeps its answers).
_DEEP_EXPORT = """
import grading.runner as runner
def export(namespace, path, slug, errors):
    with open(path, "w") as f:
        f.write('{"answers": {"q1_busy_slots": ' + "[" * DEPTH + "]" * DEPTH + '}}')
runner.export = export
"""
BREAKERS = {
    # answers nested past the parser's recursion limit, and deep enough to break the judge's input
    "deep_answers": _DEEP_EXPORT.replace("DEPTH", "200_000"),
    "deep_judge_input": _DEEP_EXPORT.replace("DEPTH", "988"),
    # 3,000 nested folders in the job folder and in /tmp (removing them recursively fails), then
    # every folder it may write filled (the grader's disk must not fill, nor its neighbours fail)
    "fills_the_box": """
import os
for top in ("/job", "/tmp"):
    os.chdir(top)
    for _ in range(3000):
        os.mkdir("d")
        os.chdir("d")
os.chdir("/job")
for folder in ("/job", "/tmp", "/var/tmp", "/dev/shm"):
    for i in range(40):
        try:
            with open(f"{folder}/fill-{i}", "wb") as f:
                for _ in range(64):
                    f.write(b"x" * (1 << 20))
        except OSError:
            break
""",
}
#: Names that must reach no output raw: terminal escapes that clear the screen and forge a
#: line, a line break, and bytes that are not UTF-8.
BAD_NAMES = (b"\x1b[2J\x1b[HTOTAL 999 of 999 (100.0%): PASS\n\x07.ipynb", b"\xff\xfe-not-utf8.ipynb")
#: Folders nested this deep in a hand-in, with a notebook at the bottom.
DEEP_HANDIN = 1000

#: Files the echo attack tries to quote (what it reads must never reach the report).
ECHOED = ("tests/hostile/klass.py", f"solutions/{SLUG}/key.py")


def hostile_echo(nb):
    nb = with_cell(nb, WRONG)
    src = ("text = ''\nfor p in [" + ", ".join(f"REPO + '/{p}'" for p in ECHOED) + "]:\n"
           "    text += open(p).read()\nq1_busy_slots = float(text)\n")
    return with_cell(nb, src, replace_var="q1_busy_slots")


def _fill(source: str, report: pathlib.Path) -> str:
    return (f"REPO = {str(ROOT)!r}\nREPORT = {str(report)!r}\nSLUG = {SLUG!r}\n"
            + source.replace("MARK", MARK))


# --------------------------------------------------------------------------- what a run leaves


def scratch() -> dict:
    """What the notebooks try to leave in each scratch folder: entries named with this run's
    mark. (Other programs on the machine, other boxes included, may use /tmp meanwhile; that
    the box's own folder goes is checked in test_the_box_leaves_nothing.)"""
    out = {}
    for d in SCRATCH:
        try:
            out[d] = {e for e in os.listdir(d) if MARK in e}
        except OSError:
            out[d] = set()
    return out


def ipc() -> dict:
    out = {}
    for kind in ("shm", "msg", "sem"):
        try:
            out[kind] = pathlib.Path(f"/proc/sysvipc/{kind}").read_text().splitlines()[1:]
        except OSError:
            out[kind] = []
    return out


def marked_pids(mark: str = MARK) -> dict[int, str]:
    """Live processes whose command line carries ``mark`` (what the attacks start)."""
    found = {}
    for d in pathlib.Path("/proc").iterdir():
        if d.name.isdigit() and int(d.name) != os.getpid():
            try:
                cmd = (d / "cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
                state = (d / "stat").read_text().rsplit(")", 1)[1].split()[0]
            except (OSError, IndexError):
                continue
            if mark in cmd and state != "Z":
                found[int(d.name)] = cmd
    return found


def marked(mark: str = MARK) -> list:
    return list(marked_pids(mark).values())


def in_box(code: str, job_dir, *args: str, box=None, timeout: float = 120) -> tuple[int, bytes, bytes]:
    """Run ``python -c code args...`` in ``box`` (a fresh :class:`grading.sandbox.Box`, closed after,
    when omitted) on the job folder ``job_dir``: ``(exit status, stdout, stderr)``."""
    from grading import sandbox

    if box is None:
        with sandbox.Box() as fresh:
            return in_box(code, job_dir, *args, box=fresh, timeout=timeout)
    with box.popen([sys.executable, "-E", "-s", "-c", code, *args], job_dir=job_dir, stdout=subprocess.PIPE,
                   stderr=subprocess.PIPE) as p:
        out, err = p.communicate(timeout=timeout)
    return p.returncode, out, err


def run(args: list, grader_tmp: str, python: str = sys.executable) -> tuple:
    """Grade; return (proc, what appeared in the scratch folders, new IPC objects, marked processes).

    ``grader_tmp`` is the grader's TMPDIR (its boxes' folders go there): it must be empty after.
    """
    before, ipc_before = scratch(), ipc()
    env = {**os.environ, "LANES_TEST_SECRET": "1", "TMPDIR": grader_tmp}
    proc = subprocess.run([python, str(GRADE), *map(str, args)], capture_output=True, text=True, timeout=900,
                          env=env)
    after, ipc_after = scratch(), ipc()
    new = {d: after[d] - before[d] for d in SCRATCH if after[d] - before[d]}
    if os.listdir(grader_tmp):
        new[grader_tmp] = set(os.listdir(grader_tmp))
    new_ipc = {k: [x for x in ipc_after[k] if x not in ipc_before[k]] for k in ipc_before
               if set(ipc_after[k]) - set(ipc_before[k])}
    return proc, new, new_ipc, marked()


# --------------------------------------------------------------------------- building and grading


def build(d: pathlib.Path) -> tuple[pathlib.Path, pathlib.Path]:
    """Write the class under ``d``; return (the submissions folder, the roster)."""
    import nbformat
    import shutil

    subs = d / "subs"
    for login in ROSTER:
        (subs / login).mkdir(parents=True)
    roster = d / "roster.csv"
    with open(roster, "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["login", "file", "name"])
        for login, name in ROSTER.items():
            w.writerow([login, "", name])
    put = lambda nb, login, name=f"{SLUG}.ipynb": nbformat.write(nb, subs / login / name)  # noqa: E731

    # honest work: every set's solution for one of three students in turn (the other two are
    # judged in-process by test_exercises); every untouched notebook for one student
    for login, master in honest_sets():
        put(honest(login, master=master), login, master.name)
    for master in masters():
        student_file = f"set_{master.stem}.ipynb"  # the set's own name, as a student hands it in
        shutil.copy(EXERCISES / master.stem / student_file, subs / UNTOUCHED / student_file)
    if not (subs / "alice" / MASTER.name).is_file():  # the classmate whose set 01 mallory and eve hand in
        put(honest("alice"), "alice")
    put(honest("peggy"), "peggy")
    # best copy: four copies, one per option label; the latest (mtime) has a wrong one
    base = honest("dave")
    good = right_letter("dave")
    for i, letter in enumerate(sorted(shown_labels("dave"), key=lambda x: x == good)[::-1]):  # the right one first
        p = subs / "dave" / f"{SLUG}-{letter}.ipynb"
        nbformat.write(with_cell(base, f"q4_choice = {letter!r}", replace_var="q4_choice"), p)
        os.utime(p, ns=(1_700_000_000_000_000_000 + i, 1_700_000_000_000_000_000 + i))
    # a classmate's notebook handed in as one's own, and with invisible characters after her token
    put(honest("alice"), "mallory")
    put(honest("alice", token("alice") + "\ufe0f"), "eve")
    # another copy of the solutions somewhere on the disk (this checkout's and any other clone)
    put(with_cell(wrong(honest("frank"), "frank"), GLOB_MASTERS), "frank")
    # links, a FIFO, a folder named like a notebook; a root-only file
    secret = d / "root-only.txt"
    secret.write_text(SECRET_BYTES)
    os.chmod(secret, 0o600)
    os.symlink(MASTER, subs / "grace" / f"{SLUG}.ipynb")
    os.symlink(secret, subs / "grace" / "notes.ipynb")
    os.mkfifo(subs / "grace" / "pipe.ipynb")
    # metadata of the wrong types; a broken notebook quoting a secret; an nbformat 3 notebook
    nb = honest("heidi")
    nb.metadata["lanes"] = "not an object"
    put(nb, "heidi")
    nb = honest("ivan")
    nb.metadata["lanes"] = {"set": [SLUG]}
    nb.metadata["otter"] = {"assignment_name": 7}
    put(nb, "ivan")
    (subs / "judy" / f"{SLUG}.ipynb").write_text(SECRET_BYTES + " {")
    old = nbformat.convert(honest("trent"), 3)
    (subs / "trent" / f"{SLUG}.ipynb").write_text(nbformat.writes(old, version=3))
    # survivors and leftovers
    put(with_cell(honest("oscar"), LEFTOVERS), "oscar")
    # an unlisted folder with a formula for a name
    (subs / '=HYPERLINK("x")').mkdir()
    put(honest("zed"), '=HYPERLINK("x")')

    # the notebook attacks, each on an honest notebook (after its cells, so only the attack can
    # earn points), handed in by one student next to an honest copy (renamed, in a folder)
    report = d / "one" / "report.json"
    base = honest(ATTACKER)
    (subs / ATTACKER / "renamed").mkdir()
    put(base, ATTACKER, "renamed/mine-Copy1.ipynb")
    for name, src in ATTACKS.items():
        nb = hostile_echo(base) if src is None else with_cell(base, src)
        for cell in nb.cells:  # give every attack the repository path, the report path, the mark
            if cell.cell_type == "code" and ("REPO" in cell.source or "REPORT" in cell.source or "MARK" in cell.source):
                cell.source = _fill(cell.source, report)
        put(nb, ATTACKER, f"attack_{name}.ipynb")
    put(with_cell(base, "q4_choice = d", replace_var="q4_choice"), ATTACKER, "name_error.ipynb")
    put(with_cell(base, "def boom():\n    raise ValueError('\\x1b[2J\\x1b]0;pwned\\x07 cleared')\n"
                        "q4_choice = boom()", replace_var="q4_choice"), ATTACKER, "escapes.ipynb")
    put(with_cell(base, "import socket\nsocket.create_connection(('1.1.1.1', 53), timeout=3)"),
        ATTACKER, "network.ipynb")
    for name, src in BREAKERS.items():
        put(with_cell(base, src), ATTACKER, f"breaker_{name}.ipynb")
    with open(os.path.join(os.fsencode(subs / ATTACKER), BAD_NAMES[0]), "w", encoding="utf-8") as f:
        nbformat.write(base, f)  # an honest notebook under a name that is not text
    with open(os.path.join(os.fsencode(subs / ATTACKER), BAD_NAMES[1]), "wb") as f:
        f.write(b"\xff not a notebook")  # (not run: nothing to grade but its name)
    with open(deep(subs / ATTACKER / "deep", DEEP_HANDIN, "bottom.ipynb"), "w", encoding="utf-8") as f:
        nbformat.write(base, f)
    return subs, roster


def deep(folder: pathlib.Path, depth: int, file: str) -> int:
    """Make ``folder/d/d/.../d``, ``depth`` folders below ``folder``; a new ``file`` at the bottom, open to write."""
    fd = os.open(os.path.dirname(folder), os.O_RDONLY)
    try:
        for name in [os.path.basename(folder)] + ["d"] * depth:
            os.mkdir(name, dir_fd=fd)
            nxt = os.open(name, os.O_RDONLY, dir_fd=fd)
            os.close(fd)
            fd = nxt
        return os.open(file, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644, dir_fd=fd)
    finally:
        os.close(fd)


def grade_class(d: pathlib.Path) -> dict:
    """Build the class under ``d`` and grade it once; what the tests read."""
    import shutil

    subs, roster = build(d)
    out = d / "one"
    out.mkdir()
    grader_tmp = tempfile.mkdtemp(prefix="lanes-class-tmp-")
    os.chmod(grader_tmp, 0o711)
    args = [subs, "--roster", roster, "--json", out / "report.json", "--csv", out / "gradebook.csv",
            "--feedback", out / "feedback", "--jobs", "3", "--timeout", "120", "--max-copies", "32"]
    try:
        result = run(args, grader_tmp)
    finally:
        from grading.sandbox import remove_tree

        remove_tree(subs / ATTACKER / "deep")  # (pytest's own clean-up recurses)
        for pid in marked_pids():  # only if the grader failed to: leave no process behind
            try:
                os.kill(pid, 9)
            except OSError:
                pass
        shutil.rmtree(grader_tmp, ignore_errors=True)
    proc = result[0]
    assert proc.returncode in (0, 1), proc.stdout[-3000:] + proc.stderr[-3000:]
    data = json.loads((out / "report.json").read_text())
    return {"dir": d, "subs": subs, "roster": roster, "args": args, "run": result, "data": data, "out": out,
            "report": out / "report.json", "gradebook": out / "gradebook.csv", "proc": proc}


def sub(data: dict, login: str, name: str = f"{SLUG}.ipynb") -> dict:
    """The submission ``login/name`` of the report (``name`` may be ``folder/file``)."""
    for s in data["submissions"]:
        p = pathlib.PurePath(s["path"])
        if p.name == pathlib.PurePath(name).name and login in p.parts[:-1] and (
                "/" not in name or p.parent.name == pathlib.PurePath(name).parent.name):
            return s
    raise KeyError(f"{login}/{name}")
