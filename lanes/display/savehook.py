"""What a notebook keeps when it is saved: the explorers' text fallback, not their widget views,
and every reveal folded.

A widget view in a saved output points at a model that lives only in the kernel
that drew it. No widget state is saved with the notebook, so after a kernel
restart or a reopen JupyterLab would draw "Error displaying widget: model not
found" in its place. :func:`clean_notebook` removes, from a notebook as plain
JSON data and in place:

* every widget view (``application/vnd.jupyter.widget-view+json``) of an output
  that has something else to show (an explorer's ``text/plain`` and
  ``text/html`` fallback), and every output that had nothing else;
* the notebook's widget state (``metadata.widgets``);
* displays left empty (a finished :mod:`lanes.display.progress` line);
* progress frames: in a stream output, each line keeps only what follows its
  last carriage return (what a terminal shows), and an output left with no text
  is dropped;
* consecutive stream outputs to the same stream are merged into one, as
  JupyterLab merges them when it saves;
* every reveal (a code cell tagged :data:`REVEAL_TAG`, the answer to a
  prediction) is saved folded, ``collapsed`` and ``jupyter.outputs_hidden``
  both set, as JupyterLab writes a folded output: running a cell unfolds it in
  JupyterLab, and without this rule the saved file would show the next reader
  every answer.

:func:`pre_save` applies it to every notebook a Jupyter server saves. This
module is also a Jupyter server extension that registers that hook, and every
install of the kit, editable included (``setup.py``), enables it for every
server of the environment (``lanes/display/server_config/lanes.json``, installed
into ``etc/jupyter/jupyter_server_config.d``: Jupyter reads only extension
switches from that folder, so the hook cannot be set there directly). A plain
``jupyter lab`` saves through it. ``scripts/run_notebooks.py`` applies the same
rules to the committed chapters.

Standard library only: the hook runs inside the Jupyter server process.
"""

from __future__ import annotations

from typing import Any

__all__ = ["REVEAL_TAG", "WIDGET_VIEW_MIME", "clean_notebook", "clean_outputs", "pre_save"]

#: The mime type of a live widget view (a reference to a model in the kernel).
WIDGET_VIEW_MIME = "application/vnd.jupyter.widget-view+json"
#: The tag of a reveal cell (the book folds its output too).
REVEAL_TAG = "hide-output"


def _show(value: object) -> str:
    """The rejected value as a message quotes it, cut to 60 characters.

    Not :func:`lanes._checks.show`: the scripts load this file on its own, by
    path, so it imports nothing from the package.
    """
    text = repr(value) if not isinstance(value, int) or value.bit_length() < 200 else f"an integer of {value.bit_length()} bits"
    return text if len(text) <= 60 else text[:57] + "..."


def _text(value: Any) -> str | None:
    """The text of a notebook string field (a string or a list of strings); ``None`` if it is neither."""
    if value is None:
        return ""
    if isinstance(value, str):
        return value
    if isinstance(value, list) and all(isinstance(v, str) for v in value):
        return "".join(value)
    return None


def _last_frame(text: str) -> str:
    """Each line as a terminal leaves it: only what follows its last carriage return."""
    lines = text.split("\n")
    return "\n".join(line.rsplit("\r", 1)[-1] for line in lines)


def clean_outputs(outputs: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The outputs of one code cell as they are saved (a new list; outputs edited in place).

    ``outputs`` must be a list; an item that is not an output this module
    understands (not a dict, or with fields of other types) is kept unchanged.
    """
    if not isinstance(outputs, list):
        raise ValueError(f"outputs must be a list of notebook outputs (dicts) (got {_show(outputs)})")
    kept: list[Any] = []
    for out in outputs:
        if not isinstance(out, dict):
            kept.append(out)
            continue
        kind = out.get("output_type")
        if kind == "stream":
            raw = _text(out.get("text"))
            if raw is None:
                kept.append(out)
                continue
            text = _last_frame(raw)
            if not text:
                continue
            last = kept[-1] if kept else None
            if isinstance(last, dict) and last.get("output_type") == "stream" and last.get("name") == out.get("name"):
                before = _text(last.get("text"))
                if before is not None:
                    last["text"] = before + text
                    continue
            out["text"] = text
        elif kind in ("display_data", "execute_result", "update_display_data"):
            data = out.get("data", {})
            if not isinstance(data, dict):
                kept.append(out)
                continue
            if WIDGET_VIEW_MIME in data:
                data.pop(WIDGET_VIEW_MIME)
                if not data:
                    continue
            if data and all(_text(v) == "" for v in data.values()):
                continue  # a display emptied when it ended (lanes.progress)
        kept.append(out)
    return kept


def _fold_reveal(cell: dict[str, Any]) -> None:
    """Fold a reveal cell's output (both flags JupyterLab writes); other cells are left as they are."""
    meta = cell.get("metadata")
    if not isinstance(meta, dict) or not isinstance(meta.get("tags"), list) or REVEAL_TAG not in meta["tags"]:
        return
    jupyter = meta.get("jupyter")
    if jupyter is None:
        jupyter = meta["jupyter"] = {}
    if isinstance(jupyter, dict):
        meta["collapsed"] = True
        jupyter["outputs_hidden"] = True


def clean_notebook(nb: dict[str, Any]) -> dict[str, Any]:
    """Apply the save rules (module docstring) to ``nb``, notebook JSON data, in place; returns it.

    ``nb`` must be a dict.  Parts of it that are not as nbformat describes them
    (metadata that is not a dict, cells or outputs that are not lists, cells that
    are not dicts) are left as they are: the rules never raise on a dict.
    """
    if not isinstance(nb, dict):
        raise ValueError(f"nb must be a notebook as a dict of JSON data (got {_show(nb)})")
    metadata = nb.get("metadata")
    if isinstance(metadata, dict):
        metadata.pop("widgets", None)
    cells = nb.get("cells")
    if isinstance(cells, list):
        for cell in cells:
            if isinstance(cell, dict) and cell.get("cell_type") == "code" and isinstance(cell.get("outputs"), list):
                cell["outputs"] = clean_outputs(cell["outputs"])
            if isinstance(cell, dict) and cell.get("cell_type") == "code":
                _fold_reveal(cell)
    return nb


def pre_save(model: dict[str, Any], **kwargs: Any) -> None:
    """A Jupyter server pre-save hook: clean every notebook before it is written.

    Called as ``pre_save(model=..., path=..., contents_manager=...)``; only
    models of type ``notebook`` with content are touched.  The hook never
    raises: a model it does not understand (not a dict, another type, content
    that is not a dict) is left untouched and saved as it is, and other keyword
    arguments a server passes are ignored.
    """
    if isinstance(model, dict) and model.get("type") == "notebook" and isinstance(model.get("content"), dict):
        clean_notebook(model["content"])


def _jupyter_server_extension_points() -> list[dict[str, str]]:
    """Jupyter's entry to this module as a server extension (enabled by the kit's install)."""
    return [{"module": "lanes.display.savehook"}]


def _load_jupyter_server_extension(serverapp: Any) -> None:
    """Register :func:`pre_save` with the server's contents manager (beside any hook of the user's)."""
    serverapp.contents_manager.register_pre_save_hook(pre_save)
