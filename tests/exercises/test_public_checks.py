"""What a student reads from a public check and from the first code cell, as JupyterLab shows it."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from lanes.exercises import public

ROOT = Path(__file__).resolve().parents[2]
SET = "03_headroom"
SET_PATH = ROOT / "exercises" / SET / f"set_{SET}.ipynb"


def _cells(path: Path) -> list[str]:
    nb = json.loads(path.read_text(encoding="utf-8"))
    return ["".join(c["source"]) for c in nb["cells"] if c["cell_type"] == "code"]


class _Result:
    def __init__(self, source: str, error: BaseException | None):
        self.info = type("Info", (), {"raw_cell": source})()
        self.error_in_exec = error
        self.error_before_exec = None


@pytest.fixture
def grader():
    import lanes.exercises

    public._FAILED_CELLS.clear()
    yield lanes.exercises.Checks(SET)
    public._FAILED_CELLS.clear()


#: A student's token (the course of the test suite's secret).
TOKEN = "h3student-w5efvr"


def _env(**answers):
    """A notebook's globals with ``answers``; q1's second answer (the batch jobs done) is filled in."""
    import lanes.exercises

    return {"STUDENT": TOKEN, "V": lanes.exercises.variant(SET, TOKEN), "q1_batch_done": 3000, **answers}


def test_a_failed_check_says_the_problem_in_one_line_per_answer(grader):
    report = grader.check("q1", _env(q1_reserve_long="abc"))
    assert not report.ok
    assert repr(report) == "q1: form not ok:\n  q1_reserve_long should be a whole number (an int such as 12), not str"


def test_a_check_says_what_it_checked_and_never_passed(grader):
    report = grader.check("q1", _env(q1_reserve_long=12))
    assert report.ok
    text = repr(report)
    assert text == ("q1: form ok: q1_reserve_long is a whole number (an int such as 12); "
                    "q1_batch_done is a whole number (an int such as 12); the values are graded by your instructor")
    assert "pass" not in text.lower() and text.isascii()


def test_a_check_takes_the_notebooks_globals_as_a_cell_calls_it(grader):
    env = {**_env(q1_reserve_long=12), "grader": grader}
    exec(compile('report = grader.check("q1")', "<check cell>", "exec"), env)
    assert env["report"].ok


def test_a_check_after_a_raising_answer_cell_reports_the_exception(grader):
    env = _env(q1_reserve_long=12)  # the value an earlier run left
    cell = "q1_reserve_long = smallest(undefined_name)"
    public._remember(_Result(cell, NameError("name 'undefined_name' is not defined")))
    text = repr(grader.check("q1", env))
    assert "raised NameError: name 'undefined_name' is not defined" in text, text
    public._remember(_Result(cell, None))  # fixed and run again
    assert grader.check("q1", env).ok


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


EXERCISE_NOTEBOOKS = sorted((ROOT / "exercises").glob("*/*.ipynb"))


def _first_cell(path: Path, student: str = "") -> str:
    """The set's first code cell, with ``student`` typed between the quotes."""
    cell = _cells(path)[0]
    assert re.search(r'^STUDENT = ""$', cell, re.M), cell
    return re.sub(r'^STUDENT = ""$', lambda _: f"STUDENT = {student!r}", cell, flags=re.M)


@pytest.mark.parametrize("path", EXERCISE_NOTEBOOKS, ids=lambda p: p.parent.name)
def test_the_first_code_cell_alone_sets_everything_up(path):
    """No Otter and no cell above the title: the first code cell holds ``STUDENT`` and makes
    ``V`` and ``grader``, so every check cell runs after it alone."""
    cells = _cells(path)
    assert not any("otter" in c for c in cells), "the student notebook still uses Otter"
    nb = json.loads(path.read_text(encoding="utf-8"))
    assert nb["cells"][0]["cell_type"] == "markdown" and "".join(nb["cells"][0]["source"]).startswith("# Exercises")
    env: dict = {}
    exec(compile(_first_cell(path, TOKEN), "<first cell>", "exec"), env)
    assert env["V"].slug == path.parent.name and env["STUDENT"] == TOKEN
    checks = [c for c in cells if c.startswith("grader.check(")]
    assert checks
    for check in checks:
        report = eval(check, env)
        assert not report.ok and "is not defined: run its answer cell" in repr(report), check


def _run_in_ipython(cells: list[str]) -> str:
    """Run cells in one IPython shell as a kernel would; what it printed (tracebacks included)."""
    import contextlib
    import io

    from IPython.core.interactiveshell import InteractiveShell

    shell = InteractiveShell.instance()
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        for cell in cells:
            shell.run_cell(cell, store_history=False)
    return out.getvalue()


@pytest.mark.parametrize("typed", ["h3student-w5efvs", "h3student-w5evfr", "h3student", "h3student-w5efv"])
def test_the_first_cell_refuses_a_mistyped_token_or_a_bare_login_in_one_line(typed):
    from lanes.exercises.variants import NOT_A_TOKEN, TEST_SECRET, student_token

    assert student_token("h3student", TEST_SECRET) == "h3student-w5efvr"  # what was handed out
    shown = _run_in_ipython(["V = None", _first_cell(SET_PATH, typed)])
    assert shown.strip() == f"NotAToken: {NOT_A_TOKEN}", shown
    good = _run_in_ipython([_first_cell(SET_PATH, "h3student-w5efvr"), "print(V.student)"])
    assert good.strip().endswith("h3student-w5efvr") and "NotAToken" not in good


def test_checks_of_an_unknown_set_are_refused_naming_the_parameter():
    import lanes.exercises

    with pytest.raises(ValueError, match=r"^slug must be one of the exercise sets 01_slots_and_littles_law, .* \(got 'nope'\)"):
        lanes.exercises.Checks("nope")


def test_the_first_cell_refuses_an_empty_token_in_one_line():
    """A set notebook as students get it needs a token: an empty ``STUDENT`` is refused in one
    line instead of quietly giving the default variant's numbers, which are nobody's."""
    from lanes.exercises.variants import EMPTY_TOKEN

    shown = _run_in_ipython(["V = None", _first_cell(SET_PATH, ""), "print(V)"])
    assert shown.strip().splitlines() == [f"NotAToken: {EMPTY_TOKEN}", "None"], shown


def test_a_check_without_student_or_with_it_empty_says_so_in_one_line():
    import lanes.exercises
    from lanes.exercises.variants import EMPTY_TOKEN, MISSING_TOKEN

    grader = lanes.exercises.Checks(SET)
    missing = {k: v for k, v in _env(q1_reserve_long=12).items() if k != "STUDENT"}
    assert repr(grader.check("q1", missing)) == f"q1: form not ok:\n  {MISSING_TOKEN}"
    empty = {**_env(q1_reserve_long=12), "STUDENT": "", "V": lanes.exercises.variant(SET, "")}
    assert repr(grader.check("q1", empty)) == f"q1: form not ok:\n  {EMPTY_TOKEN}"
    # the instructor's solution notebooks (the default variant) ask for no token
    practice = lanes.exercises.Checks(SET, token_required=False)
    assert practice.check("q1", empty).ok
    assert practice.variant("").student == ""


def test_a_reader_without_a_course_works_the_example_numbers_as_self_study():
    """``STUDENT = "self-study"``: the example variant, form-checked as a student's answers are,
    with no note about an empty token; the grader names it as no student's token."""
    import lanes.exercises
    from lanes.exercises.variants import SELF_STUDY, TEST_SECRET, token_mismatch

    grader = lanes.exercises.Checks(SET)
    v = grader.variant(SELF_STUDY)
    assert v == lanes.exercises.variant(SET, "")
    report = grader.check("q1", {**_env(q1_reserve_long=12), "STUDENT": SELF_STUDY, "V": v})
    assert report.ok and repr(report).startswith("q1: form ok"), report
    assert "self-study" in token_mismatch(SELF_STUDY, "alice", TEST_SECRET)
    shown = _run_in_ipython(["V = None", _first_cell(SET_PATH, SELF_STUDY), "print(V.student == '')"])
    assert shown.strip().splitlines()[-1] == "True" and "NotAToken" not in shown, shown


@pytest.mark.parametrize("answer, ok", [("33", True), (33, True), (" 94 ", True), ("b", False), ("42", False),
                                        (42, False)])
def test_a_choice_check_accepts_only_this_variants_labels(answer, ok):
    """Set 01's q4 shows this token's options as 22, 33, 85 and 94: another label, or a letter
    of the default variant, picks no option here, and the form check says so, naming these."""
    import lanes.exercises

    slug = "01_slots_and_littles_law"
    env = {"STUDENT": TOKEN, "V": lanes.exercises.variant(slug, TOKEN), "q4_choice": answer}
    assert [label for label, _ in env["V"].options("q4_choice")] == ["22", "33", "85", "94"]
    report = lanes.exercises.Checks(slug).check("q4", env)
    assert report.ok is ok, repr(report)
    if not ok:
        assert repr(report) == ('q4: form not ok:\n  q4_choice should be the label of one of your options, '
                                '"22", "33", "85" or "94", in quotes (print(V) lists them)'), repr(report)


def _hand_in_problems(text: str, name: str) -> list[str]:
    """What a text that tells a student how to hand a set in leaves out."""
    wanted = {"the file": name, "keep its name": "keep its name", "fill STUDENT": "STUDENT",
              "run the checks": "grader.check", "run it all": "Restart Kernel and Run All Cells",
              "hand it in": "hand in"}
    text = " ".join(text.split()).lower()
    return [what for what, words in wanted.items() if words.lower() not in text]


@pytest.mark.parametrize("path", EXERCISE_NOTEBOOKS, ids=lambda p: p.parent.name)
def test_the_set_notebook_says_what_to_hand_in_and_how(path):
    nb = json.loads(path.read_text(encoding="utf-8"))
    title = "".join(nb["cells"][0]["source"])
    part = title[title.find("**How to hand it in.**"):]
    assert "**How to hand it in.**" in title and not _hand_in_problems(part, path.name), \
        _hand_in_problems(part, path.name)


def test_the_exercises_page_says_what_to_hand_in_and_how():
    page = (ROOT / "book" / "exercises.md").read_text(encoding="utf-8")
    assert "## Handing a set in" in page
    part = page.split("## Handing a set in", 1)[1].split("\n## ", 1)[0]
    assert not _hand_in_problems(part, "set_NN_slug.ipynb"), _hand_in_problems(part, "set_NN_slug.ipynb")
