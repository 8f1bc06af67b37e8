"""Graded exercises: answer forms, per-student variants, set specs, public checks and the judge.

The top-most part of the package: it may import every other part. In a set notebook::

    STUDENT = "jdoe42-k7f3q2"                       # the course token (a check character ends it)
    grader = lanes.exercises.Checks("01_slots_and_littles_law")
    V = grader.variant(STUDENT)   # refuses a mistyped or empty token; the parameters as V.<name>
    grader.check("q1")            # the form of q1's answer (values are graded by the instructor)

See ``solutions/AUTHORING.md`` for how a set is written and graded.
"""

from __future__ import annotations

from .forms import Choice, Float, Form, FormError, Int, Seq, Str, to_plain
from .public import Checks, public_check
from .registry import all_sets, get_set, slugs
from .spec import Question, SetSpec
from .variants import Variant

__all__ = [
    "Checks", "Choice", "Float", "Form", "FormError", "Int", "Question", "Seq", "SetSpec", "Str", "Variant",
    "all_sets", "get_set", "public_check", "slugs", "to_plain", "variant",
]


def variant(slug: str, student: str = "") -> Variant:
    """The parameters of set ``slug`` for ``student`` (the default variant for ``""``)."""
    return get_set(slug).variant(student)
