"""No constant answer earns much of any question across a class, and the default variant earns nothing.

Over the tokens of a 1,000-student class, for every question of every set, the answer (or,
for numbers, any value within the judge's tolerance) that is right for the most variants
earns at most 5% of the question's points on average (``tests/variant_spread.py`` computes
the keys' expectations, not notebooks). Sets whose keys compute in microseconds are checked
for all 1,000 students here; the sets whose keys simulate take minutes for a class and are
checked with ``LANES_ALL_VARIANTS=1`` (or ``python tests/variant_spread.py 1000``).
"""

from __future__ import annotations

import os
import sys

import pytest

sys.path.insert(0, os.path.dirname(__file__))
import variant_spread as vs  # noqa: E402

from lanes.exercises import all_sets, get_set  # noqa: E402

pytestmark = pytest.mark.skipif(not vs.SOLUTIONS.is_dir(), reason="needs the instructor's solutions/")

#: Sets whose keys compute without simulating: a class of 1,000 takes a second or so.
COMPUTED = ("08_chains_memory_and_throughput", "11_measured_gpu", "13_write_a_scheduler")
ALL = os.environ.get("LANES_ALL_VARIANTS") == "1"
CLASS = 1000
BAR = 0.05


@pytest.fixture(autouse=True)
def _secret():
    from lanes.exercises.variants import TEST_SECRET, set_course_secret

    set_course_secret(TEST_SECRET)
    yield
    set_course_secret(None)


@pytest.mark.parametrize("slug", list(all_sets()))
def test_no_constant_answer_earns_more_than_5_percent_of_a_question(slug):
    if slug not in COMPUTED and not ALL:
        pytest.skip("its key simulates: checked with LANES_ALL_VARIANTS=1 (minutes per set)")
    shares = vs.spread(slug, CLASS)
    assert shares, slug
    over = {q: round(100 * s, 1) for q, s in shares.items() if s > BAR}
    assert not over, f"{slug}: one constant earns this % of these questions: {over}"


def test_the_measure_finds_a_shared_answer():
    """A check right for most variants with one value, a number whose tolerance covers many, and
    a combined criterion bounded by its rarest part."""
    eq = [("eq", 7 if i % 10 else i, None) for i in range(100)]  # 7 for 90 of 100
    assert vs.best_rate(eq) == 0.9
    nums = [("num", 1.0 + i / 1000, (0.0, 0.0105)) for i in range(100)]  # 1.000 .. 1.099, +-0.0105
    assert vs.best_rate(nums) == 0.22  # a window 0.021 wide holds 22 points 0.001 apart
    combined = [("all", (("eq", "swap", None), ("num", float(i), (0.0, 1e-9))), None) for i in range(100)]
    assert vs.best_rate(combined) == 0.01
    # judged together: a whole second shared by a tenth and a late share of 1.0 shared by half meet
    # in only a twentieth (a bound by the rarer part alone would say a tenth)
    joint = [("all", (("num", 1.0 if i < 50 else i / 100, (0.0, 1e-9)), ("eq", i % 10, None)), None)
             for i in range(100)]
    assert vs.best_rate(joint) == 0.05
    tolerant = [("all", (("num", i / 100, (0.0, 0.025)), ("num", (i % 4) / 10, (0.0, 1e-9))), None)
                for i in range(100)]
    assert vs.best_rate(tolerant) == 0.02  # a window holds 6 neighbours, at most 2 of them alike mod 4
    # a question of two checks, weights 1 and 3: the shared verdict earns a quarter of it
    checks = [[("v", "eq", "swap", None, 1.0), ("x", "num", float(i), (0.0, 1e-9), 3.0)] for i in range(100)]
    assert vs.best_constant_share(checks) == pytest.approx((1.0 * 1 + 3 * 0.01) / 4)


@pytest.mark.parametrize("slug", [s for s, spec in all_sets().items() if spec.options])
def test_a_letter_of_the_default_variant_picks_no_option_of_a_students_variant(slug):
    spec = get_set(slug)
    default = spec.variant("")
    for token in vs.tokens(50):
        v = spec.variant(token)
        for var in spec.options:
            assert [label for label, _ in default.options(var)] == list("abcd")
            labels = [label for label, _ in v.options(var)]
            assert len(set(labels)) == 4 and all(len(label) == 2 and label.isdigit() for label in labels)
            assert all(v.key_letter(var, letter) == "" for letter in "abcd")
            assert sorted(v.key_letter(var, label) for label in labels) == list("abcd")


@pytest.mark.parametrize("slug", list(all_sets()))
def test_the_default_variants_answers_earn_almost_nothing_for_a_class(slug):
    """The key's answers for the empty STUDENT, handed in under each of 100 students' tokens,
    earn under 2% of the set's points over the class: only where a student's parameters fall
    within the tolerance of the default's by chance (about 1% of students per question for a
    number; never for a multiple-choice label, whose default letters no student's variant shows)."""
    if slug not in COMPUTED and not ALL:
        pytest.skip("its key simulates: checked with LANES_ALL_VARIANTS=1")
    assert _default_share(slug, 100) < 0.02


def _default_share(slug: str, n: int) -> float:
    """The share of the set's points (questions a constant can answer) the default answers earn over ``n`` students."""
    from grading.judge import grade_answers

    spec = get_set(slug)
    default = spec.variant("")
    answers = {}
    for q in spec.questions:
        if (slug, q.name) in vs.JUDGED_BY_RUNNING:
            continue
        for var, kind, exp, _, _ in vs.expected(slug, q.name, default):
            answers.update(_answers_of(var, kind, exp))
    assert answers, slug
    earned = possible = 0.0
    for token in vs.tokens(n):
        result = grade_answers(spec, vs.key(slug), token, {"answers": answers})
        for q, r in result.items():
            if (slug, q) not in vs.JUDGED_BY_RUNNING:
                earned, possible = earned + r["score"], possible + r["possible"]
    return earned / possible


def _answers_of(var: str, kind: str, exp) -> dict:
    """The plain answers a recorded expectation stands for (an ``all_of`` joins its variables' names
    with ``+``)."""
    if kind == "all":
        return {name: _value(k, e) for name, (k, e, _) in zip(var.split("+"), exp)}
    return {var: _value(kind, exp)}


def _value(kind: str, exp):
    if kind == "any":
        exp = sorted(exp)[0]
    if isinstance(exp, float) and exp.is_integer():
        return int(exp)  # a count compared with a tolerance (an Int answer refuses 3.0)
    return list(exp) if isinstance(exp, tuple) else exp
