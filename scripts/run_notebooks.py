"""Execute chapter notebooks in place and normalise them for committing.

    python scripts/run_notebooks.py notebooks/03_headroom.ipynb   # one or more paths
    python scripts/run_notebooks.py --all                         # every chapter
    python scripts/run_notebooks.py --normalise-only PATH ...     # no execution

Each notebook runs top to bottom in a fresh ``python3`` kernel from its own
folder (as JupyterLab and nbval run it), then :func:`normalise` makes the
file look exactly as JupyterLab would save it, so opening and saving a
committed notebook in JupyterLab leaves ``git diff`` empty:

* the kernelspec JupyterLab writes (``Python 3 (ipykernel)``);
* no per-cell ``execution`` timestamps, no stale widget state
  (``metadata.widgets``), no ``collapsed``/``scrolled`` view flags;
* no widget views in outputs: an explorer's output keeps only its text and
  HTML fallback ("Interactive explorer: run this cell ..."), since the model a
  view points at exists only in the kernel that drew it;
* each ``execute_result`` numbered like its cell, as a fresh run numbers it;
* one-space JSON indentation and a final newline, as JupyterLab writes.

Before normalising, the prose of every markdown cell that carries a template
(``metadata.lanes.prose``, see :mod:`lanes.prose`) is rendered again from the
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
_CELL_KEYS_DROPPED = ("execution", "collapsed", "scrolled")
WIDGET_VIEW_MIME = "application/vnd.jupyter.widget-view+json"


def normalise(nb: dict) -> dict:
    """Return ``nb`` (a notebook as plain JSON data) in the committed form, in place."""
    meta = nb.setdefault("metadata", {})
    meta["kernelspec"] = dict(KERNELSPEC)
    meta.pop("widgets", None)
    for cell in nb.get("cells", []):
        cmeta = cell.setdefault("metadata", {})
        for key in _CELL_KEYS_DROPPED:
            cmeta.pop(key, None)
        if isinstance(cell.get("source"), list):
            cell["source"] = "".join(cell["source"])
        for out in cell.get("outputs", []):
            out.get("metadata", {}).pop("execution", None)
            if out.get("output_type") == "execute_result" and cell.get("execution_count"):
                out["execution_count"] = cell["execution_count"]
            data = out.get("data", {})
            # A widget view points at a model that lives only in the kernel that
            # drew it; no widget state is committed, so after a reopen it would
            # read "Error displaying widget: model not found". Keep the explorer's
            # text and HTML fallback, which JupyterLab and the book show instead.
            if WIDGET_VIEW_MIME in data and len(data) > 1:
                data.pop(WIDGET_VIEW_MIME)
    return nb


def dumps(nb: dict) -> str:
    """Serialise as JupyterLab does: nbformat's writer (indent 1, sorted keys, lines as lists)."""
    import nbformat

    node = nbformat.from_dict(nb)
    return nbformat.writes(node) + "\n"


def finish(nb: dict) -> dict:
    """Render the prose templates from the glued values, then :func:`normalise`."""
    from lanes import prose

    prose.render_notebook(nb)
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
