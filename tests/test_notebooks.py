"""The committed chapter notebooks: executed, tagged honestly, and quoting the seeds' figures.

nbval (run by the same pytest command) re-executes every notebook and compares
every output; these checks cover what nbval does not: that nothing was left
unexecuted or skipped, that ``nbval-ignore-output`` sits only on widget cells,
and that the course's anchor numbers appear in the outputs readers see.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

NOTEBOOKS = sorted((Path(__file__).resolve().parents[1] / "notebooks").glob("[0-9][0-9]_*.ipynb"))
WIDGET_MIME = "application/vnd.jupyter.widget-view+json"


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


def test_ten_chapters_numbered_in_order():
    assert [p.name[:2] for p in NOTEBOOKS] == [f"{i:02d}" for i in range(1, 11)]


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
                mimes = {m for o in cell.get("outputs", []) for m in o.get("data", {})}
                assert WIDGET_MIME in mimes, f"cell {i} ignores its output but shows no widget"

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


ANCHOR_ROW = "reserve 8+pre         0s     0s     0s     0.0%       5,139      3,951       92%"

CARD_FIGURES = {
    # 003, the eight scheduling chains, as the chapters print them
    "littles_law": [r"7\.975 s", r"79\.75", r"74\.75", r"2,990"],
    "kv_in_flight": [r"43\.1 GB", r"\b37 req"],
    "goodput": [r"9\.9 ms", r"6,450", r"15\.1 ms", r"8,505"],
    "swap_vs_recompute": [r"5\.2 us", r"34\.7 us", r"7\.6 GB/s"],
    "hol_blocking": [r"1\.80 s", r"0\.27 s", r"0\.16 s", r"1\.78 s", r"0\.41 s"],
    "p99_knee": [r"0\.69", r"\b11\b", r"\b4\b"],
    "long_prompt": [r"= 266 ms", r"= 35 ms", r"= 301 ms", r"= 70 ms", r"= 13\b"],
    "tenant_cost": [r"\b500\b", r"11,000", r"22x", r"96%"],
}


def test_the_anchor_table_is_printed_in_the_first_chapters():
    assert any(ANCHOR_ROW in output_text(p) for p in NOTEBOOKS[:5])


@pytest.mark.parametrize("chain", sorted(CARD_FIGURES))
def test_every_chain_figure_appears_in_a_chapter(chain):
    text = output_text(NOTEBOOKS[7]) + output_text(NOTEBOOKS[8])
    missing = [f for f in CARD_FIGURES[chain] if not re.search(f, text)]
    assert not missing, f"{chain}: {missing}"
