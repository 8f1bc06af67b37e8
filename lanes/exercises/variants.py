"""Per-student variants: a student's ``STUDENT`` value gives each set its own parameters and seed.

The parameters come deterministically from ``sha256("lanes-exercises/<slug>/<student>")``:
the same value always gives the same variant, two values almost always give different
ones, and the empty value gives the set's default variant, whose numbers are chosen away
from those the chapters print.

In a graded course ``STUDENT`` is the student's **token**, ``<login>-<code>``: the roster
login and a code of :data:`CODE_LEN` characters, all but the last made from the course's
secret (:func:`student_token`). The instructor hands each student their token; without the
secret nobody can compute a classmate's token, so nobody can compute a classmate's variant
or search for a favourable one offline. The code's last character is a **check character**
computed from the rest of the token alone (:func:`check_character`): the variant cell tells a
token with one character mistyped, two neighbours swapped, or no code at all (a bare login)
from a real one without knowing the secret (:func:`token_problem`). A login and a token use
``[a-z0-9._-]`` only.
"""

from __future__ import annotations

import hashlib
import hmac
import random
import re
from dataclasses import dataclass

__all__ = ["CODE_ALPHABET", "CODE_LEN", "EMPTY_TOKEN", "MISSING_TOKEN", "NOT_A_TOKEN", "TEST_SECRET",
           "TOKEN_CHARS", "Variant",
           "check_character", "check_course_secret", "check_login", "course_secret", "load_course_secret",
           "new_course_secret", "normalise_student", "rng_for", "secret_fingerprint", "set_course_secret",
           "student_token", "token_mismatch", "token_problem"]

#: What a ``STUDENT`` value may hold (after stripping and lower-casing).
STUDENT_RE = re.compile(r"[a-z0-9._-]{1,40}")
#: Characters of the code in a token (the secret-made part and the check character);
#: a login is at most 40 - 1 - CODE_LEN long.
CODE_LEN = 6
MAX_LOGIN = 40 - 1 - CODE_LEN
#: What the variant cell says of a value that is not a course token (one line, no secret needed).
NOT_A_TOKEN = "this is not a valid course token: check it against the one your instructor gave you"
#: What the variant cell of a set notebook says of an empty ``STUDENT`` (one line): the
#: notebook's numbers would be the default variant's, which is nobody's in a course.
EMPTY_TOKEN = ("STUDENT is empty: type the course token your instructor gave you between the quotes "
               "(such as \"jdoe42-k7f3q2\"), or \"self-study\" if you work on your own, then run this cell again")
#: The ``STUDENT`` of a reader who works a set without a course: the example variant, checked
#: for form as a student's is; the grader grades no one's notebook on it (it is no token).
SELF_STUDY = "self-study"
#: What the public check and the grader say when no cell sets ``STUDENT`` (one line).
MISSING_TOKEN = ("STUDENT is not set: the first code cell, which holds STUDENT = \"<your token>\", "
                 "was deleted or not run")
#: The secret of the test suite: public, so grading refuses it outside the tests.
TEST_SECRET = "lanes-test-secret-not-for-grading"
CODE_ALPHABET = "abcdefghjkmnpqrstuvwxyz23456789"  # no 0/o, 1/l/i: 31 characters, a prime
#: Every character a token may hold, numbered for the check: the code's alphabet first
#: (0-30), then the others (31-38, which the check cannot tell from 0-7: '-' from 'a',
#: '.' from 'b', ..., 'o' from 'h'; none of those pairs looks alike).
TOKEN_CHARS = CODE_ALPHABET + "-._01ilo"

_secret: str | None = None


def normalise_student(student: object) -> str:
    """The ``STUDENT`` value as used for the variant: stripped and lower-cased, ``[a-z0-9._-]{1,40}``
    or empty (the default variant); ``ValueError`` naming the rule otherwise."""
    if type(student) is not str:
        raise ValueError(f"STUDENT must be a string in quotes, such as \"jdoe42\" (got {type(student).__name__})")
    s = student.strip().lower()
    if s and not STUDENT_RE.fullmatch(s):
        raise ValueError(f"STUDENT must be 1 to 40 characters among a-z, 0-9, '.', '_' and '-' "
                         f"(got {len(s)} characters{', some outside that set' if len(s) <= 40 else ''})")
    return s


def check_login(login: object) -> str:
    """A roster login: ``[a-z0-9._-]``, 1 to :data:`MAX_LOGIN` characters (lower-cased); ``ValueError`` else."""
    if type(login) is not str:
        raise ValueError(f"login must be a string (got {type(login).__name__})")
    s = login.strip().lower()
    if not (re.fullmatch(r"[a-z0-9._-]+", s) and len(s) <= MAX_LOGIN):
        raise ValueError(f"login must be 1 to {MAX_LOGIN} characters among a-z, 0-9, '.', '_' and '-' "
                         f"(got {len(s)} characters)")
    return s


def set_course_secret(secret: str | None) -> None:
    """Set the course secret of this process (the grader's judge does, from the course's file)."""
    global _secret
    if secret is not None and (type(secret) is not str or len(secret) < 16):
        raise ValueError("the course secret must be a string of at least 16 characters")
    _secret = secret


def course_secret() -> str:
    """The course secret set by :func:`set_course_secret`; ``RuntimeError`` when none is set."""
    if _secret is None:
        raise RuntimeError("no course secret is set (the grader sets it; make one with "
                           "`python scripts/grade.py init`)")
    return _secret


def check_course_secret(secret: object) -> str:
    """``secret`` if it can be a course secret (a string of at least 16 characters, not the
    test suite's public one); ``ValueError`` naming the rule otherwise."""
    if type(secret) is not str or len(secret) < 16:
        got = f"{len(secret)} characters" if type(secret) is str else type(secret).__name__
        raise ValueError(f"the course secret must be a string of at least 16 characters (got {got})")
    if secret == TEST_SECRET:
        raise ValueError("that is the test suite's public secret, which grades nothing real")
    return secret


def secret_fingerprint(secret: str) -> str:
    """Eight hex digits that tell two secrets apart without showing either (to check a restore)."""
    return hashlib.sha256(f"lanes-secret-fingerprint/{secret}".encode()).hexdigest()[:8]


def load_course_secret(path, *, allow_test: bool = False) -> str:
    """The course secret in file ``path`` (one line); ``ValueError`` saying how to make one.

    The test suite's :data:`TEST_SECRET` is refused unless ``allow_test`` (the tests set
    ``LANES_TEST_SECRET=1``, and then no file is needed).
    """
    import pathlib

    if allow_test:
        return TEST_SECRET
    p = pathlib.Path(path)
    how = "make one with `python scripts/grade.py init` (it writes a git-ignored file) or pass --secret FILE"
    try:
        text = p.read_text(encoding="utf-8").strip()
    except OSError:
        raise ValueError(f"no course secret at {p}: {how}") from None
    if text == TEST_SECRET:
        raise ValueError(f"{p} holds the test suite's public secret, which grades nothing real: {how}")
    if len(text) < 16:
        raise ValueError(f"the course secret in {p} must be at least 16 characters (has {len(text)}): {how}")
    return text


def new_course_secret() -> str:
    """A fresh random course secret (64 hex digits)."""
    import secrets

    return secrets.token_hex(32)


def check_character(body: str) -> str:
    """The check character that ends a token whose other characters are ``body`` (``"jdoe42-k7f3q"``).

    A weighted sum modulo 31 (the size of the code's alphabet, a prime): character ``i``
    (from 1) counts ``1 + (i - 1) % 30`` times its number in :data:`TOKEN_CHARS`, so one
    changed code character, or two different neighbours swapped, always changes the sum.
    ``ValueError`` for a character a token cannot hold.
    """
    if type(body) is not str or any(c not in TOKEN_CHARS for c in body):
        raise ValueError(f"body must be a string of the characters a-z, 0-9, '.', '_' and '-' (got {body!r:.60})")
    total = sum((1 + i % 30) * TOKEN_CHARS.index(c) for i, c in enumerate(body))
    return CODE_ALPHABET[total % len(CODE_ALPHABET)]


def token_problem(student: str) -> str | None:
    """Why a normalised ``STUDENT`` value is not a course token (:data:`NOT_A_TOKEN`), or ``None``.

    Needs no secret: it checks the shape ``<login>-<code>`` and the check character, so a
    typo or a bare login is caught in the notebook. Whether the token is *this* student's
    is for the grader, which holds the secret. The empty value (the default variant) is
    not a token either.
    """
    login, dash, code = student.rpartition("-")
    if (not dash or not login or len(code) != CODE_LEN or len(login) > MAX_LOGIN
            or any(c not in CODE_ALPHABET for c in code) or any(c not in TOKEN_CHARS for c in login)
            or check_character(student[:-1]) != code[-1]):
        return NOT_A_TOKEN
    return None


def student_token(login: str, secret: str | None = None) -> str:
    """The ``STUDENT`` value of ``login`` in the course of ``secret`` (default: :func:`course_secret`):
    ``<login>-<code>``, the code's first ``CODE_LEN - 1`` characters made from
    ``HMAC-SHA256(secret, login)``, its last the :func:`check_character` of the rest."""
    login = check_login(login)
    key = (course_secret() if secret is None else secret).encode()
    digest = hmac.new(key, f"lanes-student/{login}".encode(), hashlib.sha256).digest()
    n = int.from_bytes(digest[:8], "big")
    code = ""
    for _ in range(CODE_LEN - 1):
        n, r = divmod(n, len(CODE_ALPHABET))
        code += CODE_ALPHABET[r]
    body = f"{login}-{code}"
    return body + check_character(body)


def token_mismatch(typed: str | None, login: str, secret: str) -> str | None:
    """Why ``typed``, a notebook's ``STUDENT`` (normalised; ``None`` when it was not a valid
    value at all), is not ``login``'s token in the course of ``secret``, in words for the
    grader's report; ``None`` when it is.

    With the secret the grader can tell a **typo** (the check character fails, or the bare
    login) from **another student's token** (a valid token of another login: a copied
    notebook) and from a token this course never issued (another course's secret).
    """
    mine = student_token(login, secret)
    if typed == mine:
        return None
    if typed is None:
        return "STUDENT is not a course token: it holds characters or a length no token has"
    if not typed:
        return "STUDENT is empty"
    if typed == login:
        return "STUDENT is the bare login, not the token (a typo)"
    if typed == SELF_STUDY:
        return f"STUDENT is \"{SELF_STUDY}\", the example numbers of a reader without a course"
    if token_problem(typed):
        return "STUDENT is not a valid token: a typo"
    other = typed.rpartition("-")[0]
    try:
        if other != login and student_token(other, secret) == typed:
            return f"STUDENT is another student's token ({other}'s)"
    except ValueError:
        pass
    return "STUDENT is a token this course did not issue (another course's secret, or several typos)"


def rng_for(slug: str, student: str) -> random.Random:
    """A random generator seeded from the set and the (normalised) student identifier."""
    digest = hashlib.sha256(f"lanes-exercises/{slug}/{student}".encode()).digest()
    return random.Random(int.from_bytes(digest[:16], "big"))


@dataclass(frozen=True)
class Variant:
    """The parameters of one set for one student; read them as attributes (``V.rate_per_s``).

    Attributes
    ----------
    slug : str
        The exercise set, such as ``"01_slots_and_littles_law"``.
    student : str
        The normalised student identifier (``""`` for the default variant).
    params : tuple of (str, object)
        Parameter names and values, in the order the set defines them.
    choices : tuple
        Shuffled multiple-choice options: ``(var, ((shown label, key letter, text), ...))``
        per answer variable the set shuffles (see ``SetSpec.options``).
    """

    slug: str
    student: str
    params: tuple
    choices: tuple = ()

    def options(self, var: str) -> list:
        """``[(letter, text), ...]`` of answer ``var`` in this variant's order; ``KeyError`` if not shuffled."""
        for v, rows in object.__getattribute__(self, "choices"):
            if v == var:
                return [(shown, text) for shown, _, text in rows]
        raise KeyError(f"{var} has no shuffled options in set {self.slug}")

    def key_letter(self, var: str, letter: str) -> str:
        """The key's letter of the option this variant shows as ``letter``: ``""`` (no option) for a
        label this variant does not show; unchanged if ``var`` is not shuffled."""
        for v, rows in object.__getattribute__(self, "choices"):
            if v == var:
                return next((key for shown, key, _ in rows if shown == letter), "")
        return letter

    def label_problem(self, var: str, label: str) -> str | None:
        """Why ``label`` (a checked :class:`~lanes.exercises.forms.Choice` answer) picks none of the
        options this variant shows for ``var``, in the words of a form problem; ``None`` when it
        picks one, or when ``var`` is not shuffled. The public check and the grader both say it."""
        if not any(v == var for v, _ in object.__getattribute__(self, "choices")) or self.key_letter(var, label):
            return None
        labels = [f'"{shown}"' for shown, _ in self.options(var)]
        return (f"should be the label of one of your options, {', '.join(labels[:-1])} or {labels[-1]}, "
                "in quotes (print(V) lists them)")

    def shown_letter(self, var: str, key_letter: str) -> str:
        """The letter this variant shows for the option the key calls ``key_letter`` (the inverse of
        :meth:`key_letter`; unchanged if ``var`` is not shuffled)."""
        for v, rows in object.__getattribute__(self, "choices"):
            if v == var:
                return next((shown for shown, key, _ in rows if key == key_letter), key_letter)
        return key_letter

    def __getattr__(self, name: str):
        for k, v in object.__getattribute__(self, "params"):
            if k == name:
                return v
        raise AttributeError(f"this variant has no parameter {name!r}; it has: "
                             + ", ".join(k for k, _ in object.__getattribute__(self, "params")))

    def __getitem__(self, name: str):
        return self.__getattr__(name)

    def as_dict(self) -> dict:
        return dict(self.params)

    def __str__(self) -> str:
        who = f"student {self.student!r}" if self.student else "the default variant (STUDENT is empty)"
        width = max((len(k) for k, _ in self.params), default=0)
        lines = [f"Exercise set {self.slug}, {who}. Your parameters (use them as V.<name>):"]
        lines += [f"  V.{k:<{width}} = {v!r}" for k, v in self.params]
        for var, rows in self.choices:
            lines.append(f"Options of {var} (answer with the label shown here, in quotes):")
            lines += [f"  ({shown}) {text}" for shown, _, text in rows]
        return "\n".join(lines)

    def _repr_pretty_(self, p, cycle) -> None:  # IPython display
        p.text(str(self))
