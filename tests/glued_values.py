"""Read the numbers a committed chapter glues into its prose (MyST-NB ``glue``).

The claims tests compute each claim with ``lanes`` and then check that the
number the chapter's text shows is the one they computed, so the prose and the
tests cannot drift apart.
"""

from __future__ import annotations

import ast
import json
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
_ROLE = re.compile(r"\{glue:text\}`([^`:]+)(?::[^`]*)?`")


def glued(stem: str) -> dict[str, object]:
    """Every glued value of ``notebooks/<stem>.ipynb``, by name, as Python values."""
    nb = json.loads((ROOT / "notebooks" / f"{stem}.ipynb").read_text())
    values: dict[str, object] = {}
    for cell in nb["cells"]:
        for out in cell.get("outputs", []):
            name = out.get("metadata", {}).get("scrapbook", {}).get("name")
            if name is None:
                continue
            text = "".join(out["data"]["application/papermill.record/text/plain"])
            try:
                values[name] = ast.literal_eval(text)
            except (ValueError, SyntaxError):
                raise AssertionError(
                    f"{stem}: glued value {name!r} is {text!r}, which the book cannot format;"
                    " glue plain int, float or str values (int(x), float(x))"
                ) from None
    return values


def referenced(stem: str) -> set[str]:
    """Names the chapter's markdown refers to with ``{glue:text}``."""
    nb = json.loads((ROOT / "notebooks" / f"{stem}.ipynb").read_text())
    return {m for c in nb["cells"] if c["cell_type"] == "markdown"
            for m in _ROLE.findall("".join(c["source"]))}
