"""Insert or update the standard setup cell in every chapter notebook.

    python scripts/setup_cell.py                 # every notebooks/[0-9][0-9]_*.ipynb
    python scripts/setup_cell.py PATH ...        # only these notebooks
    python scripts/setup_cell.py --check         # exit 1 if a chapter needs it (no writes)
    python scripts/setup_cell.py --print         # show the cell's code

The setup cell is the first code cell of each chapter, tagged ``setup``. Where
``lanes`` cannot be imported (Google Colab, a fresh Binder-less kernel) it
installs ``lanes[course]`` with pip from the repository at the book's own
branch, both read from ``_config.yml`` (``repository.url`` and
``repository.branch``). In a checkout with the kit installed, in JupyterLab and
under nbval it finds ``lanes`` and does nothing, printing nothing.

The environment variable ``LANES_PIP_SOURCE`` replaces what pip installs (the
words after ``pip install``), so tests can install from the local checkout
instead of the network, e.g.
``LANES_PIP_SOURCE="--no-deps --no-build-isolation --ignore-installed /path/to/repo"``.

Nothing is executed. The cell has no output in a checkout, so inserting it
leaves every other cell's source and outputs as they are; the notebook is
written as a fresh run would leave it: the setup cell gets execution count 1
and the counts of the cells after it move up by one. Running the script again
changes nothing.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import sys
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[1]
TAG = "setup"
#: The book removes the cell (it has no output in a checkout); JupyterLab shows it
#: collapsed to its first line (``metadata.jupyter.source_hidden``, set by
#: ``scripts/run_notebooks.py``'s ``normalise``).
TAGS = [TAG, "remove-cell"]
SOURCE_ENV = "LANES_PIP_SOURCE"


def _runner():
    spec = importlib.util.spec_from_file_location("run_notebooks", ROOT / "scripts" / "run_notebooks.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def pip_source(config_path: Path = ROOT / "_config.yml") -> str:
    """The pip requirement for ``lanes[course]`` at the book's repository and branch."""
    config = yaml.safe_load(config_path.read_text(encoding="utf-8"))
    repo = config["repository"]
    url = repo["url"].rstrip("/")
    branch = repo.get("branch", "main")
    if not url.startswith("https://"):
        raise ValueError(f"repository.url must be an https:// URL (got {url!r})")
    return f"lanes[course] @ git+{url}.git@{branch}"


def cell_source(config_path: Path = ROOT / "_config.yml") -> str:
    """The code of the setup cell (every line at most 88 columns).

    Its first line says what it does: that is the one line a student sees, as
    :func:`normalise` collapses the cell in JupyterLab (the book removes it).
    It needs nothing but the standard library, since on Colab ``lanes`` is
    not there yet.
    """
    source = pip_source(config_path)
    url = source.split(" @ ", 1)[1]
    return f'''# Colab: installs the course kit if it is missing (in a checkout it does nothing).
import importlib.util, os, shlex, subprocess, sys  # noqa: E401
if importlib.util.find_spec("lanes") is None:
    print("Installing the lanes course kit ...")
    url = "{url}"
    src = os.environ.get("{SOURCE_ENV}", f"lanes[course] @ {{url}}")
    pip = [sys.executable, "-m", "pip", "install", "-q", *shlex.split(src)]
    subprocess.run(pip, check=True)
    importlib.invalidate_caches()'''


def _new_cell(source: str) -> dict:
    return {
        "cell_type": "code",
        "execution_count": 1,
        "id": "lanes-setup",
        "metadata": {"tags": list(TAGS)},
        "outputs": [],
        "source": source,
    }


def update(nb: dict, source: str) -> bool:
    """Insert or update the setup cell in ``nb`` (notebook JSON data); True when it changed."""
    cells = nb["cells"]
    for cell in cells:
        if cell["cell_type"] == "code" and TAG in cell.get("metadata", {}).get("tags", []):
            old = cell["source"] if isinstance(cell["source"], str) else "".join(cell["source"])
            if old == source and cell["metadata"]["tags"][: len(TAGS)] == TAGS:
                return False
            cell["source"] = source
            cell["metadata"]["tags"] = TAGS + [t for t in cell["metadata"]["tags"]
                                               if t not in TAGS and t != "hide-input"]
            return True
    first_code = next((i for i, c in enumerate(cells) if c["cell_type"] == "code"), len(cells))
    for cell in cells[first_code:]:
        if cell["cell_type"] == "code" and cell.get("execution_count") is not None:
            cell["execution_count"] += 1
    new = _new_cell(source)
    ids = {c.get("id") for c in cells}
    if new["id"] in ids:
        raise ValueError("a cell already has the id 'lanes-setup' but no 'setup' tag")
    if nb.get("nbformat_minor", 5) < 5:
        del new["id"]
    cells.insert(first_code, new)
    return True


def update_file(path: Path, source: str, write: bool = True) -> bool:
    """Insert or update the setup cell in one notebook file; True when it changed (or would)."""
    runner = _runner()
    before = path.read_text(encoding="utf-8")
    nb = json.loads(before)
    changed = update(nb, source)
    after = runner.dumps(runner.normalise(nb))
    if write and after != before:
        path.write_text(after, encoding="utf-8")
    return changed or after != before


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("paths", nargs="*", type=Path)
    parser.add_argument("--check", action="store_true", help="report, write nothing, exit 1 if any would change")
    parser.add_argument("--print", action="store_true", help="print the cell's code and exit")
    args = parser.parse_args(argv)
    source = cell_source()
    if args.print:
        print(source)
        return 0
    paths = args.paths or sorted((ROOT / "notebooks").glob("[0-9][0-9]_*.ipynb"))
    for p in paths:
        if not p.is_file() or p.suffix != ".ipynb":
            parser.error(f"paths must be .ipynb files (got {p})")
    stale = 0
    for i, p in enumerate(paths, 1):
        changed = update_file(p, source, write=not args.check)
        stale += changed
        verb = ("needs the setup cell" if args.check else "setup cell written") if changed else "up to date"
        print(f"[{i}/{len(paths)}] {p}: {verb}", flush=True)
    return 1 if args.check and stale else 0


if __name__ == "__main__":
    sys.exit(main())
