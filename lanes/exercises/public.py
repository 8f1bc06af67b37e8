"""The public form check that ``grader.check("qN")`` runs in JupyterLab (no values are checked)."""

from __future__ import annotations

import linecache
import re
import sys

from .forms import FormError
from .registry import get_set
from .variants import Variant, normalise_student

__all__ = ["last_error_in_cell_assigning", "public_check"]


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
        raise AssertionError("\n".join(problems))
    if student == "":
        print("Note: STUDENT is empty, so you are working the default variant. Type your "
              "identifier into the STUDENT cell, run it and the cell under it, then rerun your answers.")
