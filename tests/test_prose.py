"""The numbers in every chapter's prose are the ones the chapter computed.

Each templated markdown cell (``metadata.lanes.prose``) must read exactly as its
template rendered from the chapter's glued values, so JupyterLab (which shows
the committed markdown, before any kernel runs) and the book show the same,
current digits; no MyST ``{glue}`` role is left for JupyterLab to show raw.
"""

from __future__ import annotations

import copy
import json
from pathlib import Path

import pytest

from lanes import prose

ROOT = Path(__file__).resolve().parents[1]
CHAPTERS = sorted((ROOT / "notebooks").glob("*.ipynb"))


def _load(path: Path) -> dict:
    return json.loads(path.read_text(encoding="utf-8"))


@pytest.mark.parametrize("path", CHAPTERS, ids=lambda p: p.stem)
def test_prose_is_rendered_from_the_computed_values(path):
    nb = _load(path)
    assert list(prose.templated_cells(nb)), f"{path.name}: no templated prose"
    assert prose.check_notebook(nb) == []


@pytest.mark.parametrize("path", CHAPTERS, ids=lambda p: p.stem)
def test_results_are_numbered_like_their_cells(path):
    """A fresh run numbers each result like its cell: a committed chapter must too."""
    for i, cell in enumerate(_load(path)["cells"]):
        for out in cell.get("outputs", []):
            if out["output_type"] == "execute_result":
                assert out["execution_count"] == cell["execution_count"], (path.name, i)


def test_a_number_typed_into_the_text_is_caught():
    nb = _load(CHAPTERS[2])
    i, template, text = next(prose.templated_cells(nb))
    p = prose.placeholders(template)[0]
    shown = prose.format_value(prose.glued_values(nb)[p.name], p.spec)
    edited = copy.deepcopy(nb)
    edited["cells"][i]["source"] = text.replace(shown, shown + "1", 1)
    problems = prose.check_notebook(edited)
    assert len(problems) == 1 and f"markdown cell {i}" in problems[0]


def test_a_leftover_glue_role_and_a_missing_value_are_caught():
    nb = {"cells": [
        {"cell_type": "markdown", "metadata": {}, "source": "p99 is {glue:text}`p99` s"},
        {"cell_type": "markdown", "metadata": {"lanes": {"prose": "R = {{r:d}}"}},
         "source": "R = 3"},
    ]}
    problems = prose.check_notebook(nb)
    assert any("{glue} role" in p for p in problems)
    assert any("no computed value for r" in p for p in problems)


def test_render_formats_and_refuses():
    assert prose.render("loss {{x:.0%}}, R = {{r}}", {"x": 0.2172, "r": 14}) == "loss 22%, R = 14"
    with pytest.raises(ValueError, match="no computed value for y"):
        prose.render("{{y}}", {})
    with pytest.raises(ValueError, match="format spec"):
        prose.render("{{s:.2f}}", {"s": "text"})
