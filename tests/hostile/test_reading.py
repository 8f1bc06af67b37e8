"""Reading what students hand in is bounded and iterative: no depth of JSON or folders stops it.

Cheap checks of the pieces the class run relies on (``tests/grading/test_grading_robustness.py``
grades the same attacks in the class): JSON nested past Python's recursion limit, a folder
tree deeper than a path may be long, names that are not text.
"""

from __future__ import annotations

import json
import os
import pathlib

import pytest

from hostile.klass import deep
from grading import classroom, sandbox


def _nested(depth: int) -> bytes:
    return b'{"answers": {"q1": ' + b"[" * depth + b"]" * depth + b"}}"


@pytest.mark.parametrize("depth", [17, 988, 200_000])
def test_answers_nested_too_deep_are_this_notebooks_failure(tmp_path, depth):
    (tmp_path / "answers.json").write_bytes(_nested(depth))
    assert classroom._answers(tmp_path / "answers.json") == (None, "unreadable")


def test_answers_within_the_depth_are_read(tmp_path):
    (tmp_path / "answers.json").write_bytes(_nested(classroom.MAX_ANSWERS_DEPTH - 2))
    data, why = classroom._answers(tmp_path / "answers.json")
    assert why == "" and json.dumps(data).count("[") == classroom.MAX_ANSWERS_DEPTH - 2
    (tmp_path / "answers.json").write_bytes(b"")  # the placeholder the box left untouched
    assert classroom._answers(tmp_path / "answers.json") == (None, "missing")


def test_json_depth_ignores_brackets_in_strings():
    assert classroom.json_depth(b'{"a": "[[[\\"{{", "b": [[1], {"c": []}]}') == 4
    assert classroom.json_depth(b"[" * 300_000) == 300_000
    with pytest.raises(ValueError, match="nested deeper than 5 levels"):
        classroom.loads_bounded(b"[[[[[[]]]]]]", 5)


def test_a_notebook_nested_too_deep_is_refused_in_one_line(tmp_path):
    p = tmp_path / "deep.ipynb"
    p.write_bytes(b'{"nbformat": 4, "nbformat_minor": 5, "metadata": {"x": ' + b"[" * 200_000 + b"]" * 200_000
                  + b'}, "cells": []}')
    nb, _, why = classroom.read_notebook(p)
    assert nb is None and why.startswith("not a Jupyter notebook") and "nested deeper" in why


def test_a_tree_deeper_than_a_path_may_be_long_is_removed(tmp_path):
    top = tmp_path / "job"
    os.close(deep(top, 3000, "leftover"))
    os.symlink("/etc", top / "link")  # links are removed, never followed
    sandbox.remove_tree(top)
    assert not top.exists() and os.path.isdir("/etc")


def test_a_hand_in_1000_folders_deep_is_searched_to_a_bounded_depth(tmp_path):
    os.close(deep(tmp_path / "subs", 1000, "bottom.ipynb"))
    (tmp_path / "subs" / "top.ipynb").write_text("{}")
    found = classroom.collect([tmp_path / "subs"])
    # the folder past the depth is listed, refused in one line (a notebook in it never vanishes unsaid)
    assert [(p.name, why) for p, _, why in found][:1] == [("top.ipynb", None)]
    (too_deep,) = found[1:]
    assert len(too_deep[0].relative_to(tmp_path / "subs").parts) == classroom.MAX_FOLDER_DEPTH + 1
    assert too_deep[2].startswith("refused: not read, a folder more than 16 folders down")
    sandbox.remove_tree(tmp_path / "subs")


def test_names_are_shown_escaped():
    raw = b"\x1b[2J\x1b[HTOTAL 999\n\x07\xff\xfe\xe2\x80\xae-\xc3\xa9.ipynb"
    shown = classroom.shown(pathlib.Path(os.fsdecode(raw)))
    assert shown == "\\x1b[2J\\x1b[HTOTAL 999\\x0a\\x07\\xff\\xfe\\u202e-\u00e9.ipynb"
    assert shown.isprintable() and shown.encode("utf-8")


def test_a_students_files_beyond_the_budget_are_listed_not_read(tmp_path):
    for i in range(5):
        (tmp_path / f"copy{i}.ipynb").write_text("not a notebook")
    subs, _ = classroom.grade([tmp_path], solutions=tmp_path, limits=sandbox.Limits(), student="bob",
                              budget=classroom.Budget(files=3), progress=lambda *a: None)
    # the latest three (here by the path: no copy numbers) are read, the older ones listed
    assert [s.status for s in subs] == ["refused"] * 2 + ["not_a_notebook"] * 3
    assert "more than 3 files" in subs[0].messages[0]
    with pytest.raises(ValueError, match="Budget.files must be a whole number >= 1"):
        classroom.Budget(files=0)


@pytest.mark.parametrize("copies", [3000])
def test_the_copy_that_counts_is_read_however_many_copies(tmp_path, copies):
    """Issue 41: with 3,000 copies the latest (Copy2999) lay beyond the files read in path order."""
    import nbformat

    from hostile.klass import SLUG, honest

    folder = tmp_path / "bob"
    folder.mkdir()
    for i in range(1, copies):
        (folder / f"{SLUG}-Copy{i}.ipynb").write_text("not a notebook")
    nbformat.write(honest("bob"), folder / f"{SLUG}-Copy{copies}.ipynb")
    subs, _ = classroom.grade([folder], solutions=tmp_path, limits=sandbox.Limits(), student="bob",
                              budget=classroom.Budget(files=200), progress=lambda *a: None)
    latest = next(s for s in subs if s.path.endswith(f"-Copy{copies}.ipynb"))
    assert latest.counted and latest.status == "no_key", (latest.status, latest.messages)  # read (no key here)
    assert sum(s.status != "refused" for s in subs) == 200 and len(subs) == copies
