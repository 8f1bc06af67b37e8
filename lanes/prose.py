"""Numbers in a chapter's prose, written from the values the chapter computed.

A chapter's markdown cell that shows computed numbers keeps two forms:

* ``cell.metadata.lanes.prose``, the *template*: the text with a placeholder
  ``{{name}}`` or ``{{name:spec}}`` wherever a number goes, ``name`` being a
  value the chapter glued (``myst_nb.glue(name, value, display=False)``) and
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

__all__ = ["Placeholder", "placeholders", "render", "glued_values", "render_notebook",
           "check_notebook", "PLACEHOLDER"]

#: ``{{name}}`` or ``{{name:spec}}``; names are Python identifiers.
PLACEHOLDER = re.compile(r"\{\{\s*([A-Za-z_][A-Za-z0-9_]*)\s*(?::([^{}]*))?\}\}")

_META_KEY = "lanes"
_TEMPLATE_KEY = "prose"
_RECORD_MIME = "application/papermill.record/text/plain"


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


def format_value(value: Any, spec: str) -> str:
    """``value`` as the prose shows it: ``format(value, spec)``."""
    try:
        return format(value, spec)
    except (ValueError, TypeError) as exc:
        raise ValueError(
            f"format spec {spec!r} does not apply to {type(value).__name__} value {value!r}: {exc}"
        ) from None


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
