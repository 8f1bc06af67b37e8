"""Numbers in a chapter's prose, written from the values the chapter computed.

A chapter's markdown cell that shows computed numbers keeps two forms:

* ``cell.metadata.lanes.prose``, the *template*: the text with a placeholder
  ``{{name}}`` or ``{{name:spec}}`` wherever a number goes, ``name`` being a
  value the chapter glued (:func:`glue`) and
  ``spec`` a Python format specification (``.0%``, ``.2f``, ``,``);
* ``cell.source``, the *rendering*: the template with every placeholder
  replaced by ``format(value, spec)``.

The rendering is plain markdown, so JupyterLab (before any kernel runs), the
published book and a reader of the raw file all show the same digits.
``scripts/run_notebooks.py`` renders every template after it executes a
chapter; the tests check that every committed rendering is the template
rendered from the committed values, so a number typed into the prose by hand,
or a stale one, fails.

Standard library only.
"""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass
from typing import Any, Iterable, Mapping

__all__ = ["glue", "Placeholder", "placeholders", "render", "glued_values", "render_notebook",
           "check_notebook", "PLACEHOLDER", "Bound", "bounds", "check_bounds", "Literal",
           "literal_numbers", "check_literals", "check_prose"]

#: ``{{name}}`` or ``{{name:spec}}``; names are Python identifiers.
PLACEHOLDER = re.compile(r"\{\{\s*([A-Za-z_][A-Za-z0-9_]*)\s*(?::([^{}]*))?\}\}")

_META_KEY = "lanes"
_TEMPLATE_KEY = "prose"
_RECORD_PREFIX = "application/papermill.record/"
_RECORD_MIME = _RECORD_PREFIX + "text/plain"


def glue(name: str, value: Any, display: bool = False) -> None:
    """Record ``value`` under ``name`` in the running cell's outputs, for the prose.

    Writes the output ``myst_nb.glue`` writes (a display-data output whose
    metadata carries ``scrapbook: {name, mime_prefix}``), so the book, this
    module and the tests read it alike; unlike importing ``myst_nb.glue``,
    which loads nbformat and jsonschema (seconds at a kernel's start), this
    needs only IPython, which every kernel has. ``display=True`` shows the
    value too; by default it is only recorded.
    """
    if not isinstance(name, str) or not name.isidentifier():
        raise ValueError(f"name must be a Python identifier (got {name!r})")
    if type(display) is not bool:
        raise ValueError(f"display must be True or False (got {display!r})")
    from IPython.core.formatters import format_display_data
    from IPython.display import display as show

    bundle, metadata = format_display_data(value)
    prefix = "" if display else _RECORD_PREFIX
    metadata["scrapbook"] = {"name": name, "mime_prefix": prefix}
    show({prefix + mime: data for mime, data in bundle.items()}, raw=True, metadata=metadata)


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


def format_value(value: Any, spec: str) -> str:
    """``value`` as the prose shows it: ``format(value, spec)``.

    A spec may end in ``|floor`` or ``|ceil`` (``{{x:.1f|floor}}``): the value
    is then rounded down or up, not to nearest, at the spec's precision, so a
    bound written from it holds for the unrounded value ("at least
    {{lo:.0%|floor}}" never overstates ``lo``).  Only ``f`` and ``%`` specs
    with an explicit precision take a direction.
    """
    base, _, direction = spec.partition("|")
    direction = direction.strip()
    try:
        if direction:
            value = _round_directed(value, base, direction)
        return format(value, base)
    except (ValueError, TypeError) as exc:
        raise ValueError(
            f"format spec {spec!r} does not apply to {type(value).__name__} value {value!r}: {exc}"
        ) from None


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
_BEFORE_RE = re.compile(
    r"(?i)\b(" + "|".join(sorted((re.escape(k) for k in BOUND_BEFORE), key=len, reverse=True))
    + r")\s*[*_($~]*\s*$")
_AFTER_RE = re.compile(
    r"(?i)^[^\s{}]{0,4}(?:\s+[A-Za-z-]+)?\s+(" + "|".join(re.escape(k) for k in BOUND_AFTER) + r")\b")
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

    def holds(self) -> bool:
        """Whether the unrounded value satisfies the bound the prose states."""
        x, b = float(self.value), _read_number(self.shown)
        if self.relation != "about":
            return _compare(x, self.relation, b)
        # "about": the shown number is the value, to its last digit or within 10%
        return abs(x - b) <= max(0.1 * abs(b), _half_unit(self.shown))


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
    definition such as "late when it waits more than {{late_after}} s"); for
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
            if isinstance(b.value, bool) or not isinstance(b.value, (int, float)):
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
    return problems


# ---------------------------------------------------------------------------
# Literal numbers: every number the prose shows comes from a placeholder

_NUMBER_RE = re.compile(r"(?<![\w.,/:\-])\d+(?:,\d{3})*(?:\.\d+)?%?(?![\w/])")
# contexts where a typed number names something rather than states a result
_NAMING_RE = re.compile(
    r"(?i)\b(?:chapters?|sets?|exercises?|seeds?|parts?|steps?|figures?|tables?|questions?|q)"
    r"\s+(?:\d+\s*(?:,|and|or|to|-)\s*)*$")


@dataclass(frozen=True)
class Literal:
    """A number typed into a chapter's prose rather than rendered from a value."""

    cell: int
    text: str
    context: str


def _prose_only(text: str) -> str:
    """``text`` with code, maths, link targets, HTML and placeholders blanked out."""
    def blank(m: re.Match) -> str:
        return " " * len(m.group(0))
    for pattern, flags in ((r"```.*?```", re.S), (r"`[^`\n]*`", 0), (r"\$\$.*?\$\$", re.S),
                           (r"\$[^$\n]*\$", 0), (r"\]\([^)]*\)", 0), (r"<[^>\n]*>", 0),
                           (r"^\s*\d+\.\s", re.M)):
        text = re.sub(pattern, blank, text, flags=flags)
    return PLACEHOLDER.sub(lambda m: "#" * len(m.group(0)), text)


def literal_numbers(nb: Mapping[str, Any]) -> list[Literal]:
    """Numbers in the markdown (templates, or text of untemplated cells) not from a placeholder.

    Numbers inside code spans, code blocks and maths, in link targets, list
    markers, and numbers that name a chapter, set, seed, step, part or
    question ("chapter 3", "seed 3") are not counted.
    """
    found = []
    for i, cell in enumerate(nb.get("cells", [])):
        if cell.get("cell_type") != "markdown":
            continue
        text = template_of(cell)
        text = _prose_only(_source(cell) if text is None else text)
        for m in _NUMBER_RE.finditer(text):
            if _NAMING_RE.search(text[max(0, m.start() - 40):m.start()]):
                continue
            ctx = " ".join(text[max(0, m.start() - 30):m.end() + 20].split())
            found.append(Literal(i, m.group(0), ctx))
    return found


def check_literals(nb: Mapping[str, Any], allowed: Iterable[str] = ()) -> list[str]:
    """Typed numbers that are not on the chapter's ``allowed`` list, one line each.

    ``allowed`` holds the literal texts a chapter may type (scenario parameters,
    model names such as "Llama 3.1", HTTP 429, a year), each justified where
    the list is kept.
    """
    allowed = set(allowed)
    return [f"markdown cell {lit.cell}: typed number {lit.text!r} ({lit.context!r});"
            " glue it and use a placeholder" for lit in literal_numbers(nb) if lit.text not in allowed]


def check_prose(nb: Mapping[str, Any], *, thresholds: Iterable[str] = (),
                literals: Iterable[str] = ()) -> list[str]:
    """Every check of a chapter's prose: rendering, bound words, typed numbers."""
    problems = check_notebook(nb)
    if problems and any("glued value" in p for p in problems):
        return problems
    return problems + check_bounds(nb, thresholds) + check_literals(nb, literals)
