"""A hostile class graded as root through the box: every attack earns 0 on what it targets.

One class folder (a folder per login, a roster) holds honest notebooks and one notebook or
folder per attack of issue 17; it is graded once with ``scripts/grade.py`` (module-scoped),
then again as two shards that are merged. After each run nothing of the box remains: no
process, no SysV IPC object, nothing new in ``/tmp``, ``/var/tmp``, ``/dev/shm`` or
``/run/lock``. A last test grades with the interpreter in a venv under ``/tmp``.
"""

from __future__ import annotations

import csv
import atexit
import importlib.util
import json
import os
import pathlib
import re
import shutil
import subprocess
import sys
import tempfile

import nbformat
import pytest

from lanes.exercises.variants import TEST_SECRET, student_token

ROOT = pathlib.Path(__file__).resolve().parents[1]
GRADE = ROOT / "scripts" / "grade.py"
SLUG = "01_slots_and_littles_law"
MASTER = ROOT / "solutions" / SLUG / f"{SLUG}.ipynb"
MARK = f"lanes-class-{os.getpid()}"
#: The grader's own temp folder (its boxes' folders go there): it must be empty after each run.
GRADER_TMP = tempfile.mkdtemp(prefix="lanes-class-tmp-")
os.chmod(GRADER_TMP, 0o711)
atexit.register(shutil.rmtree, GRADER_TMP, True)
ENV = {**os.environ, "LANES_TEST_SECRET": "1", "TMPDIR": GRADER_TMP}
SECRET_BYTES = f"TOPSECRET-{os.getpid()}"
SCRATCH = ("/tmp", "/var/tmp", "/dev/shm", "/run/lock")

pytestmark = pytest.mark.skipif(
    not sys.platform.startswith("linux") or os.geteuid() != 0 or shutil.which("bwrap") is None
    or not MASTER.is_file(),
    reason="the class is graded as root on Linux with bubblewrap, from the instructor's checkout (as in CI)")


def _assign():
    spec = importlib.util.spec_from_file_location("assign_exercises", ROOT / "scripts" / "assign_exercises.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def token(login: str) -> str:
    return student_token(login, TEST_SECRET)


def honest(login: str, student: str | None = None):
    return _assign().solution_notebook(MASTER, token(login) if student is None else student)


def right_letter(nb) -> str:
    cell = next(c for c in nb.cells if c.cell_type == "code" and c.source.lstrip().startswith("q4_choice ="))
    return re.search(r"['\"]([a-d])['\"]", cell.source).group(1)


def with_cell(nb, source: str, *, replace_var: str | None = None):
    nb = nbformat.from_dict(json.loads(json.dumps(nb)))
    if replace_var:
        for cell in nb.cells:
            if cell.cell_type == "code" and cell.source.lstrip().startswith(f"{replace_var} ="):
                cell.source = source
                return nb
        raise AssertionError(replace_var)
    nb.cells.append(nbformat.v4.new_code_cell(source))
    return nb


def wrong(nb):
    """``nb`` with every answer wrong (q4 another letter than the right one)."""
    other = next(x for x in "abcd" if x != right_letter(nb))
    return with_cell(nb, f"q1_busy_slots = -1.0\nq2_measured = -1.0\nq3_idle_at_peak = -1.0\nq4_choice = {other!r}")


GLOB_MASTERS = f"""
import glob, json
found = []
for pattern in ("/*/*/solutions/{SLUG}/*.ipynb", "/*/*/*/solutions/{SLUG}/*.ipynb", "/*/solutions/{SLUG}/*.ipynb",
                "/**/solutions/{SLUG}/{SLUG}.ipynb"):
    for path in glob.glob(pattern, recursive=True)[:3]:
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


def _scratch() -> dict:
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


def _ipc() -> dict:
    out = {}
    for kind in ("shm", "msg", "sem"):
        try:
            out[kind] = pathlib.Path(f"/proc/sysvipc/{kind}").read_text().splitlines()[1:]
        except OSError:
            out[kind] = []
    return out


def _marked() -> list:
    found = []
    for d in pathlib.Path("/proc").iterdir():
        if d.name.isdigit() and int(d.name) != os.getpid():
            try:
                cmd = (d / "cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
                state = (d / "stat").read_text().rsplit(")", 1)[1].split()[0]
            except (OSError, IndexError):
                continue
            if MARK in cmd and state != "Z":
                found.append(cmd)
    return found


def _run(args: list, python: str = sys.executable) -> tuple:
    """Grade; return (proc, what appeared in the scratch folders, new IPC objects, marked processes)."""
    before, ipc = _scratch(), _ipc()
    proc = subprocess.run([python, str(GRADE), *map(str, args)], capture_output=True, text=True, timeout=600,
                          env=ENV)
    after, ipc_after = _scratch(), _ipc()
    new = {d: after[d] - before[d] for d in SCRATCH if after[d] - before[d]}
    if os.listdir(GRADER_TMP):
        new[GRADER_TMP] = set(os.listdir(GRADER_TMP))
    new_ipc = {k: [x for x in ipc_after[k] if x not in ipc[k]] for k in ipc if set(ipc_after[k]) - set(ipc[k])}
    return proc, new, new_ipc, _marked()


@pytest.fixture(scope="module")
def klass(tmp_path_factory):
    d = tmp_path_factory.mktemp("class")
    subs = d / "subs"
    roster = [("alice", "Alice A"), ("dave", "Dave D"), ("mallory", "Mallory M"),
              ("eve", "Eve E"), ("frank", "Frank F"), ("grace", "Grace G"), ("heidi", "Heidi H"),
              ("ivan", "Ivan I"), ("judy", "Judy J"), ("oscar", "Oscar O"),
              ("peggy", '=HYPERLINK("http://example.invalid/x","click")'), ("trent", "+cmd|' /C calc'!A0")]
    for login, _ in roster:
        (subs / login).mkdir(parents=True)
    with open(d / "roster.csv", "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["login", "file", "name"])
        for login, name in roster:
            w.writerow([login, "", name])
    put = lambda nb, login, name=f"{SLUG}.ipynb": nbformat.write(nb, subs / login / name)  # noqa: E731
    put(honest("alice"), "alice")
    put(honest("peggy"), "peggy")
    # best copy: four copies, one per letter; the latest (mtime) has a wrong letter
    base = honest("dave")
    good = right_letter(base)
    for i, letter in enumerate(sorted("abcd", key=lambda x: x == good)[::-1]):  # the right one first (oldest)
        p = subs / "dave" / f"{SLUG}-{letter}.ipynb"
        nbformat.write(with_cell(base, f"q4_choice = {letter!r}", replace_var="q4_choice"), p)
        os.utime(p, ns=(1_700_000_000_000_000_000 + i, 1_700_000_000_000_000_000 + i))
    # a classmate's notebook handed in as one's own, and with invisible characters after her token
    put(honest("alice"), "mallory")
    put(honest("alice", token("alice") + "\ufe0f"), "eve")
    # another copy of the solutions somewhere on the disk (this checkout's and any other clone)
    put(with_cell(wrong(honest("frank")), GLOB_MASTERS), "frank")
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

    out = d / "one"
    out.mkdir()
    args = [subs, "--roster", d / "roster.csv", "--json", out / "report.json", "--csv", out / "gradebook.csv",
            "--feedback", out / "feedback", "--jobs", "2", "--timeout", "60"]
    run = _run(args)
    assert run[0].returncode in (0, 1), run[0].stdout[-3000:] + run[0].stderr[-3000:]
    data = json.loads((out / "report.json").read_text())
    return {"dir": d, "subs": subs, "args": args, "run": run, "data": data, "out": out}


def _sub(data, login, name=f"{SLUG}.ipynb"):
    return next(s for s in data["submissions"] if pathlib.Path(s["path"]).parent.name == login
                and pathlib.Path(s["path"]).name == name)


def test_honest_students_earn_full_marks_in_the_same_run(klass):
    for login in ("alice", "peggy"):
        s = _sub(klass["data"], login)
        assert s["status"] == "graded" and s["counted"] and s["score"] == s["possible"] == 7, s


def test_nothing_remains_after_the_run(klass):
    proc, new, new_ipc, marked = klass["run"]
    assert marked == [] and new_ipc == {} and new == {}, (marked, new_ipc, new)
    assert "Traceback" not in proc.stderr, proc.stderr[-2000:]


def test_the_leftover_notebook_still_earns_its_answers(klass):
    assert _sub(klass["data"], "oscar")["score"] == 7


def test_the_latest_copy_counts_not_the_best(klass):
    rows = {r["login"]: r for r in csv.DictReader((klass["out"] / "gradebook.csv").open(newline=""))}
    assert rows["dave"]["total"] == "6" and rows["dave"]["possible"] == "7"
    copies = [s for s in klass["data"]["submissions"] if pathlib.Path(s["path"]).parent.name == "dave"]
    assert len(copies) == 4 and sum(s["counted"] for s in copies) == 1
    assert max(s["score"] for s in copies) == 7 and all("copies" in " ".join(s["messages"]) for s in copies)


def test_a_classmates_answers_earn_nothing_variant_specific(klass):
    for login in ("mallory", "eve"):
        s = _sub(klass["data"], login)
        assert s["login"] == login and s["counted"]
        assert sum(q["score"] for n, q in s["questions"].items() if n != "q4") == 0, s
        assert any("not " + login + "'s token" in m for m in s["messages"])
    rows = {r["login"] for r in csv.DictReader((klass["out"] / "gradebook.csv").open(newline=""))}
    assert "alice" in rows and not any("\ufe0f" in r for r in rows)


def test_other_copies_of_the_solutions_are_out_of_reach(klass):
    s = _sub(klass["data"], "frank")
    assert s["score"] == 0, s


def test_links_fifos_and_broken_notebooks_are_refused_without_quoting(klass):
    for name in (f"{SLUG}.ipynb", "notes.ipynb", "pipe.ipynb"):
        s = _sub(klass["data"], "grace", name)
        assert s["status"] == "refused" and s["score"] == 0, s
    judy = _sub(klass["data"], "judy")
    assert judy["status"] == "not_a_notebook" and judy["counted"] and judy["possible"] == 7
    everything = (klass["out"] / "report.json").read_text() + klass["run"][0].stdout + klass["run"][0].stderr
    everything += "".join(p.read_text() for p in (klass["out"] / "feedback").iterdir())
    assert SECRET_BYTES not in everything


def test_metadata_of_the_wrong_type_does_not_stop_the_class(klass):
    for login in ("heidi", "ivan"):
        s = _sub(klass["data"], login)
        assert s["score"] == 7 and any("ignored" in m for m in s["messages"]), s
    assert _sub(klass["data"], "trent")["score"] == 7  # nbformat 3, converted


def test_gradebook_has_no_formulas_and_a_row_per_roster_student(klass):
    rows = list(csv.DictReader((klass["out"] / "gradebook.csv").open(newline="")))
    by = {r["login"]: r for r in rows}
    assert by["peggy"]["name"].startswith("'=") and by["trent"]["name"].startswith("'+")
    for r in rows:
        assert all(not v or v[0] not in "=+-@\t\r" for v in r.values()), r
    unlisted = next(s for s in klass["data"]["submissions"] if "HYPERLINK" in s["path"])
    assert unlisted["login"] is None and not unlisted["counted"] and unlisted["status"] == "unidentified"
    assert klass["data"]["possible"] == 7 * 12  # twelve roster students handed set 01 in, once each


def test_feedback_says_what_each_question_got(klass):
    text = (klass["out"] / "feedback" / "mallory.md").read_text()
    assert "| q1 | 0 | 2 |" in text and "token" in text
    assert (klass["out"] / "feedback" / "alice.md").read_text().count("correct") >= 4


def test_shards_merged_equal_one_run(tmp_path):
    """A small class (copies, a refusal, an unidentified file) as one run and as two shards merged."""
    subs = tmp_path / "subs"
    for login in ("alice", "bob", "carol", "dave"):
        (subs / login).mkdir(parents=True)
        nbformat.write(honest(login) if login != "carol" else wrong(honest(login)), subs / login / f"{SLUG}.ipynb")
    nbformat.write(wrong(honest("dave")), subs / "dave" / f"{SLUG}-Copy1.ipynb")
    os.utime(subs / "dave" / f"{SLUG}.ipynb", ns=(1, 1))  # the wrong copy is the latest
    (subs / "erin").mkdir()
    os.symlink(MASTER, subs / "erin" / f"{SLUG}.ipynb")
    nbformat.write(honest("zed"), subs / "unsorted.ipynb")
    one = tmp_path / "one"
    proc, *_ = _run([subs, "--json", one / "r.json", "--csv", one / "g.csv", "--quiet"])
    assert proc.returncode in (0, 1), proc.stderr[-2000:]
    reports = []
    for k in (1, 2):
        out = tmp_path / f"shard{k}"
        proc, new, new_ipc, marked = _run([subs, "--json", out / "r.json", "--shard", f"{k}/2", "--quiet"])
        assert proc.returncode in (0, 1), proc.stderr[-2000:]
        assert marked == [] and new_ipc == {} and new == {}
        reports.append(out / "r.json")
    merged = tmp_path / "merged"
    proc = subprocess.run([sys.executable, str(GRADE), "merge", *map(str, reports), "--json", str(merged / "r.json"),
                           "--csv", str(merged / "g.csv")], capture_output=True, text=True, env=ENV, timeout=60)
    assert proc.returncode in (0, 1), proc.stderr
    strip = lambda rep: [{k: v for k, v in s.items() if k != "seconds"} for s in rep["submissions"]]  # noqa: E731
    first, two = json.loads((one / "r.json").read_text()), json.loads((merged / "r.json").read_text())
    assert all(json.loads(r.read_text())["submissions"] for r in reports)  # both shards had work
    assert strip(two) == strip(first)
    assert (two["score"], two["possible"], two["students"]) == (first["score"], first["possible"], first["students"])
    assert (first["score"], first["possible"], first["students"]) == (14, 35, 5)
    assert (merged / "g.csv").read_bytes() == (one / "g.csv").read_bytes()


def test_grading_works_with_the_interpreter_in_a_venv_under_tmp(tmp_path):
    venv = pathlib.Path(tempfile.mkdtemp(prefix="lanes-venv-", dir="/tmp"))
    os.chmod(venv, 0o755)  # as `python -m venv /tmp/venv-x` makes it
    try:
        subprocess.run([sys.executable, "-m", "venv", "--system-site-packages", "--without-pip", str(venv)],
                       check=True, timeout=120)
        (tmp_path / "subs" / "alice").mkdir(parents=True)
        nbformat.write(honest("alice"), tmp_path / "subs" / "alice" / f"{SLUG}.ipynb")
        proc, new, new_ipc, marked = _run([tmp_path / "subs", "--json", tmp_path / "r.json", "--quiet"],
                                          python=str(venv / "bin" / "python"))
        assert (tmp_path / "r.json").is_file(), proc.stdout[-2000:] + proc.stderr[-2000:]
        data = json.loads((tmp_path / "r.json").read_text())
        assert data["score"] == data["possible"] == 7, proc.stdout[-2000:] + proc.stderr[-2000:]
        assert new == {} and marked == []
    finally:
        shutil.rmtree(venv, ignore_errors=True)


def test_the_box_leaves_nothing(tmp_path):
    """A box whose job detaches a process and fills its /tmp and /dev/shm: afterwards the job's
    processes, its folder copy of lanes and its cgroup are gone."""
    from lanes.exercises import sandbox

    code = ("import os, subprocess, sys\n"
            f"subprocess.Popen([sys.executable, '-c', 'import time; time.sleep(300)', {MARK!r}], start_new_session=True)\n"
            f"open('/tmp/{MARK}', 'w').write('x'); open('/dev/shm/{MARK}', 'w').write('x')\n"
            "print(os.getuid(), flush=True)\n")
    with sandbox.Box() as box:
        with box.popen([sys.executable, "-E", "-s", "-c", code], job_dir=tmp_path, stdout=subprocess.PIPE) as p:
            uid = int(p.stdout.readline())
            p.wait(timeout=60)
        assert sandbox._uid_processes(uid) == [] and _marked() == []
        assert box.cgroup is None or not any(c.is_dir() for c in box.cgroup.iterdir())
        base = box.base
    assert not base.exists() and _scratch() == {d: set() for d in SCRATCH}
