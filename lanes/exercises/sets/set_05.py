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
    options={
        "q3_choice": (
            "While batch has work, users may not use the floor's slots, so they share fewer.",
            "The floor evicts running user requests so that batch jobs can take their slots.",
            "Batch jobs inside the floor run longer than the batch jobs outside of it.",
            "Guarding batch slows down how fast user requests arrive in the busiest hour.",
        ),
        "q6_choice": (
            "Aging lengthens every batch job, so slots come free for waiting users less often.",
            "The backlog queued at the start, so soon every batch job is exempt from eviction.",
            "Aged batch jobs move ahead of user requests in the queue for the next slot.",
            "Evicting a job that has aged costs twice the usual recomputation time.",
        ),
    },
)
