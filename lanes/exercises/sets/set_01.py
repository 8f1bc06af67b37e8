"""Set 01: slots and Little's law."""

from lanes.exercises.forms import Choice, Float
from lanes.exercises.spec import Question, SetSpec


def draw(rng):
    lo = rng.choice((3, 4, 5, 6))
    v = {
        "rate_per_s": rng.randrange(200, 701) / 100,
        "hold_s": rng.randrange(50, 141) / 10,
        "sim_rate_per_s": rng.choice((1.5, 2.5, 3.5, 4.5)),
        "sim_hold_s": rng.choice((5, 7, 8, 9, 11)),
        "seed": rng.randrange(1, 10**6),
        "slots": rng.randrange(64, 129, 4),
        "peak_rate": rng.randrange(250, 601) / 100,
        "inter_service_s": (lo, lo + rng.choice((5, 7, 9))),
    }
    # q5 (drawn last, so the parameters above stay as they were): a pool near its Erlang knee
    slots, rho = rng.randrange(16, 49), rng.randrange(700, 921) / 1000
    v["q5_slots"] = slots
    v["q5_rate_per_s"] = round(slots * rho / (sum(v["inter_service_s"]) / 2), 3)
    return v


SPEC = SetSpec(
    slug="01_slots_and_littles_law",
    questions=(
        Question("q1", 2, {"q1_busy_slots": Float(lo=0)}),
        Question("q2", 2, {"q2_measured": Float(lo=0)}),
        Question("q3", 2, {"q3_idle_at_peak": Float()}),
        Question("q4", 1, {"q4_choice": Choice("abcd")}),
        Question("q5", 2, {"q5_erlang_c": Float(lo=0, hi=1), "q5_waited_share": Float(lo=0, hi=1)}),
    ),
    default={
        "rate_per_s": 4.5, "hold_s": 7,
        "sim_rate_per_s": 3.5, "sim_hold_s": 9, "seed": 4242,
        "slots": 72, "peak_rate": 4.5, "inter_service_s": (5, 12),
        "q5_slots": 30, "q5_rate_per_s": 2.93,
    },
    draw=draw,
    options={
        "q4_choice": (
            "Its prompts are longer than chat prompts, so they would not fit in an interactive slot.",
            "Its deadline is hours away, so it can fill idle slots and hand them back to users.",
            "The interactive lane serves in arrival order, so a big job would be answered last anyway.",
            "Requests that miss an interactive deadline are dropped, so its results would be lost.",
        ),
    },
)
