"""Sphinx fixes for the lanes book, loaded by ``_config.yml`` (``sphinx.local_extensions``).

Glue out of sight: the chapters record every number their prose shows with
``glue(name, value, display=False)`` (:mod:`lanes.prose`), plumbing that says
nothing to a reader.  The book shows each code cell without those calls (and
without the import of ``glue``, the comments right above a call, and a loop or
branch that only glues); JupyterLab still shows the cell as it runs.

Jupyter Book 1 always loads sphinx-thebe, which adds its configuration script
(``const THEBE_JS_URL = ...``) once each time the sources are read: a full
build reads them twice, so every page declared the constant twice and logged
"Identifier 'THEBE_JS_URL' has already been declared".  The book launches no
Thebe (``launch_buttons.thebe: false``), so this drops sphinx-thebe's scripts
from every page.  ``tests/site/test_site.py`` fails on any JavaScript error.
"""

from __future__ import annotations

import ast
import re

_MAGIC = re.compile(r"^(\s*)[%!].*$")


def _loads(tree: ast.AST) -> list[tuple[str, int]]:
    """Every name read in ``tree``, with its line (not a function's reads of its own locals)."""
    local: set[int] = set()
    for fn in ast.walk(tree):
        if isinstance(fn, (ast.FunctionDef, ast.Lambda)):
            nodes_in = list(ast.walk(fn))
            own = {n.id for n in nodes_in if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store)}
            own |= {a.arg for a in ast.walk(fn.args) if isinstance(a, ast.arg)}
            local |= {id(n) for n in nodes_in if isinstance(n, ast.Name) and n.id in own}
    return [(n.id, n.lineno) for n in ast.walk(tree)
            if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load) and id(n) not in local]


def _is_glue(stmt: ast.stmt, loads: list[tuple[str, int]]) -> bool:
    """A statement that only glues: a ``glue(...)`` call, the import or a wrapper of ``glue``,
    or a ``for``/``if``/``with`` that glues and otherwise only sets names read nowhere else."""
    if isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Call):
        return isinstance(stmt.value.func, ast.Name) and stmt.value.func.id == "glue"
    if isinstance(stmt, ast.ImportFrom):
        return [a.name for a in stmt.names] == ["glue"]
    if isinstance(stmt, ast.FunctionDef):  # a chapter's own wrapper around glue
        return stmt.name == "glue"
    if isinstance(stmt, (ast.For, ast.If, ast.With)):
        inside = range(stmt.lineno, stmt.end_lineno + 1)
        outside = {name for name, line in loads if line not in inside}
        branches = [stmt.body] + ([stmt.orelse] if getattr(stmt, "orelse", None) else [])
        body = [s for b in branches for s in b]

        def private(s: ast.stmt) -> bool:  # sets names that only this statement reads
            return isinstance(s, ast.Assign) and all(
                isinstance(t, ast.Name) and t.id not in outside for t in s.targets)

        return any(_is_glue(s, loads) for s in body) and all(_is_glue(s, loads) or private(s) for s in body)
    return False


def without_glue(source: str) -> str:
    """``source`` (a code cell) without its glue statements; unchanged if it does not parse
    or if nothing else would be left."""
    lines = source.split("\n")
    try:  # IPython's %magics and !commands are not Python: parse them as ``pass``
        tree = ast.parse("\n".join(_MAGIC.sub(r"\1pass", line) for line in lines))
    except SyntaxError:
        return source
    loads = _loads(tree)
    drop: set[int] = set()

    def indent(i: int) -> int:
        return len(lines[i]) - len(lines[i].lstrip())

    def walk(body: list[ast.stmt]) -> None:
        for stmt in body:
            if _is_glue(stmt, loads):
                first = stmt.lineno - 1
                drop.update(range(first, stmt.end_lineno))
                above = first - 1  # the comment lines right above belong to the call
                while above >= 0 and lines[above].lstrip().startswith("#") and indent(above) == indent(first):
                    drop.add(above)
                    above -= 1
            else:
                for name in ("body", "orelse", "finalbody"):
                    inner = getattr(stmt, name, None)
                    if isinstance(inner, list) and inner and not all(_is_glue(s, loads) for s in inner):
                        walk(inner)

    walk(tree.body)
    out: list[str] = []
    gap = False  # lines were dropped since the last kept line
    for i, line in enumerate(lines):
        if i in drop:
            gap = True
            continue
        if gap and not line.strip() and out and not out[-1].strip():
            continue  # a blank line on each side of what was dropped: keep one
        out.append(line)
        gap = False
    kept = "\n".join(out).strip("\n")
    return kept if kept.strip() else source


def _hide_glue(app, doctree) -> None:
    from docutils import nodes

    for block in list(doctree.findall(nodes.literal_block)):
        parent = block.parent
        if not (isinstance(parent, nodes.container) and "cell_input" in parent.get("classes", [])):
            continue
        text = block.astext()
        shown = without_glue(text)
        if shown != text:
            block.rawsource = shown  # equal to the text, so Sphinx still highlights it
            block.clear()
            block += nodes.Text(shown)


def _is_thebe(script) -> bool:
    name = str(getattr(script, "filename", script) or "")
    body = str(getattr(script, "attributes", {}).get("body", ""))
    return "sphinx-thebe" in name or "THEBE_JS_URL" in body


def _drop_thebe(app, pagename, templatename, context, doctree) -> None:
    if "script_files" in context:
        context["script_files"] = [s for s in context["script_files"] if not _is_thebe(s)]


def setup(app):
    app.connect("html-page-context", _drop_thebe, priority=900)
    app.connect("doctree-read", _hide_glue)
    # env_version: a build over an older _build re-reads every page when this changes
    # (the code cells are rewritten as the pages are read); raise it with each change here.
    return {"env_version": 1, "parallel_read_safe": True, "parallel_write_safe": True}
