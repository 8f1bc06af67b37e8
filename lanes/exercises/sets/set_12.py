"""Set 12: real traffic. Each student replays their own hour of a shipped trace.

A student's hour is a resample of one shipped trace (``conv`` or ``code``), cut to a
window and played faster or slower::

    traces.load_trace(V.trace).resample(V.resample_seed).window(V.start_s, V.end_s).scaled(V.rate_factor)

so every student measures burstiness, tails, Little's law and headroom on traffic no
chapter printed.  Trace data: Azure LLM inference traces 2023 (Azure Public Dataset),
CC BY 4.0; Patel et al., "Splitwise", ISCA 2024.
"""

from lanes.exercises.forms import Choice, Float, Int
from lanes.exercises.spec import Question, SetSpec


def draw(rng):
    length = rng.choice((1200, 1800, 2400))
    start = rng.choice(range(0, 3400 - length, 100))
    return {
        "trace": rng.choice(("conv", "code")),
        "resample_seed": rng.randrange(1, 10**6),
        "start_s": start,
        "end_s": start + length,
        "rate_factor": rng.randrange(80, 151) / 100,
        "slots": rng.randrange(64, 97, 4),
        "target_s": rng.choice((2, 3)),
    }


SPEC = SetSpec(
    slug="12_real_traffic",
    questions=(
        Question("q1", 2, {"q1_ratio_per_minute": Float(lo=0)}),
        Question("q2", 2, {"q2_output_p99": Int(lo=1), "q2_output_mean": Float(lo=0)}),
        Question("q3", 2, {"q3_mean_busy": Float(lo=0)}),
        Question("q4", 3, {"q4_reserve": Int(lo=0), "q4_batch_done": Int(lo=0)}),
        Question("q5", 2, {"q5_reserve_poisson": Int(lo=0), "q5_batch_done": Int(lo=0)}),
        Question("q6", 1, {"q6_choice": Choice("abcd")}),
    ),
    default={"trace": "code", "resample_seed": 4242, "start_s": 700, "end_s": 2500,
             "rate_factor": 1.35, "slots": 80, "target_s": 3},
    draw=draw,
    options={
        "q6_choice": (
            "Its prompts are longer, so each of its requests keeps a slot longer than a chat.",
            "Its requests come in tight bursts, and the reserve must absorb a burst at once.",
            "Little's law fails on bursty traffic, so its mean busy slots come out too low.",
            "Short outputs get batch jobs evicted more often, and redone work costs slots.",
        ),
    },
)
