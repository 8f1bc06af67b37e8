"""Set 05: starvation, batch floors and aging."""

from lanes.exercises.forms import Choice, Float, Int
from lanes.exercises.spec import Question, SetSpec


def draw(rng):
    return {
        "hours": rng.choice((4, 6)),
        "slots": rng.choice((64, 72)),
        "floor": rng.choice((16, 20, 24, 28)),
        "aging_s": rng.choice((1800, 2700, 3600)),
        "seed": rng.randrange(1, 10**6),
    }


SPEC = SetSpec(
    slug="05_starvation_and_aging",
    questions=(
        Question("q1", 2, {"q1_peak_p99_floor": Float(lo=0)}),
        Question("q2", 2, {"q2_peak_change_s": Float()}),
        Question("q3", 1, {"q3_choice": Choice("abcd")}),
        Question("q4", 2, {"q4_preempted_aging": Int(lo=0)}),
        Question("q5", 2, {"q5_p99_aging": Float(lo=0)}),
        Question("q6", 1, {"q6_choice": Choice("abcd")}),
    ),
    default={"hours": 4, "slots": 72, "floor": 28, "aging_s": 2700, "seed": 11},
    draw=draw,
)
