"""Set 08: the chains on memory and throughput."""

from lanes.exercises.forms import Float, Int, Str
from lanes.exercises.spec import Question, SetSpec


def draw(rng):
    return {
        "rate_per_s": rng.choice((4, 5, 7, 8, 9)),
        "ttft_s": rng.choice((0.3, 0.5, 0.6, 0.8)),
        "output_tokens": rng.choice((200, 350, 450, 600, 750)),
        "tpot_s": rng.choice((0.015, 0.02, 0.03, 0.035)),
        "kv_tokens": rng.choice((900, 2400, 2800, 3600, 4200)),
        "tpot_target_s": rng.choice((0.011, 0.013, 0.014, 0.016)),
        "context_tokens": rng.choice((8192, 12288, 24576, 32768)),
        "link_gbps": rng.choice((4, 6, 8, 12)),
    }


SPEC = SetSpec(
    slug="08_chains_memory_and_throughput",
    questions=(
        Question("q1", 2, {"q1_in_system": Float(lo=0)}),
        Question("q2", 2, {"q2_ceiling_rps": Float(lo=0)}),
        Question("q3", 3, {"q3_max_batch": Int(lo=0), "q3_max_rate_rps": Float(lo=0)}),
        Question("q4", 2, {"q4_break_even_gbps": Float(lo=0), "q4_verdict": Str(("swap", "recompute"))}),
    ),
    default={"rate_per_s": 7, "ttft_s": 0.6, "output_tokens": 450, "tpot_s": 0.03, "kv_tokens": 2800,
             "tpot_target_s": 0.014, "context_tokens": 24576, "link_gbps": 6},
    draw=draw,
)
