"""Set 08: the chains on memory and throughput."""

import math

from lanes.exercises.forms import Float, Int, Str
from lanes.exercises.spec import Question, SetSpec


def log_uniform(rng, lo, hi, step):
    """A value between ``lo`` and ``hi``, as likely to double anywhere in the range, on a grid of ``step``."""
    return max(lo, min(hi, round(math.exp(rng.uniform(math.log(lo), math.log(hi))) / step) * step))


def draw(rng):
    return {
        "rate_per_s": rng.randrange(40, 91) / 10,
        "ttft_s": rng.randrange(30, 81) / 100,
        "output_tokens": rng.randrange(200, 751, 10),
        "tpot_s": rng.randrange(150, 351) / 10_000,
        "kv_tokens": log_uniform(rng, 900, 4800, 10),
        "tpot_target_s": rng.randrange(110, 171) / 10_000,
        "context_tokens": log_uniform(rng, 8192, 131072, 256),
        "link_gbps": rng.randrange(20, 91) / 10,
        # q5 (drawn last, so the parameters above stay as they were): a window of a real trace
        "q5_trace": rng.choice(("conv", "code")),
        "q5_start_s": rng.randrange(0, 2501, 10),  # the window ends inside both traces (3,436 s)
        "q5_length_s": rng.randrange(300, 901, 60),
    }


SPEC = SetSpec(
    slug="08_chains_memory_and_throughput",
    questions=(
        Question("q1", 2, {"q1_in_system": Float(lo=0)}),
        Question("q2", 2, {"q2_ceiling_rps": Float(lo=0)}),
        Question("q3", 3, {"q3_max_batch": Int(lo=0), "q3_max_rate_rps": Float(lo=0)}),
        Question("q4", 2, {"q4_break_even_gbps": Float(lo=0), "q4_verdict": Str(("swap", "recompute"))}),
        Question("q5", 2, {"q5_decoding": Float(lo=0), "q5_kv_tokens": Float(lo=0)}),
    ),
    default={"rate_per_s": 7, "ttft_s": 0.6, "output_tokens": 450, "tpot_s": 0.03, "kv_tokens": 2800,
             "tpot_target_s": 0.014, "context_tokens": 24576, "link_gbps": 6,
             "q5_trace": "code", "q5_start_s": 930, "q5_length_s": 540},
    draw=draw,
)
