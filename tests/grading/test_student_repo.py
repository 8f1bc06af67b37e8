"""The student repository as scripts/export_student_repo.py writes it: what it tells students,
and the check workflow it carries (instructor's side: the export script is not exported)."""

from __future__ import annotations

import json
import os
import pathlib
import re
import subprocess
import sys

import pytest
import yaml

ROOT = pathlib.Path(__file__).resolve().parents[2]
SLUG = "01_slots_and_littles_law"
TOKEN = "h3student-w5efvr"  # a token of the test suite's course

#: What a page for students must speak of, and the instructor's commands it must not hold.
FOR_STUDENTS = ("STUDENT", "grader.check", "hand in", "form ok", "Restart Kernel and Run All Cells")
INSTRUCTORS_ONLY = ("grade.py", "--roster", "export_student_repo", "solutions/", "course secret", "key.py",
                    "grade.yml")


@pytest.fixture(scope="module")
def export(tmp_path_factory) -> pathlib.Path:
    dest = tmp_path_factory.mktemp("student") / "repo"
    proc = subprocess.run([sys.executable, str(ROOT / "scripts" / "export_student_repo.py"), str(dest)],
                          capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr[-2000:]
    return dest


def _speaks_to_students(text: str) -> list[str]:
    flat = " ".join(text.split()).lower()
    return ([f"says nothing of {w!r}" for w in FOR_STUDENTS if w.lower() not in flat]
            + [f"holds {w!r}" for w in INSTRUCTORS_ONLY if w.lower() in flat])


def test_the_readme_and_the_grading_page_speak_to_students(export):
    readme = (export / "README.md").read_text(encoding="utf-8")
    assert _speaks_to_students(readme) == []
    for words in ("jupyter lab", "exercises/NN_slug/set_NN_slug.ipynb", "python scripts/check_sets.py",
                  "keep its name"):
        assert words in " ".join(readme.split()), words
    # the export's own tests read the book's build command from it (tests/test_packaging.py)
    section = readme.split("## Install and build the book", 1)[1].split("\n## ", 1)[0]
    assert "python -m pip install -r requirements.txt && scripts/build_book.sh" in section
    page = (export / "book" / "grading.md").read_text(encoding="utf-8")
    assert page.startswith("# ") and "instructors" not in page.splitlines()[0].lower()
    assert _speaks_to_students(page) == []
    # the instructor's pages stay the instructor's
    assert "grade.py" in (ROOT / "README.md").read_text() and "grade.py" in (ROOT / "book" / "grading.md").read_text()


def test_the_check_workflow_ships_where_its_header_says_and_runs_the_public_checks(export):
    workflows = export / ".github" / "workflows"
    assert not (workflows / "grade.yml").exists() and not (workflows / "grade-class.yml").exists()
    text = (workflows / "check.yml").read_text(encoding="utf-8")
    header = " ".join(line.lstrip("# ") for line in text.splitlines() if line.startswith("#"))
    assert "the student repository's own workflow" in header and "scripts/export_student_repo.py" in header
    flow = yaml.safe_load(text)
    runs = [s.get("run", "") for job in flow["jobs"].values() for s in job["steps"]]
    assert "python scripts/check_sets.py" in runs and (export / "scripts" / "check_sets.py").is_file()
    # the instructor's workflow says the same of itself
    grade = (ROOT / ".github" / "workflows" / "grade.yml").read_text(encoding="utf-8")
    assert re.search(r"student repository does not carry this workflow.*check\.yml", grade, re.S)
    # the workflow's command, in the export: untouched sets are not started (green) ...
    env = {**os.environ, "PYTHONPATH": str(export)}
    blank = subprocess.run([sys.executable, "scripts/check_sets.py"], cwd=export, env=env, capture_output=True,
                           text=True, timeout=300)
    assert blank.returncode == 0, blank.stdout[-2000:] + blank.stderr[-2000:]
    sets = list((export / "exercises").glob("*/set_*.ipynb"))
    assert blank.stdout.count("not started (STUDENT is empty)") == len(sets) > 0
    # ... and a set worked with a wrong-form answer fails it, saying which
    path = export / "exercises" / SLUG / f"set_{SLUG}.ipynb"
    nb = json.loads(path.read_text(encoding="utf-8"))
    for cell in nb["cells"]:
        src = "".join(cell["source"]).replace('STUDENT = ""', f'STUDENT = "{TOKEN}"')
        cell["source"] = src.replace("q1_busy_slots = ...", "q1_busy_slots = V.rate_per_s * V.hold_s").replace(
            "q4_choice = ...", 'q4_choice = "b"')
    path.write_text(json.dumps(nb), encoding="utf-8")
    worked = subprocess.run([sys.executable, "scripts/check_sets.py", str(path)], cwd=export, env=env,
                            capture_output=True, text=True, timeout=300)
    assert worked.returncode == 1, worked.stdout[-2000:] + worked.stderr[-2000:]
    assert "q1: form ok" in worked.stdout and "q4: form not ok" in worked.stdout, worked.stdout
