"""The committed notebooks: clean as JupyterLab saves them, executed, tagged honestly.

nbval (run by the same pytest command) re-executes every chapter and compares
every output; these checks cover what nbval does not:

- every committed notebook (chapters, exercise sets, solution masters) is
  already in the form ``scripts/run_notebooks.py`` writes, which is the form
  JupyterLab saves: normalising it again changes no byte, so opening and saving
  it in JupyterLab leaves ``git diff`` empty;
- code lines fit in 88 columns in the chapters and the exercise sets;
- explorers show their text fallback where no kernel runs, and no output
  points at a widget model that was never committed;
- nothing was left unexecuted or skipped, ``nbval-ignore-output`` sits only
  on explorer cells, and the course's anchor numbers appear in the outputs.
"""

from __future__ import annotations

import ast
import importlib.util
import json
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
NOTEBOOKS = sorted((ROOT / "notebooks").glob("[0-9][0-9]_*.ipynb"))
EXERCISES = sorted((ROOT / "exercises").glob("*/*.ipynb"))
SOLUTIONS = sorted((ROOT / "solutions").glob("*/*.ipynb"))
COMMITTED = NOTEBOOKS + EXERCISES + SOLUTIONS
MAX_COLUMNS = 88
WIDGET_MIME = "application/vnd.jupyter.widget-view+json"
FALLBACK_PREFIX = "Interactive explorer:"


def _rel(path: Path) -> str:
    return path.relative_to(ROOT).as_posix()


def _runner():
    """scripts/run_notebooks.py as a module (it is a script, not part of the package)."""
    spec = importlib.util.spec_from_file_location("run_notebooks", ROOT / "scripts" / "run_notebooks.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def load(path: Path) -> dict:
    return json.loads(path.read_text())


def output_text(path: Path) -> str:
    parts = []
    for cell in load(path)["cells"]:
        for out in cell.get("outputs", []):
            parts.append("".join(out.get("text", "")))
            for mime in ("text/plain", "text/html", "text/markdown"):
                parts.append("".join(out.get("data", {}).get(mime, "")))
    return "\n".join(parts)


def test_chapters_numbered_in_order():
    assert [p.name[:2] for p in NOTEBOOKS] == [f"{i:02d}" for i in range(1, len(NOTEBOOKS) + 1)]


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.stem)
class TestCommittedNotebook:
    def test_every_code_cell_is_executed_without_errors(self, path):
        for i, cell in enumerate(load(path)["cells"]):
            if cell["cell_type"] == "code":
                assert cell["execution_count"] is not None, f"cell {i} was never executed"
                assert not [o for o in cell["outputs"] if o["output_type"] == "error"], f"cell {i} has an error"

    def test_ignore_output_only_on_widget_cells_and_no_skips(self, path):
        for i, cell in enumerate(load(path)["cells"]):
            tags = cell.get("metadata", {}).get("tags", [])
            assert not {"nbval-skip", "nbval-raises-exception", "skip-execution"} & set(tags), f"cell {i}: {tags}"
            if "nbval-ignore-output" in tags:
                shown = "".join(
                    "".join(o.get("data", {}).get("text/plain", "")) for o in cell.get("outputs", [])
                )
                assert FALLBACK_PREFIX in shown, f"cell {i} ignores its output but shows no explorer"

    def test_one_title_and_a_figure(self, path):
        nb = load(path)
        titles = [line for c in nb["cells"] if c["cell_type"] == "markdown"
                  for line in "".join(c["source"]).splitlines() if line.startswith("# ")]
        assert len(titles) == 1, titles
        images = [o for c in nb["cells"] for o in c.get("outputs", []) if "image/png" in o.get("data", {})]
        assert images, "no matplotlib figure in the outputs"
        assert nb["metadata"]["kernelspec"]["name"] == "python3"

    def test_no_volatile_text_in_outputs(self, path):
        text = output_text(path)
        assert not re.search(r"\d+%\|[^|\n]*\|", text), "a progress bar was committed"
        assert "Traceback" not in text


ANCHOR_ROW = "hybrid:8              0s     0s     0s     0.0%       5,139      3,951       92%"

CHAIN_FIGURES = {
    # 003, the eight scheduling chains, as the chapters print them
    "littles_law": [r"7\.975 s", r"79\.75", r"74\.75", r"2,990"],
    "kv_in_flight": [r"43\.1 GB", r"\b37 req"],
    "goodput": [r"9\.9 ms", r"6,450", r"15\.1 ms", r"8,505"],
    "swap_vs_recompute": [r"5\.2 us", r"34\.65 us", r"7\.6 GB/s"],
    "hol_blocking": [r"1\.80 s", r"0\.27 s", r"0\.16 s", r"1\.78 s", r"0\.41 s"],
    "p99_knee": [r"0\.69", r"\b11\b", r"\b4\b"],
    "long_prompt": [r"= 266 ms", r"= 35 ms", r"= 301 ms", r"= 70 ms", r"= 13\b"],
    "tenant_cost": [r"\b500\b", r"11,000", r"22x", r"96%"],
}


def test_the_anchor_table_is_printed_in_the_first_chapters():
    assert any(ANCHOR_ROW in output_text(p) for p in NOTEBOOKS[:5])


@pytest.mark.parametrize("chain", sorted(CHAIN_FIGURES))
def test_every_chain_figure_appears_in_a_chapter(chain):
    text = output_text(NOTEBOOKS[7]) + output_text(NOTEBOOKS[8])
    missing = [f for f in CHAIN_FIGURES[chain] if not re.search(f, text)]
    assert not missing, f"{chain}: {missing}"


# --------------------------------------------------------------------------
# Clean: the committed bytes are exactly what normalisation writes
# --------------------------------------------------------------------------


def test_there_are_notebooks_to_check():
    assert NOTEBOOKS and EXERCISES, "no chapter or exercise notebooks found"


def test_exercise_sets_are_named_and_titled_apart_from_the_chapters():
    """Two JupyterLab tabs never read the same: a set is ``set_NN_slug.ipynb``, titled "Exercises N"."""
    assert {p.name for p in EXERCISES}.isdisjoint(p.name for p in NOTEBOOKS)
    for path in EXERCISES:
        assert path.name == f"set_{path.parent.name}.ipynb", path
        title = "".join(json.loads(path.read_text(encoding="utf-8"))["cells"][0]["source"])
        assert re.match(r"# Exercises \d+: ", title), (path, title[:60])


@pytest.mark.skipif(not (ROOT / "solutions").is_dir(),
                    reason="solutions/ is the instructor's: the student repository has no masters")
def test_there_are_masters_to_check():
    assert SOLUTIONS, "solutions/ holds no master notebook"


@pytest.mark.parametrize("path", COMMITTED, ids=_rel)
def test_committed_notebook_is_normalised(path):
    """Round trip: normalising the committed file again leaves its bytes unchanged."""
    runner = _runner()
    before = path.read_text(encoding="utf-8")
    after = runner.dumps(runner.normalise(json.loads(before)))
    if after != before:
        old, new = before.splitlines(), after.splitlines()
        first = next((i for i, (a, b) in enumerate(zip(old, new)) if a != b), min(len(old), len(new)))
        pytest.fail(
            f"{_rel(path)} is not normalised (first difference at line {first + 1}); run "
            f"python scripts/run_notebooks.py --normalise-only {_rel(path)}",
            pytrace=False,
        )


@pytest.mark.parametrize("path", COMMITTED, ids=_rel)
def test_jupyter_server_save_leaves_the_bytes_unchanged(path, tmp_path):
    """JupyterLab saves through the server's contents manager: load and save a copy with it."""
    import shutil

    from jupyter_server.services.contents.filemanager import FileContentsManager

    shutil.copy2(path, tmp_path / path.name)
    manager = FileContentsManager(root_dir=str(tmp_path))
    model = manager.get(path.name, content=True, type="notebook")
    manager.save({"type": "notebook", "format": "json", "content": model["content"]}, path.name)
    assert (tmp_path / path.name).read_bytes() == path.read_bytes(), (
        f"{_rel(path)} changes when JupyterLab's server saves it; run "
        f"python scripts/run_notebooks.py --normalise-only {_rel(path)}"
    )


@pytest.mark.parametrize("path", COMMITTED, ids=_rel)
def test_kernelspec_is_the_one_jupyterlab_writes(path):
    meta = json.loads(path.read_text(encoding="utf-8"))["metadata"]
    assert meta.get("kernelspec") == _runner().KERNELSPEC
    assert "widgets" not in meta, "widget state is committed"


@pytest.mark.parametrize("path", NOTEBOOKS + EXERCISES, ids=_rel)
def test_code_lines_fit_in_88_columns(path):
    long_lines = []
    for i, cell in enumerate(json.loads(path.read_text(encoding="utf-8"))["cells"]):
        if cell["cell_type"] != "code":
            continue
        for n, line in enumerate("".join(cell["source"]).splitlines(), 1):
            if len(line) > MAX_COLUMNS:
                long_lines.append(f"cell {i} line {n}: {len(line)} columns")
    assert not long_lines, f"{_rel(path)}: code lines over {MAX_COLUMNS} columns:\n" + "\n".join(long_lines)


@pytest.mark.parametrize("path", COMMITTED, ids=_rel)
def test_no_output_points_at_a_widget_model(path):
    """No widget state is committed, so a widget view would show 'model not found'."""
    bad = [
        i for i, cell in enumerate(json.loads(path.read_text(encoding="utf-8"))["cells"])
        for out in cell.get("outputs", []) if WIDGET_MIME in out.get("data", {})
    ]
    assert not bad, f"{_rel(path)}: cells {bad} show a widget view with no committed model"


# --------------------------------------------------------------------------
# The normaliser itself
# --------------------------------------------------------------------------


def _sample_notebook() -> dict:
    import nbformat

    nb = nbformat.v4.new_notebook()
    nb.metadata["kernelspec"] = {"display_name": "Python 3", "language": "python", "name": "python3"}
    nb.metadata["widgets"] = {"application/vnd.jupyter.widget-state+json": {"state": {}}}
    cell = nbformat.v4.new_code_cell("print(1)\nexplorer", execution_count=1)
    cell.metadata["execution"] = {"iopub.execute_input": "2026-11-30T01:00:00Z"}
    cell.metadata["scrolled"] = True
    cell.outputs = [
        nbformat.v4.new_output("stream", text="1\n"),
        nbformat.v4.new_output("display_data", data={
            "text/plain": FALLBACK_PREFIX + " run this cell",
            WIDGET_MIME: {"model_id": "abc", "version_major": 2, "version_minor": 0},
        }),
    ]
    nb.cells = [cell]
    return json.loads(nbformat.writes(nb))


def test_normalise_writes_what_jupyterlab_saves():
    runner = _runner()
    nb = runner.normalise(_sample_notebook())
    assert nb["metadata"]["kernelspec"]["display_name"] == "Python 3 (ipykernel)"
    assert "widgets" not in nb["metadata"]
    cell = nb["cells"][0]
    assert "execution" not in cell["metadata"] and "scrolled" not in cell["metadata"]
    assert WIDGET_MIME not in cell["outputs"][1]["data"]
    assert "".join(cell["outputs"][1]["data"]["text/plain"]).startswith(FALLBACK_PREFIX)
    text = runner.dumps(nb)
    assert text.endswith("}\n") and text.startswith('{\n "cells": [')
    assert runner.dumps(runner.normalise(json.loads(text))) == text


def test_normalise_only_flag_reports_and_rewrites(tmp_path, capsys):
    import nbformat

    path = tmp_path / "x.ipynb"
    path.write_text(nbformat.writes(nbformat.from_dict(_sample_notebook())), encoding="utf-8")
    runner = _runner()
    assert runner.main(["--normalise-only", str(path)]) == 0
    assert "normalised" in capsys.readouterr().out
    once = path.read_bytes()
    assert runner.main(["--normalise-only", str(path)]) == 0
    assert "unchanged" in capsys.readouterr().out
    assert path.read_bytes() == once


# --------------------------------------------------------------------------
# Explorers without a kernel
# --------------------------------------------------------------------------


def test_explorer_offers_the_widget_and_a_text_fallback():
    """A live kernel gets the widget view; anything else gets a sentence, not a VBox repr."""
    from IPython.core.formatters import DisplayFormatter
    from lanes.display.pool.widgets import explorer_box, figure_axes, slider

    def render(n: int):
        fig, (ax,) = figure_axes()
        ax.plot(range(n))
        return fig, {"n": n}

    box = explorer_box({"n": slider("n", 3, 1, 9)}, render, "A test explorer")
    data, _ = DisplayFormatter().format(box)
    assert WIDGET_MIME in data and data[WIDGET_MIME]["model_id"] == box.model_id
    assert data["text/plain"].startswith(FALLBACK_PREFIX + " run this cell in JupyterLab")
    assert "A test explorer" in data["text/plain"]
    assert "VBox" not in data["text/plain"] and "VBox" not in data["text/html"]
    assert FALLBACK_PREFIX in data["text/html"]
    box.controls["n"].value = 5
    assert "<td>5</td>" in box.table.value


# --------------------------------------------------------------------------
# What JupyterLab shows before anything runs, and what the book says about figures
# --------------------------------------------------------------------------


@pytest.mark.parametrize("path", NOTEBOOKS, ids=_rel)
def test_every_reveal_has_its_outputs_collapsed(path):
    """The cell after each predict cell is tagged ``hide-output`` and collapsed in JupyterLab."""
    codes = [c for c in load(path)["cells"] if c["cell_type"] == "code"]
    problems = []
    for i, cell in enumerate(codes[:-1]):
        if "predict" not in cell["metadata"].get("tags", []):
            continue
        reveal = codes[i + 1]["metadata"]
        if "hide-output" not in reveal.get("tags", []):
            problems.append(f"code cell {i + 1}: no hide-output tag (the book would show it)")
        if not (reveal.get("jupyter", {}).get("outputs_hidden") and reveal.get("collapsed")):
            problems.append(f"code cell {i + 1}: outputs shown in JupyterLab before it runs")
    assert not problems, problems


@pytest.mark.parametrize("path", NOTEBOOKS, ids=_rel)
def test_the_setup_cell_is_collapsed_and_removed_from_the_book(path):
    first = next(c for c in load(path)["cells"] if c["cell_type"] == "code")
    tags = first["metadata"].get("tags", [])
    assert "setup" in tags and "remove-cell" in tags, tags
    assert first["metadata"].get("jupyter", {}).get("source_hidden") is True


def _records_only(stmt: ast.stmt) -> bool:
    """A statement that only records values for the prose: a ``glue`` call, its import, or a loop
    whose body holds only such statements and names it sets for them."""
    if isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Call):
        return isinstance(stmt.value.func, ast.Name) and stmt.value.func.id == "glue"
    if isinstance(stmt, ast.ImportFrom):
        return stmt.module == "lanes.prose" and [a.name for a in stmt.names] == ["glue"]
    if isinstance(stmt, ast.For):
        return all(_records_only(s) or (isinstance(s, ast.Assign) and all(isinstance(t, ast.Name) for t in s.targets))
                   for s in stmt.body)
    return False


@pytest.mark.parametrize("path", NOTEBOOKS, ids=_rel)
def test_glue_lives_in_hidden_values_cells(path):
    """A code cell in view shows the model call: every ``glue`` (the import too) sits in a cell
    tagged ``prose-values`` that only records, collapsed in JupyterLab and left out of the book."""
    problems = []
    for i, cell in enumerate(load(path)["cells"]):
        if cell["cell_type"] != "code":
            continue
        meta, source = cell["metadata"], "".join(cell["source"])
        if "prose-values" not in meta.get("tags", []):
            if re.search(r"\bglue\b", source):
                problems.append(f"cell {i}: glue in a cell in view")
            continue
        if "remove-cell" not in meta["tags"] or meta.get("jupyter", {}).get("source_hidden") is not True:
            problems.append(f"cell {i}: values cell not hidden (tags {meta['tags']})")
        if not all(_records_only(stmt) for stmt in ast.parse(source).body):
            problems.append(f"cell {i}: values cell does more than record")
    assert not problems, problems


@pytest.mark.parametrize("path", COMMITTED, ids=_rel)
def test_language_info_is_what_jupyterlab_writes(path):
    assert load(path)["metadata"].get("language_info") == _runner().LANGUAGE_INFO


def _figure_cells(path: Path) -> list[dict]:
    runner = _runner()
    return [c for c in load(path)["cells"] if c["cell_type"] == "code" and runner.has_image(c)]


@pytest.mark.parametrize("path", NOTEBOOKS, ids=_rel)
def test_every_figure_has_alt_text_that_says_what_it_shows(path):
    """Alt text comes from scripts/figure_alt.json (cell id -> text), applied by normalise."""
    problems = []
    for cell in _figure_cells(path):
        alt = cell["metadata"].get("mystnb", {}).get("image", {}).get("alt", "")
        if len(alt.split()) < 8:
            problems.append(f"cell {cell.get('id')}: alt text {alt!r}; add one to scripts/figure_alt.json "
                            "and run scripts/run_notebooks.py --normalise-only")
    assert not problems, problems


def test_alt_texts_belong_to_figures():
    ids = {c.get("id") for p in NOTEBOOKS for c in _figure_cells(p)}
    stale = sorted(set(_runner().figure_alt()) - ids)
    assert not stale, f"scripts/figure_alt.json names cells that draw no figure: {stale}"


@pytest.mark.parametrize("path", NOTEBOOKS, ids=_rel)
def test_wide_figures_are_marked_for_phones(path):
    runner = _runner()
    for cell in _figure_cells(path):
        classes = cell["metadata"].get("mystnb", {}).get("image", {}).get("classes")
        wide = runner.image_width(cell) >= runner.WIDE_FIGURE_PX
        assert (classes == runner.WIDE_CLASS) == wide, (cell.get("id"), runner.image_width(cell), classes)


def test_the_system_diagram_is_linked_not_named():
    named = [f"{p.name}" for p in NOTEBOOKS for c in load(p)["cells"]
             if c["cell_type"] == "markdown" and re.search(r"(?<!\[)`book/images/system\.svg`", "".join(c["source"]))]
    assert not named, f"the system diagram is named as a path, not linked, in {named}"


def test_the_chapters_folder_holds_only_chapters():
    """What a student sees in ``notebooks/``: chapter notebooks only (helper files live elsewhere)."""
    others = sorted(p.name for p in (ROOT / "notebooks").iterdir()
                    if not re.fullmatch(r"[0-9][0-9]_[a-z0-9_]+\.ipynb", p.name) and p.name != ".ipynb_checkpoints")
    assert not others, f"notebooks/ holds files that are not chapters: {others}"
