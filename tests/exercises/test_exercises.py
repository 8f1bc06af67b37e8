"""Exercise sets: forms, variants, set specs, public checks, and grading every set's solution.

The slow checks share work: one grader run grades every set's solution for three student
identifiers together with every untouched student notebook (and writes the gradebook);
one in-process execution of every solution for the default variant feeds the scan of the
chapters' outputs.
"""

from __future__ import annotations

import csv
import functools
import json
import os
import linecache
import pathlib
import re
import subprocess
import sys

import nbformat
import numpy as np
import pytest

from hostile import klass
from lanes.exercises.variants import TEST_SECRET, student_token
from lanes.exercises import Choice, Float, FormError, Int, Seq, Str, all_sets, get_set, public_check, to_plain, variant

ROOT = pathlib.Path(__file__).resolve().parents[2]
SOLUTIONS = ROOT / "solutions"
EXERCISES = ROOT / "exercises"
NOTEBOOKS = ROOT / "notebooks"
STUDENTS = ("alice", "bob", "carol")


MASTERS = klass.masters()
needs_solutions = pytest.mark.skipif(not MASTERS, reason="no solutions/ in this checkout (student repository)")


@pytest.fixture(autouse=True, scope="module")
def _one_load_per_trace():
    """Solutions run here for many students read a shipped trace: load each once (a trace is frozen)."""
    import functools

    from lanes.pool import traces

    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(traces, "load_trace", functools.lru_cache(maxsize=4)(traces.load_trace))
        yield


# --------------------------------------------------------------------------- forms


class AlwaysEqual(float):
    def __eq__(self, other):
        return True

    __hash__ = float.__hash__


@pytest.mark.parametrize("value, form, expected", [
    (3, Int(), 3), (np.int64(7), Int(lo=0), 7), (np.array(5), Int(), 5), (2, Float(), 2.0),
    (np.float32(2.5), Float(), 2.5), (np.array(0.25), Float(lo=0, hi=1), 0.25), (" B ", Choice(), "b"), (37, Choice(), "37"), (" 52", Choice(), "52"),
    ((np.int64(8), 8, 4), Seq(Int()), [8, 8, 4]), ([1, 2], Seq(Int()), [1, 2]), (" swap", Str(("swap", "x")), "swap"),
])
def test_forms_accept_plain_and_numpy_values(value, form, expected):
    got = form.check(value)
    assert got == expected and type(got) is type(expected)


@pytest.mark.parametrize("value, form, words", [
    (11.4, Int(), "whole number"), (11.0, Int(), "whole number"), (True, Int(), "not bool"),
    (True, Float(), "not bool"), (AlwaysEqual(1.0), Float(), "subclass of float"), ("e", Choice("abcd"), "label of one option"),
    (3, Choice(), "label of one option"), (..., Float(), "not answered yet"), (None, Float(), "is None"),
    (float("nan"), Float(), "finite"), ({"a": 1}, Float(), "not dict"), ([1, [2]], Seq(Int()), "list"),
    (-1, Int(lo=0), "at least 0"), (__import__("decimal").Decimal("2.5"), Float(), "not Decimal"), (1.5, Float(hi=1), "at most 1"), ("maybe", Str(("swap", "recompute")), '"swap"'),
])
def test_forms_refuse_with_a_message_naming_the_expected_form(value, form, words):
    with pytest.raises(FormError, match=re.escape(words)):
        form.check(value)


def test_to_plain_refuses_subclasses_of_every_plain_type():
    class MyInt(int):
        pass

    class MyStr(str):
        pass

    for v in (MyInt(3), MyStr("a"), AlwaysEqual(2.0)):
        with pytest.raises(FormError, match="subclass of"):
            to_plain(v)
    assert to_plain((np.bool_(True), np.int32(3), "x")) == [True, 3, "x"]


# --------------------------------------------------------------------------- variants and specs


def test_variants_are_deterministic_and_differ_between_students():
    for slug, spec in all_sets().items():
        default = spec.variant("")
        assert default.as_dict() == spec.default
        assert spec.variant(" Alice ") == spec.variant("alice")
        params = {tuple(spec.variant(s).params) for s in ("alice", "bob", "carol", "dave", "erin")}
        assert len(params) >= 3, slug  # five students, at least three different variants
        assert "V." in str(spec.variant("alice")) and "alice" in str(spec.variant("alice"))


def test_variant_refuses_a_non_string_student():
    with pytest.raises(ValueError, match="STUDENT must be a string"):
        variant("01_slots_and_littles_law", 42)


def test_every_chapter_has_a_set_and_there_are_at_least_40_questions():
    total = 0
    for spec in all_sets().values():
        assert spec.questions and spec.possible > 0
        total += len(spec.questions)
    assert total >= 40
    chapters = {p.name[:2] for p in NOTEBOOKS.glob("[0-9][0-9]_*.ipynb")}
    assert chapters <= {slug[:2] for slug in all_sets()}


@needs_solutions
@pytest.mark.parametrize("master", MASTERS, ids=lambda p: p.parent.name)
def test_master_matches_its_spec(master):
    klass.assign().check_against_spec(master)  # SystemExit on a mismatch


def _options(master: pathlib.Path) -> dict[str, tuple[dict[str, str], str]]:
    """Multiple-choice options per answer variable (in the key's order) and the key's letter of
    the solution: from the set's ``options`` (shuffled per variant) or the master's markdown."""
    nb = nbformat.read(master, as_version=4)
    shuffled = get_set(master.stem).options
    found, opts = {}, None
    for cell in nb.cells:
        if cell.cell_type == "markdown":
            o = dict(re.findall(r"^- \*\*\((\w)\)\*\* (.+)$", cell.source, re.M))
            opts = o or None
        elif cell.cell_type == "code":
            m = re.search(r'^(\w+) = (?:V\.shown_letter\("\w+", )?"(\w)"', cell.source, re.M)
            if m and m.group(1) in shuffled:
                found[m.group(1)] = (dict(zip("abcd", shuffled[m.group(1)])), m.group(2))
            elif m and opts:
                found[m.group(1)] = (opts, m.group(2))
            opts = None if m else opts
    assert set(shuffled) <= set(found), f"{master.stem}: a shuffled answer without its solution cell"
    return found


@needs_solutions
@pytest.mark.parametrize("master", MASTERS, ids=lambda p: p.parent.name)
def test_multiple_choice_options_have_similar_lengths_and_the_answer_is_not_the_longest(master):
    for var, (opts, right) in _options(master).items():
        lengths = {k: len(v) for k, v in opts.items()}
        assert len(opts) >= 3, var
        assert lengths[right] < max(lengths.values()) or list(lengths.values()).count(lengths[right]) > 1, var
        assert max(lengths.values()) <= 1.35 * min(lengths.values()), (var, lengths)


def test_shuffled_options_are_shown_only_in_the_variants_order():
    """A set that shuffles an answer's options (``SetSpec.options``) prints them from ``V``; its
    student notebook never lists them in a fixed order."""
    shuffled = {slug: spec for slug, spec in all_sets().items() if spec.options}
    choice_sets = {slug for slug, spec in all_sets().items()
                   if any(type(f).__name__ == "Choice" for q in spec.questions for _, f in q.answers)}
    assert set(shuffled) == choice_sets  # every set with a multiple-choice question shuffles it
    for slug, spec in shuffled.items():
        path = EXERCISES / slug / f"set_{slug}.ipynb"
        nb = nbformat.read(path, as_version=4)
        text = "\n".join(c.source for c in nb.cells)
        for var, texts in spec.options.items():
            assert not any(t in text for t in texts), (slug, var)
            assert f'V.options("{var}")' in text, (slug, var)
            shown = str(spec.variant(student_token("alice", TEST_SECRET)))
            assert all(t in shown for t in texts), (slug, var)


def test_each_student_notebook_shows_its_variant_first():
    """Every set has its notebook, named apart from the chapter's; its first code cell holds
    ``STUDENT`` and makes ``grader`` and ``V``; its title says to type the token there."""
    for slug in all_sets():
        assert sorted(p.name for p in (EXERCISES / slug).glob("*.ipynb")) == [f"set_{slug}.ipynb"], slug
        nb = nbformat.read(EXERCISES / slug / f"set_{slug}.ipynb", as_version=4)
        code = [c.source for c in nb.cells if c.cell_type == "code"]
        assert re.search(r'^STUDENT = ""', code[0], re.M), slug
        assert f'grader = lanes.exercises.Checks("{slug}")' in code[0], slug
        assert "V = grader.variant(STUDENT)" in code[0] and "print(V)" in code[0], slug
        assert "in the first code cell" in nb.cells[0].source and "STUDENT cell" not in nb.cells[0].source, slug
        assert nb.metadata["lanes"]["set"] == slug


# --------------------------------------------------------------------------- public checks


def _raise_in_cell(source: str, filename: str):
    linecache.cache[filename] = (len(source), None, source.splitlines(True), filename)
    try:
        exec(compile(source, filename, "exec"), {})
    except Exception as e:
        return e
    raise AssertionError("the cell did not raise")


def test_public_check_reports_a_raising_answer_cell(monkeypatch):
    err = _raise_in_cell("q4_choice = d\n", "<ipython-cell-7>")
    monkeypatch.setattr(sys, "last_value", err, raising=False)
    with pytest.raises(AssertionError, match=r"q4_choice: its answer cell raised NameError: name 'd' is not defined"):
        public_check("01_slots_and_littles_law", "q4", {"STUDENT": ""})
    other = _raise_in_cell("x = 1 / 0\n", "<ipython-cell-8>")
    monkeypatch.setattr(sys, "last_value", other, raising=False)
    with pytest.raises(AssertionError, match="q4_choice is not defined: run its answer cell"):
        public_check("01_slots_and_littles_law", "q4", {})


def test_public_check_uses_the_same_forms_as_the_grader():
    public_check("01_slots_and_littles_law", "q1", {"STUDENT": "", "q1_busy_slots": np.float64(31.5)})
    with pytest.raises(AssertionError, match="not answered yet"):
        public_check("01_slots_and_littles_law", "q1", {"STUDENT": "", "q1_busy_slots": ...})
    with pytest.raises(AssertionError, match="subclass of float"):
        public_check("01_slots_and_littles_law", "q1", {"STUDENT": "", "q1_busy_slots": AlwaysEqual(1)})


def test_public_check_notices_a_stale_variant_and_an_empty_student(capsys):
    slug = "01_slots_and_littles_law"
    bob, alice = student_token("bob", TEST_SECRET), student_token("alice", TEST_SECRET)
    env = {"STUDENT": bob, "V": variant(slug, alice), "q1_busy_slots": 3.0}
    with pytest.raises(AssertionError, match="V belongs to another STUDENT"):
        public_check(slug, "q1", env)
    public_check(slug, "q1", {**env, "V": variant(slug, " " + bob.upper())})
    assert capsys.readouterr().out == ""
    with pytest.raises(AssertionError, match="STUDENT: this is not a valid course token"):
        public_check(slug, "q1", {**env, "STUDENT": "bob", "V": variant(slug, "bob")})
    public_check(slug, "q1", {**env, "STUDENT": "", "V": variant(slug, "")})
    assert "STUDENT is empty" in capsys.readouterr().out


def test_a_renamed_copy_checks_in_a_kernel_and_reports_a_name_error(tmp_path):
    from nbclient import NotebookClient

    slug = "01_slots_and_littles_law"
    nb = nbformat.read(EXERCISES / slug / f"set_{slug}.ipynb", as_version=4)
    token = student_token("alice", TEST_SECRET)
    for cell in nb.cells:  # (an answer cell may print the variant's options before the answer line)
        cell.source = re.sub(r'^STUDENT = ""', f'STUDENT = "{token}"', cell.source, flags=re.M)
        cell.source = re.sub(r"^q1_busy_slots = \.\.\.", "q1_busy_slots = 12.5", cell.source, flags=re.M)
        cell.source = re.sub(r"^q4_choice = \.\.\.", "q4_choice = d", cell.source, flags=re.M)
    path = tmp_path / f"{slug}-Copy1.ipynb"
    nbformat.write(nb, path)
    NotebookClient(nb, timeout=120, kernel_name="python3", allow_errors=True,
                   resources={"metadata": {"path": str(tmp_path)}}).execute()
    outputs = {}
    for cell in nb.cells:
        m = re.match(r'grader\.check\("(q\d)"\)', cell.source)
        if m:
            outputs[m.group(1)] = json.dumps(cell.outputs)
    assert "q1: form ok: q1_busy_slots is a number; the value is graded by your instructor" in outputs["q1"]
    assert "raised NameError: name 'd' is not defined" in outputs["q4"]
    assert "not answered yet" in outputs["q2"]
    assert "passed" not in json.dumps(outputs)


# --------------------------------------------------------------------------- exercises/ is generated


@needs_solutions
def test_exercises_are_what_assign_makes_from_solutions(tmp_path):
    slugs = [m.stem for m in MASTERS]
    proc = subprocess.run([sys.executable, str(ROOT / "scripts" / "assign_exercises.py"), "--no-execute",
                           "--no-run-tests", "--out", str(tmp_path / "out"), "--build-dir", str(tmp_path / "b"), *slugs],
                          capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stderr[-2000:]
    for slug in slugs:
        made = {p.relative_to(tmp_path / "out"): p.read_bytes() for p in (tmp_path / "out" / slug).rglob("*")
                if p.is_file()}
        have = {p.relative_to(EXERCISES): p.read_bytes() for p in (EXERCISES / slug).rglob("*")
                if p.is_file() and "__pycache__" not in p.parts and ".OTTER_LOG" not in p.name}
        assert made == have, slug


# --------------------------------------------------------------------------- grading every set


@pytest.fixture
def class_run(graded_class):
    """Every set's solution for three students, and every untouched notebook (handed in by
    another student), graded in the session's one class run (tests/hostile/klass.py)."""
    return graded_class["data"], graded_class["gradebook"], graded_class["proc"]


def _of(data, logins):
    return [s for s in data["submissions"] if s["login"] in logins]


@needs_solutions
def test_solutions_score_full_marks_for_three_students(class_run):
    """In the box: every set's solution for one of the three students; the other two in-process
    (``test_solutions_score_full_marks_in_process_for_the_other_students``)."""
    from hostile.klass import honest_sets

    data, _, _ = class_run
    graded = _of(data, STUDENTS)
    assert sorted((s["login"], s["assignment"]) for s in graded) == sorted(
        (who, m.stem) for who, m in honest_sets())
    for s in graded:
        assert s["student"] == student_token(s["login"], TEST_SECRET)
        assert s["score"] == s["possible"] > 0, (s["path"], s["questions"])


@needs_solutions
@pytest.mark.parametrize("master", MASTERS, ids=lambda p: p.parent.name)
def test_solutions_score_full_marks_in_process_for_the_other_students(master, monkeypatch, shared_pool_runs):
    from grading.judge import grade_answers, load_key
    from lanes.exercises.variants import set_course_secret

    from hostile.klass import honest_sets

    boxed = {m: who for who, m in honest_sets()}
    spec, key = get_set(master.stem), load_key(SOLUTIONS, master.stem)
    monkeypatch.setenv("LANES_TEST_SECRET", "1")
    set_course_secret(TEST_SECRET)  # the capstone's and set 13's hidden seeds
    try:
        for who in STUDENTS:
            if boxed.get(master) == who:
                continue  # graded in the box
            shared_pool_runs.clear()  # (a student's runs are not another's: a capstone run is 3 MB)
            student = student_token(who, TEST_SECRET)
            answers = _solution_answers(master, student)
            result = grade_answers(spec, key, student, {"answers": answers})
            lost = {q: r["messages"] for q, r in result.items() if r["score"] != r["possible"]}
            assert not lost, (who, lost)
    finally:
        set_course_secret(None)


#: Sets whose masters and keys compute without simulating: a class of 100 takes seconds. The
#: others simulate (minutes for a class) and are checked with LANES_ALL_VARIANTS=1.
COMPUTED_MASTERS = ("08_chains_memory_and_throughput", "09_chains_latency_and_fairness", "11_measured_gpu")
CLASS = 100


@needs_solutions
@pytest.mark.parametrize("master", MASTERS, ids=lambda p: p.parent.name)
def test_every_master_scores_full_marks_for_every_student_of_a_class_of_100(master, monkeypatch):
    """The master's own answers, computed for each of 100 students' tokens, earn every point of
    every question of that student's variant (in process; the box is exercised above)."""
    from grading.judge import grade_answers, load_key
    from lanes.exercises.variants import set_course_secret

    if master.stem not in COMPUTED_MASTERS and os.environ.get("LANES_ALL_VARIANTS") != "1":
        pytest.skip("this set simulates: its class of 100 is checked with LANES_ALL_VARIANTS=1")
    spec, key = get_set(master.stem), load_key(SOLUTIONS, master.stem)
    monkeypatch.setenv("LANES_TEST_SECRET", "1")
    set_course_secret(TEST_SECRET)
    lost = {}
    try:
        for i in range(CLASS):
            student = student_token(f"s{i:03d}", TEST_SECRET)
            result = grade_answers(spec, key, student, {"answers": _solution_answers(master, student)})
            lost.update({(student, q): r["messages"] for q, r in result.items() if r["score"] != r["possible"]})
    finally:
        set_course_secret(None)
    assert not lost, lost


@needs_solutions
def test_untouched_notebooks_score_zero(class_run):
    from hostile.klass import UNTOUCHED

    data, _, _ = class_run
    untouched = _of(data, (UNTOUCHED,))
    assert sorted(s["assignment"] for s in untouched) == sorted(m.stem for m in MASTERS)
    for s in untouched:
        assert s["status"] == "graded" and s["score"] == 0 and s["possible"] > 0, s["path"]
        assert all(q["messages"] for q in s["questions"].values())


@needs_solutions
def test_gradebook_has_a_row_per_student_and_a_column_per_question(class_run):
    data, book, proc = class_run
    rows = list(csv.DictReader(book.open(encoding="utf-8-sig")))
    by_student = {r["login"]: r for r in rows}
    from hostile.klass import honest_sets

    every_set = sum(get_set(m.stem).possible for m in MASTERS)  # the roster is the class: every set counts
    for who in STUDENTS:
        handed = [m.stem for w, m in honest_sets() if w == who]
        assert all(float(by_student[who][f"{slug}:total"]) == get_set(slug).possible for slug in handed)
        assert float(by_student[who]["total"]) == sum(get_set(slug).possible for slug in handed) > 0
        assert float(by_student[who]["possible"]) == every_set
    columns = [c for c in rows[0] if ":" in c and c.rsplit(":", 1)[1] not in ("total", "late", "submitted")]
    assert len(columns) == sum(len(get_set(m.stem).questions) for m in MASTERS)
    n = len(re.findall(r"^\[\d+/\d+\] ", proc.stderr, re.M))  # a progress line per notebook run
    assert n > 3 * len(MASTERS) and f"[{n}/{n}]" in proc.stderr


# --------------------------------------------------------------------------- default answers vs chapters


def _solution_answers(master: pathlib.Path, student: str) -> dict:
    """The answers of ``master``'s solution code for ``student``, run here (registered in
    ``linecache``, so that code reading its own source back, such as ``source_of``, works)."""
    ns: dict = {}
    for i, source in _solution_code(master, student):
        name = f"<{master.stem} cell {i}>"
        linecache.cache[name] = (len(source), None, source.splitlines(True), name)
        exec(compile(source, name, "exec"), ns)
    return {v: to_plain(ns[v]) for v in get_set(master.stem).variables if v in ns}


_STAND_IN = "stand-in-student-0"


@functools.lru_cache(maxsize=None)
def _solution_template(master: pathlib.Path) -> tuple[tuple[int, str], ...]:
    """(index, source) of the code cells of ``solution_notebook(master, _STAND_IN)``.

    Reading and validating the master takes longer than a computed set's own code: a class of
    100 reads it once. Checked once against a second student's notebook made the long way."""
    def code(student):
        nb = klass.assign().solution_notebook(master, student)
        return tuple((i, c.source) for i, c in enumerate(nb.cells) if c.cell_type == "code")

    template = code(_STAND_IN)
    assert _fill(template, "other-student-1") == code("other-student-1"), master
    return template


def _fill(template: tuple, student: str) -> tuple[tuple[int, str], ...]:
    return tuple((i, source.replace(repr(_STAND_IN), repr(student))) for i, source in template)


def _solution_code(master: pathlib.Path, student: str) -> tuple[tuple[int, str], ...]:
    """(index, source) of the code cells of ``master``'s solution notebook for ``student``."""
    return _fill(_solution_template(master), student)


def _default_answers() -> dict[str, dict]:
    """Every set's answers for the default variant, by running its solution code here.

    Open-ended questions (``Question.open_ended``: a design choice judged by a scoring
    function, such as the capstone's configuration) have no single answer and are left out.
    """
    assign = klass.assign()
    out = {}
    for master in MASTERS:
        ns: dict = {}
        for cell in assign.solution_notebook(master, "").cells:
            if cell.cell_type == "code":
                exec(compile(cell.source, f"<{master.stem}>", "exec"), ns)
        spec = get_set(master.stem)
        out[master.stem] = {v: to_plain(ns[v]) for q in spec.questions if not q.open_ended for v, _ in q.answers}
    return out


def _digits(text: str) -> str:
    """The significant digits of a printed number (no sign, leading zeros or exponent)."""
    mantissa = re.split(r"[eE]", text)[0]
    return re.sub(r"[^0-9]", "", mantissa).lstrip("0")


def _renderings(x) -> set[str]:
    """How a chapter could print a non-trivial answer; empty for trivial ones.

    Trivial, and not scanned: strings and letters, booleans, integers below 100 in size
    (slot counts, chunk counts and the like recur everywhere), and renderings with fewer
    than three significant digits (``0.84`` or ``2.5`` can print in any chapter by chance).
    Scanned: ``repr``, ``:g``, 2 to 4 decimals, thousands separators, and percentages.
    """
    if isinstance(x, bool) or isinstance(x, str):
        return set()
    if isinstance(x, int):
        return {str(x), f"{x:,}"} if abs(x) >= 100 else set()
    if isinstance(x, float):
        if x.is_integer():
            return _renderings(int(x))
        if len(_digits(f"{x:.12g}")) < 3:
            return set()
        forms = {repr(x), f"{x:g}", f"{x:.2f}", f"{x:.3f}", f"{x:.4f}"}
        if 0 < abs(x) < 1:
            forms |= {f"{100 * x:.1f}%", f"{100 * x:.2f}%"}
        return {f for f in forms if len(_digits(f)) >= 3}
    if isinstance(x, list):
        return set().union(*map(_renderings, x)) if x else set()
    return set()


def _chapter_text(path: pathlib.Path) -> str:
    nb = json.loads(path.read_text())
    parts = []
    for cell in nb["cells"]:
        for o in cell.get("outputs", []):
            parts.append("".join(o.get("text", "")))
            for mime in ("text/plain", "text/html", "text/markdown", "text/latex"):
                parts.append("".join((o.get("data") or {}).get(mime, "")))
    return "\n".join(parts)


@needs_solutions
def test_no_default_answer_appears_in_a_chapter_output():
    answers = _default_answers()
    texts = {p.name: _chapter_text(p) for p in sorted(NOTEBOOKS.glob("*.ipynb"))}
    assert texts
    hits = []
    for slug, values in answers.items():
        for var, value in values.items():
            for r in _renderings(value):
                hits += [(slug, var, r, name) for name, text in texts.items() if re.search(_printed(r), text)]
    assert hits == []


def _printed(rendering: str) -> str:
    """A pattern for ``rendering`` printed as a number of its own: not part of a longer number
    (no digit or decimal point before it, no digit or decimal part after it)."""
    return rf"(?<![\d.]){re.escape(rendering)}(?!\d|\.\d)"


def test_the_scan_would_catch_a_printed_answer():
    assert "33.75" in _renderings(33.75) and "1,234" in _renderings(1234)
    assert _renderings(12) == set() and _renderings(0.5) == set() and _renderings("b") == set()
    assert re.search(_printed("33.75"), "busy slots: 33.75 on average")
    assert re.search(_printed("114"), "a batch of 114.") and re.search(_printed("114"), "114 sequences")
    assert not re.search(_printed("33.75"), "133.751")
    assert not re.search(_printed("114"), "114.539 ms per token")


# --------------------------------------------------------------------------- tokens


def test_a_token_with_one_character_mistyped_or_two_neighbours_swapped_is_refused():
    """The check character catches every single substitution in the code, every swap of two
    different neighbours anywhere, and a login typo but for the pairs the docstring names."""
    from lanes.exercises.variants import CODE_ALPHABET, TOKEN_CHARS, token_problem

    twins = {frozenset((TOKEN_CHARS[i], TOKEN_CHARS[i + 31])) for i in range(8)}
    for login in ("h3student", "jdoe42", "zhang.wei", "a", "o_l-i.0", "x" * 33):
        token = student_token(login, TEST_SECRET)
        assert token_problem(token) is None, token
        assert token_problem(login) is not None, login
        assert token_problem(token[:-1]) is not None and token_problem(token + "a") is not None
        for i, c in enumerate(token):
            for other in (CODE_ALPHABET if i > len(login) else TOKEN_CHARS):
                if other == c or frozenset((c, other)) in twins:
                    continue
                typo = token[:i] + other + token[i + 1:]
                assert token_problem(typo) is not None, (token, typo)
        for i in range(len(token) - 1):
            a, b = token[i], token[i + 1]
            if a != b and frozenset((a, b)) not in twins:
                swapped = token[:i] + b + a + token[i + 2:]
                assert token_problem(swapped) is not None, (token, swapped)


def test_the_grader_tells_a_typo_from_another_students_token():
    from lanes.exercises.variants import token_mismatch

    alice, bob = student_token("alice", TEST_SECRET), student_token("bob", TEST_SECRET)
    assert token_mismatch(alice, "alice", TEST_SECRET) is None
    typo = alice[:-2] + alice[-1] + alice[-2] if alice[-1] != alice[-2] else alice[:-1] + "z"
    assert "a typo" in token_mismatch(typo, "alice", TEST_SECRET)
    assert "a typo" in token_mismatch("alice", "alice", TEST_SECRET)
    assert token_mismatch(bob, "alice", TEST_SECRET) == "STUDENT is another student's token (bob's)"
    elsewhere = student_token("alice", "another-course-secret-0123")
    assert "did not issue" in token_mismatch(elsewhere, "alice", TEST_SECRET)
    assert token_mismatch("", "alice", TEST_SECRET) == "STUDENT is empty"
    assert "characters or a length" in token_mismatch(None, "alice", TEST_SECRET)
