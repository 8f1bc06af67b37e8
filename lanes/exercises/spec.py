"""What an exercise set is: its questions, their answers' forms and points, and its variants."""

from __future__ import annotations

import random
from dataclasses import dataclass, field
from typing import Callable

from .forms import CHOICE_LABELS, Choice, Form
from .variants import Variant, normalise_student, rng_for

__all__ = ["Question", "SetSpec"]


@dataclass(frozen=True)
class Question:
    """One graded question.

    Attributes
    ----------
    name : str
        ``"q1"``, ``"q2"``, ... as in the notebook and its ``grader.check`` cell.
    points : float
        Points the question is worth.
    answers : tuple of (str, Form)
        The notebook variables the question reads, and the form each must have.
    open_ended : bool
        True when many answers are right and the key judges the one given (a design choice
        such as the capstone's configuration) rather than comparing it with one value. Such
        answers are not scanned against the chapters' outputs.
    """

    name: str
    points: float
    answers: tuple
    open_ended: bool = False

    def __post_init__(self) -> None:
        if isinstance(self.answers, dict):
            object.__setattr__(self, "answers", tuple(self.answers.items()))
        if not self.answers:
            raise ValueError(f"{self.name}: answers must name at least one variable")
        for var, form in self.answers:
            if not (isinstance(var, str) and var.isidentifier() and isinstance(form, Form)):
                raise ValueError(f"{self.name}: answers must map variable names to Form objects")
        if not self.points > 0:
            raise ValueError(f"{self.name}: points must be > 0 (got {self.points})")


@dataclass(frozen=True)
class SetSpec:
    """An exercise set: slug, questions, and how its variants are drawn.

    Attributes
    ----------
    slug : str
        ``"NN_slug"``: the folder under ``solutions/`` and ``exercises/``.
    questions : tuple of Question
    default : dict
        Parameters of the default variant (empty ``STUDENT``). Pick values away from the
        chapter's own scenario, so no default answer is a number a chapter prints.
    draw : callable
        ``draw(rng) -> dict`` with the same keys as ``default``: one student's parameters
        from a ``random.Random``. Use ``rng.randrange``/``rng.choice`` over grids of sensible
        values; draw a seed with ``rng.randrange(1, 10**6)`` where the set simulates.
    options : dict
        Multiple-choice options shuffled per variant: answer variable (a :class:`Choice`
        answer) -> its option texts in the key's order (the key's letter ``"a"`` is the
        first). Each variant shows them in its own order under its own two-digit labels (``print(V)`` lists them, and
        :meth:`Variant.options` returns them); the judge maps the letter a student gives back
        to the key's letter, so a label is not shareable and the key is written once. A
        notebook whose set lists options here must not print them in a fixed order.
    """

    slug: str
    questions: tuple
    default: dict = field(default_factory=dict)
    draw: Callable[[random.Random], dict] | None = None
    options: dict = field(default_factory=dict)

    def __post_init__(self) -> None:
        names = [q.name for q in self.questions]
        if len(set(names)) != len(names):
            raise ValueError(f"{self.slug}: question names repeat")
        variables = [v for q in self.questions for v, _ in q.answers]
        if len(set(variables)) != len(variables):
            raise ValueError(f"{self.slug}: an answer variable belongs to two questions")
        forms = {v: f for q in self.questions for v, f in q.answers}
        for var, texts in self.options.items():
            form = forms.get(var)
            if not isinstance(form, Choice) or not isinstance(texts, tuple) or len(texts) != len(form.letters) \
                    or not all(isinstance(t, str) and t for t in texts):
                raise ValueError(f"{self.slug}: options[{var!r}] must be a tuple of one text per letter "
                                 "of a Choice answer")

    @property
    def possible(self) -> float:
        return sum(q.points for q in self.questions)

    @property
    def variables(self) -> tuple:
        return tuple(v for q in self.questions for v, _ in q.answers)

    def question(self, name: str) -> Question:
        for q in self.questions:
            if q.name == name:
                return q
        raise KeyError(f"{self.slug} has no question {name!r}")

    def variant(self, student: object = "") -> Variant:
        """The variant for ``student`` (the default variant for ``""``)."""
        s = normalise_student(student)
        if not s or self.draw is None:
            params = dict(self.default)
        else:
            params = self.draw(rng_for(self.slug, s))
            if set(params) != set(self.default):
                raise ValueError(f"{self.slug}: draw() must return the keys of default")
        return Variant(self.slug, s, tuple((k, params[k]) for k in self.default), self._choices(s))

    def _choices(self, student: str) -> tuple:
        """Per shuffled answer: ``(var, ((shown label, key letter, text), ...))``, in label order.

        A student's variant labels its options with distinct two-digit labels drawn from
        :data:`CHOICE_LABELS`, so the right label is one of 90 and one constant label is right
        for about 1% of a class; the default variant keeps the key's letters and order (its
        letters are no label of any student's variant, so they earn nothing there).
        """
        forms = {v: f for q in self.questions for v, f in q.answers}
        rng = rng_for(self.slug + "/options", student)
        out = []
        for var in sorted(self.options):
            letters = forms[var].letters
            labels = sorted(rng.sample(CHOICE_LABELS, len(letters))) if student else list(letters)
            order = list(range(len(letters)))
            if student:
                rng.shuffle(order)
            out.append((var, tuple((labels[i], letters[k], self.options[var][k]) for i, k in enumerate(order))))
        return tuple(out)
