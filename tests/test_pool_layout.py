"""The slot pool's layout: no import circle, no private name taken across modules, a small core.

The scan reads every ``import`` in the package (deferred ones inside
functions included) with :mod:`ast`, so it needs nothing to run.
"""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import lanes

PACKAGE = Path(lanes.__file__).parent
#: Most lines of the package one run of the pool may load: 1,463 with the one loop, promotion and
#: the unused helpers deleted (2,668 before the one loop); the issue aims at 1,000, not reached yet.
CORE_LINES = 1470
#: Cycles and private imports outside the slot pool and the entry points, left to their owners' parts.
ELSEWHERE = ("lanes.engine", "lanes.lane", "lanes.exercises")


def scan(root: Path) -> tuple[dict[str, set[str]], list[tuple[str, str]]]:
    """The module graph of the package at ``root`` and its cross-module private imports."""
    mods = {}
    for p in root.rglob("*.py"):
        parts = list(p.relative_to(root.parent).with_suffix("").parts)
        mods[".".join(parts[:-1] if parts[-1] == "__init__" else parts)] = p
    edges: dict[str, set[str]] = {m: set() for m in mods}
    private = []
    for m, p in mods.items():
        package = m if p.name == "__init__.py" else m.rsplit(".", 1)[0]
        for node in ast.walk(ast.parse(p.read_text())):
            if isinstance(node, ast.Import):
                edges[m] |= {a.name for a in node.names if a.name in mods}
            elif isinstance(node, ast.ImportFrom):
                base = package.split(".")[: len(package.split(".")) - node.level + 1] if node.level else []
                target = ".".join(base + ([node.module] if node.module else []))
                for a in node.names:
                    if f"{target}.{a.name}" in mods:
                        edges[m].add(f"{target}.{a.name}")
                    elif target in mods:
                        edges[m].add(target)
                        if a.name.startswith("_") and target != m:
                            private.append((m, f"{target}.{a.name}"))
    for m in edges:
        edges[m].discard(m)
    return edges, private


def circles(edges: dict[str, set[str]]) -> list[list[str]]:
    """The import circles: strongly connected groups of more than one module."""
    seen: set[str] = set()
    found = []
    for start in edges:
        if start in seen:
            continue
        reach = {start}
        todo = [start]
        while todo:
            for w in edges[todo.pop()]:
                if w not in reach:
                    reach.add(w)
                    todo.append(w)
        group = sorted(m for m in reach if _reaches(edges, m, start))
        seen |= set(group)
        if len(group) > 1:
            found.append(group)
    return found


def _reaches(edges: dict[str, set[str]], a: str, b: str) -> bool:
    todo, reach = [a], {a}
    while todo:
        for w in edges[todo.pop()]:
            if w == b:
                return True
            if w not in reach:
                reach.add(w)
                todo.append(w)
    return a == b


def mine(name: str) -> bool:
    return not name.startswith(ELSEWHERE)


def test_no_import_circle_in_the_pool_or_the_entry_points():
    edges, _ = scan(PACKAGE)
    assert [c for c in circles(edges) if any(mine(m) for m in c)] == []


def test_no_private_name_imported_across_modules():
    _, private = scan(PACKAGE)
    assert [p for p in private if mine(p[0]) or mine(p[1])] == []


def test_the_scan_sees_a_deferred_circle_and_a_private_import(tmp_path):
    pkg = tmp_path / "lanes" / "pool"
    pkg.mkdir(parents=True)
    (tmp_path / "lanes" / "__init__.py").write_text("")
    (pkg / "__init__.py").write_text("")
    (pkg / "a.py").write_text("from .b import thing\n")
    (pkg / "b.py").write_text("def thing():\n    from .a import _hidden\n")
    edges, private = scan(tmp_path / "lanes")
    assert circles(edges) == [["lanes.pool.a", "lanes.pool.b"]]
    assert private == [("lanes.pool.b", "lanes.pool.a._hidden")]


def test_one_run_of_the_pool_loads_a_small_core():
    code = ("import sys, lanes; lanes.simulate(lanes.Scenario(hours=1), 'hybrid:8'); "
            "print(sum(len(open(m.__file__).read().splitlines()) for n, m in sys.modules.items() "
            "if n.startswith('lanes') and getattr(m, '__file__', None)))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60, check=True)
    assert int(out.stdout) <= CORE_LINES
