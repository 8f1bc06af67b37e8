"""Set 04: preemption and what it costs."""

from lanes.exercises.forms import Choice, Float, Int, Str
from lanes.exercises.spec import Question, SetSpec
from lanes.pool.policies import DEFAULT_POLICIES


def draw(rng):
    return {
        "slots": rng.randrange(48, 81, 4),
        "peak_rate": rng.randrange(400, 501) / 100,
        "preempt_cost_s": rng.randrange(30, 91, 5),
        "target_s": rng.choice((3, 4, 5, 6, 7, 8)),
        "seed": rng.randrange(1, 10**6),
        # q5 (drawn last, so the parameters above stay as they were): a finer scheduling clock
        "q5_tick_s": rng.choice((0.5, 0.25, 0.2, 0.1, 0.05, 0.04, 0.025, 0.02)),
    }


SPEC = SetSpec(
    slug="04_preemption",
    questions=(
        Question("q1", 3, {"q1_best_policy": Str(tuple(DEFAULT_POLICIES)), "q1_util": Float(lo=0, hi=1)}),
        Question("q2", 2, {"q2_batch_done": Int(lo=0)}),
        Question("q3", 2, {"q3_recompute_h": Float(lo=0)}),
        Question("q4", 1, {"q4_choice": Choice("abcd")}),
        Question("q5", 2, {"q5_evictions_per_arrival_1s": Float(lo=0),
                           "q5_evictions_per_arrival_fine": Float(lo=0)}),
    ),
    default={"slots": 80, "peak_rate": 4.5, "preempt_cost_s": 45, "target_s": 4, "seed": 3132, "q5_tick_s": 0.05},
    draw=draw,
    options={
        "q4_choice": (
            "Evicted batch jobs are thrown away, so the work they already did never counts as done.",
            "Each eviction forces work to be redone, and at a full pool evictions never stop.",
            "Users who arrive by eviction hold their slots longer than those who queue.",
            "Slots sit idle while the policy waits out a minimum run before each eviction.",
        ),
    },
)
