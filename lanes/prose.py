"""``glue``: a chapter records each number its prose shows.

A chapter's markdown keeps its text as a template with a placeholder wherever a computed
number goes; ``scripts/run_notebooks.py`` renders it from the values recorded here, and
the tests check the rendering (the tooling: ``scripts/prose_tools.py``).
"""

from __future__ import annotations

from typing import Any

__all__ = ["glue", "RECORD_PREFIX"]

#: The MIME prefix of a value recorded without being shown (``myst_nb.glue``'s).
RECORD_PREFIX = "application/papermill.record/"


def glue(name: str, value: Any, display: bool = False) -> None:
    """Record ``value`` under ``name`` in the running cell's outputs, for the prose.

    Writes the output ``myst_nb.glue`` writes (a display-data output whose
    metadata carries ``scrapbook: {name, mime_prefix}``), so the book, this
    module and the tests read it alike; unlike importing ``myst_nb.glue``,
    which loads nbformat and jsonschema (seconds at a kernel's start), this
    needs only IPython, which every kernel has. ``display=True`` shows the
    value too; by default it is only recorded.  A NumPy scalar is recorded as
    the Python number it holds.
    """
    if not isinstance(name, str) or not name.isidentifier():
        raise ValueError(f"name must be a Python identifier (got {name!r})")
    if type(display) is not bool:
        raise ValueError(f"display must be True or False (got {display!r})")
    from IPython.core.formatters import format_display_data
    from IPython.display import display as show

    if hasattr(value, "item") and getattr(value, "shape", None) == ():  # a NumPy scalar: its Python number
        value = value.item()

    bundle, metadata = format_display_data(value)
    prefix = "" if display else RECORD_PREFIX
    metadata["scrapbook"] = {"name": name, "mime_prefix": prefix}
    show({prefix + mime: data for mime, data in bundle.items()}, raw=True, metadata=metadata)
