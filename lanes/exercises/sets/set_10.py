"""Set 10: where the model breaks (KV-sized slots, prefill interference, eviction cost, theory)."""

from lanes.exercises.forms import Choice, Float, Int
from lanes.exercises.spec import Question, SetSpec


def draw(rng):
    return {
        "hardware": rng.choice(("h100-sxm", "h200")),
        "memory_fraction": rng.randrange(80, 96) / 100,
        "block_tokens": rng.choice((16, 32)),
        "chat_rate_per_s": rng.randrange(40, 51) / 10,
        "chat_tokens": rng.randrange(2000, 3001, 100),
        "batch_tokens": rng.randrange(32_000, 64_001, 2000),
        "kv_seed": rng.randrange(1, 10**6),
        "prompt_tokens": rng.randrange(16_384, 40_961, 1024),
        "decoders": rng.randrange(32, 97, 4),
        "decoder_context_tokens": rng.randrange(1024, 8193, 256),
        "budget_tokens": rng.randrange(1024, 4097, 256),
        "scattered_gb_per_s": rng.randrange(250, 451, 5) / 100,
        "mfu": rng.randrange(40, 61) / 100,
    }


SPEC = SetSpec(
    slug="10_where_it_breaks",
    questions=(
        Question("q1", 1, {"q1_pool_blocks": Int(lo=1)}),
        Question("q2", 2, {"q2_token_reserve": Int(lo=0), "q2_mean_kv_used": Float(lo=0)}),
        Question("q3", 2, {"q3_worst_itl_ms": Float(lo=0)}),
        Question("q4", 2, {"q4_breakeven_tokens": Int(lo=1)}),
        Question("q5", 1, {"q5_choice": Choice("abcd")}),
        Question("q6", 1, {"q6_choice": Choice("abcd")}),
    ),
    default={
        "hardware": "h200", "memory_fraction": 0.85, "block_tokens": 32,
        "chat_rate_per_s": 5.0, "chat_tokens": 2500, "batch_tokens": 40_000, "kv_seed": 4041,
        "prompt_tokens": 24_576, "decoders": 48, "decoder_context_tokens": 4096, "budget_tokens": 1024,
        "scattered_gb_per_s": 2.75, "mfu": 0.45,
    },
    draw=draw,
    options={
        "q5_choice": (
            "It cut the total prefill work, because each chunk attends to fewer of the earlier tokens.",
            "It capped how long any decode step stalls, at the cost of more steps for the prompt.",
            "It made the batch prompt's own first token arrive much sooner than without chunks.",
            "It let the chats skip every step that carries a prefill chunk, so they never stall.",
        ),
        "q6_choice": (
            "The arrivals are Poisson, and the law is proven only for Poisson arrival streams.",
            "It holds only because each policy here keeps a few slots free for interactive work.",
            "It needs first-come-first-served order, which every policy keeps inside a lane.",
            "It relates long-run averages, so any arrival pattern, order or policy obeys it.",
        ),
    },
)
