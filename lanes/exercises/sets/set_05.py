"""Set 05: starvation, batch floors and aging."""

from lanes.exercises.forms import Choice, Float, Int
from lanes.exercises.spec import Question, SetSpec


def draw(rng):
    return {
        "hours": rng.choice((4, 6)),
        "slots": rng.randrange(60, 77, 2),
        "floor": rng.randrange(22, 35),
        "aging_s": rng.randrange(1800, 3601, 60),
        "seed": rng.randrange(1, 10**6),
    }


SPEC = SetSpec(
    slug="05_starvation_and_aging",
    questions=(
        Question("q1", 2, {"q1_peak_p99_floor": Float(lo=0), "q1_peak_late_floor": Float(lo=0, hi=1)}),
        Question("q2", 2, {"q2_peak_change_s": Float(), "q2_late_change": Float(lo=-1, hi=1)}),
        Question("q3", 1, {"q3_choice": Choice("abcd")}),
        Question("q4", 2, {"q4_preempted_aging": Int(lo=0)}),
        Question("q5", 2, {"q5_p99_aging": Float(lo=0), "q5_late_fraction": Float(lo=0, hi=1)}),
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
