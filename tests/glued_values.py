"""Read the numbers a committed chapter computes for its prose.

Chapters glue each number their text shows (``lanes.prose.glue``) and keep the
text as a template (``metadata.lanes.prose``) rendered from those values by
``scripts/run_notebooks.py`` (see ``scripts/prose_tools.py``). The claims tests
compute each claim with ``lanes`` and check it against these values, and
``tests/chapters/test_prose.py`` checks the text is the template rendered from them,
so the prose, the values and the tests cannot drift apart.
"""

from __future__ import annotations

import json
from pathlib import Path

from scripts import prose_tools as prose

ROOT = Path(__file__).resolve().parents[1]


def notebook(stem: str) -> dict:
    return json.loads((ROOT / "notebooks" / f"{stem}.ipynb").read_text())


def glued(stem: str) -> dict[str, object]:
    """Every glued value of ``notebooks/<stem>.ipynb``, by name, as Python values."""
    try:
        return prose.glued_values(notebook(stem))
    except ValueError as exc:
        raise AssertionError(f"{stem}: {exc}") from None


def referenced(stem: str) -> set[str]:
    """Names the chapter's prose templates show (``{{name}}`` placeholders)."""
    return {p.name for _, template, _ in prose.templated_cells(notebook(stem))
            for p in prose.placeholders(template)}
