"""Own words: no run of 8 or more words of the source material in what students read.

Students read the chapters' markdown, the book pages and the student exercise
notebooks.  None of them may repeat 8 consecutive words of the documents the
course was written from (kept outside the repository, in ``../shared/seeds``
next to the repository root); facts and figures carry over, sentences do not.
The word splitting and the run length mirror ``../shared/tools/own_words.py``.
Without the ``../shared/seeds`` folder (a clone on its own) the check skips,
saying why.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
SEEDS_DIR = ROOT.parent / "shared" / "seeds"
RUN = 8
WORD = re.compile(r"[a-z0-9]+(?:'[a-z]+)?")


def words(text: str) -> list[str]:
    return WORD.findall(text.lower())


def grams(text: str, n: int = RUN) -> set[tuple[str, ...]]:
    w = words(text)
    return {tuple(w[i:i + n]) for i in range(len(w) - n + 1)}


def copied_runs(text: str, source_grams: set[tuple[str, ...]], n: int = RUN) -> list[str]:
    """Each maximal run of >= n words of ``text`` found in the source, as text."""
    w = words(text)
    hits = [i for i in range(len(w) - n + 1) if tuple(w[i:i + n]) in source_grams]
    hit_set = set(hits)
    runs = []
    for i in hits:
        if i - 1 in hit_set:
            continue
        j = i
        while j + 1 in hit_set:
            j += 1
        runs.append(" ".join(w[i:j + n]))
    return runs


def student_texts() -> list[tuple[str, Path]]:
    out = []
    for nb in sorted(ROOT.glob("notebooks/*.ipynb")) + sorted(ROOT.glob("exercises/*/*.ipynb")):
        out.append((str(nb.relative_to(ROOT)), nb))
    for md in sorted(ROOT.glob("book/*.md")):
        out.append((str(md.relative_to(ROOT)), md))
    return out


def read_student_text(path: Path) -> list[tuple[str, str]]:
    """(where, text) pairs: each markdown cell of a notebook, or a whole page."""
    if path.suffix == ".ipynb":
        nb = json.loads(path.read_text())
        return [(f"cell {i}", "".join(c["source"])) for i, c in enumerate(nb["cells"])
                if c["cell_type"] == "markdown"]
    return [("page", path.read_text())]


@pytest.fixture(scope="module")
def source_grams() -> set[tuple[str, ...]]:
    files = sorted(SEEDS_DIR.glob("*.txt")) if SEEDS_DIR.is_dir() else []
    if not files:
        pytest.skip(f"no source documents to compare with: {SEEDS_DIR} is absent or empty "
                    "(it sits next to the repository in the course's workspace and CI)")
    found: set[tuple[str, ...]] = set()
    for p in files:
        found |= grams(p.read_text())
    return found


TEXTS = student_texts()


def test_there_is_student_text_to_check():
    assert TEXTS, "no chapter, exercise notebook or book page found"


@pytest.mark.parametrize("path", [p for _, p in TEXTS], ids=[name for name, _ in TEXTS])
def test_no_copied_run_of_eight_words(path, source_grams):
    problems = []
    for where, text in read_student_text(path):
        problems += [f"{where}: \"{run}\"" for run in copied_runs(text, source_grams)]
    assert not problems, f"{len(problems)} run(s) of {RUN}+ words copied:\n" + "\n".join(problems)


class TestTheCheckCanFail:
    def test_a_copied_sentence_is_found_across_punctuation_and_case(self):
        src = grams("Priority decides who gets the next free slot, not whether a slot is free.")
        text = "Remember: PRIORITY decides who gets the next free slot -- not whether one is free."
        assert copied_runs(text, src) == ["priority decides who gets the next free slot not whether"]

    def test_seven_words_pass(self):
        src = grams("one two three four five six seven eight nine")
        assert copied_runs("one two three four five six seven, then ten", src) == []

    def test_a_long_copy_is_one_run(self):
        src = grams("a b c d e f g h i j k")
        assert copied_runs("x a b c d e f g h i j y", src) == ["a b c d e f g h i j"]
