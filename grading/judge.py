"""Step 2 of grading: recompute every expected value for a student's variant and compare.

Run by ``scripts/grade.py`` as ``python -I -c "...judge.main..." SOLUTIONS_DIR``: a fresh,
isolated interpreter that imports the installed ``lanes``, reads the answers that step 1
exported (JSON on stdin), validates their form again, loads each set's answer key
``SOLUTIONS_DIR/NN_slug/key.py`` and writes the scores as JSON on stdout. Nothing from
the student's process runs here: the answers are plain JSON values.

An answer key is a Python module with one function per question::

    def q1(a, v):           # a: the student's checked answers, v: their Variant
        return close("q1_busy_slots", a["q1_busy_slots"], v.rate_per_s * v.hold_s, rel=1e-6)

returning a :class:`Check`, a list of them (the question's points are shared by their
weights), or a bool. The helpers below build checks whose messages say what is wrong
without giving the expected value away and without saying which way it is off.
"""

from __future__ import annotations

import gc
import importlib.util
import json
import math
import pathlib
import sys
import traceback
from dataclasses import dataclass
from types import ModuleType

from lanes.exercises.forms import FormError, to_plain
from lanes.exercises.registry import get_set
from lanes.exercises.spec import SetSpec

__all__ = ["Check", "choice", "close", "equal", "grade_answers", "load_key", "main"]


@dataclass(frozen=True)
class Check:
    """One criterion of a question: passed or not, its message if not, and its weight."""

    ok: bool
    message: str = ""
    weight: float = 1.0


def close(name: str, value: float, expected: float, *, rel: float = 0.0, abs_tol: float = 0.0,
          hint: str = "", weight: float = 1.0) -> Check:
    """``value`` within ``abs_tol`` or ``rel`` (relative) of ``expected``."""
    ok = math.isclose(value, expected, rel_tol=rel, abs_tol=abs_tol)
    return Check(ok, "" if ok else _wrong(name, hint), weight)


def equal(name: str, value: object, expected: object, *, hint: str = "", weight: float = 1.0) -> Check:
    """``value == expected`` for plain values (lists compare item by item)."""
    ok = type(value) is type(expected) and value == expected if not isinstance(expected, (list, tuple)) \
        else list(value) == list(expected)
    return Check(ok, "" if ok else _wrong(name, hint), weight)


def choice(name: str, value: str, letter: str, *, hint: str = "", weight: float = 1.0) -> Check:
    """The letter chosen is ``letter``."""
    ok = value == letter
    return Check(ok, "" if ok else f"{name} is not the best option" + (f": {hint}" if hint else ""), weight)


def _wrong(name: str, hint: str) -> str:
    return f"{name} does not match the value recomputed for your variant" + (f" ({hint})" if hint else "")


def load_key(solutions: pathlib.Path, slug: str) -> ModuleType:
    """The answer key module ``solutions/<slug>/key.py``."""
    path = solutions / slug / "key.py"
    if not path.is_file():
        raise FileNotFoundError(f"no answer key {path}")
    spec = importlib.util.spec_from_file_location(f"lanes_key_{slug}", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _as_checks(result: object) -> list[Check]:
    if isinstance(result, Check):
        return [result]
    if type(result) is bool:
        return [Check(result, "" if result else "not correct for your variant")]
    checks = list(result)
    if not checks or not all(isinstance(c, Check) for c in checks):
        raise TypeError("a key function must return a Check, a list of Checks, or a bool")
    return checks


def grade_answers(spec: SetSpec, key: ModuleType | None, student: str, exported: dict) -> dict:
    """Scores of one submission.

    Parameters
    ----------
    spec : SetSpec
    key : module or None
        The set's answer key; ``None`` checks forms only (practice feedback without keys):
        every question then scores 0 and reports ``form_ok``.
    student : str
        The identifier whose variant is graded.
    exported : dict
        ``{"answers": {var: value}, "refused": {var: message}, "cell_errors": {var: text}}``
        from step 1; ``answers`` values are JSON values and are checked again here.

    Returns
    -------
    dict
        ``{question: {"score", "possible", "messages", "form_ok"}}``.
    """
    variant = spec.variant(student)
    raw = exported.get("answers") or {}
    refused = exported.get("refused") or {}
    cell_errors = exported.get("cell_errors") or {}
    checked: dict[str, object] = {}
    problems: dict[str, str] = {}
    for q in spec.questions:
        for var, form in q.answers:
            if var in raw:
                try:
                    value = form.check_plain(to_plain(raw[var], form.describe()))
                    if var in spec.options:  # the letter as this variant shows it -> the key's letter
                        foreign = variant.label_problem(var, value)
                        if foreign:  # as the public check says it
                            raise FormError(foreign)
                        value = variant.key_letter(var, value)
                    checked[var] = value
                    continue
                except FormError as e:
                    problems[var] = f"{var} {e}"
            elif var in refused:
                problems[var] = f"{var} {str(refused[var])[:200]}"
            else:
                problems[var] = f"{var} is not defined: its answer cell was deleted or never assigned it"
            if var in cell_errors:
                problems[var] = f"{var}: its answer cell raised {str(cell_errors[var])[:200]}"
    out = {}
    for q in spec.questions:
        msgs = [problems[v] for v, _ in q.answers if v in problems]
        form_ok = not msgs
        score = 0.0
        if not msgs and key is not None:
            fn = getattr(key, q.name, None)
            try:
                if fn is None:
                    raise LookupError(f"the key has no function {q.name}")
                checks = _as_checks(fn(checked, variant))
                total = sum(c.weight for c in checks)
                score = q.points * sum(c.weight for c in checks if c.ok) / total if total else 0.0
                msgs = [c.message for c in checks if not c.ok and c.message]
            except Exception:
                print(f"[judge] {spec.slug} {q.name}: the key raised", file=sys.stderr)
                traceback.print_exc(file=sys.stderr)
                score, msgs = 0.0, ["this answer could not be checked (the key raised on it): "
                                    "check that it is a sensible value for the question"]
        out[q.name] = {"score": round(score, 6), "possible": q.points, "messages": msgs, "form_ok": form_ok}
    return out


def main(argv: list[str] | None = None) -> int:
    """Read jobs (JSON) on stdin, write results (JSON) on stdout; ``argv = [SOLUTIONS_DIR]``.

    stdin is ``{"secret": course secret or null, "hide": [paths], "site": path or null, "jobs": [...]}``
    (or the bare list of jobs); the secret is set with :func:`lanes.exercises.variants.set_course_secret`
    before any key is loaded, so that a key may use it (the capstone's hidden seeds do), and
    the answer keys and the ``hide`` paths are covered in every box a key starts (set 13's),
    which is made on the grading run's copies of the packages at ``site`` when given.
    """
    argv = sys.argv[1:] if argv is None else argv
    if len(argv) != 1:
        print("usage: judge SOLUTIONS_DIR|--forms-only < jobs.json", file=sys.stderr)
        return 2
    solutions = None if argv[0] == "--forms-only" else pathlib.Path(argv[0])
    # The keys simulate days: many small records and no cycles, which the cycle collector would
    # only scan again and again (about 7% of a judge's time); a judge lives for one student.
    gc.disable()
    jobs = json.load(sys.stdin)
    if isinstance(jobs, dict):
        from . import sandbox
        from lanes.exercises.variants import set_course_secret

        set_course_secret(jobs.get("secret"))
        sandbox.hide([*jobs.get("hide", []), *([solutions] if solutions is not None else [])])
        if jobs.get("site"):
            sandbox.use_site(jobs["site"])
        jobs = jobs.get("jobs") or []
    keys: dict[str, ModuleType] = {}
    results = []
    for job in jobs:
        slug = job["slug"]
        try:
            spec = get_set(slug)
            if solutions is not None and slug not in keys:
                keys[slug] = load_key(solutions, slug)
            results.append({"id": job["id"], "questions": grade_answers(spec, keys.get(slug), job["student"], job)})
        except Exception as e:
            traceback.print_exc(file=sys.stderr)
            results.append({"id": job["id"], "error": f"{type(e).__name__}: {str(e).splitlines()[0] if str(e) else ''}"})
    json.dump(results, sys.stdout)
    return 0


if __name__ == "__main__":
    sys.exit(main())
