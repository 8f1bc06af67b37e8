"""What a student reads from a public check and from the variant cell, as JupyterLab shows it."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from lanes.exercises import public

ROOT = Path(__file__).resolve().parents[1]
SET = "03_headroom"
SET_DIR = ROOT / "exercises" / SET


def _cells(path: Path) -> list[str]:
    nb = json.loads(path.read_text(encoding="utf-8"))
    return ["".join(c["source"]) for c in nb["cells"] if c["cell_type"] == "code"]


class _Result:
    def __init__(self, source: str, error: BaseException | None):
        self.info = type("Info", (), {"raw_cell": source})()
        self.error_in_exec = error
        self.error_before_exec = None


@pytest.fixture
def grader(monkeypatch):
    otter = pytest.importorskip("otter")
    monkeypatch.chdir(SET_DIR)
    public._FAILED_CELLS.clear()
    yield otter.Notebook(tests_dir="tests")
    public._FAILED_CELLS.clear()


def _env(**answers):
    import lanes.exercises

    return {"STUDENT": "", "V": lanes.exercises.variant(SET, ""), **answers}


def test_a_failed_check_starts_with_the_problem_not_otters_frame(grader):
    text = repr(grader.check("q1", _env(q1_reserve_long="abc")))
    assert "q1_reserve_long should be a whole number" in text
    assert "Error at line" not in text and "public_check(" not in text, text


def test_a_check_after_a_raising_answer_cell_reports_the_exception(grader):
    env = _env(q1_reserve_long=12)  # the value an earlier run left
    cell = "q1_reserve_long = smallest(undefined_name)"
    public._remember(_Result(cell, NameError("name 'undefined_name' is not defined")))
    text = repr(grader.check("q1", env))
    assert "raised NameError: name 'undefined_name' is not defined" in text, text
    public._remember(_Result(cell, None))  # fixed and run again
    assert "All test cases passed" in repr(grader.check("q1", env))


def test_the_check_hook_is_registered_in_ipython():
    ipython = pytest.importorskip("IPython")
    from IPython.core.interactiveshell import InteractiveShell

    shell = InteractiveShell.instance()
    try:
        public._register_with_ipython()
        shell.run_cell("import lanes.exercises")
        public._FAILED_CELLS.clear()
        shell.run_cell("q1_reserve_long = 1 / 0")
        assert public._FAILED_CELLS.get("q1_reserve_long", "").startswith("ZeroDivisionError")
        shell.run_cell("q1_reserve_long = 12")
        assert "q1_reserve_long" not in public._FAILED_CELLS
    finally:
        public._FAILED_CELLS.clear()
        assert ipython


@pytest.mark.parametrize("path", sorted((ROOT / "exercises").glob("*/*.ipynb")), ids=lambda p: p.parent.name)
def test_the_variant_cell_run_first_says_to_run_the_student_cell(path):
    variant_cell = next(c for c in _cells(path) if "lanes.exercises.variant(" in c)
    with pytest.raises(NameError, match=r"run the STUDENT cell above"):
        exec(compile(variant_cell, "<variant cell>", "exec"), {})


def test_the_student_cell_then_the_variant_cell_runs():
    cells = _cells(SET_DIR / f"{SET}.ipynb")
    student = next(c for c in cells if re.search(r"^STUDENT = ", c, re.M))
    variant_cell = next(c for c in cells if "lanes.exercises.variant(" in c)
    env: dict = {}
    exec(compile(student, "<student cell>", "exec"), env)
    exec(compile(variant_cell, "<variant cell>", "exec"), env)
    assert env["V"].slug == SET
