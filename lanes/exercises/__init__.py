"""Graded exercises: answer forms, per-student variants, set specs, public checks and the judge.

The top-most part of the package: it may import every other part. In a set notebook::

    STUDENT = "jdoe42"
    V = lanes.exercises.variant("01_slots_and_littles_law", STUDENT)
    print(V)            # the parameters of your variant, as V.<name>

See ``solutions/AUTHORING.md`` for how a set is written and graded.
"""

from __future__ import annotations

from .forms import Choice, Float, Form, FormError, Int, Seq, Str, to_plain
from .public import public_check
from .registry import all_sets, get_set, slugs
from .spec import Question, SetSpec
from .variants import Variant

__all__ = [
    "Choice", "Float", "Form", "FormError", "Int", "Question", "Seq", "SetSpec", "Str", "Variant",
    "all_sets", "get_set", "public_check", "slugs", "to_plain", "variant",
]


def variant(slug: str, student: str = "") -> Variant:
    """The parameters of set ``slug`` for ``student`` (the default variant for ``""``)."""
    return get_set(slug).variant(student)
