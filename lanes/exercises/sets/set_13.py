"""Set 13: write a scheduler.  Students implement two rules no built-in policy has, judged online.

q1 is preemption with a batch floor and a cap on evictions per tick; q2 is preemption with
aging that also spares batch jobs about to finish. Neither is a built-in rule with its
extensions, so pasting the engine's or the protocol's code answers neither: the key holds
the reference implementations (``solutions/13_write_a_scheduler/key.py``).

The answers of q1 and q2 are the source of a policy, as the list of marked lines that
``lanes.exercises.source.source_of`` makes (an answer string is at most 200 characters);
the key runs it tick by tick in the grading sandbox on days the student never sees and
compares every row with its reference rule's.
"""

from lanes.exercises.forms import Choice, Seq, Str
from lanes.exercises.spec import Question, SetSpec


def draw(rng):
    slots = rng.choice((24, 32, 40))
    return {
        "slots": slots,
        "peak_rate": {24: 2.5, 32: 3.5, 40: 4.5}[slots],
        "floor": rng.choice((4, 6, 8, 10)),
        "evict_cap": rng.choice((1, 2, 3)),
        "aging_s": rng.choice((60, 90, 120, 180)),
        "near_s": rng.randrange(10, 61, 5),
        "seed": rng.randrange(1, 10**6),
    }


SPEC = SetSpec(
    slug="13_write_a_scheduler",
    questions=(
        Question("q1", 4, {"q1_policy": Seq(Str(), max_len=1000)}, open_ended=True),
        Question("q2", 4, {"q2_policy": Seq(Str(), max_len=1000)}, open_ended=True),
        Question("q3", 1, {"q3_choice": Choice("abcd")}),
    ),
    default={"slots": 32, "peak_rate": 3.5, "floor": 6, "evict_cap": 2, "aging_s": 90, "near_s": 30, "seed": 2718},
    draw=draw,
    options={
        "q3_choice": (
            "Evict first the running batch job that has the most work left.",
            "Start first the queued batch job that needs the least slot time.",
            "Admit first the waiting request whose reply will finish soonest.",
            "Keep batch out of the pool's last eight free slots when it starts.",
        ),
    },
)
