"""What a notebook keeps when it is saved: the explorers' text fallback, not their widget views.

A widget view in a saved output points at a model that lives only in the kernel
that drew it. No widget state is saved with the notebook, so after a kernel
restart or a reopen JupyterLab would draw "Error displaying widget: model not
found" in its place. :func:`clean_notebook` removes, from a notebook as plain
JSON data and in place:

* every widget view (``application/vnd.jupyter.widget-view+json``) of an output
  that has something else to show (an explorer's ``text/plain`` and
  ``text/html`` fallback), and every output that had nothing else;
* the notebook's widget state (``metadata.widgets``);
* displays left empty (a finished :mod:`lanes.pool.progress` line);
* progress frames: in a stream output, each line keeps only what follows its
  last carriage return (what a terminal shows), and an output left with no text
  is dropped;
* consecutive stream outputs to the same stream are merged into one, as
  JupyterLab merges them when it saves.

:func:`pre_save` applies it to every notebook a Jupyter server saves; the kit
installs it as the server's ``ContentsManager.pre_save_hook`` (see
``jupyter_server_config.py`` at the repository root and
``lanes/pool/server_config/lanes.json``).
``scripts/run_notebooks.py`` applies the same rules to the committed chapters.

Standard library only: the hook runs inside the Jupyter server process.
"""

from __future__ import annotations

from typing import Any

__all__ = ["WIDGET_VIEW_MIME", "clean_notebook", "clean_outputs", "pre_save"]

#: The mime type of a live widget view (a reference to a model in the kernel).
WIDGET_VIEW_MIME = "application/vnd.jupyter.widget-view+json"


def _text(value: Any) -> str:
    return "".join(value) if isinstance(value, list) else str(value or "")


def _last_frame(text: str) -> str:
    """Each line as a terminal leaves it: only what follows its last carriage return."""
    lines = text.split("\n")
    return "\n".join(line.rsplit("\r", 1)[-1] for line in lines)


def clean_outputs(outputs: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The outputs of one code cell as they are saved (a new list; outputs edited in place)."""
    kept: list[dict[str, Any]] = []
    for out in outputs:
        kind = out.get("output_type")
        if kind == "stream":
            text = _last_frame(_text(out.get("text")))
            if not text:
                continue
            if kept and kept[-1].get("output_type") == "stream" and kept[-1].get("name") == out.get("name"):
                kept[-1]["text"] = _text(kept[-1].get("text")) + text
                continue
            out["text"] = text
        elif kind in ("display_data", "execute_result", "update_display_data"):
            data = out.get("data", {})
            if WIDGET_VIEW_MIME in data:
                data.pop(WIDGET_VIEW_MIME)
                if not data:
                    continue
            if data and all(_text(v) == "" for v in data.values() if isinstance(v, (str, list))) \
                    and all(isinstance(v, (str, list)) for v in data.values()):
                continue  # a display emptied when it ended (lanes.progress)
        kept.append(out)
    return kept


def clean_notebook(nb: dict[str, Any]) -> dict[str, Any]:
    """Apply the save rules (module docstring) to ``nb``, notebook JSON data, in place; returns it."""
    nb.get("metadata", {}).pop("widgets", None)
    for cell in nb.get("cells", []):
        if cell.get("cell_type") == "code" and "outputs" in cell:
            cell["outputs"] = clean_outputs(cell["outputs"])
    return nb


def pre_save(model: dict[str, Any], **kwargs: Any) -> None:
    """A Jupyter server pre-save hook: clean every notebook before it is written.

    Called as ``pre_save(model=..., path=..., contents_manager=...)``; only
    models of type ``notebook`` with content are touched.
    """
    if model.get("type") == "notebook" and isinstance(model.get("content"), dict):
        clean_notebook(model["content"])
