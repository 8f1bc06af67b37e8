"""Set 09: the chains on latency and fairness."""

import math

from lanes.exercises.forms import Float, Int
from lanes.exercises.sets.set_08 import log_uniform
from lanes.exercises.spec import Question, SetSpec


def draw(rng):
    service_s = rng.randrange(20, 81) / 1000
    rho = rng.uniform(0.3, 0.9)  # the knee the target puts the answer near
    budget = log_uniform(rng, 1024, 8192, 64)
    v = {
        "long_prompt_tokens": log_uniform(rng, 16384, 131072, 256),
        "service_s": service_s,
        "p99_target_s": round(-math.log(0.01) * service_s / (1 - rho), 3),
        "prompt_tokens": log_uniform(rng, 12 * budget, 120 * budget, 1024),
        "budget_tokens": budget,
        "b_input_tokens": log_uniform(rng, 1000, 8000, 50),
        "b_output_tokens": log_uniform(rng, 200, 1000, 10),
    }
    # q5 (drawn last, so the parameters above stay as they were): a real trace window's burstiness
    v["q5_trace"] = rng.choice(("conv", "code"))
    v["q5_start_s"] = rng.randrange(0, 2501, 10)  # the window ends inside both traces (3,436 s)
    v["q5_length_s"] = rng.randrange(300, 901, 60)
    v["q5_bin_s"] = rng.choice((1, 2, 5, 10))
    v["q5_wait_target_s"] = round(service_s * rng.randrange(50, 501) / 100, 4)
    return v


SPEC = SetSpec(
    slug="09_chains_latency_and_fairness",
    questions=(
        Question("q1", 2, {"q1_short_ttft_fcfs_s": Float(lo=0)}),
        Question("q2", 2, {"q2_rho_max": Float(lo=0, hi=1)}),
        Question("q3", 2, {"q3_chunks": Int(lo=1)}),
        Question("q4", 3, {"q4_rr_share_b": Float(lo=0, hi=1), "q4_share_shift": Float(lo=-1, hi=1)}),
        Question("q5", 2, {"q5_arrival_cv2": Float(lo=0), "q5_rho_max": Float(lo=0, hi=1)}),
    ),
    default={"long_prompt_tokens": 49152, "service_s": 0.06, "p99_target_s": 0.75, "prompt_tokens": 100_000, "budget_tokens": 6144,
             "b_input_tokens": 2500, "b_output_tokens": 600,
             "q5_trace": "conv", "q5_start_s": 1290, "q5_length_s": 660, "q5_bin_s": 5, "q5_wait_target_s": 0.15},
    draw=draw,
)
