"""Set 02: why strict priority still leaves users waiting."""

from lanes.exercises.forms import Choice, Float
from lanes.exercises.spec import Question, SetSpec


def draw(rng):
    lo = rng.randrange(40, 131, 5)
    v = {
        "hours": rng.choice((2, 3)),
        "slots": rng.randrange(40, 81, 2),
        "peak_rate": rng.randrange(300, 461) / 100,
        "batch_service_s": (lo, lo + rng.randrange(60, 151, 5)),
        "seed": rng.randrange(1, 10**6),
    }
    # q5 (drawn last, so the parameters above stay as they were): one slot, users at a load of
    # 0.10 to 0.40 behind a backlog that never runs out
    short = rng.randrange(2, 9)
    v["q5_inter_service_s"] = (short, short + rng.randrange(2, 9))
    v["q5_rate_per_s"] = round(rng.randrange(100, 401) / 1000 / (sum(v["q5_inter_service_s"]) / 2), 4)
    return v


SPEC = SetSpec(
    slug="02_why_priority_fails",
    questions=(
        Question("q1", 1, {"q1_choice": Choice("abcd")}),
        Question("q2", 2, {"q2_p99_s": Float(lo=0), "q2_late_fraction": Float(lo=0, hi=1)}),
        Question("q3", 2, {"q3_gap_s": Float(lo=0)}),
        Question("q4", 3, {"q4_user_slots": Float(lo=0), "q4_gap_peak_s": Float(lo=0)}),
        Question("q5", 2, {"q5_cobham_s": Float(lo=0), "q5_simulated_s": Float(lo=0)}),
    ),
    default={"hours": 3, "slots": 56, "peak_rate": 3.6, "batch_service_s": (90, 150), "seed": 4421,
             "q5_inter_service_s": (3, 9), "q5_rate_per_s": 0.0417},
    draw=draw,
    options={
        "q1_choice": (
            "The scheduler switches to batch whenever the batch queue is longer than the user queue.",
            "Priority picks who takes the next free slot, but only a finishing batch job frees one.",
            "Batch jobs that have queued for long enough gain rank and push user requests back.",
            "Little's law keeps the user queue at least as long as the number of slots in the pool.",
        ),
    },
)
