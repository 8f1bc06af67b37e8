"""Set 11: the model meets a GPU (measured H200 steps against the roofline and the calibrated model)."""

from functools import lru_cache

from lanes.exercises.forms import Choice, Float, Int
from lanes.exercises.sets.set_08 import log_uniform
from lanes.exercises.spec import Question, SetSpec


@lru_cache(maxsize=1)
def _decode_rows():
    from lanes.gpu import measured

    return sorted((r["batch"], r["context"]) for r in measured.load_records() if r["kind"] == "decode")


def draw(rng):
    return {
        "rows": tuple(sorted(rng.sample(_decode_rows(), 2))),
        "decode_batch": rng.randrange(32, 321, 8),
        "decode_context": rng.randrange(512, 8193, 256),
        "chunk_tokens": rng.randrange(256, 2049, 64),
        "chunk_prior": rng.randrange(0, 16385, 1024),
        "tpot_ms": rng.randrange(100, 221) / 10,
        "goodput_context": log_uniform(rng, 512, 16384, 128),
        "memory": rng.choice(("pinned", "pageable")),
        "recompute_context": log_uniform(rng, 16384, 131072, 256),
    }


SPEC = SetSpec(
    slug="11_measured_gpu",
    questions=(
        Question("q1", 2, {"q1_optimism": Float(lo=0)}),
        Question("q2", 2, {"q2_step_ms": Float(lo=0)}),
        Question("q3", 2, {"q3_batch_lost": Int()}),
        Question("q4", 2, {"q4_recompute_over_swap": Float(lo=0)}),
        Question("q5", 1, {"q5_choice": Choice("abcd")}),
        Question("q6", 1, {"q6_choice": Choice("abcd")}),
    ),
    default={
        "rows": ((8, 4096), (16, 8192)), "decode_batch": 160, "decode_context": 3072,
        "chunk_tokens": 768, "chunk_prior": 4096, "tpot_ms": 13, "goodput_context": 3072,
        "memory": "pageable", "recompute_context": 65536,
    },
    draw=draw,
    options={
        "q5_choice": (
            "Small-batch decode is bound by compute, and the matrix units run far below their peak.",
            "Each step pays fixed per-layer kernel costs, and weights stream below the rated rate.",
            "At batch 1 the KV cache reads dominate the step, and the roofline leaves them out.",
            "The timed steps include copying each new token back to host memory before the next.",
        ),
        "q6_choice": (
            "The graph lets the GPU run its matrix products at a higher clock, so compute is faster.",
            "The eager run rereads the weights once per kernel launch, so it moves far more bytes.",
            "Launched one at a time, the host's work to issue many small kernels sets the pace.",
            "The graph skips the attention kernels, since their results are cached between steps.",
        ),
    },
)
