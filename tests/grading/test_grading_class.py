"""A hostile class graded as root through the box: every attack earns 0 on what it targets.

The class (``tests/hostile/klass.py``: a folder per login, a roster) holds honest notebooks
and one notebook or folder per attack of issue 17; it is graded once per session (the
``graded_class`` fixture of ``conftest.py``, shared with test_grading_robustness and
test_exercises). A small class is graded again as one run and as two shards that are
merged. After each run nothing of the box remains: no process, no SysV IPC object,
nothing new in ``/tmp``, ``/var/tmp``, ``/dev/shm`` or ``/run/lock``. A last test grades
with the interpreter in a venv under ``/tmp``.
"""

from __future__ import annotations

import atexit
import csv
import json
import os
import pathlib
import shutil
import subprocess
import sys
import tempfile

import nbformat
import pytest

from lanes.exercises import get_set
from hostile import klass as K
from hostile.klass import MARK, MASTER, SCRATCH, SECRET_BYTES, SLUG, honest, wrong

GRADE = K.GRADE
#: The grader's own temp folder for this file's runs (its boxes' folders go there): empty after each run.
GRADER_TMP = tempfile.mkdtemp(prefix="lanes-class-tmp-")
os.chmod(GRADER_TMP, 0o711)
atexit.register(shutil.rmtree, GRADER_TMP, True)
ENV = {**os.environ, "LANES_TEST_SECRET": "1", "TMPDIR": GRADER_TMP}

pytestmark = pytest.mark.skipif(K.skip_reason() is not None, reason=str(K.skip_reason()))


def _run(args: list, python: str = sys.executable) -> tuple:
    return K.run(args, GRADER_TMP, python)


def _at_once(runs: list) -> list:
    """Grade each argument list of ``runs`` at the same time, each with a TMPDIR of its own."""
    import concurrent.futures

    tmps = [tempfile.mkdtemp(prefix="lanes-class-tmp-") for _ in runs]
    try:
        for t in tmps:
            os.chmod(t, 0o711)
        with concurrent.futures.ThreadPoolExecutor(len(runs)) as pool:
            return list(pool.map(K.run, runs, tmps))
    finally:
        for t in tmps:
            shutil.rmtree(t, ignore_errors=True)


def _sub(data, login, name=f"{SLUG}.ipynb"):
    return K.sub(data, login, name)


@pytest.fixture
def klass(graded_class):
    return graded_class


def test_honest_students_earn_full_marks_in_the_same_run(klass):
    for login in ("alice", "peggy"):
        s = _sub(klass["data"], login)
        assert s["status"] == "graded" and s["counted"] and s["score"] == s["possible"] == K.POSSIBLE, s


def test_nothing_remains_after_the_run(klass):
    proc, new, new_ipc, marked = klass["run"]
    assert marked == [] and new_ipc == {} and new == {}, (marked, new_ipc, new)
    assert "Traceback" not in proc.stderr, proc.stderr[-2000:]


def test_the_leftover_notebook_still_earns_its_answers(klass):
    assert _sub(klass["data"], "oscar")["score"] == K.POSSIBLE


def test_the_latest_copy_counts_not_the_best(klass):
    rows = {r["login"]: r for r in csv.DictReader((klass["out"] / "gradebook.csv").open(newline="", encoding="utf-8-sig"))}
    assert rows["dave"][f"{SLUG}:total"] == f"{K.POSSIBLE - K.Q4_POINTS:g}" and rows["dave"]["possible"] == rows["alice"]["possible"]
    copies = [s for s in klass["data"]["submissions"] if pathlib.Path(s["path"]).parent.name == "dave"]
    assert len(copies) == 4 and sum(s["counted"] for s in copies) == 1
    assert max(s["score"] for s in copies) == K.POSSIBLE and all("copies" in " ".join(s["messages"]) for s in copies)


def test_a_classmates_answers_earn_nothing_variant_specific(klass):
    for login in ("mallory", "eve"):
        s = _sub(klass["data"], login)
        assert s["login"] == login and s["counted"]
        assert sum(q["score"] for n, q in s["questions"].items() if n != "q4") == 0, s
        assert any("not " + login + "'s token" in m for m in s["messages"])
    mallory, eve = _sub(klass["data"], "mallory"), _sub(klass["data"], "eve")
    assert mallory["notebook_student"] == K.token("alice") and eve["notebook_student"].startswith(K.token("alice"))
    assert any("another student's token (alice's)" in m for m in mallory["messages"]), mallory["messages"]
    rows = {r["login"] for r in csv.DictReader((klass["out"] / "gradebook.csv").open(newline="", encoding="utf-8-sig"))}
    assert "alice" in rows and not any("\ufe0f" in r for r in rows)


def test_other_copies_of_the_solutions_are_out_of_reach(klass):
    s = _sub(klass["data"], "frank")
    assert s["status"] == "graded" and s["score"] == 0, s  # it searched the whole box and found none


def test_links_fifos_and_broken_notebooks_are_refused_without_quoting(klass):
    for name in (f"{SLUG}.ipynb", "notes.ipynb", "pipe.ipynb"):
        s = _sub(klass["data"], "grace", name)
        assert s["status"] == "refused" and s["score"] == 0, s
    judy = _sub(klass["data"], "judy")
    assert judy["status"] == "not_a_notebook" and judy["counted"] and judy["possible"] == K.POSSIBLE
    everything = (klass["out"] / "report.json").read_text() + klass["run"][0].stdout + klass["run"][0].stderr
    everything += "".join(p.read_text() for p in (klass["out"] / "feedback").iterdir())
    assert SECRET_BYTES not in everything


def test_metadata_of_the_wrong_type_does_not_stop_the_class(klass):
    for login in ("heidi", "ivan"):
        s = _sub(klass["data"], login)
        assert s["score"] == K.POSSIBLE and any("ignored" in m for m in s["messages"]), s
    assert _sub(klass["data"], "trent")["score"] == K.POSSIBLE  # nbformat 3, converted


def test_gradebook_has_no_formulas_and_a_row_per_roster_student(klass):
    rows = list(csv.DictReader((klass["out"] / "gradebook.csv").open(newline="", encoding="utf-8-sig")))
    by = {r["login"]: r for r in rows}
    assert by["peggy"]["name"].startswith("'=") and by["trent"]["name"].startswith("'+")
    for r in rows:
        assert all(not v or v[0] not in "=+-@\t\r" for v in r.values()), r
    unlisted = next(s for s in klass["data"]["submissions"] if "HYPERLINK" in s["path"])
    assert unlisted["login"] is None and not unlisted["counted"] and unlisted["status"] == "unidentified"
    # the roster is the class: every roster student is counted for every set anyone handed in
    # (ursula hands in every set), handed in or not
    assert len(rows) == len(K.ROSTER) and klass["data"]["students"] == len(K.ROSTER)
    per_student = sum(get_set(m.stem).possible for m in K.masters())
    assert klass["data"]["possible"] == len(K.ROSTER) * per_student
    assert {r["possible"] for r in rows} == {f"{per_student:g}"}


def test_feedback_says_what_each_question_got(klass):
    text = (klass["out"] / "feedback" / "mallory.md").read_text()
    assert f"| q1 | 0 | {get_set(SLUG).question('q1').points:g} |" in text and "token" in text
    assert (klass["out"] / "feedback" / "alice.md").read_text().count("correct") >= len(get_set(SLUG).questions)


def test_shards_merged_equal_one_run(tmp_path):
    """A small class (copies, a refusal, an unidentified file) as one run and as two shards merged."""
    subs = tmp_path / "subs"
    for login in ("alice", "carol", "dave"):  # by login, shard 1/2 holds carol, 2/2 alice and dave
        (subs / login).mkdir(parents=True)
        nbformat.write(honest(login) if login != "carol" else wrong(honest(login), login), subs / login / f"{SLUG}.ipynb")
    nbformat.write(wrong(honest("dave"), "dave"), subs / "dave" / f"{SLUG}-Copy1.ipynb")
    os.utime(subs / "dave" / f"{SLUG}.ipynb", ns=(1, 1))  # the wrong copy is the latest
    (subs / "erin").mkdir()
    os.symlink(MASTER, subs / "erin" / f"{SLUG}.ipynb")
    nbformat.write(honest("zed"), subs / "unsorted.ipynb")
    one = tmp_path / "one"
    reports = [tmp_path / f"shard{k}" / "r.json" for k in (1, 2)]
    runs = [[subs, "--json", one / "r.json", "--csv", one / "g.csv", "--quiet"]]
    runs += [[subs, "--json", r, "--shard", f"{k}/2", "--quiet"] for k, r in enumerate(reports, 1)]
    for proc, new, new_ipc, marked in _at_once(runs):  # the one run and both shards side by side
        assert proc.returncode in (0, 1), proc.stderr[-2000:]
        assert marked == [] and new_ipc == {} and new == {}
    merged = tmp_path / "merged"
    proc = subprocess.run([sys.executable, str(GRADE), "merge", *map(str, reports), "--json", str(merged / "r.json"),
                           "--csv", str(merged / "g.csv")], capture_output=True, text=True, env=ENV, timeout=60)
    assert proc.returncode in (0, 1), proc.stderr
    strip = lambda rep: [{k: v for k, v in s.items() if k != "seconds"} for s in rep["submissions"]]  # noqa: E731
    first, two = json.loads((one / "r.json").read_text()), json.loads((merged / "r.json").read_text())
    assert all(json.loads(r.read_text())["submissions"] for r in reports)  # both shards had work
    assert strip(two) == strip(first)
    assert (two["score"], two["possible"], two["students"]) == (first["score"], first["possible"], first["students"])
    assert (first["score"], first["possible"], first["students"]) == (K.POSSIBLE, 4 * K.POSSIBLE, 4)
    assert (merged / "g.csv").read_bytes() == (one / "g.csv").read_bytes()


def test_grading_works_with_the_interpreter_in_a_venv_under_tmp(tmp_path):
    """A grader whose interpreter lives in a venv under /tmp, with the packages of the environment
    running these tests (a venv of its own, or the system's) as its site folders."""
    import site
    import sysconfig

    venv = pathlib.Path(tempfile.mkdtemp(prefix="lanes-venv-", dir="/tmp"))
    os.chmod(venv, 0o755)  # as `python -m venv /tmp/venv-x` makes it
    try:
        subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True, timeout=120)
        # `--system-site-packages` would reach the base interpreter's packages only, which are
        # none when the tests run from a venv over a bare Python: add this environment's instead
        ours = [p for p in dict.fromkeys(site.getsitepackages() + [sysconfig.get_path("purelib")])
                if os.path.isdir(p)]
        purelib = subprocess.run([str(venv / "bin" / "python"), "-c",
                                  "import sysconfig; print(sysconfig.get_path('purelib'))"],
                                 check=True, capture_output=True, text=True, timeout=60).stdout.strip()
        pathlib.Path(purelib, "lanes-test-env.pth").write_text(
            "".join(f"import site; site.addsitedir({p!r})\n" for p in ours))
        (tmp_path / "subs" / "alice").mkdir(parents=True)
        nbformat.write(honest("alice"), tmp_path / "subs" / "alice" / f"{SLUG}.ipynb")
        proc, new, new_ipc, marked = _run([tmp_path / "subs", "--json", tmp_path / "r.json", "--quiet"],
                                          python=str(venv / "bin" / "python"))
        assert (tmp_path / "r.json").is_file(), proc.stdout[-2000:] + proc.stderr[-2000:]
        data = json.loads((tmp_path / "r.json").read_text())
        assert data["score"] == data["possible"] == K.POSSIBLE, proc.stdout[-2000:] + proc.stderr[-2000:]
        assert new == {} and marked == []
    finally:
        shutil.rmtree(venv, ignore_errors=True)


def test_the_box_leaves_nothing(tmp_path):
    """A box whose job detaches a process and fills its /tmp and /dev/shm: afterwards the job's
    processes, its folder copy of lanes and its cgroup are gone."""
    from grading import sandbox

    code = ("import os, subprocess, sys\n"
            f"subprocess.Popen([sys.executable, '-c', 'import time; time.sleep(300)', {MARK!r}], start_new_session=True)\n"
            f"open('/tmp/{MARK}', 'w').write('x'); open('/dev/shm/{MARK}', 'w').write('x')\n"
            "print(os.getuid(), flush=True)\n")
    with sandbox.Box() as box:
        with box.popen([sys.executable, "-E", "-s", "-c", code], job_dir=tmp_path, stdout=subprocess.PIPE) as p:
            uid = int(p.stdout.readline())
            p.wait(timeout=60)
        assert sandbox._uid_processes(uid) == [] and K.marked() == []
        assert box.cgroup is None or not any(c.is_dir() for c in box.cgroup.iterdir())
        base = box.base
    assert not base.exists() and K.scratch() == {d: set() for d in SCRATCH}


def test_the_box_imports_lanes_compiled(tmp_path):
    """The box may not write bytecode, so its copy of the packages is compiled when the box is
    made: a job imports every module of lanes from a .pyc (compiling at each start cost a short
    notebook more than its own work), and a traceback names the path inside the box."""
    from grading import sandbox

    code = ("import importlib, pkgutil, sys; sys.path[:0] = [" + repr(sandbox.SITE) + "]\n"
            "import lanes\n"
            "names = [m.name for m in pkgutil.walk_packages(lanes.__path__, 'lanes.', lambda n: None)]\n"
            "mods = [importlib.import_module(n) for n in names if n.split('.')[1] not in ('__main__', 'display')]\n"
            "print(sum(1 for m in mods if m.__spec__.cached and __import__('os').path.exists(m.__spec__.cached)),"
            " len(mods))\n"
            "import lanes.pool.engine as e; print(e.simulate.__code__.co_filename)\n")
    rc, out, err = K.in_box(code, tmp_path)
    assert rc == 0, err.decode()[-2000:]
    lines = out.decode().split("\n")
    found, total = map(int, lines[0].split())
    assert total > 30 and found == total, out.decode() + err.decode()[-2000:]
    assert lines[1] == f"{sandbox.SITE}/lanes/pool/engine.py"


def test_a_box_on_another_boxs_site_copies_nothing(tmp_path):
    """A grading run's judges make their boxes (set 13's) on the run's copies of the packages:
    nothing is copied again, a job there imports lanes from them, and closing the judge's box
    leaves them to the run's."""
    from grading import sandbox

    code = "import sys; sys.path[:0] = [" + repr(sandbox.SITE) + "]\nimport lanes.pool.engine\nprint('ok')\n"
    with sandbox.Box() as run:
        with sandbox.Box(site=run.site) as judge:
            assert judge.site == run.site and "site" not in os.listdir(judge.base), os.listdir(judge.base)
            rc, out, err = K.in_box(code, tmp_path, box=judge)
        assert rc == 0 and out == b"ok\n", err.decode()[-2000:]
        assert (run.site / "lanes" / "pool" / "engine.py").is_file()
