#!/usr/bin/env python
"""The public form check of your set notebooks, from the command line (what ``grader.check`` says).

    python scripts/check_sets.py                                   # every set you have started
    python scripts/check_sets.py exercises/03_headroom/set_03_headroom.ipynb

For each set notebook (its metadata names its set) whose ``STUDENT`` is filled in, every
code cell runs from the top, in order, in one IPython shell (as *Restart Kernel and Run All
Cells* does; the ``grader.check`` cells are left for the end), then every question's form
check runs and prints one line, "q1: form ok: ..." or "q1: form not ok:" and the
problems. A notebook whose ``STUDENT`` is still empty is not started: one line says so,
and it is not a failure. The exit status is 1 when a check failed or a cell raised, else 0.

Like ``grader.check`` it looks at the **form** of each answer only, never at its value:
points come from your instructor's grader, which runs the notebook again for your variant.
The student repository's workflow ``.github/workflows/check.yml`` runs this on every push.
"""

from __future__ import annotations

import argparse
import contextlib
import io
import json
import os
import pathlib
import re
import sys

ROOT = pathlib.Path(__file__).resolve().parents[1]
_CHECK = re.compile(r"^\s*grader\.check(?:_all)?\((?:\"\w*\"|'\w*')?\)\s*$")
_STUDENT = re.compile(r"^STUDENT\s*=\s*(['\"])(.*?)\1", re.M)


def set_of(nb: dict) -> str | None:
    """The set a notebook's metadata names (``metadata.lanes.set``), or ``None``."""
    meta = nb.get("metadata") if isinstance(nb.get("metadata"), dict) else {}
    block = meta.get("lanes") if isinstance(meta.get("lanes"), dict) else {}
    return block.get("set") if isinstance(block.get("set"), str) else None


def check_notebook(path: pathlib.Path) -> tuple[int, list[str]]:
    """``(problems, lines)`` for one set notebook (see the module docstring)."""
    from IPython.core.interactiveshell import InteractiveShell

    import lanes.exercises
    from lanes.exercises.public import first_line

    nb = json.loads(path.read_text(encoding="utf-8"))
    slug = set_of(nb)
    if slug is None:
        return 1, [f"{path}: not a set notebook (its metadata names no set): hand in "
                   "exercises/NN_slug/set_NN_slug.ipynb"]
    cells = ["".join(c["source"]) if isinstance(c.get("source"), list) else str(c.get("source", ""))
             for c in nb.get("cells", []) if c.get("cell_type") == "code"]
    typed = next((m.group(2) for m in map(_STUDENT.search, cells) if m), None)
    if typed is not None and not typed.strip():
        return 0, [f"{path}: not started (STUDENT is empty): nothing to check"]
    shell = InteractiveShell.instance()
    shell.reset(new_session=True)
    os.environ.setdefault("MPLBACKEND", "Agg")
    lines, problems = [f"{path} [{slug}]"], 0
    here = os.getcwd()
    os.chdir(path.parent)
    try:
        for i, source in enumerate(cells):
            if not source.strip() or _CHECK.match(source):
                continue
            with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
                result = shell.run_cell(source, store_history=False, silent=True)
            error = result.error_before_exec or result.error_in_exec
            if error is not None:
                problems += 1
                lines.append(f"  code cell {i + 1} raised {first_line(error)}")
    finally:
        os.chdir(here)
    grader = lanes.exercises.Checks(slug)
    for q in lanes.exercises.get_set(slug).questions:
        report = grader.check(q.name, shell.user_ns)
        problems += not report.ok
        lines += [f"  {line}" for line in repr(report).splitlines()]
    return problems, lines


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("notebooks", nargs="*", type=pathlib.Path,
                    help="set notebooks (default: every exercises/*/set_*.ipynb)")
    args = ap.parse_args(argv)
    paths = args.notebooks or sorted((ROOT / "exercises").glob("*/set_*.ipynb"))
    if not paths:
        print("check_sets.py: no set notebooks found", file=sys.stderr)
        return 2
    total = 0
    for path in paths:
        try:
            problems, lines = check_notebook(path.resolve())
        except (OSError, ValueError) as e:
            problems, lines = 1, [f"{path}: cannot be read ({type(e).__name__}: {e})"]
        total += problems
        print("\n".join(lines), flush=True)
    print(f"{total} problem(s). Form checks only: the values are graded by your instructor.")
    return 1 if total else 0


if __name__ == "__main__":
    sys.exit(main())
