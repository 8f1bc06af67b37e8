"""The grader under hostile submissions (issue 6, item 5).

Five bad submissions of exercise set 01 are graded in one ``scripts/grade.py``
run next to a good one: one raises, one loops forever, one calls ``sys.exit``,
one has cells deleted, one is not a notebook at all.  Each must get a score
and a clear message, the loop must be stopped at the time limit while the
others are still graded, and the grader itself must exit normally.
"""

from __future__ import annotations

import json
import pathlib
import re
import subprocess
import sys
import time

import nbformat
import pytest

ROOT = pathlib.Path(__file__).resolve().parents[1]
SLUG = "01_slots_and_littles_law"
TIME_LIMIT_S = 60


def _answer_cell(nb, var: str) -> int:
    for i, c in enumerate(nb.cells):
        if c.cell_type == "code" and re.search(rf"^{var}\s*=", c.source, flags=re.M):
            return i
    raise AssertionError(f"no answer cell for {var}")


@pytest.fixture(scope="module")
def graded(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("hostile")
    ag = tmp / "autograder"
    proc = subprocess.run([sys.executable, "scripts/assign_exercises.py", "--no-execute", "--no-run-tests",
                           "--out", str(tmp / "exercises"), "--autograder-dir", str(ag), SLUG],
                          cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    good = nbformat.read(ag / "solutions" / f"{SLUG}.ipynb", as_version=4)

    def write(name: str, nb) -> None:
        d = tmp / "subs" / name
        d.mkdir(parents=True)
        nbformat.write(nb, d / f"{SLUG}.ipynb")

    write("good", good)

    nb = nbformat.read(ag / "solutions" / f"{SLUG}.ipynb", as_version=4)
    nb.cells[_answer_cell(nb, "q2_measured")].source = "q2_measured = 1 / 0"
    write("raises", nb)

    nb = nbformat.read(ag / "solutions" / f"{SLUG}.ipynb", as_version=4)
    nb.cells[_answer_cell(nb, "q2_measured")].source = "while True:\n    pass"
    write("loops", nb)

    nb = nbformat.read(ag / "solutions" / f"{SLUG}.ipynb", as_version=4)
    i = _answer_cell(nb, "q2_measured")
    nb.cells.insert(i, nbformat.v4.new_code_cell("import sys\nsys.exit(1)"))
    write("exits", nb)

    nb = nbformat.read(ag / "solutions" / f"{SLUG}.ipynb", as_version=4)
    i = _answer_cell(nb, "q2_measured")
    del nb.cells[i:i + 2]  # the answer cell and its grader.check cell
    write("deleted", nb)

    d = tmp / "subs" / "garbage"
    d.mkdir(parents=True)
    (d / f"{SLUG}.ipynb").write_text("This is my homework, I wrote it in a text editor.\n")

    report = tmp / "report.json"
    t0 = time.monotonic()
    proc = subprocess.run([sys.executable, "scripts/grade.py", str(tmp / "subs"), "--autograder-dir", str(ag),
                           "--timeout", str(TIME_LIMIT_S), "--jobs", "2", "--json", str(report)],
                          cwd=ROOT, capture_output=True, text=True, timeout=600)
    elapsed = time.monotonic() - t0
    assert report.is_file(), proc.stdout[-3000:] + proc.stderr[-3000:]
    data = json.loads(report.read_text())
    by_name = {pathlib.Path(s["path"]).parent.name: s for s in data["submissions"]}
    return by_name, proc, elapsed


def _scores(s) -> dict[str, float]:
    return {q: r["score"] for q, r in s["questions"].items()}


def _full(s) -> dict[str, float]:
    return {q: r["possible"] for q, r in s["questions"].items()}


class TestHostileSubmissions:
    def test_grader_exits_normally_and_reports_every_file(self, graded):
        by_name, proc, elapsed = graded
        assert proc.returncode in (0, 1), proc.stderr[-2000:]
        assert set(by_name) == {"good", "raises", "loops", "exits", "deleted", "garbage"}
        assert "Traceback" not in proc.stdout
        assert elapsed < TIME_LIMIT_S + 240, f"grading took {elapsed:.0f} s"

    def test_good_submission_scores_full(self, graded):
        s = graded[0]["good"]
        assert s["status"] == "graded" and _scores(s) == _full(s)

    def test_raising_cell_costs_only_its_question(self, graded):
        s = graded[0]["raises"]
        assert s["status"] == "graded"
        scores, full = _scores(s), _full(s)
        assert scores["q2"] == 0
        assert all(scores[q] == full[q] for q in full if q != "q2")
        assert any("ZeroDivisionError" in m for m in s["messages"]), s["messages"]

    def test_infinite_loop_times_out_and_others_still_graded(self, graded):
        by_name, _, _ = graded
        s = by_name["loops"]
        assert s["status"] == "timeout"
        assert TIME_LIMIT_S <= s["seconds"] < TIME_LIMIT_S + 30
        assert s["score"] == 0 and s["possible"] > 0
        assert any("timed out" in m and f"{TIME_LIMIT_S} s" in m for m in s["messages"]), s["messages"]
        assert by_name["good"]["status"] == "graded"

    def test_sys_exit_is_reported_and_grading_goes_on(self, graded):
        s = graded[0]["exits"]
        assert s["status"] == "graded"
        assert _scores(s) == _full(s), "cells after sys.exit() must still run"
        assert any("sys.exit" in m for m in s["messages"]), s["messages"]

    def test_deleted_cells_score_zero_with_a_message(self, graded):
        s = graded[0]["deleted"]
        assert s["status"] == "graded"
        scores, full = _scores(s), _full(s)
        assert scores["q2"] == 0
        assert all(scores[q] == full[q] for q in full if q != "q2")
        msgs = s["questions"]["q2"]["messages"]
        assert any("never assigned" in m for m in msgs) and any("grader.check" in m for m in msgs), msgs

    def test_not_a_notebook_scores_zero_with_a_message(self, graded):
        s = graded[0]["garbage"]
        assert s["status"] == "not_a_notebook"
        assert s["score"] == 0 and s["possible"] == sum(_full(graded[0]["good"]).values())
        assert any("not a Jupyter notebook" in m for m in s["messages"]), s["messages"]

    def test_no_grading_process_left_running(self, graded):
        proc_dir = pathlib.Path("/proc")
        if not proc_dir.is_dir():
            pytest.skip("needs /proc")
        time.sleep(2)
        left = []
        for d in proc_dir.iterdir():
            try:
                if d.name.isdigit() and b"LANES_GRADE_JOB=" in (d / "environ").read_bytes():
                    left.append((d / "cmdline").read_bytes().replace(b"\0", b" ")[:120])
            except OSError:
                continue
        assert not left, f"grading processes outlived the grader (a kernel stuck in the loop?): {left}"
