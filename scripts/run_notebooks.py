"""Execute chapter notebooks in place and normalise them for committing.

    python scripts/run_notebooks.py notebooks/03_headroom.ipynb   # one or more paths
    python scripts/run_notebooks.py --all                         # every chapter
    python scripts/run_notebooks.py --normalise-only PATH ...     # no execution

Each notebook runs top to bottom in a fresh ``python3`` kernel from its own
folder (as JupyterLab and nbval run it), then :func:`normalise` makes the
file look exactly as JupyterLab would save it, so opening and saving a
committed notebook in JupyterLab leaves ``git diff`` empty:

* the kernelspec JupyterLab writes (``Python 3 (ipykernel)``) and the
  ``language_info`` it writes on opening (:data:`LANGUAGE_INFO`, version included);
* no per-cell ``execution`` timestamps, no stale widget state
  (``metadata.widgets``), no ``collapsed``/``scrolled`` view flags;
* no widget views in outputs: an explorer's output keeps only its text and
  HTML fallback ("Interactive explorer: run this cell ..."), since the model a
  view points at exists only in the kernel that drew it;
* each ``execute_result`` numbered like its cell, as a fresh run numbers it;
* one-space JSON indentation and a final newline, as JupyterLab writes;
* predictions stay hidden: every reveal cell (tagged ``hide-output``, the cell
  after each ``predict`` cell) has its outputs collapsed in JupyterLab
  (``metadata.jupyter.outputs_hidden`` and the ``collapsed`` flag JupyterLab
  writes with it: the save hook's rule); the book folds them by the tag, nbval
  still checks them;
* the setup cell (tagged ``setup``) and each cell that only records values for
  the prose (tagged ``prose-values``: the ``glue`` calls after the cell that computed
  them) have their code collapsed in JupyterLab (``metadata.jupyter.source_hidden``)
  and the ``remove-cell`` tag for the book, so a code cell in view shows the model call;
* every figure has alt text: a code cell whose outputs hold an image gets
  ``metadata.mystnb.image.alt`` from ``scripts/figure_alt.json`` (cell id ->
  text), which MyST-NB writes as the image's ``alt``, and figures at least
  :data:`WIDE_FIGURE_PX` wide the ``lanes-wide`` class (too wide to read on a phone).

The system diagram, named in the prose by its path, becomes a link to it
(:data:`PROSE_LINKS`).

The save rules of :mod:`lanes.display.savehook` (no widget views, no progress frames,
consecutive stream outputs merged) are applied too: they are what the kit's
Jupyter server hook applies to every notebook JupyterLab saves.

Before normalising, the prose of every markdown cell that carries a template
(``metadata.lanes.prose``, see ``scripts/prose_tools.py``) is rendered again from the
values the chapter glued, so the numbers in the text are the ones just computed.
``--normalise-only`` renders from the values already stored in the file.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

KERNELSPEC = {"display_name": "Python 3 (ipykernel)", "language": "python", "name": "python3"}
#: What JupyterLab writes on opening a notebook with the course's kernel (Python 3.11,
#: as binder/runtime.txt): committed as is, so opening and saving changes nothing.
LANGUAGE_INFO = {
    "codemirror_mode": {"name": "ipython", "version": 3},
    "file_extension": ".py",
    "mimetype": "text/x-python",
    "name": "python",
    "nbconvert_exporter": "python",
    "pygments_lexer": "ipython3",
    "version": "3.11.7",
}
_CELL_KEYS_DROPPED = ("execution", "collapsed", "scrolled")
WIDGET_VIEW_MIME = "application/vnd.jupyter.widget-view+json"
#: Alt text of every chapter figure, by the id of the code cell that draws it.
FIGURE_ALT = ROOT / "scripts" / "figure_alt.json"
SETUP_TAG = "setup"
SETUP_TAGS = [SETUP_TAG, "remove-cell"]
IMAGE_MIMES = ("image/png", "image/svg+xml", "image/jpeg")


def _load(name: str, path: Path):
    """The module at ``path``, loaded by path: this file runs as a script and as a module of
    the tests, and neither puts ``scripts/`` on the import path."""
    import importlib.util

    if name not in sys.modules:
        spec = importlib.util.spec_from_file_location(name, path)
        module = importlib.util.module_from_spec(spec)
        sys.modules[name] = module
        spec.loader.exec_module(module)
    return sys.modules[name]


def _savehook():
    return _load("lanes_savehook", ROOT / "lanes" / "display" / "savehook.py")


def figure_alt() -> dict[str, str]:
    """``scripts/figure_alt.json``: cell id -> alt text (empty when the file is missing)."""
    if not FIGURE_ALT.is_file():
        return {}
    return json.loads(FIGURE_ALT.read_text(encoding="utf-8"))


#: Figures at least this many pixels wide (several panels side by side, about 10
#: inches at the inline backend's 100 dpi) get the ``lanes-wide`` class, a marker of
#: figures whose labels a phone cannot show at a readable size: the book shrinks
#: every figure to the screen (book/_static/lanes.css), and a chapter draws its
#: panels as separate small figures instead (``lanes.display.pool.plots.panels``).
WIDE_FIGURE_PX = 1000
WIDE_CLASS = "lanes-wide"


def image_width(cell: dict) -> int:
    """The pixel width of the widest PNG among a code cell's outputs (0 when none)."""
    import base64
    import struct

    widest = 0
    for out in cell.get("outputs", []):
        png = out.get("data", {}).get("image/png")
        if png:
            head = base64.b64decode("".join(png)[:64])
            if head[:8] == b"\x89PNG\r\n\x1a\n" and len(head) >= 24:
                widest = max(widest, struct.unpack(">I", head[16:20])[0])
    return widest


def has_image(cell: dict) -> bool:
    """Whether a code cell's outputs hold an image (a figure)."""
    return any(m in out.get("data", {}) for out in cell.get("outputs", []) for m in IMAGE_MIMES)


#: Files the prose names as code, made links (relative to ``notebooks/``): a click
#: opens the file in JupyterLab, and the book offers it.
PROSE_LINKS = {
    "`book/images/system.svg`": "[book/images/system.svg](../book/images/system.svg)",
}


def _link_files(text: str) -> str:
    for code, link in PROSE_LINKS.items():
        text = text.replace(code, link)
    return text


def _set_jupyter_flag(cmeta: dict, key: str) -> None:
    jupyter = cmeta.setdefault("jupyter", {})
    jupyter[key] = True


def normalise(nb: dict, alt: dict[str, str] | None = None) -> dict:
    """Return ``nb`` (a notebook as plain JSON data) in the committed form, in place.

    ``alt`` maps cell ids to figure alt text (default: :func:`figure_alt`).
    """
    alt = figure_alt() if alt is None else alt
    values_tag = _load("prose_tools", ROOT / "scripts" / "prose_tools.py").VALUES_TAG  # hidden like the setup cell
    meta = nb.setdefault("metadata", {})
    meta["kernelspec"] = dict(KERNELSPEC)
    meta["language_info"] = json.loads(json.dumps(LANGUAGE_INFO))
    meta.pop("widgets", None)
    for cell in nb.get("cells", []):
        cmeta = cell.setdefault("metadata", {})
        tags = cmeta.get("tags", [])
        for key in _CELL_KEYS_DROPPED:
            cmeta.pop(key, None)
        if isinstance(cell.get("source"), list):
            cell["source"] = "".join(cell["source"])
        if cell.get("cell_type") == "markdown":
            cell["source"] = _link_files(cell["source"])
            template = cmeta.get("lanes", {}).get("prose")
            if isinstance(template, str):
                cmeta["lanes"]["prose"] = _link_files(template)
        for tag, hidden_tags in ((SETUP_TAG, SETUP_TAGS), (values_tag, [values_tag, "remove-cell"])):
            if cell.get("cell_type") == "code" and tag in tags:
                _set_jupyter_flag(cmeta, "source_hidden")
                cmeta["tags"] = hidden_tags + [t for t in tags if t not in hidden_tags and t != "hide-input"]
        if cell.get("cell_type") == "code" and has_image(cell):
            image = cmeta.setdefault("mystnb", {}).setdefault("image", {})
            if cell.get("id") in alt:
                image["alt"] = alt[cell["id"]]
            if image_width(cell) >= WIDE_FIGURE_PX:
                image["classes"] = WIDE_CLASS
            else:
                image.pop("classes", None)
            if not image:
                del cmeta["mystnb"]["image"]
                if not cmeta["mystnb"]:
                    del cmeta["mystnb"]
        for out in cell.get("outputs", []):
            out.get("metadata", {}).pop("execution", None)
            if out.get("output_type") == "execute_result" and cell.get("execution_count"):
                out["execution_count"] = cell["execution_count"]
    _savehook().clean_notebook(nb)  # after the view flags are dropped: it folds the reveals
    return nb


def dumps(nb: dict) -> str:
    """Serialise as JupyterLab does: nbformat's writer (indent 1, sorted keys, lines as lists)."""
    import nbformat

    node = nbformat.from_dict(nb)
    return nbformat.writes(node) + "\n"


def finish(nb: dict) -> dict:
    """Render the prose templates from the glued values, then :func:`normalise`."""
    _load("prose_tools", ROOT / "scripts" / "prose_tools.py").render_notebook(nb)
    return normalise(nb)


def normalise_file(path: Path) -> bool:
    """Render and normalise one file in place; True when it changed."""
    before = path.read_text(encoding="utf-8")
    after = dumps(finish(json.loads(before)))
    if after != before:
        path.write_text(after, encoding="utf-8")
        return True
    return False


def execute_file(path: Path, timeout: int = 600) -> float:
    """Execute one notebook in place from its own folder; returns the seconds it took."""
    import nbformat
    from nbclient import NotebookClient

    nb = nbformat.read(path, as_version=4)
    start = time.perf_counter()
    NotebookClient(nb, timeout=timeout, kernel_name="python3",
                   resources={"metadata": {"path": str(path.parent)}}).execute()
    path.write_text(dumps(finish(json.loads(nbformat.writes(nb)))), encoding="utf-8")
    return time.perf_counter() - start


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("paths", nargs="*", type=Path)
    parser.add_argument("--all", action="store_true", help="every notebooks/*.ipynb")
    parser.add_argument("--normalise-only", action="store_true", help="normalise without executing")
    parser.add_argument("--timeout", type=int, default=600, help="seconds per cell (default 600)")
    args = parser.parse_args(argv)
    paths = sorted((ROOT / "notebooks").glob("*.ipynb")) if args.all else args.paths
    if not paths:
        parser.error("give notebook paths or --all")
    for p in paths:
        if not p.is_file() or p.suffix != ".ipynb":
            parser.error(f"paths must be .ipynb files (got {p})")
    for i, p in enumerate(paths, 1):
        if args.normalise_only:
            changed = normalise_file(p)
            print(f"[{i}/{len(paths)}] {p}: {'normalised' if changed else 'unchanged'}", flush=True)
        else:
            print(f"[{i}/{len(paths)}] executing {p} ...", end=" ", flush=True)
            took = execute_file(p, args.timeout)
            print(f"done, ran in {took:.1f} s", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
