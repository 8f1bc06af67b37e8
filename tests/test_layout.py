"""The package layout: one sub-package per part of the course, each importing only parts below it."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

import lanes

PACKAGE = Path(lanes.__file__).parent
#: Parts in order: a module may import from its own part and the parts before it.
PARTS = ("pool", "lane", "gpu", "exercises")


def _imported_parts(path: Path) -> set[str]:
    """The parts of ``lanes`` a module imports, relative or absolute, at any depth in the file."""
    part_of_file = path.parent.name
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.ImportFrom):
            if node.level == 0:
                names = (node.module or "").split(".")
                if names[0] == "lanes" and len(names) > 1:
                    found.add(names[1])
                elif names[0] == "lanes":
                    found.update(a.name for a in node.names)
            elif node.level == 1:
                found.add(part_of_file)
            elif node.level == 2:
                if node.module:
                    found.add(node.module.split(".")[0])
                else:
                    found.update(a.name for a in node.names)
        elif isinstance(node, ast.Import):
            for a in node.names:
                names = a.name.split(".")
                if names[0] == "lanes" and len(names) > 1:
                    found.add(names[1])
    return found & set(PARTS)


def test_top_level_holds_only_the_entry_points():
    top = sorted(p.name for p in PACKAGE.glob("*.py"))
    # prose.py renders the chapters' text from their computed values: it models no part of
    # the system, so it sits beside the entry points and imports none of the parts.
    assert top == ["__init__.py", "__main__.py", "_checks.py", "cli.py", "prose.py"]
    assert _imported_parts(PACKAGE / "prose.py") == set()
    assert sorted(p.name for p in PACKAGE.iterdir() if p.is_dir() and (p / "__init__.py").exists()) == sorted(PARTS)


@pytest.mark.parametrize("part", PARTS)
def test_no_part_imports_a_part_above_it(part):
    allowed = set(PARTS[: PARTS.index(part) + 1])
    offenders = {
        p.name: sorted(_imported_parts(p) - allowed)
        for p in sorted((PACKAGE / part).glob("*.py"))
        if _imported_parts(p) - allowed
    }
    assert offenders == {}


def test_the_scan_sees_an_upward_import(tmp_path):
    fake = tmp_path / "pool" / "x.py"
    fake.parent.mkdir()
    fake.write_text("def f():\n    from ..gpu.steps import step_cost\n    from lanes.lane import queueing\n")
    assert _imported_parts(fake) == {"gpu", "lane"}


def test_every_public_name_lives_in_a_part():
    homes = {lanes.__getattr__.__globals__["_EXPORTS"][name].split(".")[0] for name in lanes.__all__}
    assert homes <= set(PARTS)
