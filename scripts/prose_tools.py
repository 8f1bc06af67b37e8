"""Numbers in a chapter's prose, written from the values the chapter computed: the tooling.

Chapters call only :func:`lanes.prose.glue`; the rendering and the checks below are
the course's tooling (``scripts/run_notebooks.py`` renders, the tests check), so they
live outside the package.  Import it as ``from scripts import prose_tools`` from the
repository root; ``scripts/run_notebooks.py`` loads it by path.

A chapter's markdown cell that shows computed numbers keeps two forms:

* ``cell.metadata.lanes.prose``, the *template*: the text with a placeholder
  ``{{name}}`` or ``{{name:spec}}`` wherever a number goes, ``name`` being a
  value the chapter glued (:func:`lanes.prose.glue`) and
  ``spec`` a Python format specification (``.0%``, ``.2f``, ``,``);
* ``cell.source``, the *rendering*: the template with every placeholder
  replaced by ``format(value, spec)``.

The rendering is plain markdown, so JupyterLab (before any kernel runs), the
published book and a reader of the raw file all show the same digits.
``scripts/run_notebooks.py`` renders every template after it executes a
chapter; the tests check that every committed rendering is the template
rendered from the committed values, so a number typed into the prose by hand,
or a stale one, fails.

Claims that cannot drift (:func:`check_prose`): a bound word beside a value
holds for the unrounded value, or for every value of a glued list, and says
something (it fails turned around); a comparison word is rendered from the
sign of a value (``{{d:fewer|more}}``); a unit typed after a value is the one
its name states (``wait_s``); a number or a numbered policy typed into the
prose stands inside a phrase the chapter lists, so changing it fails.
Predictions that predict (:func:`check_predictions`): no answer is visible
before its reveal, in the book or in JupyterLab's folded preview line.

Prose no slip can falsify unseen (:func:`ledger`, :func:`check_ledger`,
:func:`record`): every sentence a reader reads, in markdown (templated or not),
code comments, figure titles and alt text, recorded with the facts its words
rest on, recomputed from the values; ``python scripts/prose_tools.py record
--all`` re-verifies the prose checks and records again.  Formulas are evaluated
(:func:`check_formulas`); :func:`slips` makes every kind of author's slip in a
copy of a chapter, for the tests to show that each one fails.

Standard library only.
"""

from __future__ import annotations

import ast
import functools
import re
from pathlib import Path
from dataclasses import dataclass
from typing import Any, Iterable, Mapping

from lanes.prose import RECORD_PREFIX, glue  # noqa: F401  (what a chapter calls; this module reads what it records)

__all__ = ["Placeholder", "placeholders", "render", "glued_values", "render_notebook",
           "check_notebook", "PLACEHOLDER", "Bound", "bounds", "check_bounds", "Literal",
           "literal_numbers", "check_literals", "check_words", "COMPARISON_PAIRS",
           "COMPARISON_WORDS", "comparison_words", "unit_after", "typed_comparisons", "UNITS",
           "check_prose", "Reveal", "reveals", "preview_line", "answer_texts",
           "check_predictions", "DISTINCT_DIGITS", "BOOK_DIGITS"]

#: ``{{name}}`` or ``{{name:spec}}``; names are Python identifiers.
PLACEHOLDER = re.compile(r"\{\{\s*([A-Za-z_][A-Za-z0-9_]*)\s*(?::([^{}]*))?\}\}")

_META_KEY = "lanes"
_TEMPLATE_KEY = "prose"
_RECORD_MIME = RECORD_PREFIX + "text/plain"


@dataclass(frozen=True)
class Placeholder:
    """One placeholder of a template: where it stands and how it is formatted."""

    name: str
    spec: str
    start: int  # character offset of ``{{`` in the template
    end: int  # offset just past ``}}``


def placeholders(template: str) -> list[Placeholder]:
    """Every placeholder of ``template``, in order."""
    if not isinstance(template, str):
        raise ValueError(f"template must be a str (got {type(template).__name__})")
    return [Placeholder(m.group(1), (m.group(2) or "").strip(), m.start(), m.end())
            for m in PLACEHOLDER.finditer(template)]


_DIRECTED = re.compile(r"(?P<head>.*?)\.(?P<prec>\d+)(?P<type>[f%])")
_MODIFIERS = ("floor", "ceil", "max", "min")
_WORD = re.compile(r"[A-Za-z][A-Za-z -]*")

#: Word pairs a comparison is rendered with, each written (lower, higher): the
#: placeholder ``{{d:fewer|more}}`` shows "fewer" when ``d < 0`` and "more"
#: when ``d > 0`` (a third word, ``{{d:fewer|more|as many}}``, is shown when
#: ``d == 0``; without it a tie is an error).  A pair written the other way
#: round is refused by :func:`check_words`.
COMPARISON_PAIRS = frozenset({
    ("fewer", "more"), ("less", "more"), ("lower", "higher"), ("below", "above"),
    ("under", "over"), ("shorter", "longer"), ("smaller", "larger"), ("smaller", "bigger"),
    ("slower", "faster"), ("worse", "better"), ("behind", "ahead of"), ("behind", "ahead"),
    ("lowers", "raises"), ("lower", "raise"), ("falls", "rises"), ("fall", "rise"),
    ("drops", "rises"), ("shrinks", "grows"), ("down", "up"), ("decreases", "increases"),
    ("earlier", "later"), ("cheaper", "dearer"), ("loses", "wins"), ("narrower", "wider"),
    ("fewest", "most"), ("least", "most"), ("lowest", "highest"), ("shortest", "longest"),
    ("smallest", "largest"), ("worst", "best"),
})


def comparison_words(spec: str) -> list[str] | None:
    """The words of a comparison spec (``fewer|more``), or None for a format spec."""
    parts = [part.strip() for part in spec.split("|")]
    if len(parts) in (2, 3) and len(parts[0]) > 1 and all(_WORD.fullmatch(w) for w in parts) \
            and parts[1] not in _MODIFIERS:
        return parts
    return None


def format_value(value: Any, spec: str) -> str:
    """``value`` as the prose shows it: ``format(value, spec)``.

    A spec may end in ``|floor`` or ``|ceil`` (``{{x:.1f|floor}}``): the value
    is then rounded down or up, not to nearest, at the spec's precision, so a
    bound written from it holds for the unrounded value ("at least
    {{lo:.0%|floor}}" never overstates ``lo``).  Only ``f`` and ``%`` specs
    with an explicit precision take a direction.

    A list of values (the per-seed results a claim is about) is shown by one
    of them, picked by ``|max`` or ``|min`` (``{{p99s:g|max}}``); a bound word
    beside it is checked against every value of the list (:func:`bounds`).

    A comparison spec (``{{d:fewer|more}}``, see :data:`COMPARISON_PAIRS`)
    shows a word chosen by the sign of the number ``d``.
    """
    words = comparison_words(spec)
    if words is not None:
        return _choose(value, words, spec)
    base, *mods = [part.strip() for part in spec.split("|")]
    bad = [m for m in mods if m not in _MODIFIERS]
    if bad:
        raise ValueError(f"format spec {spec!r}: after '|' come floor, ceil, max or min (got {bad[0]!r})")
    reducers = [m for m in mods if m in ("max", "min")]
    directions = [m for m in mods if m in ("floor", "ceil")]
    try:
        if isinstance(value, (list, tuple)):
            if len(reducers) != 1 or not value:
                raise ValueError("a list of values needs one |max or |min to pick the number shown")
            value = max(value) if reducers[0] == "max" else min(value)
        elif reducers:
            raise ValueError("|max and |min pick a number from a list of values")
        if len(directions) > 1:
            raise ValueError("the direction after '|' must be floor or ceil, once")
        if directions:
            value = _round_directed(value, base, directions[0])
        return format(value, base)
    except (ValueError, TypeError) as exc:
        raise ValueError(
            f"format spec {spec!r} does not apply to {type(value).__name__} value {value!r}: {exc}"
        ) from None


def _choose(value: Any, words: list[str], spec: str) -> str:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise ValueError(f"comparison spec {spec!r} needs a number (the difference it states),"
                         f" got {type(value).__name__} {value!r}")
    if value == 0 and len(words) < 3:
        raise ValueError(f"comparison spec {spec!r}: the difference is 0; add a third word for a tie")
    return words[0] if value < 0 else words[1] if value > 0 else words[2]


def _round_directed(value: Any, spec: str, direction: str) -> float:
    from decimal import ROUND_CEILING, ROUND_FLOOR, Decimal

    if direction not in ("floor", "ceil"):
        raise ValueError("the direction after '|' must be floor or ceil")
    m = _DIRECTED.fullmatch(spec)
    if m is None:
        raise ValueError("|floor and |ceil need an f or % spec with a precision, such as .1f")
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise TypeError("only numbers can be rounded")
    d = Decimal(repr(float(value)))
    if m.group("type") == "%":
        d *= 100
    d = d.quantize(Decimal(1).scaleb(-int(m.group("prec"))),
                   rounding=ROUND_FLOOR if direction == "floor" else ROUND_CEILING)
    return float(d / 100 if m.group("type") == "%" else d)


def render(template: str, values: Mapping[str, Any], *, where: str = "template") -> str:
    """``template`` with every placeholder replaced by its formatted value.

    Raises ``ValueError`` naming the placeholder when a value is missing.
    """
    missing = sorted({p.name for p in placeholders(template)} - set(values))
    if missing:
        raise ValueError(f"{where}: no computed value for {', '.join(missing)}"
                         f" (glue it in a code cell before this markdown)")

    def _one(m: re.Match) -> str:
        return format_value(values[m.group(1)], (m.group(2) or "").strip())

    return PLACEHOLDER.sub(_one, template)


def template_of(cell: Mapping[str, Any]) -> str | None:
    """The prose template stored in a markdown cell's metadata, or None."""
    meta = cell.get("metadata", {}).get(_META_KEY, {})
    if not isinstance(meta, Mapping):
        return None
    template = meta.get(_TEMPLATE_KEY)
    return template if isinstance(template, str) else None


def set_template(cell: dict, template: str) -> None:
    """Store ``template`` in ``cell``'s metadata (``metadata.lanes.prose``)."""
    cell.setdefault("metadata", {}).setdefault(_META_KEY, {})[_TEMPLATE_KEY] = template


def glued_values(nb: Mapping[str, Any]) -> dict[str, Any]:
    """Every value a notebook (plain JSON data) glued, by name, as Python values.

    Glued values are read from the ``scrapbook`` outputs that ``myst_nb.glue``
    writes; only literals (numbers, strings, tuples, lists) are accepted, since
    the prose formats them.
    """
    values: dict[str, Any] = {}
    for cell in nb.get("cells", []):
        for out in cell.get("outputs", []):
            name = out.get("metadata", {}).get("scrapbook", {}).get("name")
            if name is None:
                continue
            text = out.get("data", {}).get(_RECORD_MIME)
            if text is None:
                continue
            text = "".join(text) if isinstance(text, list) else text
            try:
                values[name] = ast.literal_eval(text)
            except (ValueError, SyntaxError):
                raise ValueError(
                    f"glued value {name!r} is {text[:60]!r}, not a plain literal;"
                    " glue int(x), float(x) or str(x)"
                ) from None
    return values


def _source(cell: Mapping[str, Any]) -> str:
    src = cell.get("source", "")
    return "".join(src) if isinstance(src, list) else src


def render_notebook(nb: dict, values: Mapping[str, Any] | None = None) -> int:
    """Re-render every templated markdown cell of ``nb`` in place; returns how many changed."""
    values = glued_values(nb) if values is None else values
    changed = 0
    for i, cell in enumerate(nb.get("cells", [])):
        if cell.get("cell_type") != "markdown":
            continue
        template = template_of(cell)
        if template is None:
            continue
        text = render(template, values, where=f"markdown cell {i}")
        if _source(cell) != text:
            cell["source"] = text
            changed += 1
    return changed


def check_notebook(nb: Mapping[str, Any]) -> list[str]:
    """Problems with a notebook's prose numbers, one line each (empty when all is well).

    * a templated cell whose text is not its template rendered from the
      notebook's own glued values (a number edited by hand, or stale);
    * a placeholder with no glued value;
    * a leftover MyST ``{glue}`` role, which JupyterLab shows raw.
    """
    problems = []
    try:
        values = glued_values(nb)
    except ValueError as exc:
        return [str(exc)]
    for i, cell in enumerate(nb.get("cells", [])):
        if cell.get("cell_type") != "markdown":
            continue
        src = _source(cell)
        if re.search(r"\{glue(:[a-z]+)?\}`", src):
            problems.append(f"markdown cell {i}: a {{glue}} role, which JupyterLab shows raw")
        template = template_of(cell)
        if template is None:
            if PLACEHOLDER.search(src):
                problems.append(f"markdown cell {i}: a {{{{placeholder}}}} in the text itself")
            continue
        try:
            text = render(template, values, where=f"markdown cell {i}")
        except ValueError as exc:
            problems.append(str(exc))
            continue
        if text != src:
            problems.append(f"markdown cell {i}: text differs from its template rendered from"
                            f" the computed values ({_first_difference(src, text)})")
    return problems


def _first_difference(a: str, b: str) -> str:
    n = next((i for i, (x, y) in enumerate(zip(a, b)) if x != y), min(len(a), len(b)))
    return f"text has {a[max(0, n - 20):n + 20]!r} where the values give {b[max(0, n - 20):n + 20]!r}"


def templated_cells(nb: Mapping[str, Any]) -> Iterable[tuple[int, str, str]]:
    """(index, template, rendering) for every templated markdown cell."""
    for i, cell in enumerate(nb.get("cells", [])):
        if cell.get("cell_type") == "markdown":
            template = template_of(cell)
            if template is not None:
                yield i, template, _source(cell)



# ---------------------------------------------------------------------------
# Bound words: "less than {{x}}" must hold for the unrounded x
#
# A chapter often says a computed value is "less than 2%" or "within 10%".
# Claims over seeds ("99% or better on every seed") are checked the same way:
# the bound word beside the shown number must hold for the glued value, which
# the chapter computes as the worst seed (its claims test checks that it is).
# The number shown is the value rounded by its format spec, so the claim can be
# false for the value itself ("less than 2%" of 2.17%).  :func:`check_bounds`
# reads every placeholder with a bound word directly before it (or "or
# better", "or more", ... directly after it) and checks the relation between
# the glued, unrounded value and the number the prose shows.

#: Bound phrases written before a placeholder, and the relation ``value ? shown`` they claim.
BOUND_BEFORE = {
    "less than": "<", "fewer than": "<", "under": "<", "below": "<",
    "at or below": "<=", "at most": "<=", "no more than": "<=", "up to": "<=",
    "at or above": ">=", "at least": ">=", "no less than": ">=",
    "more than": ">", "over": ">", "above": ">",
    "within": "within",
    "about": "about", "around": "about", "roughly": "about", "nearly": "about", "almost": "about",
}
#: Bound phrases written after a placeholder ("99% or better").  "Better" is read as higher.
BOUND_AFTER = {
    "or better": ">=", "or more": ">=", "or above": ">=", "or higher": ">=",
    "or less": "<=", "or fewer": "<=", "or below": "<=", "or lower": "<=",
}


def _phrase_re(phrase: str) -> str:
    """``phrase`` as a pattern whose words may be split by any whitespace (a line break)."""
    return r"\s+".join(re.escape(word) for word in phrase.split())


_BEFORE_RE = re.compile(
    r"(?i)\b(" + "|".join(sorted((_phrase_re(k) for k in BOUND_BEFORE), key=len, reverse=True))
    + r")\s*[*_($~]*\s*$")
_AFTER_RE = re.compile(
    r"(?i)^[^\s{}]{0,4}(?:\s+[A-Za-z-]+)?\s+(" + "|".join(_phrase_re(k) for k in BOUND_AFTER) + r")\b")
# "over {{n}} seeds" spreads over a count; it claims no bound
_COUNT_AFTER_RE = re.compile(r"(?i)^\s*(seeds|runs|draws|steps|trials|calls|batches)\b")
# "never drops below", "in no bin ... more than": the bound is negated
_NEGATION_RE = re.compile(r"(?i)\b(?:no|never|not|none|nor)\b|n't\b")
_SENTENCE_END = re.compile(r"[.?!;][)\]\"'*_]*(?=\s)|\n\s*\n")
_CLAUSE_END = re.compile(r"[.?!;:][)\]\"'*_]*(?=\s)|\n\s*\n")
_NEGATED = {"<": ">=", "<=": ">", ">=": "<", ">": "<="}


def _since_last(pattern: re.Pattern, text: str) -> str:
    ends = list(pattern.finditer(text))
    return text[ends[-1].end():] if ends else text


@dataclass(frozen=True)
class Bound:
    """One bound word beside a placeholder: the claim ``value <relation> shown``."""

    cell: int
    name: str
    phrase: str
    relation: str  # "<", "<=", ">=", ">", "within", "about"
    value: Any
    shown: str
    negated: bool = False  # "never below": the relation is already flipped
    previous: str | None = None  # the nearest earlier placeholder of the same sentence

    def holds(self, relation: str | None = None) -> bool:
        """Whether every unrounded value satisfies the bound the prose states (or ``relation``)."""
        relation = self.relation if relation is None else relation
        b = _read_number(self.shown)
        xs = self.value if isinstance(self.value, (list, tuple)) else [self.value]
        if relation != "about":
            return all(_compare(float(x), relation, b) for x in xs)
        # "about": the shown number is the value, to its last digit or within 10%
        return all(abs(float(x) - b) <= max(0.1 * abs(b), _half_unit(self.shown)) for x in xs)

    def informative(self) -> bool:
        """Whether the bound turned around would be false: a bound that holds both ways
        ("at or below {{m}}" of ``m`` itself, the maximum of what it bounds) says nothing."""
        turned = _TURNED.get(self.relation)
        return turned is None or not self.holds(turned)


_TURNED = {"<": ">", "<=": ">=", ">=": "<=", ">": "<"}


def _compare(x: float, relation: str, y: float) -> bool:
    return {"<": x < y, "<=": x <= y, ">=": x >= y, ">": x > y,
            "within": abs(x) <= y}.get(relation, True)


def _read_number(shown: str) -> float:
    text = shown.strip().replace(",", "").replace("_", "").replace("\u2212", "-")
    scale = 1.0
    if text.endswith("%"):
        text, scale = text[:-1], 0.01
    try:
        return float(text) * scale
    except ValueError:
        raise ValueError(f"cannot read a number from {shown!r}") from None


def _half_unit(shown: str) -> float:
    text = shown.strip().replace(",", "")
    scale = 0.01 if text.endswith("%") else 1.0
    digits = text.rstrip("%").partition(".")[2]
    decimals = len(digits) if digits.isdigit() else 0
    return 0.5 * 10.0 ** -decimals * scale


def bounds(template: str, values: Mapping[str, Any], *, cell: int = -1) -> list[Bound]:
    """Every bound word of ``template`` that stands beside a placeholder, with its value."""
    found = []
    for p in placeholders(template):
        if p.name not in values:
            continue
        before = _BEFORE_RE.search(template[max(0, p.start - 40):p.start])
        after = _AFTER_RE.search(template[p.end:p.end + 40])
        # the value a threshold is compared with stands just before it in the
        # same sentence: "{{idle_high}} slots sit idle, fewer than {{r_all}}"
        sentence = _since_last(_SENTENCE_END, template[:p.start])
        earlier = placeholders(sentence)
        previous = (earlier[-1].name if earlier and len(sentence) - earlier[-1].end <= 40
                    else None)
        for m, table in ((before, BOUND_BEFORE), (after, BOUND_AFTER)):
            if m is None:
                continue
            phrase = " ".join(m.group(1).lower().split())
            if phrase == "over" and _COUNT_AFTER_RE.search(template[p.end:p.end + 20]):
                continue
            relation = table[phrase]
            head = template[:p.start - len(template[max(0, p.start - 40):p.start]) + m.start()] \
                if m is before else template[:p.start]
            negated = relation in _NEGATED and bool(_NEGATION_RE.search(_since_last(_CLAUSE_END, head)))
            if negated:
                relation = _NEGATED[relation]
            value = values[p.name]
            found.append(Bound(cell, p.name, phrase, relation, value,
                               format_value(value, p.spec), negated, previous))
    return found


def check_bounds(nb: Mapping[str, Any], thresholds: Iterable[str] = ()) -> list[str]:
    """Bound words that the unrounded values break, one line each.

    ``thresholds`` names values that are themselves the bound of a claim about
    *another* quantity (a target such as "a p99 of at most {{target_s}} s", a
    definition such as "late when it waits more than {{late_after_s}} s"); for
    those the check is that the prose shows them exactly, unrounded.
    """
    thresholds = set(thresholds)
    values = glued_values(nb)
    problems = []
    for i, template, _ in templated_cells(nb):
        for b in bounds(template, values, cell=i):
            if b.name in thresholds and b.previous is not None and b.relation != "about":
                # "{{idle_high}} slots sit idle, fewer than {{r_all}}": compare the two values
                x, y = values[b.previous], values[b.name]
                if isinstance(x, (int, float)) and isinstance(y, (int, float)) and not _compare(x, b.relation, y):
                    problems.append(f"markdown cell {i}: {b.previous} = {x!r} is not"
                                    f" {b.phrase!r} {b.name} = {y!r}")
            numbers = b.value if isinstance(b.value, (list, tuple)) else [b.value]
            if not numbers or any(isinstance(x, bool) or not isinstance(x, (int, float)) for x in numbers):
                problems.append(f"markdown cell {i}: {b.phrase!r} beside {b.name}, which is"
                                f" {type(b.value).__name__}, not a number")
                continue
            if b.name in thresholds:
                if float(b.value) != _read_number(b.shown):
                    problems.append(f"markdown cell {i}: threshold {b.name} = {b.value!r} is"
                                    f" shown rounded as {b.shown}")
                continue
            if not b.holds():
                problems.append(f"markdown cell {i}: {b.phrase!r} {b.shown} is false for"
                                f" {b.name} = {b.value!r} (the unrounded value)")
            elif not b.informative():
                problems.append(f"markdown cell {i}: {b.phrase!r} {b.shown} holds turned around too"
                                f" ({b.name} = {b.value!r}): a bound on its own summary says nothing;"
                                " glue the values it bounds (a list, shown with |max or |min)")
    return problems


# ---------------------------------------------------------------------------
# Typed numbers and names: every number and policy the prose shows is rendered
#
# A number typed into a template (or into an untemplated cell), or a numbered
# policy spec in a code span (`reserve:16`), is allowed only inside a phrase
# the chapter lists (:func:`check_literals`'s ``allowed``): "R from 0 to 20",
# not "20".  A phrase pins the number to its words, so changing the number to
# another one the chapter may type, or naming another design where a winner
# stands, breaks the phrase and fails.

_NUMBER_RE = re.compile(r"(?<![\w.,/:\-])\d+(?:,\d{3})*(?:\.\d+)?%?(?![\w/])")
_SPEC_RE = re.compile(r"(?<=`)[a-z_]+:\d+(?=[`,:\s])")
# contexts where a typed number names something rather than states a result
_NAMING_RE = re.compile(
    r"(?i)\b(?:chapters?|sets?|exercises?|seeds?|parts?|steps?|figures?|tables?|questions?|q)"
    r"\s+(?:\d+\s*(?:,|and|or|to|-)\s*)*$")


@dataclass(frozen=True)
class Literal:
    """A number or numbered policy typed into a chapter's prose rather than rendered."""

    cell: int
    text: str
    context: str
    start: int = 0  # offsets in the cell's text with its whitespace collapsed
    end: int = 0


def _collapse(text: str) -> str:
    return " ".join(text.split())


def _prose_only(text: str) -> str:
    """``text`` with code, maths, link targets, HTML and placeholders blanked out."""
    def blank(m: re.Match) -> str:
        return " " * len(m.group(0))
    for pattern, flags in ((r"```.*?```", re.S), (r"`[^`\n]*`", 0), (r"\$\$.*?\$\$", re.S),
                           (r"\$[^$\n]*\$", 0), (r"\]\([^)]*\)", 0), (r"<[^>\n]*>", 0),
                           (r"^\s*\d+\.\s", re.M)):
        text = re.sub(pattern, blank, text, flags=flags)
    return PLACEHOLDER.sub(lambda m: "#" * len(m.group(0)), text)


def _typed_text(cell: Mapping[str, Any]) -> str:
    text = template_of(cell)
    return _collapse(_source(cell) if text is None else text)


def literal_numbers(nb: Mapping[str, Any]) -> list[Literal]:
    """Numbers and numbered policies in the markdown (templates, or untemplated text) not rendered.

    Numbers inside code spans, code blocks and maths, in link targets, list
    markers, and numbers that name a chapter, set, seed, step, part or
    question ("chapter 3", "seed 3") are not counted; a numbered policy spec
    in a code span (`hybrid:8`) is.
    """
    found = []
    for i, cell in enumerate(nb.get("cells", [])):
        if cell.get("cell_type") != "markdown":
            continue
        raw = _typed_text(cell)
        text = _prose_only(raw)
        for m in _NUMBER_RE.finditer(text):
            if _NAMING_RE.search(text[max(0, m.start() - 40):m.start()]):
                continue
            ctx = text[max(0, m.start() - 30):m.end() + 20]
            found.append(Literal(i, m.group(0), " ".join(ctx.split()), m.start(), m.end()))
        for m in _SPEC_RE.finditer(raw):
            ctx = raw[max(0, m.start() - 30):m.end() + 20]
            found.append(Literal(i, m.group(0), ctx, m.start(), m.end()))
    return sorted(found, key=lambda lit: (lit.cell, lit.start))


def _covered(lit: Literal, raw: str, phrases: Iterable[str]) -> bool:
    for phrase in phrases:
        phrase = _collapse(phrase)
        k = raw.find(phrase, max(0, lit.end - len(phrase)))
        while k != -1 and k <= lit.start:
            if k + len(phrase) >= lit.end:
                return True
            k = raw.find(phrase, k + 1)
    return False


def check_literals(nb: Mapping[str, Any], allowed: Iterable[str] = ()) -> list[str]:
    """Typed numbers and policies outside the chapter's ``allowed`` phrases, one line each.

    ``allowed`` holds phrases a chapter may type, each containing a number or
    a numbered policy with the words that give it its meaning (scenario
    parameters "4 to 12 s", model names "Llama 3.1", "HTTP 429", a year),
    each justified where the list is kept.  A typed number is allowed only
    where one of the phrases, whitespace aside, covers it.
    """
    allowed = list(allowed)
    cells = nb.get("cells", [])
    return [f"markdown cell {lit.cell}: typed {'policy' if ':' in lit.text else 'number'} {lit.text!r}"
            f" ({lit.context!r}); glue it and use a placeholder, or list the phrase"
            for lit in literal_numbers(nb) if not _covered(lit, _typed_text(cells[lit.cell]), allowed)]


# ---------------------------------------------------------------------------
# Words rendered from the values: units and comparisons
#
# A unit typed after a placeholder is the unit of the glued value, which its
# name states (``wait_s``, ``tpot_ms``; the project's naming scheme), so "10
# s" written after ``{{tpot_ms}}`` fails.  A comparison word rendered from a
# value (``{{d:fewer|more}}``) must use a known pair written lower word first.

#: Typed unit -> the name suffixes a value shown in that unit carries.
UNITS = {
    "s": ("_s",), "second": ("_s",), "seconds": ("_s",),
    "ms": ("_ms",), "us": ("_us",), "µs": ("_us",),
    "h": ("_h",), "hour": ("_h",), "hours": ("_h",),
    "min": ("_min",), "minute": ("_min",), "minutes": ("_min",),
    "GB": ("_gb",), "GiB": ("_gib",), "MB": ("_mb",),
    "GB/s": ("_gbps",), "TB/s": ("_tbps",), "TFLOP/s": ("_tflops",),
}
_UNIT_AFTER = re.compile(
    r"^[ \t\n\u00a0]*(" + "|".join(sorted((re.escape(u) for u in UNITS), key=len, reverse=True))
    + r")(?![\w/-])")


#: Typed words that state a direction; in a sentence that shows a computed value they
#: must be rendered from it, be a checked bound word, or stand in a listed phrase.
COMPARISON_WORDS = frozenset(w for pair in COMPARISON_PAIRS for w in pair
                             if w not in ("over", "under", "down", "up", "ahead of", "lower", "raise"))
_COMPARISON_RE = re.compile(r"(?i)\b(" + "|".join(sorted(COMPARISON_WORDS, key=len, reverse=True))
                            + r"|lower)\b(?!-)(?<!\bat least)(?<!\bat most)")


def _bound_spans(template: str) -> list[tuple[int, int]]:
    """Where the bound words beside placeholders stand (:func:`bounds` checks them)."""
    spans = []
    for p in placeholders(template):
        lo = max(0, p.start - 40)
        m = _BEFORE_RE.search(template[lo:p.start])
        if m:
            spans.append((lo + m.start(1), lo + m.end(1)))
        m = _AFTER_RE.search(template[p.end:p.end + 40])
        if m:
            spans.append((p.end + m.start(1), p.end + m.end(1)))
    return spans


def typed_comparisons(template: str) -> list[tuple[int, int]]:
    """Spans of typed comparison words in a sentence that shows a computed value, not bound words."""
    text = _prose_only(template)
    bound = _bound_spans(template)
    found = []
    for m in _COMPARISON_RE.finditer(text):
        cuts = [c.end() for c in _SENTENCE_END.finditer(text, 0, m.start())]
        start = cuts[-1] if cuts else 0
        end = _SENTENCE_END.search(text, m.end())
        sentence = template[start:end.start() if end else len(template)]
        if PLACEHOLDER.search(sentence) and not any(a <= m.start() and m.end() <= b for a, b in bound):
            found.append((m.start(), m.end()))
    return found


def unit_after(template: str, end: int) -> tuple[int, int, str] | None:
    """The typed unit right after offset ``end`` of ``template`` (start, end, unit), or None."""
    m = _UNIT_AFTER.match(template[end:end + 12])
    return None if m is None else (end + m.start(1), end + m.end(1), m.group(1))


def check_words(nb: Mapping[str, Any], allowed: Iterable[str] = ()) -> list[str]:
    """Units that do not match their value's name, and comparison words not rendered.

    A comparison word typed in a sentence that shows a computed value ("{{n}}
    slots, more than ...") must be rendered from the values
    (``{{d:fewer|more}}``), be a bound word beside a placeholder (checked by
    :func:`check_bounds`), or stand inside one of the ``allowed`` phrases.
    """
    allowed = list(allowed)
    problems = []
    for i, template, _ in templated_cells(nb):
        raw = _collapse(template)
        for a, b in typed_comparisons(raw):
            lit = Literal(i, raw[a:b], raw[max(0, a - 30):b + 20], a, b)
            if not _covered(lit, raw, allowed):
                problems.append(f"markdown cell {i}: typed comparison {lit.text!r} ({lit.context!r})"
                                " beside a computed value; render it ({{d:fewer|more}}) or list the phrase")
        for p in placeholders(template):
            words = comparison_words(p.spec)
            if words is not None:
                if tuple(words[:2]) not in COMPARISON_PAIRS:
                    turned = tuple(reversed(words[:2])) in COMPARISON_PAIRS
                    problems.append(f"markdown cell {i}: {{{{{p.name}:{p.spec}}}}} "
                                    + ("writes its pair the wrong way round (the word for a"
                                       " negative difference comes first)" if turned else
                                       "is not a known comparison pair (lanes.prose.COMPARISON_PAIRS)"))
                continue
            found = unit_after(template, p.end)
            if found is None:
                continue
            unit = found[2]
            if not p.name.lower().endswith(UNITS[unit]):
                problems.append(f"markdown cell {i}: {{{{{p.name}}}}} is followed by the unit"
                                f" {unit!r}, but its name does not say so (end it in"
                                f" {' or '.join(UNITS[unit])})")
    return problems


def check_prose(nb: Mapping[str, Any], *, thresholds: Iterable[str] = (),
                literals: Iterable[str] = ()) -> list[str]:
    """Every check of a chapter's prose: rendering, bound words, typed numbers, words."""
    problems = check_notebook(nb)
    if problems and any("glued value" in p for p in problems):
        return problems
    return (problems + check_bounds(nb, thresholds) + check_literals(nb, literals)
            + check_words(nb, literals))


# ---------------------------------------------------------------------------
# Predictions that predict: no answer is visible before its reveal
#
# A ``predict`` cell asks a question; the next cell, its reveal, computes the
# answer and glues it.  Before the student runs the reveal, the book and
# JupyterLab already show every earlier cell (of this chapter and the chapters
# before it, read in order), the predict cell, the reveal's source, and, since
# the reveal's output is folded, one preview line: JupyterLab shows the first
# non-empty line of the folded cell's first output.  :func:`check_predictions`
# fails when an answer's text appears in any of them.
#
# The answers of a prediction are the values its reveal glues, or, when the
# predict cell lists names in ``metadata.lanes.answer``, those.  An answer's
# texts are the forms the chapter shows it in: an integer plain and with
# thousands separators, a float as each placeholder of the prose formats it; an
# answer over seeds is declared with its per-seed values (a list), each of which
# is looked for, a float also at a table's decimals (:func:`answer_texts`).
# Short numbers ("10", "0.5", "3%") stand for too many other things to be read
# as the answer everywhere, and a word answer ("preempt", "less") is one of the
# options the question names; they are looked for only in the reveal's preview
# line, where they are the first thing a student sees.  A number of three
# digits or more counts anywhere in its chapter; in an earlier chapter, one of
# four digits or more (:data:`DISTINCT_DIGITS`, :data:`BOOK_DIGITS`).

_ANSWER_KEY = "answer"
#: A number shown with at least this many digits is an answer wherever it appears in
#: its chapter; in an earlier chapter, with at least :data:`BOOK_DIGITS` (a "14.2"
#: chapters apart is more likely another quantity than the answer).
DISTINCT_DIGITS = 3
BOOK_DIGITS = 4
_VISIBLE_MIMES = ("text/plain", "text/markdown")


@dataclass(frozen=True)
class Reveal:
    """One prediction: its predict cell, and the answers its reveal glues."""

    chapter: str
    cell: int  # the predict cell; the reveal is ``cell + 1``
    answers: Mapping[str, Any]


def _output_texts(cell: Mapping[str, Any]) -> list[str]:
    """The text each output of a code cell shows, in order (recorded glue values show nothing)."""
    texts = []
    for out in cell.get("outputs", []):
        if out.get("output_type") == "stream":
            t = out.get("text", "")
        else:
            data = out.get("data", {})
            mime = next((m for m in _VISIBLE_MIMES if m in data), None)
            t = data.get(mime, "") if mime else ""
        texts.append("".join(t) if isinstance(t, list) else t)
    return texts


def preview_line(cell: Mapping[str, Any]) -> str:
    """What JupyterLab shows of a folded output: the first non-empty line of the first output."""
    texts = _output_texts(cell)
    return next((line for line in texts[0].split("\n") if line), "") if texts else ""


#: The tag of a cell that only records values for the prose (``glue``), after the cell that computed them.
VALUES_TAG = "prose-values"


def _tags(cell: Mapping[str, Any]) -> list[str]:
    return cell.get("metadata", {}).get("tags", [])


def reveals(nb: Mapping[str, Any], chapter: str = "") -> list[Reveal]:
    """Every prediction of ``nb`` whose reveal (the next cell, with the ``prose-values`` cells right
    after it, which record its values) glues its answer."""
    cells = nb.get("cells", [])
    found = []
    for i, cell in enumerate(cells[:-1]):
        if "predict" not in _tags(cell):
            continue
        k = i + 2
        while k < len(cells) and VALUES_TAG in _tags(cells[k]):
            k += 1
        glued = glued_values({"cells": cells[i + 1:k]})
        named = cell.get("metadata", {}).get(_META_KEY, {}).get(_ANSWER_KEY)
        if named is not None:
            if not isinstance(named, list) or not all(isinstance(n, str) for n in named):
                raise ValueError(f"{chapter} cell {i}: metadata.lanes.answer must be a list of names")
            missing = [n for n in named if n not in glued]
            if missing:
                raise ValueError(f"{chapter} cell {i}: answer {', '.join(missing)} is not glued"
                                 " by the reveal (the next cell, or the values cells after it)")
            glued = {n: glued[n] for n in named}
        found.append(Reveal(chapter, i, glued))
    return found


#: The decimals a table or a printout shows one seed's float with (pandas' display precision is
#: 2 or 3 in the chapters).
TABLE_DECIMALS = (1, 2, 3)


def answer_texts(value: Any, specs: Iterable[str] = ()) -> set[str]:
    """The texts a chapter shows ``value`` as: plain, with separators, and each spec of its prose.

    A list of values (an answer per seed) is shown by any one of them, so each is looked for: at
    each spec without its ``|min`` or ``|max``, and a float also at the decimals of a table
    (:data:`TABLE_DECIMALS`): one seed's run shown in a table before the question shows the answer
    whatever the prose's spec.
    """
    if isinstance(value, bool):
        return set()
    if isinstance(value, (list, tuple)):
        picked = {"|".join(m for m in spec.split("|") if m.strip() not in ("min", "max"))
                  for spec in specs}
        table = {f".{k}f" for k in TABLE_DECIMALS}
        return set().union(*(answer_texts(v, picked | (table if isinstance(v, float) else set()))
                             for v in value))
    texts = set()
    if isinstance(value, int) or (isinstance(value, float) and value.is_integer()):
        texts |= {str(int(value)), f"{int(value):,}"}
    if isinstance(value, (int, float)):
        for spec in specs:
            try:
                texts.add(format_value(value, spec))
            except ValueError:
                pass
    elif isinstance(value, str) and value.strip():
        texts.add(value.strip())
    return texts


def _distinct(text: str, digits: int = DISTINCT_DIGITS) -> bool:
    # a word answer ("preempt", "less") is one of the options the question names
    return sum(ch.isdigit() for ch in text) >= digits


def _shows(text: str, haystack: str) -> bool:
    if not any(ch.isdigit() for ch in text):
        return re.search(r"(?<![\w:.-])" + re.escape(text) + r"(?![\w:])", haystack) is not None
    return re.search(r"(?<![\w.,])" + re.escape(text) + r"(?!\w|[.,]\d)", haystack) is not None


def _specs_by_name(nb: Mapping[str, Any]) -> dict[str, set[str]]:
    specs: dict[str, set[str]] = {}
    for _, template, _ in templated_cells(nb):
        for p in placeholders(template):
            specs.setdefault(p.name, set()).add(p.spec)
    return specs


def check_predictions(chapters: Iterable[tuple[str, Mapping[str, Any]]]) -> list[str]:
    """Answers visible before their reveal, one line each, reading ``chapters`` in order.

    ``chapters`` holds ``(name, notebook)`` pairs in reading order.  Every
    earlier cell (source and outputs) of the book counts as seen, and of the
    reveal itself its source and its preview line.
    """
    seen: list[tuple[str, str]] = []  # (where, text) of everything read so far
    problems = []
    for name, nb in chapters:
        cells = nb.get("cells", [])
        specs = _specs_by_name(nb)
        shown = [(f"{name} cell {j}", "\n".join([_source(c), *_output_texts(c)]))
                 for j, c in enumerate(cells)]
        for rev in reveals(nb, name):
            reveal = cells[rev.cell + 1]
            here = shown[:rev.cell + 1] + [(f"{name} cell {rev.cell + 1} (its source)",
                                            _source(reveal))]
            preview = (f"{name} cell {rev.cell + 1} (its folded preview line)", preview_line(reveal))
            for answer, value in rev.answers.items():
                for text in sorted(answer_texts(value, specs.get(answer, ()))):
                    looked_at = ((seen if _distinct(text, BOOK_DIGITS) else [])
                                 + (here if _distinct(text) else []) + [preview])
                    places = [w for w, t in looked_at if _shows(text, t)]
                    if places:
                        problems.append(f"{name} cell {rev.cell}: the answer {answer} = {text!r}"
                                        f" is shown before its reveal, in {places[0]}"
                                        + (f" (and {len(places) - 1} more)" if len(places) > 1 else ""))
        seen += shown
    return problems


# ---------------------------------------------------------------------------
# The claim ledger: every sentence bound to the checks of the values it speaks of
#
# The checks above read a sentence's computed values (bound words, rendered
# comparisons, units after a placeholder, typed numbers).  A sentence says more
# than its numbers: which design wins, which way a curve bends, what causes what,
# how far a result reaches ("on one slot", "every seed"), what share is kept or
# lost, in words ("sixteen") and in formulas.  Each sentence of every markdown
# cell (its template where it has one, its text where not) is therefore recorded,
# once reviewed, in ``tests/chapters/prose_ledger/<chapter>.json``: its text, the
# kinds of claim it makes (:data:`CLAIM_KINDS`), the computed values it shows, the
# numbers it types (words included), and the checks bound to it (the claims
# tests that read those values).  A sentence whose text, claims or checks differ
# from the record fails (:func:`check_ledger`) until its author records it again
# (:func:`record`), which prints each new binding for review:
#
#     python scripts/prose_tools.py record notebooks/03_headroom.ipynb   # or --all
#
# What no fingerprint can see is checked semantically too: the bound words,
# comparison words and units above, rate units ("per minute" after a value
# whose name does not say minutes, :func:`check_rate_units`) and formulas,
# evaluated against a reference and the chapter's own values (:func:`check_formulas`).

LEDGER_DIR = Path(__file__).resolve().parents[1] / "tests" / "chapters" / "prose_ledger"
CLAIMS_TESTS = Path(__file__).resolve().parents[1] / "tests" / "chapters"

_NUMBER_WORDS = {
    "zero": 0, "one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "seven": 7,
    "eight": 8, "nine": 9, "ten": 10, "eleven": 11, "twelve": 12, "thirteen": 13,
    "fourteen": 14, "fifteen": 15, "sixteen": 16, "seventeen": 17, "eighteen": 18,
    "nineteen": 19, "twenty": 20, "thirty": 30, "forty": 40, "fifty": 50, "sixty": 60,
    "seventy": 70, "eighty": 80, "ninety": 90, "hundred": 100, "thousand": 1000,
    "million": 10 ** 6, "billion": 10 ** 9, "dozen": 12, "half": 0.5, "halves": 0.5, "halve": 0.5,
    "quarter": 0.25, "quarters": 0.25, "third": 1 / 3, "thirds": 1 / 3, "twice": 2, "double": 2,
    "doubles": 2, "triple": 3, "thrice": 3, "tenfold": 10, "hundredfold": 100,
    "single": 1, "once": 1, "first": 1,
}
_NUMBER_WORD_RE = re.compile(r"(?i)\b(" + "|".join(sorted(_NUMBER_WORDS, key=len, reverse=True)) + r")\b")


def _words(*words: str) -> re.Pattern:
    return re.compile(r"(?i)(?<![\w-])(?:" + "|".join(words) + r")(?![\w-])")


#: The kinds of claim a sentence can make, each recognised by its words.  A sentence
#: making any of them is claim-bearing; its record lists which, so a review sees them.
CLAIM_KINDS: dict[str, re.Pattern] = {
    "number": re.compile(r"\d|\{\{"),
    "number-word": _NUMBER_WORD_RE,
    "comparison": _words(
        r"more", r"less", r"fewer", r"greater", r"higher", r"lower", r"larger", r"smaller",
        r"bigger", r"longer", r"shorter", r"faster", r"slower", r"better", r"worse", r"above",
        r"below", r"over", r"under", r"than", r"exceeds?", r"beyond", r"ahead", r"behind",
        r"outperforms?", r"cheaper", r"dearer", r"wider", r"narrower", r"closer", r"further",
        r"farther", r"earlier", r"later", r"same", r"equal\w*", r"times", r"ratio", r"instead",
        r"unlike", r"like", r"against", r"versus", r"vs\.?", r"beside", r"compared"),
    "winner": re.compile(
        r"(?i)(?<![\w-])(?:best|worst|wins?|won|winner|losers?|beats?|beaten|most|least|fewest"
        r"|highest|lowest|largest|smallest|longest|shortest|fastest|slowest|optimal|optimi[sz]\w*"
        r"|fifo|fcfs|priority|preempt\w*|reserve|hybrid|sjf|srpt|round-robin|token-fair"
        r"|static|continuous|deadline|aging|chunk\w*)(?![\w-])|`[a-z_]+:\d+`"),
    "trend": _words(
        r"rises?", r"rising", r"rose", r"falls?", r"falling", r"fell", r"grows?", r"growing",
        r"grew", r"shrinks?", r"shrinking", r"shrank", r"widens?", r"widening", r"narrows?",
        r"narrowing", r"flattens?", r"flat", r"bends?", r"bent", r"climbs?", r"climbing",
        r"drops?", r"dropping", r"dropped", r"increas\w*", r"decreas\w*", r"declines?", r"steep\w*",
        r"saturat\w*", r"plateaus?", r"levels? off", r"peaks?", r"doubl\w*", r"halv\w*",
        r"collaps\w*", r"explod\w*", r"vanish\w*", r"linear\w*", r"quadratic\w*",
        r"exponential\w*", r"upwards?", r"downwards?", r"sooner", r"up", r"down", r"knee",
        r"stays?", r"steady", r"constant", r"stable", r"jumps?", r"spikes?", r"swings?"),
    "cause": _words(
        r"because", r"since", r"so", r"therefore", r"thus", r"hence", r"despite", r"although",
        r"though", r"while", r"whereas", r"due", r"caus\w*", r"explain\w*", r"drives?",
        r"driven", r"leads?", r"why", r"results?", r"resulting", r"owing", r"makes?", r"means?",
        r"through", r"thanks", r"unless", r"if", r"when", r"even", r"yet", r"but", r"only if",
        r"without", r"from", r"by", r"for"),
    "scope": _words(
        r"all", r"every\w*", r"any\w*", r"each", r"none", r"no", r"never", r"always", r"only",
        r"some", r"most", r"many", r"few", r"both", r"neither", r"either", r"whenever",
        r"general\w*", r"universal\w*", r"whatever", r"wherever", r"single", r"alone", r"nobody",
        r"nothing", r"regardless", r"this", r"these", r"here", r"one", r"whole", r"entire\w*",
        r"per", r"sometimes", r"often", r"rarely", r"usually", r"typical\w*", r"not", r"n't"),
    "share": re.compile(
        r"(?i)%|(?<![\w-])(?:percent\w*|shares?|fractions?|half|quarter|third|proportion\w*"
        r"|ratios?|rates?|majority|minority|portion|utili[sz]ation|load|busy|idle)(?![\w-])"),
    "complement": _words(
        r"keeps?", r"kept", r"costs?", r"loses?", r"lost", r"saves?", r"saved", r"miss\w*",
        r"meets?", r"met", r"answer\w*", r"served?", r"late", r"on time", r"finish\w*",
        r"rejects?", r"rejected", r"accept\w*", r"admit\w*", r"succeed\w*", r"fails?", r"failed",
        r"wait\w*", r"free", r"full", r"empty", r"evict\w*", r"starv\w*", r"completes?",
        r"completed", r"gains?", r"pays?", r"paid", r"holds?", r"held"),
    "unit": re.compile(
        r"(?i)(?:\d|\}\})\s*(?:%|s|ms|us|µs|h|min|GB|GiB|MB|TB|GB/s|TB/s|TFLOP/s)(?![\w])"
        r"|(?<![\w-])(?:seconds?|minutes?|hours?|days?|milliseconds?|tokens?|requests?|slots?"
        r"|jobs?|sequences?|bytes?|per \w+|steps?|FLOPs?|servers?|GPUs?)(?![\w-])"),
    "formula": re.compile(r"\$[^$]+\$"),
}


@dataclass(frozen=True)
class Sentence:
    """One sentence of a chapter's markdown, as its template (or untemplated text) types it."""

    cell: int  # the markdown cell's index
    cell_id: str
    text: str  # whitespace collapsed


_MASKS = ((r"```.*?```", re.S), (r"`[^`\n]*`", 0), (r"\$\$.*?\$\$", re.S), (r"\$[^$\n]*\$", 0),
          (r"\]\([^)]*\)", 0), (r"\{\{[^{}]*\}\}", 0), (r"\([^()\n]*\)", 0))
_SENTENCE_SPLIT = re.compile(r"(?<=[.?!])[)\]\"'*_]*(?=\s+[A-Z*_`$(\[\"'{#-])")
_BLOCK_START = re.compile(r"\s*(?:#|\||[-*+]\s|\d+\.\s|>)")


def _masked(text: str) -> str:
    for pattern, flags in _MASKS:
        text = re.sub(pattern, lambda m: "x" * len(m.group(0)), text, flags=flags)
    return text


def _blocks(text: str) -> list[str]:
    """Paragraphs, headings, list items, table rows and code blocks of a markdown text."""
    blocks: list[str] = []
    cur: list[str] = []
    fence = False

    def flush():
        if cur and "".join(cur).strip():
            blocks.append("\n".join(cur))
        cur.clear()

    for line in text.split("\n"):
        if fence:
            cur.append(line)
            if line.strip().startswith("```"):
                fence = False
                flush()
            continue
        if line.strip().startswith("```"):
            flush()
            cur.append(line)
            fence = True
            continue
        if not line.strip():
            flush()
        elif _BLOCK_START.match(line):
            flush()
            cur.append(line)
            if line.strip()[0] in "#|":
                flush()
        else:
            cur.append(line)
    flush()
    return blocks


def split_sentences(text: str) -> list[str]:
    """The sentences of a markdown text, whitespace collapsed, in order.

    Headings, list items, table rows and code blocks are units of their own; a
    paragraph is cut after ``.``, ``?`` or ``!`` followed by a capital (never
    inside code, maths, a placeholder, a link target or parentheses).
    """
    found = []
    for block in _blocks(text):
        if block.lstrip().startswith("```"):
            found.append(block.strip())
            continue
        cuts = [0] + [m.end() for m in _SENTENCE_SPLIT.finditer(_masked(block))] + [len(block)]
        for a, b in zip(cuts, cuts[1:]):
            s = " ".join(block[a:b].split())
            if s:
                found.append(s)
    return found


def code_prose(source: str) -> list[tuple[int, int, str]]:
    """The prose a code cell shows a reader: (start, end, text) of each comment and of each
    string of two words or more (a figure's title, an axis label, a printed line).

    Comments on consecutive lines are one block.  A cell that does not tokenize as
    Python has none.
    """
    import io
    import tokenize

    starts = [0]
    for line in source.splitlines(keepends=True):
        starts.append(starts[-1] + len(line))
    try:
        tokens = list(tokenize.generate_tokens(io.StringIO(source).readline))
    except (tokenize.TokenError, IndentationError, SyntaxError):
        return []

    def at(row: int, col: int) -> int:
        return starts[row - 1] + col

    found: list[tuple[int, int, str]] = []
    block: list[tuple[int, int, str, int]] = []  # (start, end, text, row)

    def flush():
        if block:
            found.append((block[0][0], block[-1][1], " ".join(b[2] for b in block)))
            block.clear()

    for tok in tokens:
        if tok.type == tokenize.COMMENT:
            text = tok.string.lstrip("#").strip()
            if block and tok.start[0] != block[-1][3] + 1:
                flush()
            if text:
                block.append((at(*tok.start), at(*tok.end), text, tok.start[0]))
            continue
        if tok.type not in (tokenize.NL, tokenize.NEWLINE, tokenize.INDENT, tokenize.DEDENT):
            flush()
        if tok.type == tokenize.STRING:
            m = re.match(r"[rRbBuUfF]*('''|\"\"\"|'|\")", tok.string)
            quote = m.group(1) if m else ""
            body = tok.string[m.end():len(tok.string) - len(quote)] if m else tok.string
            if len(re.findall(r"[A-Za-z]{2,}", body)) >= 2:
                found.append((at(*tok.start), at(*tok.end), " ".join(body.split())))
    flush()
    return sorted(found)


def sentences(nb: Mapping[str, Any]) -> list[Sentence]:
    """Every sentence a reader of ``nb`` reads: of every markdown cell (of its template where
    it has one), the prose of its code cells (:func:`code_prose`, marked ``[code]``) and
    its figures' alt text (``[alt]``)."""
    found = []
    for i, cell in enumerate(nb.get("cells", [])):
        cid = str(cell.get("id", i))
        if cell.get("cell_type") == "markdown":
            text = template_of(cell)
            text = _source(cell) if text is None else text
            found += [Sentence(i, cid, s) for s in split_sentences(text)]
        elif cell.get("cell_type") == "code":
            found += [Sentence(i, cid, f"[code] {t}") for _, _, t in code_prose(_source(cell))]
            alt = cell.get("metadata", {}).get("mystnb", {}).get("image", {}).get("alt")
            if isinstance(alt, str) and alt.strip():
                found += [Sentence(i, cid, f"[alt] {s}") for s in split_sentences(alt)]
    return found


def claim_kinds(text: str) -> list[str]:
    """The kinds of claim (:data:`CLAIM_KINDS`) that ``text`` makes, in the table's order."""
    prose = re.sub(r"\$[^$]*\$", " ", text)
    return [kind for kind, pattern in CLAIM_KINDS.items()
            if pattern.search(text if kind in ("formula", "winner", "number") else prose)]


def typed_numbers(text: str) -> list[str]:
    """The numbers ``text`` types (digits outside placeholders, and number words as ``word=value``)."""
    bare = PLACEHOLDER.sub(" ", text)
    found = re.findall(r"(?<![\w.])\d+(?:,\d{3})*(?:\.\d+)?%?", bare)
    found += [f"{m.group(1).lower()}={_NUMBER_WORDS[m.group(1).lower()]:g}"
              for m in _NUMBER_WORD_RE.finditer(re.sub(r"`[^`]*`|\$[^$]*\$", " ", bare))]
    return found


def claims_tests(stem: str, root: Path = CLAIMS_TESTS) -> dict[str, list[str]]:
    """Glued name -> the functions of the chapter's claims test that name it (as a string)."""
    path = root / f"test_claims_{stem[:2]}.py"
    if not path.exists():
        return {}
    tree = ast.parse(path.read_text(encoding="utf-8"))
    names: dict[str, list[str]] = {}

    def visit(node, owner):
        for child in ast.iter_child_nodes(node):
            here = owner
            if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                here = f"{owner}::{child.name}" if owner and isinstance(node, ast.ClassDef) else child.name
            if isinstance(child, ast.Constant) and isinstance(child.value, str) and owner:
                lst = names.setdefault(child.value, [])
                if owner not in lst:
                    lst.append(owner)
            visit(child, here)

    visit(tree, "")
    return {k: [f"{path.name}::{f}" for f in v] for k, v in names.items()}


#: Cardinal number words a sentence may type as a quantity (ordinals and "one" are
#: too often not a quantity: "one of them", "first").
_CARDINALS = {w: v for w, v in _NUMBER_WORDS.items()
              if isinstance(v, int) and 2 <= v <= 100 and w not in ("double", "doubles", "twice",
                                                                   "triple", "thrice")}
_LEDGER_FIELDS = ("text", "kinds", "values", "numbers", "relations", "checks")


def _is_number(v: Any) -> bool:
    return isinstance(v, (int, float)) and not isinstance(v, bool)


def relations(text: str, values: Mapping[str, Any]) -> list[str]:
    """The facts a sentence's words rest on, recomputed from the chapter's values.

    For the values the sentence shows (its placeholders; a list by its least and
    greatest member) and the numbers it types (digits and cardinal number words):
    the sign of each value, the order of every pair (``a < b``, ``a = b``), and the
    design or word a text value names.  A comparison, winner, share or trend the
    words state rests on these; the ledger records them, so a re-run that turns
    one over (the values change, the words stay) fails until the sentence is
    re-read and recorded again.
    """
    import itertools

    items: list[tuple[str, float, bool]] = []  # (label, value, typed)
    facts: list[str] = []
    for name in sorted({p.name for p in placeholders(text)}):
        v = values.get(name)
        if _is_number(v):
            items.append((name, float(v), False))
        elif isinstance(v, (list, tuple)) and v and all(_is_number(x) for x in v):
            items += [(f"min({name})", float(min(v)), False), (f"max({name})", float(max(v)), False)]
        elif isinstance(v, str):
            facts.append(f"{name} = {v!r}")
    bare = re.sub(r"`[^`]*`|\$[^$]*\$|\]\([^)]*\)", " ", PLACEHOLDER.sub(" ", text))
    typed = {}
    for m in re.finditer(r"(?<![\w.:/-])\d+(?:,\d{3})*(?:\.\d+)?%?(?![\w/:])", bare):
        try:
            typed.setdefault(m.group(0), _read_number(m.group(0)))
        except ValueError:
            continue
    for m in _NUMBER_WORD_RE.finditer(bare):
        w = m.group(1).lower()
        if w in _CARDINALS:
            typed.setdefault(w, float(_CARDINALS[w]))
    items += [(label, v, True) for label, v in typed.items()]

    def order(a: float, b: float) -> str:
        return "<" if a < b else ">" if a > b else "="

    for label, v, is_typed in items:
        if not is_typed:
            facts.append(f"{label} {order(v, 0.0)} 0")
    for (la, a, ta), (lb, b, tb) in itertools.combinations(items, 2):
        if not (ta and tb):
            facts.append(f"{la} {order(a, b)} {lb}")
    return facts


def _fingerprint(entry: Mapping[str, Any]) -> str:
    import hashlib
    import json

    body = {k: entry.get(k) for k in _LEDGER_FIELDS}
    return hashlib.sha256(json.dumps(body, sort_keys=True, ensure_ascii=False).encode()).hexdigest()[:16]


def ledger(nb: Mapping[str, Any], stem: str, tests: Mapping[str, list[str]] | None = None) -> list[dict]:
    """The record of every sentence of ``nb``: text, claim kinds, values, typed numbers,
    the facts its words rest on (:func:`relations`) and the claims tests of its values."""
    tests = claims_tests(stem) if tests is None else tests
    glued = glued_values(nb)
    entries = []
    for s in sentences(nb):
        names = tuple(sorted({p.name for p in placeholders(s.text)}))
        entry = dict(_record_of(s.text, tuple((n, repr(glued.get(n))) for n in names),
                                tuple(tuple(tests.get(n, ())) for n in names)))
        entries.append({"cell": s.cell_id, **entry})
    return entries


@functools.lru_cache(maxsize=8192)
def _record_of(text: str, shown: tuple[tuple[str, str], ...], bound: tuple[tuple[str, ...], ...]) -> tuple:
    values = {n: ast.literal_eval(v) for n, v in shown if v != "None"}
    checks = [f"{n}: " + (", ".join(b) if b else "rendered (bound words, units, comparisons checked)")
              for (n, _), b in zip(shown, bound)]
    entry = {"text": text, "kinds": claim_kinds(text), "values": [n for n, _ in shown],
             "numbers": typed_numbers(text), "relations": relations(text, values), "checks": checks}
    entry["fp"] = _fingerprint(entry)
    return tuple(entry.items())


def ledger_path(stem: str, directory: Path = LEDGER_DIR) -> Path:
    return directory / f"{stem}.json"


def load_ledger(stem: str, directory: Path = LEDGER_DIR) -> list[dict]:
    import json

    path = ledger_path(stem, directory)
    if not path.exists():
        return []
    return json.loads(path.read_text(encoding="utf-8"))["sentences"]


def check_ledger(nb: Mapping[str, Any], stem: str, recorded: list[dict] | None = None,
                 tests: Mapping[str, list[str]] | None = None) -> list[str]:
    """Sentences that differ from their reviewed record, one line each (empty when all match).

    A sentence not recorded (new, or its text changed), a recorded one no longer
    in the chapter, and one whose claims, values, numbers or checks are not the
    ones recorded (a claims test gone, a value renamed) each fail; so does a
    record whose fingerprint is not the tool's (edited by hand).
    """
    recorded = load_ledger(stem) if recorded is None else recorded
    now = ledger(nb, stem, tests)
    if not recorded:
        return [f"{stem}: no prose ledger; record it: python scripts/prose_tools.py record"
                f" notebooks/{stem}.ipynb"]
    problems = []
    pool: dict[str, list[dict]] = {}
    for r in recorded:
        if r.get("fp") != _fingerprint(r):
            problems.append(f"{stem}: the record of {r.get('text', '')[:70]!r} was edited by hand"
                            " (its fingerprint is not the tool's); record it again")
        pool.setdefault(r["text"], []).append(r)
    for e in now:
        match = pool.get(e["text"])
        if not match:
            problems.append(f"{stem} markdown cell {e['cell']}: sentence not in its reviewed record"
                            f" (new or changed; claims {', '.join(e['kinds']) or 'none'}): {e['text'][:160]!r}")
            continue
        r = match.pop(0)
        if r["fp"] != e["fp"]:
            what = [k for k in _LEDGER_FIELDS[1:] if r.get(k) != e[k]]
            if what == ["relations"]:
                turned = sorted(set(r.get("relations") or ()) - set(e["relations"]))
                problems.append(f"{stem} markdown cell {e['cell']}: a fact the sentence rests on turned"
                                f" over (recorded {turned}, now"
                                f" {sorted(set(e['relations']) - set(r.get('relations') or ()))}):"
                                f" re-read {e['text'][:160]!r} against the new values, then record it")
            else:
                problems.append(f"{stem} markdown cell {e['cell']}: the {', '.join(what)} of"
                                f" {e['text'][:80]!r} changed (recorded {[r.get(k) for k in what]},"
                                f" now {[e[k] for k in what]})")
    for rest in pool.values():
        for r in rest:
            problems.append(f"{stem}: recorded sentence no longer in the chapter: {r['text'][:160]!r}")
    return problems


def _word_changes(old: str, new: str) -> list[str]:
    """The words ``new`` changed from ``old``, as ``a -> b``."""
    import difflib

    a, b = old.split(), new.split()
    found = []
    for op, i1, i2, j1, j2 in difflib.SequenceMatcher(None, a, b, autojunk=False).get_opcodes():
        if op != "equal":
            found.append(f"{' '.join(a[i1:i2]) or '(nothing)'} -> {' '.join(b[j1:j2]) or '(nothing)'}")
    return found


def verify(nb: Mapping[str, Any], stem: str) -> list[str]:
    """The chapter's prose checks (rendering, bound words, typed numbers and words, rate
    units, formulas), with the phrases, thresholds and formulas its tests list."""
    import importlib.util

    def listed(name: str, attr: str) -> dict:
        path = CLAIMS_TESTS / name
        if not path.exists():
            return {}
        spec = importlib.util.spec_from_file_location(f"_lanes_{path.stem}", path)
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        return getattr(module, attr, {}).get(stem, {})

    problems = check_prose(nb, thresholds=listed("test_prose.py", "THRESHOLDS"),
                           literals=listed("test_prose.py", "PHRASES"))
    problems += check_rate_units(nb)
    if (CLAIMS_TESTS / "test_formulas.py").exists():
        problems += check_formulas(nb, listed("test_formulas.py", "FORMULAS"))
    return problems


def record(paths: Iterable[Path], directory: Path = LEDGER_DIR, out=None, *, verify: bool = True) -> int:
    """Record the ledger of each chapter at ``paths``; returns how many chapters failed to record.

    Prints every sentence that is new or changed (with the words changed from the
    nearest recorded sentence of its cell, and the facts that turned over), so the
    review reads what moved.  With ``verify`` a chapter whose prose checks fail
    (:func:`verify`) is not recorded: its problems are printed instead.
    """
    import difflib
    import json
    import sys

    out = sys.stdout if out is None else out
    check = globals()["verify"]
    failed = 0
    for path in paths:
        path = Path(path)
        stem = path.stem
        nb = json.loads(path.read_text(encoding="utf-8"))
        if verify:
            problems = check(nb, stem)
            if problems:
                print(f"== {stem}: not recorded; its prose checks fail:", file=out)
                for p in problems:
                    print(f"   {p}", file=out)
                failed += 1
                continue
        recorded = load_ledger(stem, directory)
        old = {(r["text"], r["fp"]) for r in recorded}
        now = ledger(nb, stem)
        kept = {(e["text"], e["fp"]) for e in now}
        new = [e for e in now if (e["text"], e["fp"]) not in old]
        gone = [r for r in recorded if (r["text"], r["fp"]) not in kept]
        claiming = [e for e in now if set(e["kinds"]) - {"unit"}]
        computed = [e for e in claiming if e["values"]]
        print(f"== {stem}: {len(now)} sentences, {len(claiming)} make claims, {len(computed)} of them"
              f" show computed values; {len(new)} new or changed, {len(gone)} removed", file=out)
        for e in new:
            same = [r for r in gone if r["text"] == e["text"]]
            print(f"+ cell {e['cell']} [{', '.join(e['kinds'])}]\n    {e['text']}", file=out)
            if same:
                turned = sorted(set(same[0].get("relations") or ()) ^ set(e["relations"]))
                print(f"    facts turned over (re-read the words against them): {turned}", file=out)
            else:
                near = sorted(gone, key=lambda r: (r["cell"] != e["cell"],
                                                   -difflib.SequenceMatcher(None, r["text"], e["text"]).ratio()))
                if near and difflib.SequenceMatcher(None, near[0]["text"], e["text"]).ratio() > 0.6:
                    print(f"    was: {near[0]['text']}", file=out)
                    print(f"    words changed: {'; '.join(_word_changes(near[0]['text'], e['text']))}", file=out)
            if e["numbers"]:
                print(f"    typed numbers: {', '.join(e['numbers'])}", file=out)
            for c in e["checks"]:
                print(f"    check: {c}", file=out)
            if not e["checks"] and set(e["kinds"]) - {"unit", "scope", "cause"}:
                print("    check: none computed; review the words against the chapter's results", file=out)
        directory.mkdir(parents=True, exist_ok=True)
        lines = ",\n".join(json.dumps(e, ensure_ascii=False) for e in now)
        ledger_path(stem, directory).write_text(
            f'{{"chapter": {json.dumps(stem)}, "sentences": [\n{lines}\n]}}\n', encoding="utf-8")
    return failed


# ---------------------------------------------------------------------------
# Rate units: "per minute" after a value is the unit its name states
#
# A rate's unit often stands a few words after its value ("{{rate:g}} requests
# per second").  The course's rates are per second unless a value's name says
# otherwise (``_per_min``, ``_min``, ``_per_h``, ``_h``), so "per minute" or
# "per hour" after a value whose name does not say so fails, and so does "per
# second" after one whose name says minutes or hours.

_RATE_UNIT = re.compile(r"(?i)^[^.;:{}()]{0,40}?\bper\s+(second|minute|hour|day)\b")
_RATE_SUFFIX = {"minute": ("_min", "_per_min", "_pm"), "hour": ("_h", "_per_h", "_hour"),
                "day": ("_day", "_per_day", "_d")}


def check_rate_units(nb: Mapping[str, Any]) -> list[str]:
    """A rate unit ("per minute") a few words after a placeholder that its name contradicts."""
    problems = []
    for i, template, _ in templated_cells(nb):
        raw = _collapse(template)
        marks = placeholders(raw)
        for k, p in enumerate(marks):
            stop = marks[k + 1].start if k + 1 < len(marks) else len(raw)
            m = _RATE_UNIT.match(raw[p.end:stop])
            if m is None:
                continue
            unit, name = m.group(1).lower(), p.name.lower()
            says = next((u for u, suffixes in _RATE_SUFFIX.items() if name.endswith(suffixes)), "second")
            if unit != says:
                problems.append(f"markdown cell {i}: {{{{{p.name}}}}} is followed by 'per {unit}', but its"
                                f" name states a rate per {says}" + ("" if says != "second" else
                                f" (end it in {' or '.join(_RATE_SUFFIX[unit])} if it is per {unit})"))
    return problems



# ---------------------------------------------------------------------------
# Formulas: evaluated, against a reference and on the chapter's own values
#
# A formula the prose states (``$S / (1 - \rho)$``) is translated from its LaTeX
# (the subset the chapters use: ``\frac``, ``\sqrt``, powers, ``\times``,
# ``\cdot``, ``\ln``, Greek letters, subscripts, ``E[S^2]``, implicit products,
# one relation) into Python and checked (:func:`check_formulas`): a formula with
# no symbols must hold as written (``-\ln(0.01) \approx 4.6``); one with symbols
# must be bound (:class:`Formula`) to a reference expression, which it must equal
# at random values of its symbols, and, where the chapter glues its inputs and the
# value it prints, evaluate on those inputs to the value printed.

_GREEK = ("alpha", "beta", "gamma", "delta", "epsilon", "lambda", "mu", "nu", "rho", "sigma", "tau",
          "theta", "phi", "pi", "omega", "kappa", "eta", "xi", "zeta", "chi", "psi")
_FUNCS = {"sqrt": "sqrt", "ln": "log", "log": "log", "exp": "exp"}
_RELATIONS = (("\\approx", "~"), ("\\leq", "<="), ("\\geq", ">="), ("\\le", "<="), ("\\ge", ">="),
              ("\\ne", "!="), ("\\neq", "!="), ("\\lt", "<"), ("\\gt", ">"))


@dataclass(frozen=True)
class Formula:
    """What a formula of the prose states, as a reviewer wrote it in Python.

    ``reference`` uses the formula's symbols by their names (``rho``, ``lambda_``
    for ``\\lambda``, ``rho_short`` for ``\\rho_{\\text{short}}``, ``E_S_2`` for
    ``E[S^2]``; see :func:`formula_symbols`) and the same relation, if any
    (``L == lambda_ * W``).  ``values`` maps symbols to glued names (or numbers)
    and ``result`` names the glued value the prose prints for the formula's
    expression side (or is an expression of glued values, compared within
    ``tol``), so the formula is evaluated on the chapter's inputs.  Inputs and
    results may use ``min``, ``max``, ``sqrt``, ``log`` and ``exp``, and lists.
    ``domain`` gives each symbol's (low, high) range for the random check.
    """

    reference: str
    values: Mapping[str, Any] | None = None
    result: str | None = None
    domain: Mapping[str, tuple[float, float]] | None = None
    #: relative tolerance when ``result`` is an expression (a glued name is compared as printed)
    tol: float = 1e-6


def _braced(text: str, i: int) -> tuple[str, int]:
    """The group starting at ``text[i]`` (``{...}`` or one character) and the offset after it."""
    while i < len(text) and text[i] == " ":
        i += 1
    if i >= len(text):
        raise ValueError("a formula ends where a group was expected")
    if text[i] != "{":
        if text[i] == "\\":
            m = re.match(r"\\[A-Za-z]+", text[i:])
            return m.group(0), i + m.end()
        return text[i], i + 1
    depth = 0
    for j in range(i, len(text)):
        depth += {"{": 1, "}": -1}.get(text[j], 0)
        if depth == 0:
            return text[i + 1:j], j + 1
    raise ValueError(f"unbalanced braces in {text!r}")


def _tex_expr(tex: str) -> str:
    """One side of a formula (no relation), as Python with ``⟨name⟩`` tokens, then joined."""
    out, i = [], 0
    while i < len(tex):
        ch = tex[i]
        if tex.startswith("\\frac", i):
            a, i = _braced(tex, i + 5)
            b, i = _braced(tex, i)
            out.append(f"(({_tex_expr(a)})/({_tex_expr(b)}))")
        elif tex.startswith("\\text", i) or tex.startswith("\\mathrm", i):
            a, i = _braced(tex, i + (5 if tex.startswith("\\text", i) else 7))
            out.append("⟨" + re.sub(r"\W", "_", a) + "⟩")
        elif ch == "\\":
            m = re.match(r"\\([A-Za-z]+|[,;!: ])", tex[i:])
            if m is None:
                raise ValueError(f"cannot read {tex[i:i + 10]!r}")
            name, i = m.group(1), i + m.end()
            if name in _GREEK:
                out.append(f"⟨{name}_⟩" if name == "lambda" else f"⟨{name}⟩")
            elif name in _FUNCS:
                if tex[i:i + 1] == "{":
                    a, i = _braced(tex, i)
                    out.append(f"⟨{_FUNCS[name]}⟩(({_tex_expr(a)}))")
                else:
                    out.append(f"⟨{_FUNCS[name]}⟩")
            elif name in ("times", "cdot"):
                out.append("*")
            elif name in ("left", "right", "quad", "qquad") or not name.isalpha():
                pass
            else:
                raise ValueError(f"the formula uses \\{name}, which the checker cannot evaluate")
        elif ch == "E" and tex[i + 1:i + 2] == "[":
            j = tex.index("]", i)
            out.append("⟨E_" + "_".join(re.findall(r"[A-Za-z0-9]+", tex[i + 2:j])) + "⟩")
            i = j + 1
        elif ch == "_":
            a, i = _braced(tex, i + 1)
            sub = "_".join(re.findall(r"[A-Za-z0-9]+", a.replace("\\text", "")))
            if not out or not out[-1].startswith("⟨") and not re.fullmatch(r"[A-Za-z]", out[-1]):
                raise ValueError(f"a subscript with nothing before it in {tex!r}")
            last = out.pop().strip("⟨⟩")
            out.append(f"⟨{last}_{sub}⟩")
        elif ch == "^":
            a, i = _braced(tex, i + 1)
            out.append(f"**({_tex_expr(a)})")
        elif ch in "{}":
            out.append("(" if ch == "{" else ")")
            i += 1
        elif ch.isspace():
            i += 1
        else:
            m = re.match(r"\d+(?:\.\d+)?|[A-Za-z]|[-+*/()]", tex[i:])
            if m is None:
                raise ValueError(f"cannot read {tex[i:i + 10]!r} in a formula")
            out.append(m.group(0))
            i += m.end()
    # implicit products: between an operand's end and an operand's start
    joined = []
    for tok in out:
        starts = tok[0] in "(⟨" or tok[0].isalnum()
        if joined and starts:
            prev = joined[-1]
            ends = prev[-1] in ")⟩" or prev[-1].isalnum()
            is_func = prev.strip("⟨⟩") in _FUNCS.values() and tok.startswith("(")
            if ends and not is_func and not prev.endswith("**"):
                joined.append("*")
        joined.append(tok)
    return re.sub(r"⟨([^⟩]+)⟩", r"\1", "".join(joined))


def formula_python(tex: str) -> tuple[str, str | None, str | None]:
    """``tex`` as Python: (left side, relation or None, right side or None)."""
    body = tex.strip().strip("$").strip().rstrip(".,;").strip()
    for t, py in _RELATIONS:
        body = body.replace(t, f" {py} ")
    parts = re.split(r"\s*(<=|>=|!=|~|=|<|>)\s*", body)
    if len(parts) == 1:
        return _tex_expr(parts[0]), None, None
    if len(parts) != 3:
        raise ValueError(f"a formula with more than one relation: {tex!r}")
    return _tex_expr(parts[0]), parts[1], _tex_expr(parts[2])


def formula_symbols(expr: str) -> set[str]:
    """The free symbols of a Python expression :func:`formula_python` wrote."""
    import keyword

    return {n for n in re.findall(r"[A-Za-z_][A-Za-z0-9_]*", expr)
            if n not in _FUNCS.values() and not keyword.iskeyword(n)} - {"e"}


def _evaluate(expr: str, env: Mapping[str, float]) -> float:
    import math

    names = {"sqrt": math.sqrt, "log": math.log, "exp": math.exp, "e": math.e, "min": min, "max": max,
             "__builtins__": {}}
    return float(eval(expr, names, dict(env)))  # noqa: S307  # noqa: S307 -- our own translation of the chapter's maths


def formulas_in(nb: Mapping[str, Any]) -> list[tuple[int, str]]:
    """(markdown cell, LaTeX) of every formula stating more than a symbol: an operator, a function or a relation."""
    found = []
    for i, cell in enumerate(nb.get("cells", [])):
        if cell.get("cell_type") != "markdown":
            continue
        text = template_of(cell)
        text = _source(cell) if text is None else text
        text = re.sub(r"```.*?```", " ", text, flags=re.S)
        for m in re.finditer(r"\$\$(.+?)\$\$|\$([^$\n]+)\$", text, re.S):
            tex = " ".join((m.group(1) or m.group(2)).split()).rstrip(".,;").strip()
            stripped = re.sub(r"E\[[^\]]*\]|_\{[^}]*\}|\\text\{[^}]*\}", "", tex)
            if re.search(r"[-+*/=<>^]|\\(?:frac|sqrt|times|cdot|ln|log|exp|approx|le|ge)|\d\s*\S", stripped) \
                    or re.search(r"[A-Za-z]\s+[A-Za-z\\]", stripped) or re.search(r"E\[|\^", tex):
                found.append((i, tex))
    return found


def check_formulas(nb: Mapping[str, Any], bound: Mapping[str, Formula], *, draws: int = 8,
                   seed: int = 0) -> list[str]:
    """Formulas of ``nb`` that are unbound, do not hold, differ from their reference, or do
    not give the value the chapter prints; one line each."""
    import random

    values = glued_values(nb)
    specs = _specs_by_name(nb)
    problems = []
    for i, tex in formulas_in(nb):
        where = f"markdown cell {i}: formula ${tex}$"
        try:
            lhs, rel, rhs = formula_python(tex)
        except ValueError as exc:
            problems.append(f"{where}: {exc}")
            continue
        diff = lhs if rel is None else f"({lhs}) - ({rhs})"
        free = formula_symbols(diff)
        if not free:
            a, b = _evaluate(lhs, {}), (None if rhs is None else _evaluate(rhs, {}))
            tol = _half_unit(re.findall(r"\d+(?:\.\d+)?", rhs or "0")[-1]) if rel == "~" else 1e-12
            ok = {None: True, "=": abs(a - b) <= tol, "~": abs(a - b) <= tol, "<": a < b,
                  ">": a > b, "<=": a <= b, ">=": a >= b, "!=": a != b}[rel]
            if not ok:
                problems.append(f"{where} is false ({a:g} {rel} {b:g})")
            continue
        f = bound.get(tex)
        if f is None:
            problems.append(f"{where} is not bound to a reference; bind it (Formula) in"
                            f" tests/chapters/test_formulas.py, symbols {sorted(free)}")
            continue
        r_lhs, r_rel, r_rhs = _split_reference(f.reference)
        if r_rel != rel:
            problems.append(f"{where} states the relation {rel!r}, its reference {r_rel!r}")
            continue
        r_diff = r_lhs if r_rel is None else f"({r_lhs}) - ({r_rhs})"
        missing = free ^ formula_symbols(r_diff)
        if missing:
            problems.append(f"{where}: the symbols differ from its reference's ({sorted(missing)})")
            continue
        rng = random.Random(seed)
        domain = dict(f.domain or {})
        for _ in range(draws):
            env = {s: rng.uniform(*domain.get(s, (0.05, 0.45))) for s in free}
            try:
                a, b = _evaluate(diff, env), _evaluate(r_diff, env)
            except (ZeroDivisionError, ValueError, OverflowError):
                continue
            if abs(a - b) > 1e-9 * max(1.0, abs(a), abs(b)):
                shown = ", ".join(f"{k}={v:.3g}" for k, v in sorted(env.items()))
                problems.append(f"{where} differs from its reference {f.reference!r} (at {shown}:"
                                f" {a:.6g} against {b:.6g})")
                break
        if f.values is not None and f.result is not None:
            expr = lhs if rel is None else rhs
            numbers = {k: v for k, v in values.items()
                       if _is_number(v) or isinstance(v, list) and v and all(_is_number(x) for x in v)}
            try:
                env = {s: (_evaluate(v, numbers) if isinstance(v, str) else float(v))
                       for s, v in f.values.items()}
                printed = _evaluate(f.result, numbers)
            except (NameError, TypeError) as exc:
                problems.append(f"{where}: an input or its result is not glued ({exc})")
                continue
            if not formula_symbols(expr) <= set(env):
                problems.append(f"{where}: an input is unbound ({sorted(formula_symbols(expr) - set(env))})")
                continue
            try:
                got = _evaluate(expr, env)
            except (ZeroDivisionError, ValueError, OverflowError) as exc:
                problems.append(f"{where} cannot be evaluated on the chapter's inputs ({exc})")
                continue
            if f.result in values:
                spec = next(iter(sorted(specs.get(f.result, {"g"}))), "g")
                spec = spec.split("|")[0] if not comparison_words(spec) else "g"
                same = format_value(got, spec) == format_value(printed, spec)
                shown = f"{format_value(got, spec)}, but the chapter prints {f.result} = {format_value(printed, spec)}"
            else:
                same = abs(got - printed) <= f.tol * max(1.0, abs(printed))
                shown = f"{got:.6g}, but the chapter's {f.result} is {printed:.6g}"
            if not same:
                problems.append(f"{where} gives {shown} on the chapter's inputs")
    return problems


def _split_reference(reference: str) -> tuple[str, str | None, str | None]:
    parts = re.split(r"\s*(==|<=|>=|!=|~=|<|>)\s*", reference.strip())
    if len(parts) == 1:
        return parts[0], None, None
    return parts[0], {"==": "=", "~=": "~"}.get(parts[1], parts[1]), parts[2]

# ---------------------------------------------------------------------------
# Slips: the edits an author makes that turn a true sentence false, made mechanically
#
# :func:`slips` applies every kind of slip the course has seen (and the ones beside
# them) to a copy of a chapter's markdown, at the places each applies, in the
# template where a cell has one (re-rendered, as an author's edit would be) and in
# the text where it has none.  The tests assert that each one fails a check
# (``tests/chapters/test_prose_ledger.py``).

def _swap(pairs: Iterable[tuple[str, str]]) -> list[tuple[re.Pattern, str]]:
    """Each word pair as a pattern for the first word and the second as its replacement."""
    return [(re.compile(r"(?<![\w`{:|-])" + re.escape(a) + r"(?![\w`}|-])"), b) for a, b in pairs]


def _both(*pairs: tuple[str, str]) -> list[tuple[str, str]]:
    return [p for a, b in pairs for p in ((a, b), (b, a))]


_DESIGNS = r"(?:`[a-z_]+(?::\d+)?`|\b(?:fifo|FIFO|priority|preemption|preempt|reserve|hybrid|headroom|aging|SJF|SRPT|FCFS|static|continuous|chunked|swapping|recomputing|recompute|swap)\b)"

#: kind -> (pattern, replacement) pairs; a replacement may use the match's groups.
SLIP_KINDS: dict[str, list[tuple[re.Pattern, str]]] = {
    "complement": _swap(_both(
        ("keeps", "costs"), ("kept", "lost"), ("answered", "missed"), ("answers", "misses"),
        ("meets", "misses"), ("met", "missed"), ("on time", "late"), ("finishes", "loses"),
        ("finished", "lost"), ("accepted", "rejected"), ("accepts", "rejects"), ("admitted", "refused"),
        ("free", "busy"), ("idle", "busy"), ("served", "dropped"), ("saves", "costs"), ("hit", "miss"),
        ("succeeds", "fails"), ("completes", "abandons"), ("gains", "loses"), ("inside", "outside"))),
    "comparison": _swap(_both(
        ("more", "fewer"), ("less", "more"), ("higher", "lower"), ("above", "below"), ("faster", "slower"),
        ("better", "worse"), ("larger", "smaller"), ("longer", "shorter"), ("earlier", "later"),
        ("cheaper", "dearer"), ("wider", "narrower"), ("closer", "further"))),
    "trend": _swap(_both(
        ("widens", "narrows"), ("rises", "falls"), ("grows", "shrinks"), ("bends up", "flattens"),
        ("increases", "decreases"), ("climbs", "drops"), ("rise", "fall"), ("grow", "shrink"),
        ("rising", "falling"), ("growing", "shrinking"), ("widen", "narrow"), ("climb", "drop"),
        ("up", "down"), ("sooner", "later"), ("collapses", "holds"), ("steady", "swinging"))),
    "cause": _swap([("because", "despite"), ("despite", "because"), ("since", "although"),
                    ("although", "because"), ("so", "yet"), ("therefore", "nevertheless"),
                    ("thanks to", "despite"), ("due to", "despite"), ("explains", "contradicts"),
                    ("hence", "yet"), ("through", "despite"), ("drives", "resists"), ("whereas", "as")]),
    "scope": [(re.compile(r"\b(?:one|a single) (slot|server|seed|pool|GPU|hour|run|tenant|lane|queue|chain|model)\b"),
               r"any number of \1s"),
              (re.compile(r"\bthis (service|pool|run|hour|trace|seed|model|engine|lane|chapter|case|load)\b"),
               r"any \1"),
              (re.compile(r"\bon seed (\d+|\{\{\w+\}\})"), "on every seed"),
              (re.compile(r"\b(?:here|in this run)\b"), "everywhere"),
              (re.compile(r"\b(?:sometimes|often|usually|rarely)\b"), "always"),
              (re.compile(r"\bcan\b"), "always does"),
              (re.compile(r"\b(?:only|alone)\b"), "among others")],
    "count": [(re.compile(r"\b(on|in|for) (\{\{\w+\}\}|\d+) of (?:the )?(\{\{\w+\}\}|\d+|ten|twenty)\b"), r"\1 all"),
              (re.compile(r"\b(\d+|\{\{\w+\}\})/(\d+|\{\{\w+\}\})\b"), "all"),
              (re.compile(r"\b(?:most|many|some|several|few)\b"), "all"),
              (re.compile(r"\b(?:none|no)\b"), "all")],
    "winner": [(re.compile(f"({_DESIGNS})(.{{1,160}}?)({_DESIGNS})"), r"\3\2\1")],
    "number-word": [(re.compile(r"(?i)\b(" + "|".join(w for w in _CARDINALS if w != "hundred" and w != "thousand")
                                + r")\b"), "<number-word>")],
    "unit": [(re.compile(r"\bper (second|minute|hour)\b"), "<per>"),
             (re.compile(r"(?<=\d|\}) ?(s|ms|h|min|us|µs)\b"), "<unit>"),
             (re.compile(r"\b(seconds|minutes|hours|milliseconds)\b"), "<unit>"),
             (re.compile(r"(?<=\d|\}) ?(GB|MB|GiB|TB|GB/s|TB/s)\b"), "<unit>")],
    "formula": [(re.compile(r"1 - "), "1 + "), (re.compile(r"\^(\{?)2"), r"^\g<1>3"),
                (re.compile(r"\\sqrt"), r"\\ln"), (re.compile(r"\\times"), "/"), (re.compile(r" \+ "), " - "),
                (re.compile(r"(?<=\S) / (?=\S)"), r" \\times "), (re.compile(r"\\approx \d"), r"\\approx 9")],
}

_UNIT_SWAP = {"second": "minute", "minute": "hour", "hour": "second", "s": "ms", "ms": "s", "h": "min",
              "min": "h", "us": "ms", "µs": "ms", "seconds": "minutes", "minutes": "hours", "hours": "minutes",
              "milliseconds": "seconds", "GB": "MB", "MB": "GB", "GiB": "MiB", "TB": "GB", "GB/s": "MB/s",
              "TB/s": "GB/s"}


@dataclass(frozen=True)
class Slip:
    """One slip made in a copy of a chapter: its kind, where, and what it changed."""

    kind: str
    cell: int  # the markdown cell's index in the chapter
    before: str  # the words changed, as typed
    after: str
    nb: Mapping[str, Any]  # the chapter's values and markdown, with the slip made


def _replacement(kind: str, m: re.Match, repl: str) -> str:
    if repl == "<number-word>":
        w = m.group(1)
        v = _CARDINALS[w.lower()]
        other = "eight" if v != 8 else "sixteen"
        return other.capitalize() if w[0].isupper() else other
    if repl == "<per>":
        return "per " + _UNIT_SWAP[m.group(1)]
    if repl == "<unit>":
        return m.group(0).replace(m.group(1), _UNIT_SWAP[m.group(1)])
    return m.expand(repl)


def _maths_spans(text: str) -> list[tuple[int, int]]:
    return [m.span() for m in re.finditer(r"\$\$.+?\$\$|\$[^$\n]+\$", text, re.S)]


def _code_spans(text: str) -> list[tuple[int, int]]:
    return [m.span() for m in re.finditer(r"```.*?```|\]\([^)]*\)|<[^>\n]*>", text, re.S)]


def slimmed(nb: Mapping[str, Any]) -> dict:
    """The chapter without its outputs: its glued values (one code cell of their outputs,
    first), then its cells, code cells with their source and metadata only."""
    outputs = [o for c in nb.get("cells", []) if c.get("cell_type") == "code" for o in c.get("outputs", [])
               if o.get("metadata", {}).get("scrapbook")]
    cells = [{"cell_type": "code", "metadata": {}, "source": "", "outputs": outputs}]
    for c in nb.get("cells", []):
        cells.append(dict(c, outputs=[]) if c.get("cell_type") == "code" else c)
    return {"cells": cells}


def slips(nb: Mapping[str, Any], kinds: Iterable[str] | None = None) -> Iterable[Slip]:
    """Every slip of each kind (:data:`SLIP_KINDS`) at every place it applies in ``nb``'s markdown.

    A slip is made in a markdown cell's template when it has one (and the cell is
    re-rendered from the chapter's values), in its text otherwise, and in the
    prose of a code cell (:func:`code_prose`: comments, titles, labels); formulas
    only inside maths, the other kinds only outside it, never inside fenced code
    or a link target.  Each yielded chapter is the slim one (:func:`slimmed`) with the
    one cell replaced.
    """
    import copy

    base = slimmed(nb)
    values = glued_values(base)
    kinds = list(SLIP_KINDS if kinds is None else kinds)
    for index, cell in enumerate(base["cells"]):
        is_code = cell.get("cell_type") == "code"
        template = None if is_code else template_of(cell)
        text = _source(cell) if template is None else template
        if is_code:  # only its prose: comments and strings of words
            maths, code, prose_spans = [], [], [(a, b) for a, b, _ in code_prose(text)]
        else:
            maths, code, prose_spans = _maths_spans(text), _code_spans(text), [(0, len(text))]
        for kind in kinds:
            for pattern, repl in SLIP_KINDS[kind]:
                for m in pattern.finditer(text):
                    inside = any(a <= m.start() and m.end() <= b for a, b in maths)
                    if (kind == "formula") != inside or any(a < m.end() and m.start() < b for a, b in code):
                        continue
                    if kind != "formula" and any(a < m.end() and m.start() < b for a, b in maths):
                        continue
                    if not any(a <= m.start() and m.end() <= b for a, b in prose_spans):
                        continue
                    new = _replacement(kind, m, repl)
                    if new == m.group(0):
                        continue
                    edited = text[:m.start()] + new + text[m.end():]
                    slipped = dict(cell, metadata=copy.deepcopy(cell.get("metadata", {})))
                    if template is None:
                        slipped["source"] = edited
                    else:
                        set_template(slipped, edited)
                        try:
                            slipped["source"] = render(edited, values)
                        except ValueError:
                            continue  # a slip that cannot even render fails the chapter anyway
                    cells = list(base["cells"])
                    cells[index] = slipped
                    yield Slip(kind, index, m.group(0), new, {"cells": cells})


if __name__ == "__main__":  # python scripts/prose_tools.py record PATH ... | --all
    import sys

    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
    args = sys.argv[1:]
    if len(args) < 2 or args[0] != "record":
        print("usage: python scripts/prose_tools.py record notebooks/NN_slug.ipynb ... | --all",
              file=sys.stderr)
        raise SystemExit(2)
    targets = (sorted((Path(__file__).resolve().parents[1] / "notebooks").glob("[0-9][0-9]_*.ipynb"))
               if args[1:] == ["--all"] else [Path(a) for a in args[1:]])
    missing = [str(t) for t in targets if not t.is_file()]
    if missing:
        print(f"record: no such notebook {missing[0]}", file=sys.stderr)
        raise SystemExit(2)
    raise SystemExit(1 if record(targets) else 0)
