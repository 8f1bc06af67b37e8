"""Set 09: the chains on latency and fairness."""

from lanes.exercises.forms import Float, Int
from lanes.exercises.spec import Question, SetSpec


def draw(rng):
    return {
        "long_prompt_tokens": rng.choice((24576, 40960, 49152, 81920)),
        "service_s": rng.choice((0.03, 0.05, 0.06, 0.08)),
        "p99_target_s": rng.choice((0.4, 0.6, 0.75, 0.9)),
        "budget_tokens": rng.choice((2048, 3072, 6144, 12288)),
        "b_input_tokens": rng.choice((1500, 2500, 3000, 6000)),
        "b_output_tokens": rng.choice((250, 400, 600, 800)),
    }


SPEC = SetSpec(
    slug="09_chains_latency_and_fairness",
    questions=(
        Question("q1", 2, {"q1_short_ttft_fcfs_s": Float(lo=0)}),
        Question("q2", 2, {"q2_rho_max": Float(lo=0, hi=1)}),
        Question("q3", 2, {"q3_chunks": Int(lo=1)}),
        Question("q4", 3, {"q4_rr_share_b": Float(lo=0, hi=1), "q4_share_shift": Float(lo=-1, hi=1)}),
    ),
    default={"long_prompt_tokens": 49152, "service_s": 0.06, "p99_target_s": 0.75, "budget_tokens": 6144,
             "b_input_tokens": 2500, "b_output_tokens": 600},
    draw=draw,
)
