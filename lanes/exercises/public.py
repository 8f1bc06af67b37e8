"""The public form check that ``grader.check("qN")`` runs in JupyterLab (no values are checked).

A set's variant cell makes ``grader = lanes.exercises.Checks(slug)`` and
``V = grader.variant(STUDENT)``: the variant cell refuses a value that is not a
course token with one line (:data:`lanes.exercises.variants.NOT_A_TOKEN`; an empty one,
:data:`~lanes.exercises.variants.EMPTY_TOKEN`), and
``grader.check("qN")`` shows what it checked ("q1: form ok: q1_busy_slots is a
number; the value is graded by your instructor"), or the problems, one line
per answer. It never says "passed": only the grader judges values.

In IPython, importing this module (the variant cell imports ``lanes.exercises``)
registers a ``post_run_cell`` callback that remembers, for every name a cell
assigns, whether that cell last raised. A check after an answer cell that
raised then reports the exception, not the value left from an earlier run.
"""

from __future__ import annotations

import linecache
import re
import sys

from dataclasses import dataclass

from .forms import FormError
from .registry import get_set, slugs
from .variants import EMPTY_TOKEN, MISSING_TOKEN, SELF_STUDY, Variant, normalise_student, token_problem

__all__ = ["CheckFailed", "CheckReport", "Checks", "NotAToken", "last_error_in_cell_assigning", "public_check"]

_ASSIGNED = re.compile(r"^[ \t]*([A-Za-z_]\w*)[ \t]*(?::[^=\n]*)?=(?!=)", re.M)

#: name -> the first line of the error the last cell assigning it raised.
_FAILED_CELLS: dict[str, str] = {}


class CheckFailed(AssertionError):
    """A failed public check; its message is all the student needs to read."""


def _remember(result) -> None:
    """IPython ``post_run_cell`` callback: which assigned names come from a cell that raised."""
    source = getattr(getattr(result, "info", None), "raw_cell", "") or ""
    error = getattr(result, "error_in_exec", None) or getattr(result, "error_before_exec", None)
    for name in _ASSIGNED.findall(source):
        if error is not None:
            _FAILED_CELLS[name] = first_line(error)
        else:
            _FAILED_CELLS.pop(name, None)


def _register_with_ipython() -> None:
    ipython = sys.modules.get("IPython")
    shell = ipython.get_ipython() if ipython is not None else None
    if shell is None or getattr(shell, "_lanes_public_hook", False):
        return
    shell.events.register("post_run_cell", _remember)
    shell._lanes_public_hook = True


def first_line(exc: BaseException) -> str:
    """An exception's type and the first line of its message, cut at 160 characters (then "…"):
    how the check and the grader's box repeat an answer cell's error."""
    text = str(exc).strip().splitlines()
    return f"{type(exc).__name__}: {text[0][:160]}{'…' if len(text[0]) > 160 else ''}" if text else type(exc).__name__


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
            return first_line(exc)
        tb = tb.tb_next
    return None


def public_check(slug: str, question: str, env: dict, *, token_required: bool = False) -> None:
    """Check the form of every answer of ``question`` in the notebook's globals ``env``.

    Raises :class:`CheckFailed` with one line per problem; passing says nothing about the
    value, which only the grader checks, for the variant of the notebook's ``STUDENT``.
    With ``token_required`` (a set notebook as students get it), an empty ``STUDENT`` is a
    problem (:data:`~lanes.exercises.variants.EMPTY_TOKEN`); a missing one always is.
    """
    spec = get_set(slug)
    q = spec.question(question)
    problems, own = [], False
    student, shown = env.get("STUDENT", ""), env.get("V")
    mine = shown if isinstance(shown, Variant) and shown.slug == slug else None  # whose labels a choice takes
    if "STUDENT" not in env:
        problems.append(MISSING_TOKEN)
    elif type(student) is str:
        try:
            student = normalise_student(student)
            own = student == SELF_STUDY  # a reader without a course: the example variant
            student = "" if own else student
            if not student and token_required and not own:
                problems.append(EMPTY_TOKEN)
            elif student and token_problem(student):
                problems.append(f"STUDENT: {token_problem(student)}")
            elif isinstance(shown, Variant) and shown.slug == slug and shown.student != student:
                problems.append("V belongs to another STUDENT: run the variant cell again, then "
                                "rerun your answer cells so they use your variant's numbers")
            if not student or not token_problem(student):
                mine = spec.variant(student)  # the variant the grader grades
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
            value = form.check(env[var])
            foreign = mine.label_problem(var, value) if mine is not None and var in spec.options else None
            if foreign:
                raise FormError(foreign)
        except FormError as e:
            problems.append(f"{var} {e}")
    if problems:
        raise CheckFailed("\n".join(problems))
    if student == "" and "STUDENT" in env and not own:
        print("Note: STUDENT is empty, so you are working the default variant. Type your "
              "course token into the first code cell, run it, then rerun your answers.")


class NotAToken(ValueError):
    """``STUDENT`` is not a course token; IPython shows the message alone, as one line."""

    def _render_traceback_(self) -> list[str]:
        return [f"{type(self).__name__}: {self}"]


@dataclass(frozen=True)
class CheckReport:
    """What ``grader.check("qN")`` found: ``ok`` and the lines it shows (its ``repr``)."""

    question: str
    ok: bool
    lines: tuple[str, ...]

    def __repr__(self) -> str:
        return "\n".join(self.lines)


@dataclass(frozen=True)
class Checks:
    """The ``grader`` of a set notebook: ``grader.check("qN")`` checks the form of question qN's answers.

    Parameters
    ----------
    slug : str
        The exercise set, such as ``"01_slots_and_littles_law"``.
    token_required : bool
        True (a set notebook as students get it): an empty ``STUDENT`` is refused in one line
        (:data:`~lanes.exercises.variants.EMPTY_TOKEN`), since the default variant's numbers
        are nobody's in a course. False: the instructor's filled-in solutions, which work the
        default variant.
    """

    slug: str
    token_required: bool = True

    def __post_init__(self) -> None:
        try:
            get_set(self.slug if type(self.slug) is str else "")
        except KeyError:
            raise ValueError(f"slug must be one of the exercise sets {', '.join(slugs())} (got {self.slug!r:.60})") \
                from None

    def variant(self, student: object) -> Variant:
        """The variant of ``student`` (the notebook's ``STUDENT``; the default one for
        :data:`~lanes.exercises.variants.SELF_STUDY`, and for ``""`` without
        ``token_required``); :class:`NotAToken` (one line) for a value that is not a
        course token, such as a token with a character mistyped or a bare login, and for an
        empty one if ``token_required``."""
        s = normalise_student(student)
        if s == SELF_STUDY:
            return get_set(self.slug).variant("")
        if not s and self.token_required:
            raise NotAToken(EMPTY_TOKEN)
        if s and token_problem(s):
            raise NotAToken(token_problem(s))
        return get_set(self.slug).variant(s)

    def check(self, question: str, env: dict | None = None) -> CheckReport:
        """The form check of ``question`` against ``env`` (default: the calling notebook's globals)."""
        if env is None:
            env = sys._getframe(1).f_globals
        spec = get_set(self.slug).question(question)
        try:
            public_check(self.slug, question, env, token_required=self.token_required)
        except CheckFailed as e:
            return CheckReport(question, False, (f"{question}: form not ok:", *(f"  {ln}" for ln in str(e).splitlines())))
        forms = [f"{var} is {form.describe()}" for var, form in spec.answers]
        value = "the value is" if len(forms) == 1 else "the values are"
        return CheckReport(question, True, (f"{question}: form ok: {'; '.join(forms)}; {value} graded by your instructor",))


_register_with_ipython()
