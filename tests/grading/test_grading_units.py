"""The class-grading logic without running a notebook: reading, identity, copies, secret, options.

Fast checks of ``grading.classroom``, ``.variants``, ``.spec`` and ``.judge``; the
hostile class graded through the box is in ``test_grading_class.py``.
"""

from __future__ import annotations

import csv
import json
import os
import pathlib
import subprocess
import sys

import pytest

from grading import classroom
from grading.judge import choice, grade_answers
from grading.lms import Exports
from lanes.exercises import get_set
from lanes.exercises.forms import Choice, Float
from lanes.exercises.spec import Question, SetSpec
from lanes.exercises.variants import (TEST_SECRET, load_course_secret, normalise_student, student_token)

SLUG = "01_slots_and_littles_law"
SECRET_BYTES = "TOPSECRET-0xC0FFEE"


ROOT = pathlib.Path(__file__).resolve().parents[2]


def _nb_json(**meta) -> str:
    return json.dumps({"nbformat": 4, "nbformat_minor": 5, "metadata": meta,
                       "cells": [{"cell_type": "code", "id": "a1", "metadata": {}, "source": "x = 1",
                                  "outputs": [], "execution_count": None}]})


# --------------------------------------------------------------------------- reading as data


def test_a_symlink_fifo_and_folder_are_refused_in_one_line_without_following(tmp_path):
    (tmp_path / "secret.txt").write_text(SECRET_BYTES)
    os.chmod(tmp_path / "secret.txt", 0o600)
    subs = tmp_path / "subs" / "eve"
    subs.mkdir(parents=True)
    os.symlink(tmp_path / "secret.txt", subs / "link.ipynb")
    os.mkfifo(subs / "fifo.ipynb")
    (subs / "folder.ipynb").mkdir()
    os.symlink(tmp_path, subs / "linked_dir")  # never walked
    found = {p.name: why for p, _, why in classroom.collect([tmp_path / "subs"])}
    assert set(found) == {"link.ipynb", "fifo.ipynb", "folder.ipynb"}
    assert "symbolic link" in found["link.ipynb"] and "FIFO" in found["fifo.ipynb"]
    assert "folder" in found["folder.ipynb"]
    nb, _, why = classroom.read_notebook(subs / "link.ipynb")
    assert nb is None and "symbolic link" in why and SECRET_BYTES not in why


@pytest.mark.parametrize("content, words", [
    (SECRET_BYTES + " not json", "not valid JSON (line 1"),
    ('{"nbformat": 4, "cells": "' + SECRET_BYTES + '"}', "does not follow the nbformat 4 schema"),
    ('{"nbformat": 9}', "nbformat 9"),
    ('["' + SECRET_BYTES + '"]', "no nbformat version"),
])
def test_a_broken_notebook_is_named_without_quoting_its_bytes(tmp_path, content, words):
    p = tmp_path / "x.ipynb"
    p.write_text(content)
    nb, _, why = classroom.read_notebook(p)
    assert nb is None and words in why and SECRET_BYTES not in why


def test_a_large_file_is_refused_before_it_is_read(tmp_path):
    p = tmp_path / "big.ipynb"
    p.write_bytes(b" " * 2048)
    assert "larger than" in classroom.read_notebook(p, limit=1024)[2]


def test_an_nbformat_3_notebook_is_converted(tmp_path):
    import nbformat

    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell("x = 1")])
    p = tmp_path / "old.ipynb"
    p.write_text(nbformat.writes(nbformat.convert(nb, 3), version=3))
    got, _, why = classroom.read_notebook(p)
    assert why is None and got.nbformat == 4 and got.cells[0].source == "x = 1"


@pytest.mark.parametrize("meta", [{"lanes": "a string"}, {"lanes": {"set": [SLUG]}}, {"lanes": 3},
                                  {"otter": {"assignment_name": {"x": 1}}}])
@pytest.mark.parametrize("name", [f"{SLUG}.ipynb", f"set_{SLUG}.ipynb", f"set_{SLUG}-Copy1.ipynb"])
def test_metadata_of_the_wrong_type_is_ignored_and_the_file_name_decides(tmp_path, meta, name):
    """The set's file name (``set_NN_slug``) and the name it had before (``NN_slug``) both decide."""
    p = tmp_path / name
    p.write_text(_nb_json(**meta))
    nb, _, why = classroom.read_notebook(p)
    msgs: list = []
    assert classroom.match_assignment(p, nb, {SLUG}, msgs) == SLUG
    assert msgs and "ignored" in msgs[0]


# --------------------------------------------------------------------------- identity


def _who(path, root, roster=None):
    o = Exports(roster, {SLUG}).origin(path, root)
    return o.login, o.why


def test_identity_from_the_layouts_and_the_roster(tmp_path):
    root = tmp_path
    assert _who(root / "alice" / "nb.ipynb", root) == ("alice", "")
    assert _who(root / f"bob_{SLUG}.ipynb", root) == ("bob", "")
    assert _who(root / f"bob_set_{SLUG}.ipynb", root) == ("bob", "")  # the set's own file name
    assert _who(root / f"jo_smith_set_{SLUG}-Copy1.ipynb", root) == ("jo_smith", "")
    assert _who(root / "bob_123_456_01_slots.ipynb", root)[0] is None  # Canvas's names need a roster
    assert _who(root / "nobody.ipynb", root)[0] is None
    assert _who(root / "=HYPERLINK(x)" / "nb.ipynb", root)[0] is None
    (root / "roster.csv").write_text("login,file,name\ncarol,sub-881.ipynb,Carol C\ndave,,Dave D\n")
    roster = classroom.load_roster(root / "roster.csv")
    assert _who(root / "sub-881.ipynb", root, roster) == ("carol", "")
    assert _who(root / "dave" / "x.ipynb", root, roster) == ("dave", "")
    login, why = _who(root / "mallory" / "x.ipynb", root, roster)
    assert login is None and "roster" in why


def test_a_roster_with_a_bad_login_names_the_line_and_keeps_the_rest(tmp_path):
    (tmp_path / "r.csv").write_text("login,name\nalice,A\n+cmd|' /C calc'!A0,B\n")
    roster = classroom.load_roster(tmp_path / "r.csv")
    assert list(roster.names) == ["alice"] and len(roster.problems) == 1
    assert "line 3: login must be" in roster.problems[0]


@pytest.mark.parametrize("bad", ["alice\ufe0f", "al ice", "=HYPERLINK(1)", "a" * 41, "ａlice"])
def test_student_is_restricted_to_a_small_alphabet(bad):
    with pytest.raises(ValueError, match="a-z, 0-9"):
        normalise_student(bad)


def test_tokens_depend_on_the_secret_and_fit_the_alphabet():
    a, b = student_token("alice", TEST_SECRET), student_token("alice", "another-secret-of-16+")
    assert a != b and a.startswith("alice-") and normalise_student(a) == a
    assert student_token("bob", TEST_SECRET) != a


def test_the_test_secret_is_refused_for_real_grading_and_the_message_says_how(tmp_path):
    p = tmp_path / "secret"
    p.write_text(TEST_SECRET + "\n")
    with pytest.raises(ValueError, match="grade.py init"):
        load_course_secret(p)
    with pytest.raises(ValueError, match="no course secret"):
        load_course_secret(tmp_path / "missing")
    assert load_course_secret(tmp_path / "missing", allow_test=True) == TEST_SECRET
    p.write_text("f" * 64)
    assert load_course_secret(p) == "f" * 64


# --------------------------------------------------------------------------- copies, shards, gradebook


def _row(path, login, set_, score, possible=7, counted=None):
    s = classroom.Submission(path=path, assignment=set_, login=login)
    s.order = (False, 0.0, 0, classroom.copy_number(pathlib.Path(path).stem), path)
    s.questions = [classroom.Question("q1", possible, score)]
    return s


def test_the_latest_copy_counts_never_the_best_and_possible_counts_once():
    subs = [_row("d/a.ipynb", "dave", SLUG, 7), _row("d/a (2).ipynb", "dave", SLUG, 0),
            _row("d/a-Copy1.ipynb", "dave", SLUG, 7), _row("e/a.ipynb", "erin", SLUG, 7)]
    classroom._mark_counted(subs, False, classroom.Deadlines())
    assert [s.counted for s in subs] == [False, True, False, True]
    assert all("copies" in s.messages[0] for s in subs[:3]) and not subs[3].messages
    rep = classroom.report(subs, pass_mark=0.5, sandbox_line="-")
    assert (rep["score"], rep["possible"], rep["students"]) == (7, 2 * get_set(SLUG).possible, 2)


def test_shards_partition_the_students_and_merge_needs_each_once():
    logins = [f"s{i:03d}" for i in range(200)]
    shards = [classroom.shard_of(x, 4) for x in logins]
    assert set(shards) == {1, 2, 3, 4} and shards == [classroom.shard_of(x, 4) for x in logins]
    assert classroom.shard_of(None, 4) == 1
    rep = {"pass_mark": 0.5, "sandbox": "-", "shard": "1/2", "submissions": []}
    with pytest.raises(ValueError, match="each shard 1..N exactly once"):
        classroom.merge([rep, rep])


def test_gradebook_cells_cannot_be_formulas(tmp_path):
    evil = ['=HYPERLINK("http://x")', "+cmd|' /C calc'!A0", "-1+2", "@SUM(A1)", "\tx", "\rx"]
    subs = []
    for i, name in enumerate(evil):
        s = _row(f"s{i}/a.ipynb", f"s{i}", SLUG, 1)
        s.name, s.counted = name, True
        subs.append(s)
    classroom.write_gradebook(classroom.report(subs, pass_mark=0.5, sandbox_line="-"), tmp_path / "g.csv")
    rows = list(csv.DictReader((tmp_path / "g.csv").open(newline="", encoding="utf-8-sig")))
    assert [r["name"] for r in rows] == ["'" + e for e in evil]


# --------------------------------------------------------------------------- shuffled options


def _mc_spec():
    return SetSpec("99_mc", (Question("q1", 1, {"q1_choice": Choice("abcd")}), Question("q2", 1, {"q2_x": Float()})),
                   default={"k": 1}, draw=lambda rng: {"k": rng.randrange(9)},
                   options={"q1_choice": ("alpha", "beta", "gamma", "delta")})


class _Key:
    @staticmethod
    def q1(a, v):
        return choice("q1_choice", a["q1_choice"], "b")  # the key's letter: "beta"

    @staticmethod
    def q2(a, v):
        return True


def test_options_are_shuffled_per_variant_and_judged_by_their_text():
    spec = _mc_spec()
    orders = {tuple(t for _, t in spec.variant(f"s{i}").options("q1_choice")) for i in range(12)}
    assert len(orders) >= 4
    assert [t for _, t in spec.variant("").options("q1_choice")] == ["alpha", "beta", "gamma", "delta"]
    for i in range(12):
        v = spec.variant(f"s{i}")
        shown = next(letter for letter, text in v.options("q1_choice") if text == "beta")
        assert "(" + shown + ") beta" in str(v)
        res = grade_answers(spec, _Key, f"s{i}", {"answers": {"q1_choice": shown, "q2_x": 1.0}})
        assert res["q1"]["score"] == 1
    wrong = [i for i in range(12) if next(x for x, t in spec.variant(f"s{i}").options("q1_choice") if t == "beta") != "b"]
    assert wrong  # someone else's letter "b" is wrong for them
    assert grade_answers(spec, _Key, f"s{wrong[0]}", {"answers": {"q1_choice": "b", "q2_x": 1.0}})["q1"]["score"] == 0


def test_options_must_belong_to_a_choice_answer():
    with pytest.raises(ValueError, match="options"):
        SetSpec("99_bad", (Question("q1", 1, {"q1_x": Float()}),), options={"q1_x": ("a", "b")})


# --------------------------------------------------------------------------- the command's edges

GRADE = pathlib.Path(__file__).resolve().parents[2] / "scripts" / "grade.py"


def _grade(*args, **env):
    full = {k: v for k, v in os.environ.items() if k != "LANES_TEST_SECRET"}
    return subprocess.run([sys.executable, str(GRADE), *map(str, args)], capture_output=True, text=True,
                          timeout=120, env={**full, **env})


def test_init_writes_a_private_secret_once_and_grading_needs_one(tmp_path):
    secret = tmp_path / "course-secret"
    (tmp_path / "alice").mkdir()
    (tmp_path / "alice" / f"{SLUG}.ipynb").write_text(_nb_json())
    proc = _grade(tmp_path / "alice", "--secret", secret, "--json", tmp_path / "r.json")
    assert proc.returncode == 2 and "grade.py init" in proc.stderr and len(proc.stderr.strip().splitlines()) <= 2
    assert _grade("init", "--secret", secret).returncode == 0
    assert oct(secret.stat().st_mode & 0o777) == "0o600" and len(secret.read_text().strip()) == 64
    again = _grade("init", "--secret", secret)
    assert again.returncode == 2 and "--force" in again.stderr
    secret.write_text(TEST_SECRET)
    proc = _grade(tmp_path / "alice", "--secret", secret, "--json", tmp_path / "r.json")
    assert proc.returncode == 2 and "test suite's public secret" in proc.stderr


@pytest.mark.parametrize("mode", ["graded", "forms only"])
def test_without_bubblewrap_the_grader_stops_with_one_line(tmp_path, mode):
    if mode == "graded" and not (GRADE.parents[1] / "solutions").is_dir():
        pytest.skip("grading needs the answer keys in solutions/ (the instructor's repository); "
                    "without them nothing runs in a box")
    (tmp_path / "alice").mkdir()
    nb = tmp_path / "alice" / f"{SLUG}.ipynb"
    nb.write_text(_nb_json())
    extra = ["--forms-only"] if mode == "forms only" else []
    proc = _grade(tmp_path, *extra, "--json", tmp_path / "r.json", "--quiet", LANES_BWRAP="/nonexistent/bwrap",
                  LANES_TEST_SECRET="1")
    assert proc.returncode == 2 and "bubblewrap" in proc.stderr and "Traceback" not in proc.stderr


def test_merge_refuses_a_missing_shard(tmp_path):
    rep = {"pass_mark": 0.5, "sandbox": "-", "shard": "1/2", "submissions": []}
    (tmp_path / "a.json").write_text(json.dumps(rep))
    proc = _grade("merge", tmp_path / "a.json", "--json", tmp_path / "m.json")
    assert proc.returncode == 2 and "exactly once" in proc.stderr


def test_the_grader_starts_without_otter_or_the_iri_grammars():
    """Every grading run starts grade.py and the judge: Otter and jsonschema's IRI grammars
    (rfc3987_syntax) would cost seconds each time; nbformat itself is needed."""
    grade = pathlib.Path(__file__).resolve().parents[2] / "scripts" / "grade.py"
    code = (f"import runpy, sys; sys.argv = [{str(grade)!r}, '--help']\n"
            "try:\n    runpy.run_path(sys.argv[0], run_name='__main__')\nexcept SystemExit:\n    pass\n"
            "print(sorted(m for m in ('nbformat', 'otter', 'lark') if m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert out.stdout.strip().splitlines()[-1] == "['nbformat']", out.stdout[-2000:] + out.stderr[-2000:]


def test_one_set_is_loaded_for_one_notebook():
    """Step 1 runs once per notebook and asks for one set: loading the other sets' modules
    (and the models their variants are drawn with: asyncio for set 07, sqlite3 for set 06)
    cost about twice the runner's own start-up. An unknown slug still names every set."""
    code = ("import sys; from lanes.exercises import get_set, Checks\n"
            "get_set('01_slots_and_littles_law'); Checks('02_why_priority_fails')\n"
            "print(sorted(m.rsplit('.', 1)[1] for m in sys.modules if m.startswith('lanes.exercises.sets.')),"
            " 'asyncio' in sys.modules, 'sqlite3' in sys.modules)\n"
            "try:\n    get_set('99_none')\nexcept KeyError as e:\n    print('14_capstone' in str(e))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60, cwd=ROOT)
    assert out.stdout.splitlines() == ["['set_01', 'set_02'] False False", "True"], out.stdout + out.stderr[-2000:]


# --------------------------------------------------------------------------- the package's place


def _imports(path: pathlib.Path):
    """``(module, names)`` of every import in ``path``, deferred ones included."""
    import ast

    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            yield from ((a.name, ()) for a in node.names)
        elif isinstance(node, ast.ImportFrom):
            yield ("." * node.level + (node.module or "")), tuple(a.name for a in node.names)


def test_grading_is_its_own_package_that_a_students_install_and_repository_leave_out():
    """lanes never imports grading (deferred imports count); the wheel and the student export
    leave it out; grading, grade.py and the benchmarks import no private name of another module."""
    import ast
    import tomllib

    student = [f"{p.relative_to(ROOT)}: {m}" for p in sorted((ROOT / "lanes").rglob("*.py"))
               for m, _ in _imports(p) if m.split(".")[0] == "grading"]
    assert student == []
    find = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]["packages"]["find"]
    assert not any(pat.split(".")[0] == "grading" for pat in find["include"]), find
    sys.path.insert(0, str(ROOT / "scripts"))
    try:
        import export_student_repo as export
    finally:
        sys.path.remove(str(ROOT / "scripts"))
    assert all(export.is_private(p) for p in ("grading/classroom.py", "scripts/grade.py", "tests/grading/test_term.py"))
    assert not export.is_private("lanes/exercises/source.py")
    private = []
    for p in [*sorted((ROOT / "grading").glob("*.py")), *(ROOT / "scripts").glob("grade.py"),
              *(ROOT / "scripts").glob("bench_*.py")]:
        private += [f"{p.name}: from {m} import {n}" for m, names in _imports(p) for n in names if n.startswith("_")
                    and n != "__version__"]
        tree = ast.parse(p.read_text(encoding="utf-8"))
        private += [f"{p.name}: {n.value.id}.{n.attr}" for n in ast.walk(tree) if isinstance(n, ast.Attribute)
                    and isinstance(n.value, ast.Name) and n.attr.startswith("_") and not n.attr.startswith("__")
                    and n.value.id in {"classroom", "sandbox", "judge", "online", "runner", "roster", "lms",
                                       "gradebook", "deadlines", "variants", "registry", "forms", "spec"}]
    assert private == []


# --------------------------------------------------------------------------- step 1's runner


def test_the_runner_runs_plain_cells_itself_and_hands_the_rest_to_ipython(tmp_path):
    """Plain Python runs without IPython (its import is most of a short notebook's cost): the
    __future__ flags of a cell hold in the next, a cell reads its own source back, SystemExit is
    the cell's error; a magic starts IPython on the same namespace, which runs the rest."""
    cells = ["from __future__ import annotations",
             "def f(x: NotDefinedAnywhere) -> int:\n    return 1\nq1_busy_slots = 1.5",
             "import sys\nsys.exit(3)",
             "import inspect\ndef g():\n    return 2\nsrc = inspect.getsource(g)\n"
             "ran_plain = 'IPython' not in sys.modules",
             "%time q2_measured = 4",
             "q3_idle_at_peak = float(src.startswith('def g') and ran_plain and get_ipython() is not None)"]
    nb = {"nbformat": 4, "nbformat_minor": 5, "metadata": {},
          "cells": [{"cell_type": "code", "id": f"c{i}", "metadata": {}, "source": s, "outputs": [],
                     "execution_count": None} for i, s in enumerate(cells)]}
    (tmp_path / "nb.ipynb").write_text(json.dumps(nb))
    boot = (f"import sys, runpy; sys.path[:0] = {[str(ROOT)]!r}; "
            "runpy.run_module('grading.runner', run_name='__main__', alter_sys=True)")
    subprocess.run([sys.executable, "-E", "-s", "-c", boot, str(tmp_path / "nb.ipynb"), str(tmp_path / "out.json"),
                    SLUG], check=True, timeout=120, cwd=tmp_path)
    out = json.loads((tmp_path / "out.json").read_text())
    assert out["answers"] == {"q1_busy_slots": 1.5, "q2_measured": 4, "q3_idle_at_peak": 1.0}, out
    assert out["errors"] == [{"cell": 2, "error": "SystemExit: 3"}], out


def test_magics_and_displays_students_use_run_in_the_box_as_in_a_kernel(tmp_path):
    """%matplotlib inline, a plot shown, display() run as in Jupyter; !cmd, x = !cmd and %pip are
    refused in one line each, the cell failing alone; the answers after them are read."""
    from grading import sandbox
    from hostile import klass as K

    if K.skip_reason() is not None:
        pytest.skip(K.skip_reason())
    cells = ["%matplotlib inline\nq1_busy_slots = 1.5",
             "import matplotlib.pyplot as plt\nplt.plot([1, 2])\nplt.show()\ndisplay(plt.gcf())",
             "!ls /", "files = !ls /", "%pip install requests",
             "from IPython.display import display, Markdown\ndisplay(Markdown('**x**'))\nq2_measured = 4"]
    nb = {"nbformat": 4, "nbformat_minor": 5, "metadata": {},
          "cells": [{"cell_type": "code", "id": f"c{i}", "metadata": {}, "source": s, "outputs": [],
                     "execution_count": None} for i, s in enumerate(cells)]}
    (tmp_path / "nb.ipynb").write_text(json.dumps(nb))
    boot = (f"import sys, runpy; sys.path[:0] = [{sandbox.SITE!r}]; "
            "runpy.run_module('grading.runner', run_name='__main__', alter_sys=True)")
    with sandbox.Box() as box:
        with box.popen([sys.executable, "-E", "-s", "-c", boot, f"{sandbox.JOB}/nb.ipynb", f"{sandbox.JOB}/out.json",
                        SLUG], job_dir=tmp_path, stderr=subprocess.PIPE, outputs=["out.json"]) as p:
            _, err = p.communicate(timeout=120)
    assert p.returncode == 0, err.decode()[-2000:]
    got = json.loads((tmp_path / "out.json").read_text())
    assert got["answers"] == {"q1_busy_slots": 1.5, "q2_measured": 4}, got
    assert [e["cell"] for e in got["errors"]] == [2, 3, 4], got
    assert all(e["error"].startswith("RuntimeError: shell commands (!cmd, %pip, %conda) are not run while grading")
               for e in got["errors"])


def test_a_chapter_notebook_handed_in_as_a_set_is_named_as_such(tmp_path):
    from hostile import klass as K

    if K.skip_reason() is not None:
        pytest.skip(K.skip_reason())
    nb = {"nbformat": 4, "nbformat_minor": 5, "metadata": {},
          "cells": [{"cell_type": "code", "id": "c0", "metadata": {}, "source": "x = 1", "outputs": [],
                     "execution_count": None}]}
    (tmp_path / "ana").mkdir()
    (tmp_path / "ana" / f"{SLUG}.ipynb").write_text(json.dumps(nb))
    from grading import sandbox

    (s,), _ = classroom.grade([tmp_path / "ana"], solutions=None, limits=sandbox.Limits(), progress=lambda *a: None)
    assert s.status == "graded" and s.matched == "file name"
    assert any("is it the chapter notebook?" in m and f"set_{SLUG}.ipynb" in m for m in s.messages), s.messages


def _set_notebook(student_line: str | None) -> dict:
    """Set 01's notebook as a student hands it in: its first cell with ``student_line`` in place of
    ``STUDENT = ""`` (``None``: that line deleted), q1 answered from ``V``."""
    nb = json.loads((ROOT / "exercises" / SLUG / f"set_{SLUG}.ipynb").read_text())
    for cell in nb["cells"]:
        src = "".join(cell["source"])
        if cell["cell_type"] == "code" and src.startswith("# Type your course token"):
            src = src.replace('STUDENT = ""\n', "" if student_line is None else student_line + "\n")
        src = src.replace("q1_busy_slots = ...", "q1_busy_slots = V.rate_per_s * V.hold_s")
        cell["source"] = src
    return nb


@pytest.mark.parametrize("line, words", [('STUDENT = ""', "STUDENT is empty"),
                                         (None, "no cell of the notebook sets STUDENT")])
def test_an_empty_or_missing_student_is_one_line_in_the_report(tmp_path, line, words):
    """A set notebook handed in with ``STUDENT`` empty (its first cell refused it) or deleted: one
    line says so, not a line per cell that then failed for want of ``V``."""
    from grading import sandbox
    from hostile import klass as K

    if K.skip_reason() is not None:
        pytest.skip(K.skip_reason())
    (tmp_path / "alice").mkdir()
    (tmp_path / "alice" / f"set_{SLUG}.ipynb").write_text(json.dumps(_set_notebook(line)))
    (s,), _ = classroom.grade([tmp_path / "alice"], solutions=ROOT / "solutions", limits=sandbox.Limits(),
                              secret=TEST_SECRET, student="alice", progress=lambda *a: None)
    assert s.status == "graded", s.messages
    assert len(s.messages) == 1 and words in s.messages[0], s.messages
    assert s.questions[0].score == 0, s.questions[0]
    assert s.questions[0].messages == ["q1_busy_slots: its answer cell raised NameError: name 'V' is not defined "
                                       "(see the STUDENT line)"], s.questions[0].messages


def test_a_chapter_notebook_handed_in_as_another_set_is_one_line_and_not_run(tmp_path):
    """Chapter 03's notebook (its title cell; cells that would fail in the box) handed in under
    set 01's name: one line names both, instead of a line per failing cell."""
    from grading import sandbox
    from hostile import klass as K

    if K.skip_reason() is not None:
        pytest.skip(K.skip_reason())
    chapter = json.loads((ROOT / "notebooks" / "03_headroom.ipynb").read_text())
    title = next(c for c in chapter["cells"] if c["cell_type"] == "markdown")
    nb = {**chapter, "cells": [title] + [{"cell_type": "code", "id": f"c{i}", "metadata": {}, "outputs": [],
                                          "execution_count": None, "source": f"undefined_{i}"} for i in range(12)]}
    (tmp_path / "ana").mkdir()
    (tmp_path / "ana" / f"set_{SLUG}.ipynb").write_text(json.dumps(nb))
    (s,), _ = classroom.grade([tmp_path / "ana"], solutions=None, limits=sandbox.Limits(), progress=lambda *a: None)
    assert s.assignment == SLUG and s.seconds == 0, s
    assert s.messages == [f"this is chapter 03's notebook, not set 01's: hand in the set notebook, "
                          f"exercises/{SLUG}/set_{SLUG}.ipynb; every question scores 0"], s.messages


def test_the_grader_and_the_public_check_refuse_the_same_foreign_label():
    """A label this variant does not show (a letter of the default variant, another variant's
    number) is a form problem to the grader as to the public check, in the same words."""
    from lanes.exercises import public_check
    from lanes.exercises.public import CheckFailed

    token = student_token("alice", TEST_SECRET)
    v = get_set(SLUG).variant(token)
    mine = [label for label, _ in v.options("q4_choice")]
    for foreign in ("b", next(str(n) for n in range(10, 100) if str(n) not in mine)):
        res = grade_answers(get_set(SLUG), None, token, {"answers": {"q4_choice": foreign}})
        assert res["q4"]["form_ok"] is False
        with pytest.raises(CheckFailed) as e:
            public_check(SLUG, "q4", {"STUDENT": token, "q4_choice": foreign})
        assert res["q4"]["messages"] == [str(e.value)] and all(f'"{x}"' in str(e.value) for x in mine)
    assert grade_answers(get_set(SLUG), None, token, {"answers": {"q4_choice": mine[0]}})["q4"]["form_ok"] is True


def test_a_long_error_of_a_cell_is_cut_with_an_ellipsis_in_the_box_and_in_the_check(tmp_path):
    """The first line of a long error is kept to 160 characters, and says it was cut."""
    from lanes.exercises import public

    cells = ["raise ValueError('word ' * 60)"]
    nb = {"nbformat": 4, "nbformat_minor": 5, "metadata": {},
          "cells": [{"cell_type": "code", "id": "c0", "metadata": {}, "source": cells[0], "outputs": [],
                     "execution_count": None}]}
    (tmp_path / "nb.ipynb").write_text(json.dumps(nb))
    boot = (f"import sys, runpy; sys.path[:0] = {[str(ROOT)]!r}; "
            "runpy.run_module('grading.runner', run_name='__main__', alter_sys=True)")
    subprocess.run([sys.executable, "-E", "-s", "-c", boot, str(tmp_path / "nb.ipynb"), str(tmp_path / "out.json"),
                    SLUG], check=True, timeout=120, cwd=tmp_path)
    (error,) = json.loads((tmp_path / "out.json").read_text())["errors"]
    assert error["error"] == "ValueError: " + ("word " * 60)[:160] + "…", error
    assert public.first_line(ValueError("word " * 60)) == error["error"]


def test_without_a_cgroup_a_box_runs_at_nice_10_so_the_grader_comes_first(tmp_path):
    """The rlimit fallback's CPU share: with no cgroup CPU weight, every process of a box runs at
    10 more than the grader (so the grader and its judges come first)."""
    from grading import sandbox
    from hostile import klass as K

    if K.skip_reason() is not None:
        pytest.skip(K.skip_reason())
    probe = "import os; print(os.nice(0))"
    with sandbox.Box(cgroups=False) as box:
        with box.popen([sys.executable, "-c", probe], job_dir=tmp_path, stdout=subprocess.PIPE) as p:
            out, _ = p.communicate(timeout=120)
    assert p.returncode == 0 and int(out) == min(19, os.nice(0) + 10), out
