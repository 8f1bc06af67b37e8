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

Standard library only.
"""

from __future__ import annotations

import ast
import re
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
# thousands separators, a float as each placeholder of the prose formats it.
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


def answer_texts(value: Any, specs: Iterable[str] = ()) -> set[str]:
    """The texts a chapter shows ``value`` as: plain, with separators, and each spec of its prose."""
    if isinstance(value, bool):
        return set()
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
