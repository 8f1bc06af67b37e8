"""The capstone's q5 gives the master's own answer (the calibrated reference) full marks for every student.

The reference meets the p99 target on 11 of its 12 validation seeds, yet on one student's
seven hidden seeds it can miss the majority (member 9's ``reserve:8`` met it on 2 of 7 for
``s015`` of a 100-student class under the test secret). The key never sets the bar above
what the reference reaches on the same seeds. Checked once for real (that student) and,
without simulating, for 1,000 students with outcomes drawn at random per configuration.
"""

from __future__ import annotations

import random
import sys

import pytest

from lanes.exercises import get_set
from lanes.exercises.variants import TEST_SECRET, set_course_secret, student_token

sys.path.insert(0, str(__import__("pathlib").Path(__file__).resolve().parent))
from test_sets_new import CAPSTONE, SOLUTIONS, load_key  # noqa: E402

pytestmark = pytest.mark.skipif(not (SOLUTIONS / CAPSTONE / "key.py").is_file(), reason="no solutions/ here")


@pytest.fixture
def key():
    set_course_secret(TEST_SECRET)
    try:
        yield load_key(SOLUTIONS, CAPSTONE)
    finally:
        set_course_secret(None)


def _score(checks) -> float:
    return sum(c.weight for c in checks if c.ok)


def test_the_student_whose_hidden_seeds_the_reference_missed_gets_full_marks(key):
    # s015's token under the test secret before tokens ended in a check character: a variant
    # depends only on this string, and this one's hidden seeds are those the reference missed.
    v = get_set(CAPSTONE).variant("s015-rrkezc")
    assert v.scenario_id == 9  # reserve:8 at a p99 target of 5 s
    assert _score(key.q5(key.reference_answers(9), v)) == 5


def test_the_reference_scores_full_marks_whatever_the_seeds_give(key, monkeypatch):
    """Outcomes drawn per (configuration, seed), often failing: the reference still scores 5 of 5,
    and a configuration that does worse than it on the same seeds loses points."""
    def fake(v, pol, seeds):
        out = []
        for seed in seeds:
            rng = random.Random(f"{pol!r}/{seed}")
            latency = rng.random() < 0.5
            out.append((latency, latency and rng.random() < 0.7))
        return out

    monkeypatch.setattr(key, "evaluate", fake)
    spec, other = get_set(CAPSTONE), key.reference_answers(0)
    other = {**other, "q5_min_run_s": other["q5_min_run_s"] + 7}
    lost = 0
    for i in range(1000):
        v = spec.variant(student_token(f"s{i:04d}", TEST_SECRET))
        assert _score(key.q5(key.reference_answers(v.scenario_id), v)) == 5, v
        if v.scenario_id == 0:
            lost += _score(key.q5(other, v)) < 5
    assert lost > 0  # the bar is not gone: another configuration misses it on some seeds
