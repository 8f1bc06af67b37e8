"""Step 1 of grading: execute a student notebook and export only its answers, as plain JSON.

Run by ``scripts/grade.py`` inside the sandbox (an unprivileged user, resource limits,
a scratch folder holding only the notebook)::

    python -E -s -c BOOT NOTEBOOK OUT_JSON SLUG

Every code cell runs in order in one IPython shell (no kernel, no Otter: the form checks
and the init cell are skipped, since they need the tests folder, which is not here). A cell
that raises is recorded (its index and the exception's first line) and execution goes on.
Then an export cell appended to the notebook converts the set's answer variables (and
``STUDENT``) with :func:`lanes.exercises.forms.to_plain` and writes them to ``OUT_JSON``. Nothing this
process writes is trusted: the grader reads the JSON as data and checks every value again.
"""

from __future__ import annotations

import json
import os
import re
import sys

_SKIP = re.compile(r"^\s*(?:#[^\n]*\n\s*)*(?:import otter\s*\n\s*grader\s*=\s*otter\.Notebook\([^)]*\)"
                   r"|grader\.check(?:_all)?\((?:\"\w*\"|'\w*')?\))\s*$")


def _first_line(ename: str, evalue: str) -> str:
    lines = str(evalue).strip().splitlines()
    return f"{ename}: {lines[0][:160]}" if lines else ename


def export(namespace: dict, path: str, slug: str, errors: list) -> None:
    """Write the answers found in ``namespace`` (the export cell calls this)."""
    from lanes.exercises.forms import FormError, to_plain
    from lanes.exercises.registry import get_set

    answers, refused = {}, {}
    for q in get_set(slug).questions:
        for var, form in q.answers:
            if var not in namespace:
                continue
            try:
                answers[var] = to_plain(namespace[var], form.describe())
            except FormError as e:
                refused[var] = str(e)
            except Exception as e:  # a hostile object raising from a conversion
                refused[var] = f"could not be read ({type(e).__name__})"
    student = namespace.get("STUDENT", "")
    data = {"answers": answers, "refused": refused, "errors": errors,
            "student": student if type(student) is str else None}
    with open(path, "w") as f:
        json.dump(data, f)


class _NoChecks:
    """Stands in for Otter's ``grader``: checks are skipped while grading."""

    def __getattr__(self, name):
        return lambda *args, **kwargs: None


def main(argv: list | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    nb_path, out_path, slug = argv[0], argv[1], argv[2]
    with open(nb_path, encoding="utf-8") as f:
        nb = json.load(f)
    cells = [(i, c) for i, c in enumerate(nb.get("cells", [])) if c.get("cell_type") == "code"]
    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, 1)
    os.dup2(devnull, 2)
    os.environ.setdefault("MPLBACKEND", "Agg")
    from IPython.core.interactiveshell import InteractiveShell
    from traitlets.config import Config

    config = Config()
    config.HistoryManager.enabled = False
    shell = InteractiveShell.instance(config=config, colors="nocolor")
    shell.user_ns["grader"] = _NoChecks()  # form checks need tests/, which is not here
    errors = []
    for index, cell in cells:
        source = cell.get("source", "")
        source = "".join(source) if isinstance(source, list) else str(source)
        if not source.strip() or _SKIP.match(source):
            continue
        result = shell.run_cell(source, store_history=True, silent=False)
        err = result.error_before_exec or result.error_in_exec
        if err is not None:
            errors.append({"cell": index, "error": _first_line(type(err).__name__, err)})
    errors = errors[:100]
    shell.user_ns["__lanes_export_args__"] = (out_path, slug, errors)
    shell.run_cell("__import__('grading.runner', fromlist=['export'])"
                   ".export(globals(), *__lanes_export_args__)", store_history=False)
    return 0


if __name__ == "__main__":
    sys.exit(main())
