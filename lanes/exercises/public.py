"""The public form check that ``grader.check("qN")`` runs in JupyterLab (no values are checked).

What a student reads when a check fails is the problem itself, one line per
answer: Otter's own frame ("Error at line 12 in test q1: public_check(...)")
is left out for the failures raised here (:class:`CheckFailed`).

In IPython, importing this module (the variant cell imports ``lanes.exercises``)
registers a ``post_run_cell`` callback that remembers, for every name a cell
assigns, whether that cell last raised. A check after an answer cell that
raised then reports the exception, not the value left from an earlier run.
"""

from __future__ import annotations

import linecache
import re
import sys

from .forms import FormError
from .registry import get_set
from .variants import Variant, normalise_student

__all__ = ["CheckFailed", "last_error_in_cell_assigning", "public_check"]

_ASSIGNED = re.compile(r"^[ \t]*([A-Za-z_]\w*)[ \t]*(?::[^=\n]*)?=(?!=)", re.M)

#: name -> the first line of the error the last cell assigning it raised.
_FAILED_CELLS: dict[str, str] = {}


class CheckFailed(AssertionError):
    """A failed public check; its message is all the student needs to read."""


def _patch_otter() -> None:
    """Make Otter show a :class:`CheckFailed` as its message alone, without its own frame.

    Only where Otter's test runner is already loaded (it is while ``grader.check`` runs a
    test, which is when :func:`public_check` calls this): importing Otter costs seconds,
    and a notebook graded in the box, or plain Python, never needs it.
    """
    module = sys.modules.get("otter.test_files.exception_test")
    ExceptionTestFile = getattr(module, "ExceptionTestFile", None)
    if ExceptionTestFile is None:  # no Otter here: nothing to patch
        return
    original = ExceptionTestFile._generate_error_message
    if getattr(original, "_lanes", False):
        return

    def message(self, excp, context=0):
        if isinstance(excp, CheckFailed):
            return str(excp)
        return original(self, excp, context)

    message._lanes = True
    ExceptionTestFile._generate_error_message = message


def _remember(result) -> None:
    """IPython ``post_run_cell`` callback: which assigned names come from a cell that raised."""
    source = getattr(getattr(result, "info", None), "raw_cell", "") or ""
    error = getattr(result, "error_in_exec", None) or getattr(result, "error_before_exec", None)
    for name in _ASSIGNED.findall(source):
        if error is not None:
            _FAILED_CELLS[name] = _first_line(error)
        else:
            _FAILED_CELLS.pop(name, None)


def _register_with_ipython() -> None:
    ipython = sys.modules.get("IPython")
    shell = ipython.get_ipython() if ipython is not None else None
    if shell is None or getattr(shell, "_lanes_public_hook", False):
        return
    shell.events.register("post_run_cell", _remember)
    shell._lanes_public_hook = True


def _first_line(exc: BaseException) -> str:
    text = str(exc).strip().splitlines()
    return f"{type(exc).__name__}: {text[0][:160]}" if text else type(exc).__name__


def last_error_in_cell_assigning(var: str) -> str | None:
    """The last error of this kernel if it came from a cell that assigns ``var``, else None."""
    exc = getattr(sys, "last_value", None)
    if exc is None:
        return None
    tb = exc.__traceback__
    pattern = re.compile(rf"^\s*{re.escape(var)}\s*(?::[^=\n]*)?=(?!=)", re.M)
    while tb is not None:
        source = "".join(linecache.getlines(tb.tb_frame.f_code.co_filename))
        if pattern.search(source):
            return _first_line(exc)
        tb = tb.tb_next
    return None


def public_check(slug: str, question: str, env: dict) -> None:
    """Check the form of every answer of ``question`` in the notebook's globals ``env``.

    Raises ``AssertionError`` with one line per problem; passing says nothing about the
    value, which only the grader checks, for the variant of the notebook's ``STUDENT``.
    """
    _patch_otter()
    spec = get_set(slug)
    q = spec.question(question)
    problems = []
    student, shown = env.get("STUDENT", ""), env.get("V")
    if isinstance(shown, Variant) and type(student) is str and shown.slug == slug:
        try:
            if shown.student != normalise_student(student):
                problems.append("V belongs to another STUDENT: run the variant cell again, then "
                                "rerun your answer cells so they use your variant's numbers")
        except ValueError as e:
            problems.append(str(e))
    for var, form in q.answers:
        if var in _FAILED_CELLS:
            problems.append(f"{var}: the last run of its answer cell raised {_FAILED_CELLS[var]}. "
                            "Fix the cell and run it again.")
            continue
        if var not in env:
            err = last_error_in_cell_assigning(var)
            if err:
                problems.append(f"{var}: its answer cell raised {err}. Fix the cell and run it again.")
            else:
                problems.append(f"{var} is not defined: run its answer cell first")
            continue
        try:
            form.check(env[var])
        except FormError as e:
            problems.append(f"{var} {e}")
    if problems:
        raise CheckFailed("\n".join(problems))
    if student == "":
        print("Note: STUDENT is empty, so you are working the default variant. Type your "
              "identifier into the STUDENT cell, run it and the cell under it, then rerun your answers.")


_patch_otter()
_register_with_ipython()
