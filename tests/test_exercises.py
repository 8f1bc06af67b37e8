"""Honesty checks for the graded exercises (issue 6).

* every solution scores full marks and every untouched student notebook scores
  zero on every question (so no test passes on a blank answer);
* ``exercises/`` is what ``scripts/assign_exercises.py`` makes from ``solutions/``;
* no solution code or hidden-test text leaks into ``exercises/`` or the built book;
* the book's exercises page links every set, and never a solution.

The autograder zips are built once per module (``otter assign`` without running
the tests, a few seconds) into a temporary folder, and all sixteen notebooks are
graded by one ``scripts/grade.py`` run, two at a time.
"""

from __future__ import annotations

import html
import json
import pathlib
import re
import subprocess
import sys

import nbformat
import pytest

ROOT = pathlib.Path(__file__).resolve().parents[1]
SOLUTIONS = ROOT / "solutions"
EXERCISES = ROOT / "exercises"
BOOK_HTML = ROOT / "_build" / "html"
SLUGS = sorted(p.name for p in SOLUTIONS.iterdir() if (p / f"{p.name}.ipynb").is_file())


def _run(cmd: list[str], timeout: float = 900) -> subprocess.CompletedProcess:
    return subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True, timeout=timeout)


@pytest.fixture(scope="module")
def regen(tmp_path_factory):
    """exercises/ and autograder zips regenerated from solutions/ into a temp dir."""
    tmp = tmp_path_factory.mktemp("assign")
    out, ag = tmp / "exercises", tmp / "autograder"
    proc = _run([sys.executable, "scripts/assign_exercises.py", "--no-execute", "--no-run-tests",
                 "--out", str(out), "--autograder-dir", str(ag)])
    assert proc.returncode == 0, proc.stdout + proc.stderr
    return out, ag


@pytest.fixture(scope="module")
def graded(regen, tmp_path_factory):
    """One grading run over every solution and every untouched student notebook."""
    _, ag = regen
    report = tmp_path_factory.mktemp("grade") / "report.json"
    proc = _run([sys.executable, "scripts/grade.py", str(ag / "solutions"), str(EXERCISES),
                 "--autograder-dir", str(ag), "--jobs", "2", "--timeout", "300",
                 "--pass-mark", "0", "--json", str(report)])
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    data = json.loads(report.read_text())
    subs = {}
    for s in data["submissions"]:
        kind = "solution" if pathlib.Path(s["path"]).resolve().is_relative_to(ag.resolve()) else "student"
        subs[(kind, s["assignment"])] = s
    return subs, proc.stdout


# --------------------------------------------------------------------------- scoring


class TestScoring:
    def test_every_set_has_a_student_notebook(self):
        assert SLUGS, "no master notebooks in solutions/"
        for slug in SLUGS:
            assert (EXERCISES / slug / f"{slug}.ipynb").is_file(), f"exercises/{slug} is missing: run scripts/assign_exercises.py"

    @pytest.mark.parametrize("slug", SLUGS)
    def test_solution_scores_full_marks(self, graded, slug):
        subs, _ = graded
        s = subs[("solution", slug)]
        assert s["status"] == "graded", s["messages"]
        assert s["possible"] > 0
        lost = {q: r for q, r in s["questions"].items() if r["score"] != r["possible"]}
        assert not lost, f"{slug}: the solution loses points on {lost}"

    @pytest.mark.parametrize("slug", SLUGS)
    def test_untouched_student_notebook_scores_zero(self, graded, slug):
        subs, _ = graded
        s = subs[("student", slug)]
        assert s["status"] == "graded", s["messages"]
        assert len(s["questions"]) >= 3
        passing = {q: r["score"] for q, r in s["questions"].items() if r["score"] != 0}
        assert not passing, f"{slug}: a blank answer already earns points on {passing}"
        for q, r in s["questions"].items():
            assert r["possible"] > 0, f"{slug} {q} is worth no points"
            assert r["messages"], f"{slug} {q} fails without saying why"

    def test_report_prints_a_table_and_total(self, graded):
        _, stdout = graded
        assert re.search(r"^\s+question\s+score\s+of\s+note$", stdout, flags=re.M)
        assert re.search(r"^TOTAL \S+ / \S+ \(", stdout, flags=re.M)


# --------------------------------------------------------------------------- sync


def _nb_view(path: pathlib.Path) -> dict:
    """A notebook without volatile metadata: cell types, sources, tags; the otter metadata."""
    nb = nbformat.read(path, as_version=4)
    cells = [(c.cell_type, c.source, sorted(c.metadata.get("tags", []))) for c in nb.cells]
    return {"cells": cells, "otter": nb.metadata.get("otter")}


def tree_differences(a: pathlib.Path, b: pathlib.Path) -> list[str]:
    """Files that differ between two exercise trees (notebooks compared without volatile metadata)."""
    files = lambda root: {p.relative_to(root) for p in root.rglob("*") if p.is_file() and "__pycache__" not in p.parts
                          and ".ipynb_checkpoints" not in p.parts}
    fa, fb = files(a), files(b)
    diffs = [f"only in {a.name}: {p}" for p in sorted(fa - fb)] + [f"only in {b.name}: {p}" for p in sorted(fb - fa)]
    for rel in sorted(fa & fb):
        if rel.suffix == ".ipynb":
            same = _nb_view(a / rel) == _nb_view(b / rel)
        else:
            same = (a / rel).read_bytes() == (b / rel).read_bytes()
        if not same:
            diffs.append(f"differs: {rel}")
    return diffs


class TestSync:
    def test_exercises_match_solutions(self, regen):
        out, _ = regen
        diffs = tree_differences(EXERCISES, out)
        assert not diffs, "exercises/ is out of sync with solutions/; run scripts/assign_exercises.py:\n" + "\n".join(diffs)

    def test_sync_check_can_fail(self, regen, tmp_path):
        out, _ = regen
        import shutil

        copy = tmp_path / "exercises"
        shutil.copytree(out, copy)
        slug = SLUGS[0]
        nb = nbformat.read(copy / slug / f"{slug}.ipynb", as_version=4)
        nb.cells[1].source += "\nAn edit made by hand."
        nbformat.write(nb, copy / slug / f"{slug}.ipynb")
        (copy / slug / "tests" / "q1.py").write_text("# edited\n")
        assert len(tree_differences(copy, out)) == 2


# --------------------------------------------------------------------------- leaks


def _between(cells, begin: str, end: str):
    inside = False
    for c in cells:
        if c.cell_type == "raw" and c.source.strip().startswith(begin):
            inside = True
        elif c.cell_type == "raw" and c.source.strip().startswith(end):
            inside = False
        elif inside and c.cell_type == "code":
            yield c


def secret_snippets() -> dict[str, set[str]]:
    """Per set, lines of solution code and hidden-test text that students must not see.

    Solution code: every answer line (``... # SOLUTION``) and every line of a
    ``# BEGIN SOLUTION NO PROMPT`` block.  Hidden tests: their assertions and
    the lines that compute the expected value.  Text deliberately given to
    students (prompts, given code, public tests) is not secret.
    """
    out: dict[str, set[str]] = {}
    for slug in SLUGS:
        nb = nbformat.read(SOLUTIONS / slug / f"{slug}.ipynb", as_version=4)
        secrets, given = set(), []
        solution_ids = {id(c) for c in _between(nb.cells, "# BEGIN SOLUTION", "# END SOLUTION")}
        test_ids = {id(c) for c in _between(nb.cells, "# BEGIN TESTS", "# END TESTS")}
        for c in nb.cells:
            if c.cell_type == "markdown" or (c.cell_type == "code" and id(c) not in solution_ids | test_ids):
                given.append(c.source)
        for c in _between(nb.cells, "# BEGIN SOLUTION", "# END SOLUTION"):
            block = False
            for line in c.source.splitlines():
                s = line.strip()
                if s.startswith("# BEGIN SOLUTION"):
                    block = True
                elif s.startswith("# END SOLUTION"):
                    block = False
                elif s.endswith("# SOLUTION"):
                    secrets.add(s[: -len("# SOLUTION")].strip())
                elif block and len(s) >= 12 and not s.startswith(("#", "import ", "from ")):
                    secrets.add(s)
                else:
                    given.append(s)
        for c in _between(nb.cells, "# BEGIN TESTS", "# END TESTS"):
            body = c.source.split("# END TEST CONFIG", 1)[-1]
            if re.search(r"^hidden:\s*true", c.source, flags=re.M):
                for line in body.splitlines():
                    s = line.strip()
                    if s.startswith("assert ") or "expected" in s:
                        secrets.add(s)
            else:
                given.append(body)
        given_text = "\n".join(given)
        out[slug] = {s for s in secrets if s not in given_text}
    return out


def find_leaks(roots: list[pathlib.Path], snippets: dict[str, set[str]]) -> list[str]:
    leaks = []
    all_snippets = {s for v in snippets.values() for s in v}
    needles = {s: {s, html.escape(s), html.escape(s, quote=False), json.dumps(s)[1:-1]} for s in all_snippets}
    for root in roots:
        for f in sorted(p for p in root.rglob("*") if p.is_file()):
            if f.suffix in {".png", ".jpg", ".svg", ".woff", ".woff2", ".ttf", ".eot", ".ico", ".gif", ".zip", ".pyc"}:
                continue
            try:
                text = f.read_text(encoding="utf-8", errors="ignore")
            except OSError:
                continue
            for s, forms in needles.items():
                if any(form in text for form in forms):
                    leaks.append(f"{f.relative_to(ROOT) if f.is_relative_to(ROOT) else f}: {s[:80]}")
    return leaks


class TestLeaks:
    def test_secrets_are_found(self):
        snippets = secret_snippets()
        for slug in SLUGS:
            assert len(snippets[slug]) >= 3, f"{slug}: the leak scan found almost nothing to look for"

    def test_no_leak_in_exercises(self):
        leaks = find_leaks([EXERCISES], secret_snippets())
        assert not leaks, "solution code or hidden-test text in exercises/:\n" + "\n".join(leaks)

    def test_no_leak_in_built_book(self, built_site):
        assert built_site == BOOK_HTML
        leaks = find_leaks([BOOK_HTML], secret_snippets())
        assert not leaks, "solution code or hidden-test text in the built book:\n" + "\n".join(leaks)
        links = [f for f in BOOK_HTML.rglob("*.html") if re.search(r"href=\"[^\"]*solutions/", f.read_text(errors="ignore"))]
        assert not links, f"the book links to solutions/: {links}"

    def test_leak_scan_can_fail(self, tmp_path):
        snippets = secret_snippets()
        planted = sorted(snippets[SLUGS[0]])[0]
        (tmp_path / "page.html").write_text(f"<pre>{html.escape(planted)}</pre>")
        assert find_leaks([tmp_path], snippets)


# --------------------------------------------------------------------------- book page


class TestExercisesPage:
    def test_page_links_every_student_notebook_and_no_solution(self):
        page = (ROOT / "book" / "exercises.md").read_text()
        for slug in SLUGS:
            assert f"exercises/{slug}/{slug}.ipynb" in page, f"book/exercises.md does not link {slug}"
        assert "solutions/" not in page, "book/exercises.md must never point at solutions/"
