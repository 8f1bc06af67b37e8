"""Set 07: micro-batching and the wait before a call."""

from lanes.exercises.forms import Choice, Float, Int, Seq
from lanes.exercises.spec import Question, SetSpec


def draw(rng):
    return {
        "n": rng.choice((14, 18, 22, 26, 30)),
        "max_batch": rng.choice((4, 6, 8, 10)),
        "wait_s": rng.choice((0.1, 0.15, 0.25, 0.3)),
        "call_s": rng.choice((0.03, 0.04, 0.06, 0.08)),
        "gap_s": rng.choice((0.005, 0.008, 0.012, 0.02)),
        "wait_options_s": rng.choice(((0.0, 0.01, 0.1), (0.0, 0.03, 0.3), (0.0, 0.015, 0.15))),
    }


SPEC = SetSpec(
    slug="07_batching",
    questions=(
        Question("q1", 2, {"q1_sizes_no_wait": Seq(Int(lo=1)), "q1_sizes_wait": Seq(Int(lo=1))}),
        Question("q2", 2, {"q2_total_no_wait_s": Float(lo=0), "q2_total_wait_s": Float(lo=0)}),
        Question("q3", 2, {"q3_best_wait_s": Float(lo=0)}),
        Question("q4", 1, {"q4_choice": Choice("abcd")}),
    ),
    default={"n": 26, "max_batch": 6, "wait_s": 0.15, "call_s": 0.04, "gap_s": 0.008,
             "wait_options_s": (0.0, 0.03, 0.3)},
    draw=draw,
    options={
        "q4_choice": (
            "Without a wait, batches come out larger, since no time is lost before each call.",
            "With a wait, every request is held for the full wait, so the total is n times it.",
            "The wait setting only changes anything when the queue has a maximum length.",
            "A zero wait sends requests alone; a wait fills batches, but the last batch idles.",
        ),
    },
)
