"""How much of a question one constant answer can earn across many students' variants.

Each answer key judges with ``close``, ``equal``, ``choice`` (``grading.judge``) or a
key-local ``one_of``. :func:`expected` calls a key function with those helpers replaced by
recorders, so it learns, without any notebook, what each check expects for a variant and with
which tolerance. :func:`best_constant_share` then finds, per check, the single value that is
right for the most variants (for numbers: the point covered by the most tolerance intervals;
for an ``all_of`` criterion: the tuple of values right in all its parts for the most variants)
and weighs the checks as the question does: the largest share of the question's points that
one constant answer earns on average over the variants.

Run as a script for a table: ``PYTHONPATH=$PWD python tests/variant_spread.py [N] [SLUG ...]``.
"""

from __future__ import annotations

import math
import pathlib
import sys
from collections import Counter
from functools import lru_cache

ROOT = pathlib.Path(__file__).resolve().parents[1]
SOLUTIONS = ROOT / "solutions"
#: Question answers no constant can be judged on: code to run, or a design the key simulates.
JUDGED_BY_RUNNING = {("13_write_a_scheduler", "q1"), ("13_write_a_scheduler", "q2"), ("14_capstone", "q5")}


class _Probe(dict):
    """The answers handed to a key function while recording: every variable reads as ``None``."""

    def __missing__(self, name):
        return None


def tokens(n: int) -> list[str]:
    """``n`` course tokens of a class (under the test suite's public secret)."""
    from lanes.exercises.variants import TEST_SECRET, student_token

    return [student_token(f"s{i:04d}", TEST_SECRET) for i in range(n)]


@lru_cache(maxsize=None)
def key(slug: str):
    from grading.judge import load_key

    return load_key(SOLUTIONS, slug)


def expected(slug: str, question: str, v) -> list[tuple]:
    """The checks of ``question`` for variant ``v``: ``(variable, kind, expected, tolerance, weight)``.

    ``kind`` is ``"num"`` (tolerance ``(rel, abs)``), ``"eq"`` (an exact value), ``"any"`` (a set
    of accepted values), ``"label"`` (a multiple-choice answer: the label this variant shows) or
    ``"all"`` (an ``all_of`` criterion: ``expected`` holds its parts' ``(kind, expected, tolerance)``).
    """
    k = key(slug)
    found: list[tuple] = []

    def close(name, value, exp, *, rel=0.0, abs_tol=0.0, hint="", weight=1.0):
        found.append((name, "num", float(exp), (rel, abs_tol), weight))
        return _ok(weight, len(found) - 1)

    def equal(name, value, exp, *, hint="", weight=1.0):
        found.append((name, "eq", _hashable(exp), None, weight))
        return _ok(weight, len(found) - 1)

    def choice(name, value, letter, *, hint="", weight=1.0):
        found.append((name, "label", v.shown_letter(name, letter), None, weight))
        return _ok(weight, len(found) - 1)

    def one_of(name, value, allowed, *, abs_tol=0.0, message="", weight=1.0):
        found.append((name, "any", frozenset(map(_hashable, allowed)), None, weight))
        return _ok(weight, len(found) - 1)

    def all_of(*checks, weight=1.0):
        parts = [found[int(c.message)] for c in checks]
        for c in sorted(checks, key=lambda c: -int(c.message)):
            del found[int(c.message)]
        found.append(("+".join(p[0] for p in parts), "all", tuple((p[1], p[2], p[3]) for p in parts), None, weight))
        return _ok(weight, len(found) - 1)

    fakes = {"close": close, "equal": equal, "choice": choice, "one_of": one_of, "all_of": all_of}
    saved = {n: getattr(k, n) for n in fakes if hasattr(k, n)}
    try:
        for n, f in fakes.items():
            if n in saved:
                setattr(k, n, f)
        getattr(k, question)(_Probe(), v)
    finally:
        for n, f in saved.items():
            setattr(k, n, f)
    return found


def _ok(weight, index=None):
    """A passing check whose message is the index of its record (for ``all_of``)."""
    from grading.judge import Check

    return Check(True, str(index), weight)


def _hashable(x):
    return tuple(_hashable(i) for i in x) if isinstance(x, (list, tuple)) else x


def _max_overlap(intervals: list[tuple[float, float]]) -> int:
    """The most closed intervals any one point lies in."""
    events = sorted([(lo, 0) for lo, _ in intervals] + [(hi, 1) for _, hi in intervals])
    best = now = 0
    for _, end in events:  # at equal coordinates starts (0) come before ends (1): closed intervals
        now += -1 if end else 1
        best = max(best, now)
    return best


def best_rate(values: list[tuple]) -> float:
    """The largest share of variants one constant is right for, given one check's expectations
    ``(kind, expected, tolerance)`` per variant."""
    n = len(values)
    if values and values[0][0] == "all":  # right only when every part is: one constant per part, together
        if any(v[0] != "all" or len(v[1]) != len(values[0][1]) for v in values):
            raise ValueError("a check mixes combined and single criteria")
        kinds = [kind for kind, _, _ in values[0][1]]  # exact parts first: they split the rows cheaply
        order = sorted(range(len(kinds)), key=lambda i: kinds[i] == "num")
        return _joint_best([tuple(v[1][i] for i in order) for v in values]) / n
    if any(kind == "num" for kind, _, _ in values):
        return _max_overlap(_spans(values)) / n
    counts: Counter = Counter()
    for kind, e, _ in values:
        counts.update(e if kind == "any" else (e,))
    return max(counts.values()) / n


def _spans(values: list[tuple]) -> list[tuple[float, float]]:
    """The interval of constants each ``("num", expected, (rel, abs))`` accepts."""
    spans = []
    for kind, e, tol in values:
        if kind != "num":
            raise ValueError("a check mixes numbers and exact values")
        rel, abs_tol = tol  # |c - e| <= max(rel * max(|c|, |e|), abs_tol)
        below = max(rel * abs(e), abs_tol)
        above = max(rel * abs(e) / (1 - rel) if rel < 1 else math.inf, abs_tol)
        spans.append((e - below, e + above))
    return spans


def _joint_best(rows: list[tuple]) -> int:
    """The most rows one tuple of constants satisfies in every part at once (``all_of``).

    ``rows`` hold one ``(kind, expected, tolerance)`` per part. Exact parts split the rows by
    value; a numeric part tries each row's lowest accepted value (an optimum of closed intervals
    lies at one), most-covered first, and stops once no candidate can beat the best found.
    """
    if not rows:
        return 0
    if not rows[0]:
        return len(rows)
    first = [r[0] for r in rows]
    if any(kind == "num" for kind, _, _ in first):
        spans = _spans(first)
        if len(rows[0]) == 1:
            return _max_overlap(spans)
        cover = sorted(((sum(lo <= s[0] <= hi for lo, hi in spans), s[0]) for s in spans), reverse=True)
        best = 0
        for count, c in cover:
            if count <= best:
                break
            best = max(best, _joint_best([r[1:] for r, (lo, hi) in zip(rows, spans) if lo <= c <= hi]))
        return best
    groups: dict = {}
    for r in rows:
        kind, e, _ = r[0]
        for value in (e if kind == "any" else (e,)):
            groups.setdefault(value, []).append(r[1:])
    return max(_joint_best(g) for g in groups.values())


def best_constant_share(checks_per_variant: list[list[tuple]]) -> float:
    """The largest average share of a question's points one constant answer earns.

    ``checks_per_variant`` holds :func:`expected`'s list for each variant. Checks are weighed as
    the judge weighs them; each check is maximised on its own, which is exact when every check
    reads its own variable and an upper bound otherwise.
    """
    first = checks_per_variant[0]
    if not first or any(len(c) != len(first) for c in checks_per_variant):
        raise ValueError("the key judged this question without close/equal/choice/one_of, or with a "
                         "different number of checks per variant")
    total = sum(w for *_, w in first)
    share = 0.0
    for i, (_, *_rest, w) in enumerate(first):
        share += w * best_rate([(c[i][1], c[i][2], c[i][3]) for c in checks_per_variant])
    return share / total


def spread(slug: str, n: int, report: bool = False) -> dict[str, float]:
    """Question -> the best constant's share of its points over ``n`` students' variants."""
    from lanes.exercises import get_set

    spec = get_set(slug)
    variants = [spec.variant(t) for t in tokens(n)]
    out = {}
    for q in spec.questions:
        if (slug, q.name) in JUDGED_BY_RUNNING:
            continue
        try:
            out[q.name] = best_constant_share([expected(slug, q.name, v) for v in variants])
        except Exception as e:  # reported by the script; the test lets it raise
            if not report:
                raise
            out[q.name] = math.nan
            print(f"  {slug} {q.name}: {type(e).__name__}: {e}", file=sys.stderr)
    return out


def main(argv: list[str]) -> int:
    import time

    from lanes.exercises import slugs
    from lanes.exercises.variants import TEST_SECRET, set_course_secret

    set_course_secret(TEST_SECRET)
    n = int(argv[0]) if argv else 1000
    for slug in argv[1:] or slugs():
        t = time.process_time()
        s = spread(slug, n, report=True)
        worst = max(s, key=lambda q: -1 if math.isnan(s[q]) else s[q])
        print(f"{slug:34s} worst {worst} {100 * s[worst]:5.1f}%  "
              + " ".join(f"{q}:{100 * x:.1f}" for q, x in s.items())
              + f"  ({time.process_time() - t:.1f} s CPU)", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
