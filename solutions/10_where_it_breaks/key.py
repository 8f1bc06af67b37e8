"""Answer key of set 10 (instructor only: never copied into exercises/)."""

from functools import lru_cache

from lanes.gpu import kvpool, steps
from grading.checks import all_of
from grading.judge import choice, close, equal

#: q2 searches token reserves in steps of this many tokens.
RESERVE_STEP = 10_000
#: q4: the search for the crossing starts above this context (tokens).
BREAKEVEN_FROM = 8192


def _pool(v):
    return kvpool.pool_tokens_for(hardware=v.hardware, memory_fraction=v.memory_fraction)


@lru_cache(maxsize=None)
def _token_reserve(v):
    sc = kvpool.KvScenario(pool_tokens=_pool(v), block_tokens=v.block_tokens, hardware=v.hardware,
                           chat_rate_per_s=v.chat_rate_per_s, chat_tokens=v.chat_tokens,
                           batch_tokens=v.batch_tokens, seed=v.kv_seed)
    for reserve in range(0, sc.pool_tokens + 1, RESERVE_STEP):
        run = kvpool.simulate_kv_pool(sc, f"tokens:{reserve}")
        if run.p99_wait_s <= 1:
            return reserve, run.mean_kv_used
    raise AssertionError("no token reserve meets the target")  # the tests show this never happens


def _gap(v, context):
    c = kvpool.preemption_costs(context, scattered_bytes_per_s=v.scattered_gb_per_s * 1e9, mfu=v.mfu,
                                hardware=v.hardware)
    return c.recompute_s - c.swap_scattered_s


@lru_cache(maxsize=None)
def breakeven_tokens(v):
    """Smallest context above BREAKEVEN_FROM at which recompute costs more than scattered swap."""
    lo, hi = BREAKEVEN_FROM, 2 * BREAKEVEN_FROM
    while _gap(v, hi) <= 0:
        lo, hi = hi, 2 * hi
    while hi - lo > 1:
        mid = (lo + hi) // 2
        lo, hi = (lo, mid) if _gap(v, mid) > 0 else (mid, hi)
    return hi


def q1(a, v):
    return equal("q1_pool_blocks", a["q1_pool_blocks"], _pool(v) // v.block_tokens,
                 hint="KV tokens after the weights, then whole blocks of your block size")


def q2(a, v):
    # one criterion: a reserve in steps of 10,000 tokens is shared by many variants, the KV in use is not
    reserve, kv_used = _token_reserve(v)
    return all_of(equal("q2_token_reserve", a["q2_token_reserve"], reserve,
                        hint=f"try reserves 0, {RESERVE_STEP:,}, {2 * RESERVE_STEP:,}, ... on your KV scenario, "
                        "its seed included"),
                  close("q2_mean_kv_used", a["q2_mean_kv_used"], kv_used, rel=1e-6,
                        hint="the mean KV tokens in use in the run at that reserve"))


def q3(a, v):
    run = steps.simulate([steps.Request(v.prompt_tokens)], budget_tokens=v.budget_tokens, decoders=v.decoders,
                         decoder_context_tokens=v.decoder_context_tokens, hardware=v.hardware, mfu=v.mfu)
    return close("q3_worst_itl_ms", a["q3_worst_itl_ms"], max(run.itl_s) * 1e3, rel=1e-3,
                 hint="the longest step any chat waited for, in milliseconds, on your hardware and MFU")


def q4(a, v):
    return close("q4_breakeven_tokens", a["q4_breakeven_tokens"], breakeven_tokens(v), rel=1e-3,
                 hint="compare recompute with the per-block swap as the context grows, with your bandwidth and MFU")


def q5(a, v):
    return choice("q5_choice", a["q5_choice"], "b",
                  hint="what does a chat see at each step, and what does the prompt pay?")


def q6(a, v):
    return choice("q6_choice", a["q6_choice"], "d", hint="what does the law assume about arrivals and order?")
