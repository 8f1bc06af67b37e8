#!/usr/bin/env python
"""Write the student repository: this instructor's checkout without solutions, keys or secrets.

    python scripts/export_student_repo.py DEST            # DEST must not exist, or be empty
    python scripts/export_student_repo.py DEST --git      # and make it a git repository (one commit)

This checkout is the instructor's **private** repository: it holds ``solutions/`` (the master
notebooks and the answer keys ``key.py``), the course secret (``.lanes-course-secret``,
git-ignored), the grading package ``grading/`` with ``scripts/grade.py``, and the
instructor-only grading tests and workflows. The **public** repository,
``lanes-course/lanes`` (what the book's launch buttons, Binder, Colab and the setup cell point
at, and what students fork), is the export: push DEST there.

Only files git tracks are exported (so nothing git ignores, such as the secret or build
folders), minus :data:`PRIVATE`. Then the files under :data:`STUDENT_SIDE`
(``scripts/student_repo/``) are written over the export at the same paths: the ``README.md``
and ``book/grading.md`` that speak to students (how to open, work, check and hand in a set,
and what the grader does with it) in place of the instructor's, and the students' own
workflow ``.github/workflows/check.yml``, which runs ``scripts/check_sets.py`` (the public
form checks of every set started) on each push. Afterwards the export is checked: no
``key.py``, no notebook with solution markers, no file holding the course secret; any
finding stops with status 2. The export's own tests run there as they run here (those that
need ``solutions/`` or ``grading/`` skip, saying so).
"""

from __future__ import annotations

import argparse
import os
import pathlib
import shutil
import subprocess
import sys

ROOT = pathlib.Path(__file__).resolve().parents[1]

#: Paths (files or folders, relative to the root) that never leave the instructor's repository.
PRIVATE = (
    "solutions",
    "scripts/student_repo",  # written over the export (STUDENT_SIDE), not copied as it is
    ".lanes-course-secret",
    # the grading package and what runs or tests it: a student's repository neither needs
    # nor runs it (the public checks are lanes.exercises'); tests that share files with the
    # students' (tests/exercises/test_exercises.py, tests/exercises/test_sets_new.py) skip without solutions/
    "grading",
    "scripts/grade.py",
    "scripts/bench_grading.py",
    "scripts/bench_judge.py",
    ".github/workflows/grade.yml",
    ".github/workflows/grade-class.yml",
    "scripts/export_student_repo.py",
    "scripts/new_course.py",
    "tests/hostile/test_budgets.py",
    "tests/hostile/test_heldout.py",
    "tests/hostile/test_layouts.py",
    "tests/hostile/test_reading.py",
    "tests/lms_samples",
    "tests/grading",
)

#: Files written over the export at the same relative paths (the students' README, book/grading.md
#: and check workflow).
STUDENT_SIDE = ROOT / "scripts" / "student_repo"

#: Text that marks a master notebook (Otter Assign's solution markers).
MARKERS = ("# BEGIN SOLUTION", "# END SOLUTION")


def tracked_files(root: pathlib.Path) -> list[str]:
    """Files git tracks under ``root`` (as they are in the working tree), relative paths."""
    out = subprocess.run(["git", "-C", str(root), "ls-files", "-z"], capture_output=True, check=True)
    return [p for p in out.stdout.decode().split("\0") if p]


def is_private(rel: str) -> bool:
    parts = pathlib.PurePosixPath(rel).parts
    if parts and parts[-1] == "key.py":
        return True
    return any(rel == p or rel.startswith(p + "/") for p in PRIVATE)


def problems(dest: pathlib.Path, secret: str | None) -> list[str]:
    """What in ``dest`` must not be public (an empty list when nothing)."""
    found = []
    for p in sorted(dest.rglob("*")):
        if ".git" in p.relative_to(dest).parts or not p.is_file():
            continue
        rel = p.relative_to(dest).as_posix()
        if p.name == "key.py" or rel.startswith("solutions/"):
            found.append(f"{rel}: an answer key or a master")
            continue
        try:
            text = p.read_text(encoding="utf-8")
        except (UnicodeDecodeError, OSError):
            continue
        if secret and secret in text:
            found.append(f"{rel}: holds the course secret")
        if p.suffix == ".ipynb" and any(m in text for m in MARKERS):
            found.append(f"{rel}: a notebook with solution markers (a master)")
    return found


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("dest", type=pathlib.Path, help="the student repository to write (absent or empty)")
    ap.add_argument("--git", action="store_true", help="git init DEST and commit the export")
    args = ap.parse_args(argv)
    dest = args.dest.resolve()
    if dest.exists() and (not dest.is_dir() or any(dest.iterdir())):
        print(f"export_student_repo.py: {dest} exists and is not an empty folder", file=sys.stderr)
        return 2
    if dest == ROOT or ROOT in dest.parents:
        print(f"export_student_repo.py: DEST must lie outside this checkout (got {dest})", file=sys.stderr)
        return 2
    try:
        files = tracked_files(ROOT)
    except (OSError, subprocess.CalledProcessError):
        print("export_student_repo.py: run it in the instructor's git checkout (git ls-files failed)", file=sys.stderr)
        return 2
    secret_file = pathlib.Path(os.environ.get("LANES_COURSE_SECRET_FILE", ROOT / ".lanes-course-secret"))
    secret = secret_file.read_text().strip() if secret_file.is_file() else None
    kept = 0
    for rel in files:
        src = ROOT / rel
        if is_private(rel) or not src.is_file() or src.is_symlink():
            continue
        out = dest / rel
        out.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(src, out)
        kept += 1
    for src in sorted(p for p in STUDENT_SIDE.rglob("*") if p.is_file() and not p.is_symlink()):
        out = dest / src.relative_to(STUDENT_SIDE)
        kept += not out.exists()
        out.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(src, out)
    found = problems(dest, secret)
    if found:
        print("export_student_repo.py: the export is not public-safe:\n  " + "\n  ".join(found[:20]), file=sys.stderr)
        return 2
    if args.git:
        for cmd in (["git", "init", "-q"], ["git", "add", "-A"],
                    ["git", "-c", "user.name=lanes export", "-c", "user.email=export@localhost",
                     "commit", "-q", "-m", "Student repository (exported from the instructor's checkout)"]):
            subprocess.run(cmd, cwd=dest, check=True)
    print(f"wrote the student repository to {dest}: {kept} files; no solutions/, key, master or secret")
    return 0


if __name__ == "__main__":
    sys.exit(main())
