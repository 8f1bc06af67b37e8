"""Predictions that predict: no answer is visible before its reveal.

The chapters are read in order, as a student reads them. For every ``predict``
cell, the values its reveal (the next cell) glues as the answer must not
appear in anything the student can already see: an earlier cell of the book
(source or output, this chapter or an earlier one), the question itself, the
reveal's source, or the one line JupyterLab shows of the reveal's folded
output (see ``check_predictions`` in ``scripts/prose_tools.py``).
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from scripts import prose_tools as prose

ROOT = Path(__file__).resolve().parents[2]
CHAPTERS = sorted((ROOT / "notebooks").glob("[0-9][0-9]_*.ipynb"))

def _book(upto: Path) -> list[tuple[str, dict]]:
    return [(p.stem, json.loads(p.read_text(encoding="utf-8"))) for p in CHAPTERS
            if p.stem <= upto.stem]


@pytest.mark.parametrize("path", CHAPTERS, ids=lambda p: p.stem)
def test_no_answer_is_visible_before_its_reveal(path):
    problems = [p for p in prose.check_predictions(_book(path)) if p.startswith(path.stem + " ")]
    assert problems == []


@pytest.mark.parametrize("path", CHAPTERS, ids=lambda p: p.stem)
def test_every_declared_answer_is_glued_by_its_reveal(path):
    nb = json.loads(path.read_text(encoding="utf-8"))
    for rev in prose.reveals(nb, path.stem):  # raises on an answer the reveal does not glue
        assert rev.answers, f"{path.stem} cell {rev.cell}: its reveal glues no answer"


class TestTheCheckCanFail:
    """Made-up chapters: each way an answer can show before its reveal is caught."""

    @staticmethod
    def glue_out(name, value):
        return {"output_type": "display_data", "metadata": {"scrapbook": {"name": name, "mime_prefix": ""}},
                "data": {"application/papermill.record/text/plain": repr(value)}}

    @staticmethod
    def stream(text):
        return {"output_type": "stream", "name": "stdout", "text": text}

    def chapter(self, *, before="", preview="your guess: None\n", question="# Predict: how many?",
                reveal_src="print(my_guess, n)", answer=3841, declared=None):
        predict = {"cell_type": "code", "metadata": {"tags": ["predict"]},
                   "source": question + "\nmy_guess = None", "outputs": []}
        if declared is not None:
            predict["metadata"]["lanes"] = {"answer": declared}
        return {"cells": [
            {"cell_type": "markdown", "metadata": {}, "source": before},
            predict,
            {"cell_type": "code", "metadata": {"tags": ["hide-output"]}, "source": reveal_src,
             "outputs": [self.stream(preview + f"{answer}\n"), self.glue_out("n", answer),
                         self.glue_out("inputs", 16)]},
        ]}

    def test_a_clean_chapter_passes(self):
        assert prose.check_predictions([("01_x", self.chapter(before="Some text, 16 slots."))]) == []

    @pytest.mark.parametrize("where", ["markdown", "output", "question", "source", "preview",
                                       "earlier chapter"])
    def test_an_answer_shown_early_is_caught(self, where):
        kw = {"markdown": {"before": "It finishes 3,841 jobs."},
              "question": {"question": "# Predict: 3841 or more?"},
              "source": {"reveal_src": "n = 3841\nprint(my_guess, n)"},
              "preview": {"preview": ""},
              }.get(where, {})
        book = [("02_y", self.chapter(**kw))]
        if where == "output":
            book[0][1]["cells"].insert(1, {"cell_type": "code", "metadata": {}, "source": "run()",
                                           "outputs": [self.stream("batch 3841\n")]})
        if where == "earlier chapter":
            book.insert(0, ("01_x", {"cells": [{"cell_type": "markdown", "metadata": {},
                                                "source": "Preemption finished 3841 jobs."}]}))
        problems = prose.check_predictions(book)
        assert len(problems) >= 1 and "the answer n = " in problems[0]

    def test_a_short_answer_counts_only_in_the_preview(self):
        ok = self.chapter(before="Ten seeds, 12 slots.", answer=12)
        assert prose.check_predictions([("01_x", ok)]) == []
        leaked = self.chapter(preview="", answer=12)
        assert "folded preview line" in prose.check_predictions([("01_x", leaked)])[0]

    def test_declared_answers_narrow_and_must_be_glued(self):
        inputs_shown = self.chapter(before="A budget of 16 slots.", preview="16 slots in\n",
                                    declared=["n"])
        assert prose.check_predictions([("01_x", inputs_shown)]) == []
        undeclared = self.chapter(before="A budget of 16 slots.", preview="16 slots in\n")
        assert "inputs = '16'" in prose.check_predictions([("01_x", undeclared)])[0]
        with pytest.raises(ValueError, match="not glued"):
            prose.reveals(self.chapter(declared=["missing"]), "01_x")

    def test_the_preview_is_the_first_line_jupyterlab_shows(self):
        cell = {"outputs": [self.glue_out("n", 3)]}
        assert prose.preview_line(cell) == ""  # a recorded value shows nothing
        cell = {"outputs": [self.stream("\nfirst\nsecond\n"), self.stream("third\n")]}
        assert prose.preview_line(cell) == "first"

    def test_one_seed_of_a_per_seed_answer_shown_early_is_caught(self):
        """An answer over seeds is declared with its per-seed values: a table before the question
        that shows one seed's run (at a table's decimals, or a count) shows the answer."""
        for shown, answer in (("small  69.31  36.50", [65.99, 69.3103, 71.92]),
                              ("most remaining, min run  1447  1469.5  1507", [1507, 1461, 1447])):
            nb = self.chapter(answer=answer, preview="your guess: None\n")
            nb["cells"].insert(1, {"cell_type": "code", "metadata": {}, "source": "table",
                                   "outputs": [self.stream(shown + "\n")]})
            assert "the answer n = " in prose.check_predictions([("01_x", nb)])[0], shown
            nb["cells"][1]["outputs"] = [self.stream("the inputs: 16 slots\n")]
            assert prose.check_predictions([("01_x", nb)]) == []

    def test_a_float_answer_is_looked_for_as_the_prose_shows_it(self):
        nb = self.chapter(before="Earlier: 27.0% of arrivals evict.", answer=26.96)
        nb["cells"].append({"cell_type": "markdown", "metadata": {"lanes": {"prose": "{{n:.1f}}% evict."}},
                            "source": "27.0% evict."})
        assert "the answer n = '27.0'" in prose.check_predictions([("01_x", nb)])[0]
        nb["cells"][0]["source"] = "Earlier: 12.0% of arrivals evict."
        assert prose.check_predictions([("01_x", nb)]) == []


# ---------------------------------------------------------------------------
# The question in markdown, and what Run All does, said where a student reads it
#
# A question typed as a code comment is cut off on a phone and at 1280 px (a code
# cell scrolls sideways), so each ``predict`` cell holds only the guess the student
# edits, in short lines, and the markdown cell just before it asks the question
# (``**Predict:** ...?``).  JupyterLab unfolds a folded output when its cell runs
# (``lanes.display.savehook``), so *Run All* shows every answer: the how-to and
# each chapter's first question say so.

#: The widest line a predict cell may hold: what a 390 px phone shows of a code cell.
GUESS_LINE = 48
RUN_ALL = re.compile(r"\*?Run All\*?[^.]*\b(?:answer|reveal)\w*[^.]*\bunfold", re.I | re.S)


def question_problems(nb: dict) -> list[str]:
    """Predict cells whose question is not in the markdown cell before them, or whose
    code is not a short guess; and a chapter whose first question does not say what
    Run All does."""
    cells, problems, first = nb["cells"], [], True
    for i, cell in enumerate(cells):
        if "predict" not in cell.get("metadata", {}).get("tags", []):
            continue
        code = "".join(cell["source"])
        before = cells[i - 1] if i else {"cell_type": "code", "source": ""}
        asked = "".join(before["source"]) if before["cell_type"] == "markdown" else ""
        if not (asked.lstrip().startswith("**Predict:**") and "?" in asked):
            problems.append(f"predict cell {i}: the markdown cell before it must ask the question"
                            " ('**Predict:** ...?')")
        if re.search(r"^\s*#", code, re.M):
            problems.append(f"predict cell {i}: the question is a code comment; move it to the markdown before")
        wide = [line for line in code.splitlines() if len(line) > GUESS_LINE]
        if wide:
            problems.append(f"predict cell {i}: a line wider than {GUESS_LINE} characters: {wide[0]!r}")
        if first and asked and not RUN_ALL.search(" ".join(asked.split())):
            problems.append(f"predict cell {i}: the chapter's first question must say that Run All runs"
                            " and unfolds every answer")
        first = False
    return problems


@pytest.mark.parametrize("path", CHAPTERS, ids=lambda p: p.stem)
def test_every_question_is_in_markdown_and_says_what_run_all_does(path):
    assert question_problems(json.loads(path.read_text(encoding="utf-8"))) == []


def test_the_how_to_says_what_run_all_does():
    text = (ROOT / "book" / "how_to_use.md").read_text(encoding="utf-8")
    predictions = text.split("## Predictions", 1)[1].split("\n## ", 1)[0]
    assert RUN_ALL.search(" ".join(predictions.split())), "the Predictions section must say Run All unfolds the answers"
    for para in text.split("\n\n"):
        if "Run All" in para:
            assert RUN_ALL.search(" ".join(para.split())), f"Run All suggested without its effect: {para[:120]!r}"


class TestQuestionsCanFail:
    @staticmethod
    def nb(question="**Predict:** How many? *Run All* runs every answer cell too and unfolds it.",
           code="my_guess = None"):
        return {"cells": [{"cell_type": "markdown", "metadata": {}, "source": question},
                          {"cell_type": "code", "metadata": {"tags": ["predict"]}, "source": code},
                          {"cell_type": "code", "metadata": {"tags": ["hide-output"]}, "source": "print(my_guess)"}]}

    def test_a_good_question_passes(self):
        assert question_problems(self.nb()) == []

    @pytest.mark.parametrize("broken, found", [
        ({"code": "# Predict: how many?\nmy_guess = None"}, "code comment"),
        ({"question": "Some text."}, "must ask the question"),
        ({"question": "**Predict:** How many?"}, "Run All"),
        ({"code": "my_guess_of_the_number_of_slots_busy_at_the_peak = None"}, "wider than"),
    ])
    def test_each_rule_fails(self, broken, found):
        assert any(found in p for p in question_problems(self.nb(**broken)))
