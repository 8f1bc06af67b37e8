#!/usr/bin/env python
"""Regenerate the student exercises from the master notebooks with Otter Assign.

    python scripts/assign_exercises.py                 # execute masters, regenerate everything
    python scripts/assign_exercises.py 03_headroom     # one set only
    python scripts/assign_exercises.py --no-execute    # masters are already executed
    python scripts/assign_exercises.py --normalise-only  # re-apply the student-notebook rules only

For each master ``solutions/NN_slug/NN_slug.ipynb`` (Otter Assign format v1):

1. execute it in place (Otter Assign needs executed masters), from its folder,
   with the repository root on ``PYTHONPATH`` so ``import lanes`` works;
2. run ``otter assign`` into a temporary folder (which also runs every test,
   hidden ones included, against the solutions and fails if one does not pass);
3. copy the student notebook to ``exercises/NN_slug/set_NN_slug.ipynb`` (:func:`student_file`:
   the ``set_`` tells its JupyterLab tab from the chapter's), with volatile
   metadata removed (outputs, timings, random cell ids), so that regenerating
   an unchanged master gives byte-identical files;
4. write the filled-in solutions notebook, in student layout, to
   ``build/exercises/solutions/NN_slug.ipynb`` (git-ignored): a perfect submission
   of the default variant, which the grading tests use.

The student notebook is marked with its set (``metadata.lanes.set``), so a renamed
copy is still graded. It needs no Otter and no ``tests/`` folder: Otter's init cell
(which sat above the title, and without which ``grader.check`` raised NameError) is
removed, and the master's ``STUDENT`` cell and variant cell become **one first code
cell** (:func:`first_cell`): the student types the token and runs that cell, which sets
``grader = lanes.exercises.Checks(slug)`` and refuses a value that is not a course token,
an empty one included (``V = grader.variant(STUDENT)``); ``grader.check("qN")`` then says what it checked, never
"passed". The master's questions and points must match the set's spec in
``lanes/exercises/sets/``; the answer key ``solutions/NN_slug/key.py`` never leaves
``solutions/``. Grading does not use Otter's autograder: see ``scripts/grade.py``.

``--out`` and ``--build-dir`` redirect steps 3 and 4; the exercises test
uses them to regenerate into a temporary folder and compare with ``exercises/``.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import pathlib
import shutil
import sys
import tempfile
import time

ROOT = pathlib.Path(__file__).resolve().parents[1]
SOLUTIONS = ROOT / "solutions"
EXERCISES = ROOT / "exercises"
BUILD_DIR = ROOT / "build" / "exercises"


def masters(slugs: list[str] | None = None) -> list[pathlib.Path]:
    """Master notebooks ``solutions/NN_slug/NN_slug.ipynb``, in order."""
    found = sorted(p / f"{p.name}.ipynb" for p in SOLUTIONS.iterdir() if (p / f"{p.name}.ipynb").is_file())
    if slugs:
        by_slug = {m.stem: m for m in found}
        unknown = [s for s in slugs if s not in by_slug]
        if unknown:
            raise SystemExit(f"unknown exercise set(s): {', '.join(unknown)} (have: {', '.join(by_slug)})")
        found = [by_slug[s] for s in slugs]
    return found


def _env_with_root() -> None:
    paths = [str(ROOT)] + [p for p in os.environ.get("PYTHONPATH", "").split(os.pathsep) if p]
    os.environ["PYTHONPATH"] = os.pathsep.join(dict.fromkeys(paths))


def execute_master(path: pathlib.Path, timeout_s: int = 300) -> None:
    """Execute a master notebook in place, stopping at the first error."""
    import nbformat
    from nbclient import NotebookClient

    nb = nbformat.read(path, as_version=4)
    NotebookClient(
        nb, timeout=timeout_s, kernel_name="python3", record_timing=False,
        resources={"metadata": {"path": str(path.parent)}},
    ).execute()
    normalize(nb, keep_outputs=True)
    nbformat.write(nb, path)


def _runner():
    import importlib.util

    spec = importlib.util.spec_from_file_location("run_notebooks", ROOT / "scripts" / "run_notebooks.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _savehook():
    import importlib.util

    spec = importlib.util.spec_from_file_location("lanes_savehook", ROOT / "lanes" / "display" / "savehook.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def normalize(nb, *, keep_outputs: bool) -> None:
    """Drop volatile metadata: timings, random cell ids, and (students) outputs.

    Kept outputs (the masters') get the save rules of ``lanes.display.savehook``
    (no widget views, consecutive streams merged), as ``scripts/run_notebooks.py``
    and JupyterLab's save write them.
    """
    _savehook().clean_notebook(nb)
    for i, cell in enumerate(nb.cells):
        cell["id"] = f"c{i:03d}"
        cell.metadata.pop("execution", None)
        if cell.cell_type == "code" and not keep_outputs:
            cell.outputs = []
            cell.execution_count = None
    nb.metadata.pop("widgets", None)
    # What JupyterLab writes on opening (version included): committed, so that
    # opening a set in JupyterLab does not change the file.
    nb.metadata["language_info"] = json.loads(json.dumps(_runner().LANGUAGE_INFO))


def check_against_spec(master: pathlib.Path) -> None:
    """The master's questions and points are those of the set's spec; SystemExit otherwise."""
    import nbformat

    from lanes.exercises import get_set

    slug = master.stem
    try:
        spec = get_set(slug)
    except KeyError as e:
        raise SystemExit(f"{slug}: no set module defines it ({e}); add lanes/exercises/sets/set_NN.py")
    nb = nbformat.read(master, as_version=4)
    found = []
    for cell in nb.cells:
        if cell.cell_type == "raw" and cell.source.lstrip().startswith("# BEGIN QUESTION"):
            name = re.search(r"^name:\s*(\w+)", cell.source, re.M)
            pts = re.search(r"^points:\s*([0-9.]+)", cell.source, re.M)
            found.append((name and name.group(1), pts and float(pts.group(1))))
    wanted = [(q.name, float(q.points)) for q in spec.questions]
    if found != wanted:
        raise SystemExit(f"{slug}: the master's questions {found} differ from the spec's {wanted}")
    if not (master.parent / "key.py").is_file():
        raise SystemExit(f"{slug}: no answer key {master.parent / 'key.py'}")


#: The first code cell's comment: the one place a student reads what to do first.
TOKEN_COMMENT = ('# Type your course token between the quotes (e.g. "jdoe42-k7f3q2"), then run\n'
                 "# this cell: it checks the token, prints your variant and sets up grader.check.\n")

#: What the master's title cell says of the two cells, and what the student's says of the one.
_TWO_CELLS = re.compile(r"between the quotes in the `STUDENT` cell, then run the cell\s+after it:")
ONE_CELL = "between the quotes in the first code cell, `STUDENT = \"\"`,\nand run that cell:"
#: What the master's title cell says of the default variant's labels, which a student's notebook
#: never shows (it refuses an empty STUDENT), and what the student's says instead.
_DEFAULT_LABELS = re.compile(r' \(the default variant labels its options `"a"` to `"d"`\)\.')
OWN_LABELS = "; the check refuses a label that is not one of yours."


#: The title cell's last paragraph: what a student hands in, and how (``{file}``: :func:`student_file`).
HAND_IN = """**How to hand it in.** Hand in this notebook file, `{file}`, and keep its name (the
grader knows the set from the file itself, but your instructor reads the name). Before you do:
your token is between the quotes of `STUDENT` in the first code cell; *Kernel > Restart Kernel
and Run All Cells* runs every cell from the top without an error; and every `grader.check("qN")`
cell says "form ok". Then upload the file to this set's assignment in your course's LMS (or
commit and push it, in a GitHub Classroom repository), as your instructor says. The grader runs
the notebook again from the top for your variant, so only what its cells compute counts."""


def student_file(slug: str) -> str:
    """The student notebook's file name in ``exercises/<slug>/``: ``set_<slug>.ipynb``.

    Not the chapter's name (``<slug>.ipynb``), so two JupyterLab tabs never read the same.
    """
    return f"set_{slug}.ipynb"


def first_cell(student: str, variant: str, *, token_required: bool = True) -> str:
    """The student's first code cell, made from the master's ``STUDENT`` cell and variant cell.

    :data:`TOKEN_COMMENT`, the ``STUDENT = ...`` line, then the variant cell's code with
    ``grader = lanes.exercises.Checks(slug)`` and ``V = grader.variant(STUDENT)`` in place of
    ``V = lanes.exercises.variant(slug, STUDENT)`` (its leading comment dropped). The student's
    ``Checks`` refuses an empty ``STUDENT``; with ``token_required=False`` (the filled-in
    solutions, which work the default variant) it is ``Checks(slug, token_required=False)``.
    """
    token = re.search(r"^STUDENT = .*$", student, re.M).group(0)
    code = re.sub(r"\A(?:#[^\n]*\n)+", "", variant)
    flag = "" if token_required else ", token_required=False"
    code = re.sub(r"^V = lanes\.exercises\.variant\((\"[0-9a-z_]+\"), STUDENT\)$",
                  lambda m: f"grader = lanes.exercises.Checks({m.group(1)}{flag})\nV = grader.variant(STUDENT)",
                  code, count=1, flags=re.M)
    return f"{TOKEN_COMMENT}{token}\n\n{code}"


def _is_otter_init(cell) -> bool:
    return cell.cell_type == "code" and "otter.Notebook(" in cell.source and "import otter" in cell.source


def student_notebook(nb, slug: str, *, token_required: bool = True) -> None:
    """Mark the set in the metadata, drop Otter's init cell, and make the ``STUDENT`` cell and
    the variant cell one first code cell (:func:`first_cell`, ``token_required`` passed on);
    the title cell says so, and ends with :data:`HAND_IN`."""
    nb.metadata["lanes"] = {"set": slug}
    nb.cells = [cell for cell in nb.cells if not _is_otter_init(cell)]
    code = [c for c in nb.cells if c.cell_type == "code"]
    if len(code) >= 2 and re.search(r"^STUDENT = ", code[0].source, re.M) \
            and re.search(r"^V = .*STUDENT\)$", code[1].source, re.M):
        code[0].source = first_cell(code[0].source, code[1].source, token_required=token_required)
        nb.cells.remove(code[1])
    for cell in nb.cells:
        if cell.cell_type == "markdown":
            cell.source = _TWO_CELLS.sub(ONE_CELL, cell.source)
            if token_required:
                cell.source = _DEFAULT_LABELS.sub(OWN_LABELS, cell.source)
    title = next((c for c in nb.cells if c.cell_type == "markdown"), None)
    if title is not None and "**How to hand it in.**" not in title.source:
        title.source = title.source.rstrip("\n") + "\n\n" + HAND_IN.format(file=student_file(slug))


def normalise_students(out_root: pathlib.Path = EXERCISES) -> list[pathlib.Path]:
    """Apply :func:`student_notebook` and :func:`normalize` to the student notebooks already
    in ``out_root`` (no Otter, no execution), under their :func:`student_file` names (a set
    still named like its chapter is renamed); returns the files written.

    The same steps :func:`assign_one` applies, so a later full regeneration agrees.
    """
    import nbformat

    changed = []
    for path in sorted(out_root.glob("*/*.ipynb")):
        before = path.read_text(encoding="utf-8")
        nb = nbformat.reads(before, as_version=4)
        student_notebook(nb, path.parent.name)
        normalize(nb, keep_outputs=False)
        after = nbformat.writes(nb)
        after += "" if after.endswith("\n") else "\n"
        dest = path.with_name(student_file(path.parent.name))
        if after != before or dest != path:
            dest.write_text(after, encoding="utf-8")
            if dest != path:
                path.unlink()
            changed.append(dest)
    return changed


def solution_notebook(master: pathlib.Path, student: str = ""):
    """A filled-in student notebook made straight from a master, without Otter: its code
    cells minus the test cells, solution markers removed, ``STUDENT`` set to ``student``.
    What a perfect submission of ``student`` looks like (used by the grading tests)."""
    import nbformat

    nb = nbformat.read(master, as_version=4)
    cells = []
    for cell in nb.cells:
        if cell.cell_type == "raw" or "# BEGIN TEST CONFIG" in cell.source:
            continue
        if cell.cell_type == "code":
            lines = [ln for ln in cell.source.splitlines()
                     if ln.strip() not in ("# BEGIN SOLUTION NO PROMPT", "# BEGIN SOLUTION", "# END SOLUTION")]
            src = "\n".join(re.sub(r"\s*# SOLUTION$", "", ln) for ln in lines)
            if re.match(r"^(#[^\n]*\n)*STUDENT = ", src):
                src = re.sub(r"^STUDENT = .*$", f"STUDENT = {student!r}", src, flags=re.M)
            cell = nbformat.v4.new_code_cell(src)
        cells.append(cell)
    out = nbformat.v4.new_notebook(cells=cells, metadata=dict(nb.metadata))
    student_notebook(out, master.stem, token_required=False)
    return out


def assign_one(master: pathlib.Path, out_root: pathlib.Path, ag_root: pathlib.Path, *, run_tests: bool = True) -> None:
    """Run Otter Assign on one master and place its outputs."""
    import nbformat
    from otter.assign import main as otter_assign

    check_against_spec(master)
    slug = master.stem
    with tempfile.TemporaryDirectory(prefix=f"assign-{slug}-") as tmp:
        dist = pathlib.Path(tmp) / "dist"
        otter_assign(str(master), str(dist), no_pdfs=True, no_run_tests=not run_tests)
        student = dist / "student"
        dest = out_root / slug
        if dest.exists():
            shutil.rmtree(dest)
        dest.mkdir(parents=True)
        # The notebook only: Otter's tests/ folder is not used (grader.check is lanes').
        nb = nbformat.read(student / f"{slug}.ipynb", as_version=4)
        student_notebook(nb, slug)
        normalize(nb, keep_outputs=False)
        nbformat.write(nb, dest / student_file(slug))
        # The solutions notebook in student layout (answers filled in, tests
        # removed): what a perfect submission looks like.  Build folder only.
        sol = nbformat.read(dist / "autograder" / f"{slug}.ipynb", as_version=4)
        student_notebook(sol, slug, token_required=False)
        normalize(sol, keep_outputs=False)
        (ag_root / "solutions").mkdir(parents=True, exist_ok=True)
        nbformat.write(sol, ag_root / "solutions" / f"{slug}.ipynb")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("slugs", nargs="*", help="exercise sets to regenerate (default: all)")
    ap.add_argument("--no-execute", action="store_true", help="do not re-execute the master notebooks first")
    ap.add_argument("--no-run-tests", action="store_true", help="skip running the tests against the solutions")
    ap.add_argument("--out", type=pathlib.Path, default=EXERCISES, help="student output root (default: exercises/)")
    ap.add_argument("--build-dir", "--autograder-dir", dest="build_dir", type=pathlib.Path, default=BUILD_DIR,
                    help="where the filled-in solutions notebooks go (default: build/exercises/)")
    ap.add_argument("--normalise-only", action="store_true",
                    help="only re-apply the student-notebook rules to exercises/ (no Otter, no execution)")
    args = ap.parse_args(argv)
    # as in grade.py: jsonschema (under nbformat and Otter) would build rfc3987_syntax's 39
    # grammars at import, about 3 s of CPU; no schema here uses the "iri" formats they check
    sys.modules.setdefault("rfc3987_syntax", None)  # type: ignore[assignment]

    if args.normalise_only:
        for path in normalise_students(args.out.resolve()):
            print(f"{path}: normalised", flush=True)
        return 0
    _env_with_root()
    for master in masters(args.slugs):
        t0 = time.perf_counter()
        if not args.no_execute:
            execute_master(master)
        assign_one(master, args.out.resolve(), args.build_dir.resolve(), run_tests=not args.no_run_tests)
        print(f"{master.stem}: {time.perf_counter() - t0:.1f} s", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
