"""The form rules of exercise answers: one definition, used by the public checks and the grader.

An answer is a plain value: ``bool``, ``int``, ``float``, ``str``, or a list or tuple of
these. NumPy scalars and 0-d arrays are converted to the matching plain value; any other
type, including a subclass of a plain type (an object may compare equal to anything), is
refused with a message that names the expected form. A :class:`Form` then checks what kind
of plain value a question wants (a whole number, a number in a range, one letter, ...).
"""

from __future__ import annotations

import math
import sys
from dataclasses import dataclass

__all__ = [
    "CHOICE_LABELS", "Choice", "Float", "Form", "FormError", "Int", "Seq", "Str", "check_value", "to_plain",
]

#: Longest list or string accepted in an answer.
MAX_ITEMS = 1000
MAX_STR = 200


class FormError(ValueError):
    """An answer does not have the form its question asks for; the message says what is wanted."""


def _numpy_plain(value: object) -> object:
    """A NumPy scalar or 0-d array as a plain value, else the value itself."""
    np = sys.modules.get("numpy")
    if np is None:
        return value
    kind = type(value)
    if kind is np.ndarray and value.ndim == 0:
        value = value[()]
        kind = type(value)
    if kind is np.bool_:
        return bool(value)
    if kind in _numpy_scalar_types(np):
        return value.item()
    return value


def _numpy_scalar_types(np) -> frozenset:
    names = ("int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64",
             "float16", "float32", "float64", "longlong", "ulonglong", "intc", "uintc", "str_")
    return frozenset(getattr(np, n) for n in names if hasattr(np, n))


_PLAIN = (bool, int, float, str)


def to_plain(value: object, expected: str = "a number, a string, or a list of these",
             _depth: int = 0) -> object:
    """``value`` as a plain JSON value; raises :class:`FormError` naming ``expected`` otherwise.

    Parameters
    ----------
    value : object
        The answer as the student's code left it.
    expected : str
        Words for the expected form, used in the error message.
    """
    value = _numpy_plain(value)
    kind = type(value)
    if kind in _PLAIN:  # exact types only: subclasses are refused
        if kind is float and not math.isfinite(value):
            raise FormError(f"should be {expected}, and a finite one (got {value!r})")
        if kind is str and len(value) > MAX_STR:
            raise FormError(f"should be {expected} (got a string of {len(value)} characters)")
        return value
    if kind in (list, tuple) and _depth == 0:
        if len(value) > MAX_ITEMS:
            raise FormError(f"should be {expected} (got {len(value)} items)")
        return [to_plain(v, expected, _depth + 1) for v in value]
    if value is Ellipsis:
        raise FormError("is not answered yet: replace the ... with your answer")
    if value is None:
        raise FormError(f"is None: it should be {expected}")
    name = kind.__name__
    if isinstance(value, _PLAIN):
        name = f"{name}, a subclass of {next(t for t in _PLAIN if isinstance(value, t)).__name__}"
    raise FormError(f"should be {expected}, not {name}")


@dataclass(frozen=True)
class Form:
    """Base class: what a question wants. ``check`` returns the plain value or raises."""

    def describe(self) -> str:  # pragma: no cover - every form overrides it
        raise NotImplementedError

    def check(self, value: object) -> object:
        """The checked plain value of ``value``; raises :class:`FormError`."""
        return self.check_plain(to_plain(value, self.describe()))

    def check_plain(self, plain: object) -> object:  # pragma: no cover
        raise NotImplementedError


def _bounds(plain: float, lo: float | None, hi: float | None, what: str) -> None:
    if lo is not None and plain < lo:
        raise FormError(f"should be {what} of at least {lo:g}")
    if hi is not None and plain > hi:
        raise FormError(f"should be {what} of at most {hi:g}")


@dataclass(frozen=True)
class Int(Form):
    """A whole number (a genuine ``int``: ``11.4`` or ``11.0`` is not a count), optionally bounded."""

    lo: int | None = None
    hi: int | None = None

    def describe(self) -> str:
        return "a whole number (an int such as 12)"

    def check_plain(self, plain: object) -> int:
        if type(plain) is not int:
            raise FormError(f"should be {self.describe()}, not {type(plain).__name__}"
                            + (": round it the way the question asks" if type(plain) is float else ""))
        _bounds(plain, self.lo, self.hi, "a whole number")
        return plain


@dataclass(frozen=True)
class Float(Form):
    """A real number (``int`` or ``float``, never ``bool``), optionally bounded."""

    lo: float | None = None
    hi: float | None = None

    def describe(self) -> str:
        return "a number"

    def check_plain(self, plain: object) -> float:
        if type(plain) not in (int, float):
            raise FormError(f"should be {self.describe()}, not {type(plain).__name__}")
        _bounds(plain, self.lo, self.hi, "a number")
        return float(plain)


#: The labels a student's variant shows its multiple-choice options under (``SetSpec.options``):
#: ``"10"`` to ``"99"``, four of them drawn per variant.
CHOICE_LABELS = tuple(str(n) for n in range(10, 100))


@dataclass(frozen=True)
class Choice(Form):
    """One option of a multiple-choice question: its label as ``print(V)`` shows it.

    A student's variant shows the options under two-digit labels (``"37"``; the int ``37`` is
    taken too); the default variant shows them under the key's ``letters`` (``"c"``). Case
    and spaces are ignored. Whether the label is one of *this* variant's needs the variant:
    the public check and the grader both refuse, as a form problem, a label the variant does
    not show, naming the ones it does (:meth:`lanes.exercises.Variant.label_problem`).
    """

    letters: str = "abcd"

    def describe(self) -> str:
        return 'the label of one option in quotes, as print(V) shows it (such as "37", or "c")'

    def check_plain(self, plain: object) -> str:
        if type(plain) is int and 10 <= plain <= 99:
            plain = str(plain)
        label = plain.strip().lower() if type(plain) is str else None
        if label not in CHOICE_LABELS and (label is None or label not in tuple(self.letters)):
            raise FormError(f"should be {self.describe()}")
        return label


@dataclass(frozen=True)
class Str(Form):
    """A string; with ``options``, one of them (spaces around it ignored)."""

    options: tuple[str, ...] = ()

    def describe(self) -> str:
        if self.options:
            return "one of the strings " + ", ".join(f'"{o}"' for o in self.options)
        return "a string in quotes"

    def check_plain(self, plain: object) -> str:
        if type(plain) is not str:
            raise FormError(f"should be {self.describe()}, not {type(plain).__name__}")
        plain = plain.strip()
        if self.options and plain not in self.options:
            raise FormError(f"should be {self.describe()}")
        return plain


@dataclass(frozen=True)
class Seq(Form):
    """A list or tuple of items of one form, with ``min_len`` to ``max_len`` items."""

    item: Form = Int()
    min_len: int = 1
    max_len: int = MAX_ITEMS

    def describe(self) -> str:
        return f"a list or tuple of items, each {self.item.describe()}"

    def check_plain(self, plain: object) -> list:
        if type(plain) is not list:
            raise FormError(f"should be {self.describe()}, not {type(plain).__name__}")
        if not self.min_len <= len(plain) <= self.max_len:
            raise FormError(f"should have {self.min_len} to {self.max_len} items (it has {len(plain)})")
        out = []
        for i, v in enumerate(plain):
            try:
                out.append(self.item.check_plain(v))
            except FormError as e:
                raise FormError(f"item {i} {e}") from None
        return out


def check_value(name: str, value: object, form: Form) -> object:
    """The checked plain value of answer ``name``; :class:`FormError` messages start with the name."""
    try:
        return form.check(value)
    except FormError as e:
        raise FormError(f"{name} {e}") from None
