"""Set 03: headroom, and what short batch work changes."""

from lanes.exercises.forms import Choice, Float, Int
from lanes.exercises.spec import Question, SetSpec
from lanes.pool.scenario import Scenario

#: The mean user hold of a scenario's default holds, seconds (q5 sizes its load with it).
HOLD_S = sum(Scenario().inter_service_s) / 2


def draw(rng):
    lo, short = rng.randrange(60, 121, 5), rng.randrange(10, 21)
    v = {
        "slots": rng.randrange(48, 81, 4),
        "peak_rate": rng.randrange(350, 451) / 100,
        "batch_service_s": (lo, lo + rng.randrange(90, 151, 5)),
        "short_batch_service_s": (short, short + rng.randrange(15, 31)),
        "target_s": rng.choice((1, 2, 3)),
        "seed": rng.randrange(1, 10**6),
    }
    # q5 (drawn last, so the parameters above stay as they were): a steady user load of 30% to 60%
    # of the pool (so some R below the pool's size always meets the target), and the chance of
    # waiting the square-root rule is sized for
    v["q5_rate_per_s"] = round(v["slots"] * rng.randrange(300, 601) / 1000 / HOLD_S, 3)
    v["q5_p_wait"] = rng.randrange(2, 51) / 1000
    return v


SPEC = SetSpec(
    slug="03_headroom",
    questions=(
        Question("q1", 3, {"q1_reserve_long": Int(lo=0), "q1_batch_done": Int(lo=0)}),
        Question("q2", 3, {"q2_reserve_short": Int(lo=0), "q2_mean_busy": Float(lo=0)}),
        Question("q3", 2, {"q3_util_short": Float(lo=0, hi=1)}),
        Question("q4", 1, {"q4_choice": Choice("abcd")}),
        Question("q5", 2, {"q5_beta_sqrt_load": Float(lo=0), "q5_reserve_sim": Int(lo=0),
                           "q5_batch_done": Int(lo=0)}),
    ),
    default={"slots": 80, "peak_rate": 4.5, "batch_service_s": (90, 210),
             "short_batch_service_s": (20, 40), "target_s": 3, "seed": 2024,
             "q5_rate_per_s": 3.35, "q5_p_wait": 0.025},
    draw=draw,
    options={
        "q4_choice": (
            "Short items need less KV memory, so several of them can share a single slot.",
            "Short items count as interactive traffic, so the headroom rule stops covering them.",
            "Slots held by short items come free often, so users get capacity back within seconds.",
            "Chunking spreads interactive arrivals more evenly, so Little's law needs fewer slots.",
        ),
    },
)
