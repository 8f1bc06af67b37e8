"""Per-student budgets and what every box covers: cheap checks beside the class run.

A student's copies of a set beyond the budget are listed, not run; a student whose grading
time is spent is stopped while another student in the same run keeps full marks; the box
covers the checkout, the keys and the secret whatever the layout.
"""

from __future__ import annotations

import json
import os
import pathlib
import shutil
import subprocess
import sys
import tempfile
import time

import nbformat
import pytest

from hostile import klass as K
from hostile.klass import SLUG, honest, with_cell

ROOT = K.ROOT

pytestmark = pytest.mark.skipif(
    not sys.platform.startswith("linux") or os.geteuid() != 0,
    reason="the sandbox isolates a notebook only when the grader runs as root on Linux (as in CI)")


@pytest.fixture
def grader_tmp(tmp_path):
    """The grader's TMPDIR for one test: it must be left as it was."""
    d = pathlib.Path(tempfile.mkdtemp(prefix="lanes-budgets-tmp-"))
    os.chmod(d, 0o711)
    yield d
    shutil.rmtree(d, ignore_errors=True)


def _grade(paths, report, grader_tmp, *extra):
    env = {**os.environ, "LANES_TEST_SECRET": "1", "TMPDIR": str(grader_tmp)}
    proc = subprocess.run([sys.executable, str(K.GRADE), *map(str, paths), "--json", str(report), "--quiet", *extra],
                          capture_output=True, text=True, timeout=300, env=env)
    assert proc.returncode in (0, 1), proc.stdout[-2000:] + proc.stderr[-2000:]
    return json.loads(report.read_text())


def _by_name(data, login: str) -> dict:
    return {pathlib.Path(s["path"]).name: s for s in data["submissions"] if s["login"] == login}


def test_a_students_time_and_copies_are_bounded_and_spare_the_others(tmp_path, grader_tmp):
    subs = tmp_path / "subs"
    (subs / "bob").mkdir(parents=True)
    (subs / "carol").mkdir()
    base = honest("bob")
    # copies are ordered by the copy number in their names, never by file times
    for i in range(1, 4):  # three that never finish
        nbformat.write(with_cell(base, "import time\ntime.sleep(10_000)"), subs / "bob" / f"work-Copy{i}.ipynb")
    nbformat.write(base, subs / "bob" / "work.ipynb")  # the oldest, beyond the copies graded: listed, not run
    nbformat.write(honest("carol"), subs / "carol" / f"{SLUG}.ipynb")
    t0 = time.monotonic()
    data = _grade([subs], tmp_path / "report.json", grader_tmp, "--jobs", "2", "--timeout", "60",
                  "--max-copies", "3", "--student-time", "12")
    assert time.monotonic() - t0 < 45
    bob, carol = _by_name(data, "bob"), _by_name(data, "carol")
    assert carol[f"{SLUG}.ipynb"]["score"] == K.POSSIBLE, carol  # the other student keeps full marks
    assert bob["work.ipynb"]["status"] == "refused" and "latest 3 copies" in bob["work.ipynb"]["messages"][-1]
    for name in ("work-Copy1.ipynb", "work-Copy2.ipynb", "work-Copy3.ipynb"):  # bob's time ran out: stopped, or not started
        assert bob[name]["status"] == "timeout" and bob[name]["score"] == 0, bob[name]
        assert "this student's grading time" in bob[name]["messages"][-1], bob[name]
    assert bob["work-Copy3.ipynb"]["counted"] and os.listdir(grader_tmp) == []


def test_the_box_covers_the_checkout_and_keys_whatever_the_layout(grader_tmp):
    from grading import sandbox

    keys = ROOT / "solutions"
    shown = pathlib.Path(tempfile.mkdtemp(dir=grader_tmp))
    os.chmod(shown, 0o755)
    secret = shown / "secret"
    secret.write_text("TOPSECRET")
    code = ("import os, sys\nfor p in sys.argv[1:]:\n    try:\n        print(p, sorted(os.listdir(p)) if os.path.isdir(p)"
            " else open(p).read())\n    except OSError as e:\n        print(p, 'unreadable', e.errno)\n")
    # the checkout inside a folder the box shows (as a venv's src/ holds `pip install -e git+URL`),
    # keys under it (the default --solutions) and a secret elsewhere in a shown folder
    with sandbox.Box(extra_ro=[ROOT, shown], hide=[keys, secret]) as box:
        job = pathlib.Path(tempfile.mkdtemp(dir=box.base))
        rc, out, err = K.in_box(code, job, str(ROOT), str(keys / SLUG / "key.py"), str(secret), box=box, timeout=60)
    out = out.decode()
    assert rc == 0, out + err.decode()[-2000:]
    lines = out.splitlines()
    assert lines[0] == f"{ROOT} []" and "unreadable" in lines[1], out
    assert lines[2] in (f"{secret} ", f"{secret} unreadable 13") and "TOPSECRET" not in out, out


def test_a_judge_past_its_time_is_stopped_and_says_so(tmp_path, grader_tmp):
    subs = tmp_path / "subs"
    (subs / "bob").mkdir(parents=True)
    nbformat.write(honest("bob"), subs / "bob" / f"{SLUG}.ipynb")
    data = _grade([subs], tmp_path / "report.json", grader_tmp, "--judge-timeout", "0.05")
    sub = _by_name(data, "bob")[f"{SLUG}.ipynb"]  # a judge takes longer than that to start
    assert sub["status"] == "timeout" and sub["score"] == 0, sub
    assert "the judge ran out of time (0.05 s for this student's 1 notebook(s))" in sub["messages"][-1], sub
    assert os.listdir(grader_tmp) == []
