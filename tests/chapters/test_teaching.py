"""The chapter conventions, enforced for every chapter notebook.

Each chapter opens with learning objectives and says where on the system
diagram it sits; asks at least two questions (``predict`` cells, the question
in the markdown cell before them: ``test_predictions.py``) before the cell that
answers them (the next code cell, tagged ``hide-output`` so the book folds it,
and printing the student's guess next to the answer); captions every
figure with a ``**Figure.**`` paragraph right below the cell that draws it;
and never speaks to students about material they do not have.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
NOTEBOOKS = sorted((ROOT / "notebooks").glob("*.ipynb"))
FIGURE_MIMES = ("image/png", "image/svg+xml", "image/jpeg")
#: Words students must never read: they never see the material behind the course.
HIDDEN_SOURCES = re.compile(
    r"\bthe (?:seed|card)\b|\bseed document|\bsource document|\bdesign card", re.IGNORECASE
)
OBJECTIVES = "By the end of this chapter you will"


def cells(path: Path) -> list[dict]:
    return json.loads(path.read_text())["cells"]


def source(cell: dict) -> str:
    return "".join(cell["source"])


def tags(cell: dict) -> list[str]:
    return cell.get("metadata", {}).get("tags", [])


def test_there_are_chapters_to_check():
    assert NOTEBOOKS, "no notebooks/*.ipynb found"


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.stem)
class TestChapterConventions:
    def test_objectives_open_the_chapter(self, path):
        first = cells(path)[0]
        assert first["cell_type"] == "markdown", "cell 0 must be the chapter's markdown opening"
        text = source(first)
        assert text.startswith("# "), "cell 0 must start with the '# Title' line"
        assert OBJECTIVES in text, f"cell 0 has no line starting {OBJECTIVES!r}"
        after = text.split(OBJECTIVES, 1)[1].splitlines()[1:]
        bullets = [line for line in after if re.match(r"\s*[-*] \S", line)]
        assert len(bullets) >= 2, "the learning objectives need a bullet list (two items or more)"

    def test_opening_places_the_chapter_on_the_system_diagram(self, path):
        text = source(cells(path)[0]).lower()
        assert "diagram" in text, "cell 0 must say where on the system diagram this chapter sits"

    def test_at_least_two_predictions_each_before_its_reveal(self, path):
        cs = cells(path)
        predicts = [i for i, c in enumerate(cs) if "predict" in tags(c)]
        assert len(predicts) >= 2, f"{len(predicts)} cell(s) tagged 'predict'; at least two are needed"
        for i in predicts:
            cell = cs[i]
            assert cell["cell_type"] == "code", f"predict cell {i} must be a code cell"
            text = source(cell)
            asked = i > 0 and cs[i - 1]["cell_type"] == "markdown" and source(cs[i - 1]).lstrip().startswith(
                "**Predict:**")  # the question in markdown (tests/chapters/test_predictions.py), or as a comment
            assert asked or re.search(r"^\s*#", text, re.MULTILINE), f"predict cell {i} asks no question"
            guess = re.search(r"^(\w+)\s*=", text, re.MULTILINE)
            assert guess, f"predict cell {i} must hold an assignment the student edits (my_guess = None)"
            assert i + 1 < len(cs), f"predict cell {i} is the last cell: its reveal is missing"
            reveal = cs[i + 1]
            assert reveal["cell_type"] == "code", f"the cell after predict cell {i} must be its (code) reveal"
            assert "hide-output" in tags(reveal), f"reveal cell {i + 1} must be tagged 'hide-output'"
            assert "predict" not in tags(reveal), f"reveal cell {i + 1} is tagged 'predict' too"
            assert re.search(rf"\b{guess.group(1)}\b", source(reveal)), (
                f"reveal cell {i + 1} must print the guess {guess.group(1)!r} next to the answer"
            )

    def test_every_figure_has_a_caption_right_below(self, path):
        cs = cells(path)
        for i, cell in enumerate(cs):
            if cell["cell_type"] != "code":
                continue
            draws = any(m in out.get("data", {}) for out in cell.get("outputs", []) for m in FIGURE_MIMES)
            if not draws:
                continue
            shown = [c for c in cs[i + 1:] if "prose-values" not in c["metadata"].get("tags", [])]  # hidden
            assert shown, f"figure cell {i} is the last cell: its caption is missing"
            nxt = shown[0]
            assert nxt["cell_type"] == "markdown" and source(nxt).lstrip().startswith("**Figure.**"), (
                f"the cell after figure cell {i} must be markdown starting '**Figure.**'"
            )
            caption = source(nxt).lstrip()[len("**Figure.**"):].strip()
            assert len(caption.split()) >= 8, f"the caption after cell {i} must say what to look at"

    def test_no_mention_of_material_students_do_not_have(self, path):
        for i, cell in enumerate(cells(path)):
            if cell["cell_type"] == "markdown":
                found = HIDDEN_SOURCES.findall(source(cell))
                assert not found, f"markdown cell {i} mentions {found[0]!r}"

    def test_ends_with_what_to_take_away(self, path):
        headings = [line for c in cells(path) if c["cell_type"] == "markdown"
                    for line in source(c).splitlines() if line.startswith("## ")]
        assert any("take away" in h.lower() for h in headings), "no '## What to take away' section"


class TestTheChecksCanFail:
    """The checks above, run on small made-up notebooks, must reject what they should."""

    def fake(self, tmp_path, cell_list):
        path = tmp_path / "99_fake.ipynb"
        path.write_text(json.dumps({"cells": cell_list}))
        return path

    @staticmethod
    def md(text):
        return {"cell_type": "markdown", "metadata": {}, "source": text}

    @staticmethod
    def code(text, tag_list=(), png=False):
        outputs = [{"output_type": "display_data", "data": {"image/png": "x"}}] if png else []
        return {"cell_type": "code", "metadata": {"tags": list(tag_list)}, "source": text, "outputs": outputs}

    def good(self):
        return [
            self.md(f"# T\n\nIntro.\n\n{OBJECTIVES}:\n\n- a\n- b\n\nOn the system diagram: the pool."),
            self.code("# Predict: how many?\nmy_guess = None", ["predict"]),
            self.code("print(my_guess, 3)", ["hide-output"]),
            self.code("# Predict: how long?\nmy_other = None", ["predict"]),
            self.code("print(my_other, 4)", ["hide-output"]),
            self.code("plot()", png=True),
            self.md("**Figure.** Look at the gap between the two curves at the peak."),
            self.md("## What to take away\n\n- x"),
        ]

    def run_all(self, path):
        t = TestChapterConventions()
        for name in dir(t):
            if name.startswith("test_"):
                getattr(t, name)(path)

    def test_a_good_notebook_passes(self, tmp_path):
        self.run_all(self.fake(tmp_path, self.good()))

    @pytest.mark.parametrize("breakage", ["no_objectives", "one_predict", "untagged_reveal",
                                          "no_caption", "mentions", "guess_not_shown"])
    def test_a_broken_notebook_fails(self, tmp_path, breakage):
        cs = self.good()
        if breakage == "no_objectives":
            cs[0] = self.md("# T\n\nIntro only, on the system diagram.")
        elif breakage == "one_predict":
            cs[3]["metadata"]["tags"] = []
        elif breakage == "untagged_reveal":
            cs[2]["metadata"]["tags"] = []
        elif breakage == "no_caption":
            cs[6] = self.md("The figure shows things.")
        elif breakage == "mentions":
            cs[7] = self.md("## What to take away\n\nAs the card says, x.")
        elif breakage == "guess_not_shown":
            cs[2]["source"] = "print(3)"
        with pytest.raises(AssertionError):
            self.run_all(self.fake(tmp_path, cs))
