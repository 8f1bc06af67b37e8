"""A set-13 policy as an answer: its source, read back from the notebook cell that defines it.

The student side of the online judge (:mod:`grading.online`, instructor only): a policy is
handed in as the lines :func:`source_of` makes, and the judge turns them back into source
with :func:`source_text`.
"""

from __future__ import annotations

import sys

__all__ = ["LINE_MARK", "source_of", "source_text"]

#: Marks the start of each line of a policy's source in an answer, so that indentation survives.
LINE_MARK = "|"


def source_of(policy: object, **constants: object) -> list[str]:
    """The source of a policy defined in a notebook cell or a file, as an answer for the judge.

    Returns the source as a list of lines, each starting with :data:`LINE_MARK`
    (an answer is a list of short strings whose surrounding spaces are ignored;
    the mark keeps each line's indentation).  :func:`source_text` turns it back.

    ``policy`` is the class or function.  The text of the cell (or file) that
    defines it is read back; its top-level imports, functions and classes are
    kept, everything else in it is left out.  ``Decision`` is imported at the
    top, and each keyword becomes a line ``NAME = value`` there, so the policy can use the constants of your
    variant without seeing ``V`` (values: int, float, str, bool or None).
    The result ends with ``policy = <its name>``.  When no source can be read
    back (code compiled from a string), a warning is printed and the answer is
    a policy that fails to load, so the judge scores it 0.
    """
    import ast
    import linecache

    name = getattr(policy, "__name__", None)
    if isinstance(policy, type):
        funcs = [f for f in vars(policy).values() if hasattr(f, "__code__")]
    else:
        funcs = [policy] if hasattr(policy, "__code__") else []
    if not name or not funcs:
        raise ValueError(f"policy must be a class with a decide method or a function (got {policy!r:.60})")
    filename = funcs[0].__code__.co_filename
    text = "".join(linecache.getlines(filename))
    if not text:  # compiled by hand (exec of a string): there is no source to send
        print(f"warning: the source of {name} cannot be read back: define it in a notebook cell or a .py file;"
              " as it is, the judge can only score it 0", file=sys.stderr)
        return [f"{LINE_MARK}raise RuntimeError('the source of the policy could not be read')"]
    tree = ast.parse(text)
    lines = text.splitlines()
    kept = []
    for node in tree.body:
        if isinstance(node, (ast.Import, ast.ImportFrom, ast.FunctionDef, ast.ClassDef)):
            first = min([node.lineno, *(d.lineno for d in getattr(node, "decorator_list", ()))])
            kept.append("\n".join(lines[first - 1:node.end_lineno]))
    if not any(isinstance(n, (ast.FunctionDef, ast.ClassDef)) and n.name == name for n in tree.body):
        raise ValueError(f"{name} must be defined at the top level of its cell")
    head = ["from lanes.pool.protocol import Decision"]  # the one name every policy needs
    for key, value in constants.items():
        if not key.isidentifier() or type(value) not in (int, float, str, bool, type(None)):
            raise ValueError(f"constants must be NAME=value with a plain int, float, str, bool or None (got {key}={value!r:.40})")
        head.append(f"{key} = {value!r}")
    text = "\n".join(head) + "\n\n" + "\n\n".join(kept) + f"\n\npolicy = {name}"
    lines = [LINE_MARK + line.rstrip() for line in text.splitlines()]
    too_long = [i for i, line in enumerate(lines, 1) if len(line) > 200]
    if too_long:
        raise ValueError(f"lines of a judged policy must be at most 199 characters (line {too_long[0]} is longer)")
    if len(lines) > 1000:
        raise ValueError(f"a judged policy must be at most 1000 lines (got {len(lines)})")
    return lines


def source_text(answer: object) -> str:
    """The policy source in an answer made by :func:`source_of` (a str is returned as it is)."""
    if isinstance(answer, str):
        return answer
    if not isinstance(answer, (list, tuple)) or not all(isinstance(x, str) for x in answer):
        raise ValueError("a policy answer must be the list of lines that source_of returns")
    return "\n".join(x[len(LINE_MARK):] if x.startswith(LINE_MARK) else x for x in answer) + "\n"
