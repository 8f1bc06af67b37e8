"""The package layout: one sub-package per part of the course, each importing only parts below it;
no import circle and no private name taken across modules.

The scans read every ``import`` (deferred ones inside functions and ``TYPE_CHECKING`` blocks
included) with :mod:`ast`, so they need nothing to run.
"""

from __future__ import annotations

import ast
import functools
from pathlib import Path

import lanes

PACKAGE = Path(lanes.__file__).parent
#: Parts in order: a module may import from its own part and the parts before it.  The
#: models come first; display draws them; the grading code uses them all.
PARTS = ("pool", "lane", "gpu", "display", "exercises")
#: The parts that model the system: none of them imports the display (a caller hands a model
#: what it should show, such as a sweep's progress line).
MODELS = ("pool", "lane", "gpu")


# -- import circles and private names, over the whole package -----------------------------

#: Code outside the package that imports it: a private name is private to these too.
USERS = ("grading", "scripts", "solutions", "exercises")


def modules(root: Path) -> dict[str, Path]:
    """Dotted module name -> file, for the package at ``root`` (a folder named ``lanes``)."""
    found = {}
    for p in sorted(root.rglob("*.py")):
        parts = list(p.relative_to(root.parent).with_suffix("").parts)
        found[".".join(parts[:-1] if parts[-1] == "__init__" else parts)] = p
    return found


def _is_private(name: str) -> bool:
    return name.startswith("_") and not (name.startswith("__") and name.endswith("__"))


def scan(root: Path, users: tuple[Path, ...] = ()) -> tuple[dict[str, set[str]], list[tuple[str, str]]]:
    """The module graph of the package at ``root``, and every private name one module takes from another.

    Returns ``(edges, private)``: ``edges[m]`` are the package modules ``m`` imports, at
    any depth in the file; ``private`` lists ``(module, "target._name")`` for each
    ``from target import _name`` and each ``target._name`` read through an imported
    module, in the package and in the files ``users`` (scripts and keys outside it).
    """
    mods = modules(root)
    edges: dict[str, set[str]] = {m: set() for m in mods}
    private: list[tuple[str, str]] = []
    files = [(m, p) for m, p in mods.items()] + [(p.relative_to(root.parent).as_posix(), p) for p in users]
    for m, p in files:
        in_package = m in mods
        package = (m if p.name == "__init__.py" else m.rsplit(".", 1)[0]) if in_package else ""
        bound: dict[str, str] = {}  # local name -> package module it stands for
        tree = ast.parse(p.read_text())
        for node in ast.walk(tree):
            if isinstance(node, ast.Import):
                for a in node.names:
                    if a.name in mods:
                        edges.setdefault(m, set()).add(a.name)
                        bound[a.asname or a.name.split(".")[0]] = a.name if a.asname else a.name.split(".")[0]
            elif isinstance(node, ast.ImportFrom):
                if node.level:
                    if not in_package:
                        continue
                    up = package.split(".")
                    base = up[: len(up) - node.level + 1]
                else:
                    base = []
                target = ".".join(base + ([node.module] if node.module else []))
                for a in node.names:
                    if f"{target}.{a.name}" in mods:
                        edges.setdefault(m, set()).add(f"{target}.{a.name}")
                        bound[a.asname or a.name] = f"{target}.{a.name}"
                    elif target in mods:
                        edges.setdefault(m, set()).add(target)
                        if _is_private(a.name) and target != m:
                            private.append((m, f"{target}.{a.name}"))
        for node in ast.walk(tree):
            if isinstance(node, ast.Attribute) and _is_private(node.attr):
                chain, value = [], node.value
                while isinstance(value, ast.Attribute):
                    chain.append(value.attr)
                    value = value.value
                if isinstance(value, ast.Name) and value.id in bound:
                    target = ".".join([bound[value.id]] + chain[::-1])
                    if target in mods and target != m:
                        private.append((m, f"{target}.{node.attr}"))
    for m in edges:
        edges[m].discard(m)
    return edges, private


def circles(edges: dict[str, set[str]]) -> list[list[str]]:
    """The import circles: strongly connected groups of more than one module, each sorted."""
    def reach(start: str) -> set[str]:
        seen, todo = {start}, [start]
        while todo:
            for w in edges.get(todo.pop(), ()):
                if w not in seen:
                    seen.add(w)
                    todo.append(w)
        return seen

    reaches = {m: reach(m) for m in edges}
    groups = {tuple(sorted(w for w in reaches[m] if m in reaches[w])) for m in edges}
    return sorted(list(g) for g in groups if len(g) > 1)


#: Private names still taken across modules, in files their owners are changing this round
#: (the grading code leaves the package): (user, name) -> owner.  The test below fails when
#: one is gone, so the list only shrinks.
LEFT_TO_OWNERS: dict[tuple[str, str], str] = {}


@functools.cache
def _package_scan() -> tuple[dict[str, set[str]], list[tuple[str, str]]]:
    root = PACKAGE.parent
    users = tuple(p for folder in USERS for p in sorted((root / folder).rglob("*.py")))
    return scan(PACKAGE, users)


def test_no_import_circle():
    edges, _ = _package_scan()
    assert circles(edges) == []


def test_no_private_name_imported_across_modules():
    _, private = _package_scan()
    assert sorted(set(private) - set(LEFT_TO_OWNERS)) == []
    assert sorted(set(LEFT_TO_OWNERS) - set(private)) == []


def test_the_scans_see_deferred_circles_and_private_names(tmp_path):
    pkg = tmp_path / "lanes" / "pool"
    pkg.mkdir(parents=True)
    (tmp_path / "lanes" / "__init__.py").write_text("")
    (pkg / "__init__.py").write_text("")
    (pkg / "a.py").write_text("from .b import thing\n")
    (pkg / "b.py").write_text("def thing():\n    from .a import _hidden\n")
    (pkg / "c.py").write_text("from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from .d import D\n")
    (pkg / "d.py").write_text("from . import c as see\nX = see._Y\n")
    user = tmp_path / "scripts" / "grade.py"
    user.parent.mkdir()
    user.write_text("import lanes.pool.a\nfrom lanes.pool import b\nlanes.pool.a._z()\nb._w()\n")
    edges, private = scan(tmp_path / "lanes", (user,))
    assert circles(edges) == [["lanes.pool.a", "lanes.pool.b"], ["lanes.pool.c", "lanes.pool.d"]]
    assert sorted(private) == sorted([
        ("lanes.pool.b", "lanes.pool.a._hidden"), ("lanes.pool.d", "lanes.pool.c._Y"),
        ("scripts/grade.py", "lanes.pool.a._z"), ("scripts/grade.py", "lanes.pool.b._w"),
    ])


# -- parts, each importing only the parts before it ----------------------------------------


def part_of(module: str) -> str | None:
    """The part a module of the package belongs to (None for the entry points at the top)."""
    names = module.split(".")
    return names[1] if len(names) > 2 or (len(names) == 2 and names[1] in PARTS) else None


def upward_imports(edges: dict[str, set[str]]) -> dict[tuple[str, str], list[str]]:
    """(module, part it imports from above its own) -> the modules it imports there."""
    found: dict[tuple[str, str], list[str]] = {}
    for m, targets in edges.items():
        part = part_of(m)
        if part is None:
            continue
        allowed = set(PARTS[: PARTS.index(part) + 1])
        for target in sorted(targets):
            if part_of(target) not in allowed | {None}:
                found.setdefault((m, part_of(target)), []).append(target)
    return found


def test_top_level_holds_only_the_entry_points():
    top = sorted(p.name for p in PACKAGE.glob("*.py"))
    # prose.py holds glue, which a chapter calls to record a number its text shows: it models
    # no part of the system, so it sits beside the entry points and imports none of the parts
    # (the rendering and the checks are tooling: scripts/prose_tools.py).
    # _checks.py (validation at the edge) and _stats.py (the one percentile rule) serve every part.
    assert top == ["__init__.py", "__main__.py", "_checks.py", "_stats.py", "cli.py", "prose.py"]
    edges, _ = _package_scan()
    assert {part_of(m) for m in edges["lanes.prose"]} <= {None}
    assert sorted(p.name for p in PACKAGE.iterdir() if p.is_dir() and (p / "__init__.py").exists()) == sorted(PARTS)


def test_no_part_imports_a_part_above_it():
    edges, _ = _package_scan()
    assert upward_imports(edges) == {}


def test_no_model_imports_the_display():
    edges, _ = _package_scan()
    found = sorted((m, t) for m, targets in edges.items() if part_of(m) in MODELS
                   for t in targets if part_of(t) == "display")
    assert found == []


def test_the_scan_sees_an_upward_import(tmp_path):
    pkg = tmp_path / "lanes" / "pool"
    pkg.mkdir(parents=True)
    for folder in ("lanes", "lanes/gpu", "lanes/lane", "lanes/display", "lanes/display/pool"):
        (tmp_path / folder).mkdir(exist_ok=True)
        (tmp_path / folder / "__init__.py").write_text("")
    (tmp_path / "lanes" / "pool" / "__init__.py").write_text("")
    for name in ("lanes/gpu/steps.py", "lanes/lane/queueing.py", "lanes/display/pool/plots.py"):
        (tmp_path / name).write_text("")
    (pkg / "x.py").write_text("def f():\n    from ..gpu.steps import step_cost\n    from lanes.lane import queueing\n")
    (tmp_path / "lanes" / "display" / "pool" / "widgets.py").write_text("from .plots import f\nfrom ...gpu import steps\n")
    edges, _ = scan(tmp_path / "lanes")
    assert upward_imports(edges) == {
        ("lanes.pool.x", "gpu"): ["lanes.gpu.steps"], ("lanes.pool.x", "lane"): ["lanes.lane.queueing"],
    }


def test_every_public_name_lives_in_a_model():
    homes = {lanes.__getattr__.__globals__["_EXPORTS"][name].split(".")[0] for name in lanes.__all__}
    assert homes <= set(PARTS[: PARTS.index("display")])


def test_class_scoped_fixtures_wrap_the_classmethod():
    """``@pytest.fixture`` must sit above ``@classmethod``: the other order works on some pytest
    9 releases and on others is not discovered as a fixture at all (the tests that ask for it
    error), so a fresh install of the requirements could fail where this machine passes."""
    import ast

    wrong = []
    for path in sorted((PACKAGE.parent / "tests").rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                names = [ast.unparse(d.func if isinstance(d, ast.Call) else d) for d in node.decorator_list]
                if "classmethod" in names and "pytest.fixture" in names \
                        and names.index("classmethod") < names.index("pytest.fixture"):
                    wrong.append(f"{path.relative_to(PACKAGE.parent)}: {node.name}")
    assert wrong == []


def test_one_conftest_module_named_conftest():
    """Only tests/conftest.py is imported as ``conftest``: pytest imports every conftest.py outside a
    package under that one name, the last one replacing the others, so a second one makes
    ``from conftest import ...`` (tests/test_packaging.py) read whichever a worker loaded last."""
    tests = PACKAGE.parent / "tests"
    found = [p.relative_to(tests).as_posix() for p in sorted(tests.rglob("conftest.py"))
             if not (p.parent / "__init__.py").exists()]
    assert found == ["conftest.py"]
