"""The eight batching and scheduling chains, one function each.

Each function takes the card's inputs as keyword parameters, with the card's
values as defaults, and returns a frozen result with the named quantities (units
in the field names).  ``to_dict()`` gives the unrounded numbers, which is what
``python -m lanes chains --json`` prints.

The head-of-line (:func:`hol_blocking`) and 100K-prompt (:func:`long_prompt`)
chains run the step simulator in :mod:`lanes.gpu.steps`; the others are the card's
closed forms on the catalog in :mod:`lanes.gpu.hardware`.
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass

from .. import _checks
from .hardware import Hardware, get_hardware, get_model
from .transformer import Model
from .steps import Request, simulate, step_cost


class _Result:
    def to_dict(self) -> dict[str, float]:
        """Named quantities as a plain dict of unrounded numbers."""
        return asdict(self)  # type: ignore[call-overload]


#: Documented limits of the chains that run the step simulator or size a batch:
#: prompt length, prompts behind the long one, decoders, batch and context.
MAX_PROMPT_TOKENS = 10_000_000
MAX_SHORT_PROMPTS = 10_000
MAX_DECODERS = 65_536
MAX_BATCH = 10_000_000
MAX_CONTEXT_TOKENS = 100_000_000
#: Longest time-per-output-token target :func:`goodput` sizes a batch for (s).
MAX_TPOT_TARGET_S = 3_600.0
#: Most tokens per request :func:`tenant_cost` prices.
MAX_REQUEST_TOKENS = 10**12


def _model(model: Model | str) -> Model:
    return model if isinstance(model, Model) else get_model(model)


def _hardware(hardware: Hardware | str) -> Hardware:
    return hardware if isinstance(hardware, Hardware) else get_hardware(hardware)


# ---------------------------------------------------------------------------
# 1. Little's law for an LLM server


@dataclass(frozen=True)
class LittlesLaw(_Result):
    """Time in system, requests in system, sequences decoding, tokens per second."""

    w_s: float
    in_system: float
    decoding: float
    tokens_per_s: float


def littles_law(
    *,
    arrival_rate_per_s: float = 10.0,
    ttft_s: float = 0.5,
    output_tokens: int = 300,
    tpot_s: float = 0.025,
) -> LittlesLaw:
    """Little's law L = lambda x W for an LLM server.

    Parameters
    ----------
    arrival_rate_per_s : float
        Request arrival rate lambda (requests/s).
    ttft_s : float
        Time to first token (s).
    output_tokens : int
        Output tokens per request, the first one included.
    tpot_s : float
        Time per output token after the first (s).

    Returns
    -------
    LittlesLaw
        ``w_s = ttft + (output - 1) x tpot`` (7.975 s on the card),
        ``in_system = lambda x W`` (79.75), ``decoding`` sequences at any moment
        (74.75) and the token rate they produce (2,990 tokens/s).
    """
    rate = _checks.number("arrival_rate_per_s", arrival_rate_per_s, lo=0, lo_open=True)
    ttft = _checks.number("ttft_s", ttft_s, lo=0)
    out = _checks.integer("output_tokens", output_tokens, lo=1)
    tpot = _checks.number("tpot_s", tpot_s, lo=0, lo_open=True)
    decode_s = (out - 1) * tpot
    w = ttft + decode_s
    decoding = rate * decode_s
    return LittlesLaw(w_s=w, in_system=rate * w, decoding=decoding, tokens_per_s=decoding / tpot)


# ---------------------------------------------------------------------------
# 2. KV in flight and the naive ceiling


@dataclass(frozen=True)
class KvInFlight(_Result):
    """KV bytes held by the requests in flight, the pool in tokens, the naive rate ceiling."""

    kv_bytes_per_token: float
    kv_bytes: float
    pool_tokens: float
    ceiling_rps: float


def kv_in_flight(
    *,
    in_system: float = 79.75,
    tokens_per_request: float = 1650,
    w_s: float = 7.975,
    pool_bytes: float = 159.8e9,
    model: Model | str = "llama-3.3-70b",
) -> KvInFlight:
    """KV cache in flight and the request rate the pool could hold if W stayed put.

    Parameters
    ----------
    in_system : float
        Requests in the system (Little's L; 79.75 from :func:`littles_law`).
    tokens_per_request : float
        Mean tokens of KV per request (prompt plus output so far).
    w_s : float
        Time in system per request (s).
    pool_bytes : float
        KV pool in bytes (159.8 GB on the card's TP=4 deployment).
    model : str or Model
        Sets the KV bytes per token (320 KiB for Llama 3.3 70B).

    Returns
    -------
    KvInFlight
        ``kv_bytes`` = L x tokens x bytes/token (43.1 GB); ``ceiling_rps`` =
        pool / (tokens x bytes/token x W) (37 requests/s), an upper bound only:
        more concurrency slows every step, so W grows.
    """
    L = _checks.number("in_system", in_system, lo=0)
    tokens = _checks.number("tokens_per_request", tokens_per_request, lo=0, lo_open=True)
    w = _checks.number("w_s", w_s, lo=0, lo_open=True)
    pool = _checks.number("pool_bytes", pool_bytes, lo=0, lo_open=True)
    per_token = _model(model).kv_bytes_per_token
    per_request = tokens * per_token
    return KvInFlight(
        kv_bytes_per_token=per_token,
        kv_bytes=L * per_request,
        pool_tokens=pool / per_token,
        ceiling_rps=pool / (per_request * w),
    )


# ---------------------------------------------------------------------------
# 3. Goodput at a TPOT target


@dataclass(frozen=True)
class Goodput(_Result):
    """Decode step time, throughput and goodput at two batch sizes."""

    tpot_small_s: float
    tokens_per_s_small: float
    goodput_small_tokens_per_s: float
    kv_bytes_large: float
    tpot_large_s: float
    tokens_per_s_large: float
    goodput_large_tokens_per_s: float
    throughput_gain: float
    max_batch_at_target: int


def goodput(
    *,
    batch_small: int = 64,
    batch_large: int = 128,
    context_tokens: int = 2048,
    tpot_target_s: float = 0.010,
    model: Model | str = "llama-3.1-8b",
    hardware: Hardware | str = "h100-sxm",
) -> Goodput:
    """Throughput versus goodput of memory-bound decode steps at a TPOT target.

    A decode step reads the weights plus every sequence's KV cache:
    ``TPOT = (weight bytes + batch x context x KV bytes/token) / HBM bandwidth``.
    Goodput counts only tokens of requests that meet the target; in one batch
    they all see the same TPOT, so it is all of the throughput or none.  On a
    calibrated profile (``"h200-measured"``) TPOT is the calibrated decode step.

    Parameters
    ----------
    batch_small, batch_large : int
        The two batch sizes compared (64 and 128 on the card).
    context_tokens : int
        Tokens of context per sequence.
    tpot_target_s : float
        The TPOT service-level objective (s).
    model, hardware : str or catalog entry

    Returns
    -------
    Goodput
        9.9 ms and 6,450 tok/s at 64; 15.1 ms and 8,505 tok/s at 128, 32% more
        throughput and zero goodput; the largest batch meeting the target.
    """
    small = _checks.integer("batch_small", batch_small, lo=1, hi=MAX_BATCH)
    large = _checks.integer("batch_large", batch_large, lo=1, hi=MAX_BATCH)
    ctx = _checks.integer("context_tokens", context_tokens, lo=1, hi=MAX_CONTEXT_TOKENS)
    target = _checks.number("tpot_target_s", tpot_target_s, lo=0, lo_open=True, hi=MAX_TPOT_TARGET_S)
    m, h = _model(model), _hardware(hardware)

    def tpot(batch: int) -> float:
        if h.calibration is not None:  # measured profile: the calibrated decode step
            return h.calibration.parts(m, batch=batch, kv_tokens=batch * ctx, prefills=())["step_s"]
        return (m.weight_bytes + batch * ctx * m.kv_bytes_per_token) / h.hbm_bytes_per_s

    t_small, t_large = tpot(small), tpot(large)
    tps_small, tps_large = small / t_small, large / t_large
    if h.calibration is not None:  # step time grows with the batch: bisect
        lo, hi = 0, 1
        while tpot(hi) <= target and hi <= MAX_BATCH:  # past MAX_BATCH the answer is capped there
            lo, hi = hi, hi * 2
        while hi - lo > 1:
            mid = (lo + hi) // 2
            lo, hi = (mid, hi) if tpot(mid) <= target else (lo, mid)
        max_batch = lo
    else:
        spare = target * h.hbm_bytes_per_s - m.weight_bytes
        max_batch = max(0, math.floor(spare / (ctx * m.kv_bytes_per_token)))
    return Goodput(
        tpot_small_s=t_small,
        tokens_per_s_small=tps_small,
        goodput_small_tokens_per_s=tps_small if t_small <= target else 0.0,
        kv_bytes_large=large * ctx * m.kv_bytes_per_token,
        tpot_large_s=t_large,
        tokens_per_s_large=tps_large,
        goodput_large_tokens_per_s=tps_large if t_large <= target else 0.0,
        throughput_gain=tps_large / tps_small - 1,
        max_batch_at_target=max_batch,
    )


# ---------------------------------------------------------------------------
# 4. Swap or recompute a preempted request


@dataclass(frozen=True)
class SwapVsRecompute(_Result):
    """Per-token cost of swapping KV out and back versus recomputing it."""

    swap_bytes_per_token: float
    swap_s_per_token: float
    recompute_s_per_token: float
    break_even_bytes_per_s: float


def swap_vs_recompute(
    *,
    context_tokens: int = 4096,
    link_bytes_per_s: float = 50e9,
    mfu: float = 0.5,
    model: Model | str = "llama-3.1-8b",
    hardware: Hardware | str = "h100-sxm",
) -> SwapVsRecompute:
    """Swap a preempted request's KV to host memory, or drop it and recompute it?

    Parameters
    ----------
    context_tokens : int
        Tokens of context the preempted request holds.
    link_bytes_per_s : float
        Effective host link bandwidth for the copies (bytes/s; 50 GB/s on the card).
    mfu : float
        Model FLOPs utilisation in (0, 1] for the recompute.
    model, hardware : str or catalog entry

    Returns
    -------
    SwapVsRecompute
        Swap: out and back, ``2 x KV bytes / link`` per token (5.2 us).
        Recompute: one causal prefill of the context, per token (34.65 us; the card prints 34.7).
        Break-even bandwidth: swap bytes per token / recompute time (7.6 GB/s);
        copies slower than that lose to recompute.
    """
    ctx = _checks.integer("context_tokens", context_tokens, lo=1, hi=MAX_CONTEXT_TOKENS)
    link = _checks.number("link_bytes_per_s", link_bytes_per_s, lo=0, lo_open=True)
    _checks.number("mfu", mfu, lo=0, hi=1, lo_open=True)
    m, h = _model(model), _hardware(hardware)
    swap_bytes = 2 * m.kv_bytes_per_token
    cost = step_cost([(0, ctx)], model=m, hardware=h, mfu=mfu)
    # a calibrated profile prices the whole prefill step (its parts add up)
    recompute = (cost.duration_s if h.calibration is not None else cost.compute_s) / ctx
    return SwapVsRecompute(
        swap_bytes_per_token=swap_bytes,
        swap_s_per_token=swap_bytes / link,
        recompute_s_per_token=recompute,
        break_even_bytes_per_s=swap_bytes / recompute,
    )


# ---------------------------------------------------------------------------
# 5. Head-of-line blocking under FCFS


@dataclass(frozen=True)
class HolBlocking(_Result):
    """TTFTs of one long prompt ahead of short ones, FCFS versus by length."""

    steps_ahead: int
    short_ttft_fcfs_s: float
    short_ttft_by_length_s: float
    long_ttft_fcfs_s: float
    long_ttft_by_length_s: float
    long_delay_s: float
    mean_ttft_fcfs_s: float
    mean_ttft_by_length_s: float


def hol_blocking(
    *,
    long_prompt_tokens: int = 32768,
    short_prompts: int = 10,
    short_prompt_tokens: int = 500,
    budget_tokens: int = 8192,
    mfu: float = 0.5,
    model: Model | str = "llama-3.1-8b",
    hardware: Hardware | str = "h100-sxm",
) -> HolBlocking:
    """A long prompt arrives just ahead of short ones: run the step simulator both ways.

    Parameters
    ----------
    long_prompt_tokens : int
        The long prompt (32,768 tokens on the card), first in line.
    short_prompts, short_prompt_tokens : int
        How many short prompts follow it, and their length.
    budget_tokens : int
        Token budget per engine step.
    mfu : float
        Model FLOPs utilisation in (0, 1].
    model, hardware : str or catalog entry

    Returns
    -------
    HolBlocking
        Under FCFS the short prompts wait ``steps_ahead`` full steps (4) and see
        1.80 s; by length they see 0.27 s while the long prompt waits one more
        step (+0.16 s); mean TTFT 1.78 s -> 0.41 s.
    """
    n_short = _checks.integer("short_prompts", short_prompts, lo=1, hi=MAX_SHORT_PROMPTS)
    long_tokens = _checks.integer("long_prompt_tokens", long_prompt_tokens, lo=1, hi=MAX_PROMPT_TOKENS)
    short_tokens = _checks.integer("short_prompt_tokens", short_prompt_tokens, lo=1, hi=MAX_PROMPT_TOKENS)
    budget_tokens = _checks.integer("budget_tokens", budget_tokens, lo=1)
    _checks.number("mfu", mfu, lo=0, hi=1, lo_open=True)
    model, hardware = _model(model), _hardware(hardware)
    reqs = [Request(long_tokens)] + [Request(short_tokens)] * n_short
    kw = dict(budget_tokens=budget_tokens, mfu=mfu, model=model, hardware=hardware)
    fcfs = simulate(reqs, order="fcfs", **kw)
    by_len = simulate(reqs, order="by-length", **kw)
    short_fcfs = sum(fcfs.ttft_s[1:]) / n_short
    short_by_len = sum(by_len.ttft_s[1:]) / n_short
    first_short = min(fcfs.ttft_s[1:])
    steps_ahead = sum(1 for s in fcfs.steps if s.end_s < first_short)
    return HolBlocking(
        steps_ahead=steps_ahead,
        short_ttft_fcfs_s=short_fcfs,
        short_ttft_by_length_s=short_by_len,
        long_ttft_fcfs_s=fcfs.ttft_s[0],
        long_ttft_by_length_s=by_len.ttft_s[0],
        long_delay_s=by_len.ttft_s[0] - fcfs.ttft_s[0],
        mean_ttft_fcfs_s=fcfs.mean_ttft_s,
        mean_ttft_by_length_s=by_len.mean_ttft_s,
    )


@dataclass(frozen=True)
class ChunkCap(_Result):
    """Chain 5's remedy: first come, first served with one prompt's share of each step capped.

    ``max_chunk_tokens`` is the cap (0: none).  The other users are the short
    prompts behind the long one (their mean TTFT) and the decoders already
    running (their time per output token: the mean step time until the long
    prompt's first token).
    """

    max_chunk_tokens: int
    short_ttft_s: float
    long_ttft_s: float
    decoder_tpot_s: float
    decoder_worst_s: float


def chunk_cap(
    max_chunk_tokens: int | None = None,
    *,
    long_prompt_tokens: int = 32768,
    short_prompts: int = 10,
    short_prompt_tokens: int = 500,
    budget_tokens: int = 8192,
    decoders: int = 64,
    decoder_context_tokens: int = 2048,
    mfu: float = 0.5,
    model: Model | str = "llama-3.1-8b",
    hardware: Hardware | str = "h100-sxm",
) -> ChunkCap:
    """Chain 5 under FCFS, beside running decoders, with one prompt's share of a step capped.

    Parameters
    ----------
    max_chunk_tokens : int, optional
        Most prompt tokens one request takes in one step (None: no cap), see
        :func:`lanes.gpu.steps.simulate`.
    long_prompt_tokens, short_prompts, short_prompt_tokens, budget_tokens : int
        As in :func:`hol_blocking`.
    decoders, decoder_context_tokens : int
        Decoders already running (64) and their context (2,048 tokens), as in
        :func:`long_prompt`: the users whose time per token the long prompt's
        chunks stretch.
    mfu : float
        Model FLOPs utilisation in (0, 1].
    model, hardware : str or catalog entry

    Returns
    -------
    ChunkCap
        The short prompts' mean TTFT, the long prompt's TTFT, and the decoders'
        mean and worst time per token until the long prompt's first token (s).
    """
    n_short = _checks.integer("short_prompts", short_prompts, lo=1, hi=MAX_SHORT_PROMPTS)
    long_tokens = _checks.integer("long_prompt_tokens", long_prompt_tokens, lo=1, hi=MAX_PROMPT_TOKENS)
    short_tokens = _checks.integer("short_prompt_tokens", short_prompt_tokens, lo=1, hi=MAX_PROMPT_TOKENS)
    budget_tokens = _checks.integer("budget_tokens", budget_tokens, lo=1)
    decoders = _checks.integer("decoders", decoders, lo=0, hi=min(budget_tokens - 1, MAX_DECODERS))
    context = _checks.integer("decoder_context_tokens", decoder_context_tokens, lo=0, hi=MAX_CONTEXT_TOKENS)
    run = simulate(
        [Request(long_tokens)] + [Request(short_tokens)] * n_short,
        order="fcfs",
        budget_tokens=budget_tokens,
        mfu=mfu,
        model=_model(model),
        hardware=_hardware(hardware),
        decoders=decoders,
        decoder_context_tokens=context,
        max_chunk_tokens=max_chunk_tokens,
    )
    until_long = [s.duration_s for s in run.steps if s.end_s <= run.ttft_s[0]]
    return ChunkCap(
        max_chunk_tokens=0 if max_chunk_tokens is None else max_chunk_tokens,
        short_ttft_s=sum(run.ttft_s[1:]) / n_short,
        long_ttft_s=run.ttft_s[0],
        decoder_tpot_s=sum(until_long) / len(until_long),
        decoder_worst_s=max(until_long),
    )


# ---------------------------------------------------------------------------
# 6. The p99 TTFT knee


@dataclass(frozen=True)
class P99Knee(_Result):
    """Highest utilisation meeting a p99 response-time target in an M/M/1 queue."""

    p99_factor: float
    rho_max: float
    max_rate_per_s: float
    slope_high_load: float
    slope_low_load: float
    p99_high_load_s: float
    p99_low_load_s: float


def p99_knee(
    *,
    service_s: float = 0.0665,
    p99_target_s: float = 1.0,
    percentile: float = 0.99,
    high_load: float = 0.7,
    low_load: float = 0.5,
) -> P99Knee:
    """The utilisation knee of an M/M/1 prefill queue at a tail-latency target.

    M/M/1 response time is exponential with mean ``S / (1 - rho)``, so its p-th
    percentile is ``-ln(1 - p) x S / (1 - rho)`` (4.6 x S / (1 - rho) at p99).

    Parameters
    ----------
    service_s : float
        Mean prefill (service) time S (s).
    p99_target_s : float
        Target for the percentile response time (s).
    percentile : float
        The percentile as a fraction in (0, 1).
    high_load, low_load : float
        Utilisations at which to report the slope ``1 / (1 - rho)^2``.

    Returns
    -------
    P99Knee
        ``rho_max`` (0.69), the arrival rate it allows, and the slopes (11 at
        70%, 4 at 50%): how fast the response time, in units of S, grows with load.
    """
    s = _checks.number("service_s", service_s, lo=0, lo_open=True)
    target = _checks.number("p99_target_s", p99_target_s, lo=0, lo_open=True)
    p = _checks.number("percentile", percentile, lo=0, hi=1, lo_open=True)
    if p == 1:
        raise ValueError("percentile must be a number in (0, 1) (got 1)")
    hi = _checks.number("high_load", high_load, lo=0, hi=1)
    lo = _checks.number("low_load", low_load, lo=0, hi=1)
    for name, rho in (("high_load", hi), ("low_load", lo)):
        if rho == 1:
            raise ValueError(f"{name} must be a number in [0, 1) (got 1)")
    factor = -math.log(1 - p)
    rho_max = max(0.0, 1 - factor * s / target)
    return P99Knee(
        p99_factor=factor,
        rho_max=rho_max,
        max_rate_per_s=rho_max / s,
        slope_high_load=1 / (1 - hi) ** 2,
        slope_low_load=1 / (1 - lo) ** 2,
        p99_high_load_s=factor * s / (1 - hi),
        p99_low_load_s=factor * s / (1 - lo),
    )


# ---------------------------------------------------------------------------
# 7. A 100K-token prompt under the budget


@dataclass(frozen=True)
class LongPrompt(_Result):
    """How a very long prompt is chunked and what it does to running decoders."""

    chunks: int
    prompt_tokens_per_chunk: int
    chunk1_linear_s: float
    chunk1_attention_s: float
    chunk1_s: float
    later_chunk_increment_s: float
    itl_before_s: float
    itl_max_s: float
    ttft_s: float


def long_prompt(
    *,
    prompt_tokens: int = 100_000,
    decoders: int = 64,
    decoder_context_tokens: int = 2048,
    budget_tokens: int = 8192,
    mfu: float = 0.5,
    model: Model | str = "llama-3.1-8b",
    hardware: Hardware | str = "h100-sxm",
) -> LongPrompt:
    """A long prompt arrives while decoders are running: run the step simulator.

    Parameters
    ----------
    prompt_tokens : int
        The long prompt (100,000 tokens on the card).
    decoders, decoder_context_tokens : int
        Decoders already running (64) and their context (2,048 tokens).
    budget_tokens : int
        Token budget per step (8,192, vLLM's default with chunked prefill).
    mfu : float
        Model FLOPs utilisation in (0, 1] (0.5 -> 494.5 TFLOP/s on an H100 SXM).
    model, hardware : str or catalog entry

    Returns
    -------
    LongPrompt
        13 chunks of 8,128 prompt tokens (the decoders take 64 of the budget);
        chunk 1 = 266 ms linear + 35 ms attention = 301 ms; each later chunk
        adds 70 ms of attention; the decoders' inter-token latency goes from a
        9.9 ms decode-only step to 301 ms and climbs from there.
    """
    prompt_tokens = _checks.integer("prompt_tokens", prompt_tokens, lo=1, hi=MAX_PROMPT_TOKENS)
    budget_tokens = _checks.integer("budget_tokens", budget_tokens, lo=1)
    decoders = _checks.integer("decoders", decoders, lo=0, hi=MAX_DECODERS)
    _checks.integer("decoders", decoders, hi=budget_tokens - 1, hi_name="budget_tokens - 1")
    decoder_context_tokens = _checks.integer(
        "decoder_context_tokens", decoder_context_tokens, lo=0, hi=MAX_CONTEXT_TOKENS
    )
    _checks.number("mfu", mfu, lo=0, hi=1, lo_open=True)
    model, hardware = _model(model), _hardware(hardware)
    run = simulate(
        [Request(prompt_tokens)],
        budget_tokens=budget_tokens,
        mfu=mfu,
        model=model,
        hardware=hardware,
        decoders=decoders,
        decoder_context_tokens=decoder_context_tokens,
    )
    chunk_steps = [s for s in run.steps if s.prefill_tokens > 0]
    first = chunk_steps[0]
    later = chunk_steps[1].duration_s - first.duration_s if len(chunk_steps) > 1 else 0.0
    before = step_cost(
        [(decoder_context_tokens, 1)] * decoders,
        model=_model(model),
        hardware=_hardware(hardware),
        mfu=mfu,
    ).duration_s
    return LongPrompt(
        chunks=len(chunk_steps),
        prompt_tokens_per_chunk=first.prefill_tokens,
        chunk1_linear_s=first.linear_s,
        chunk1_attention_s=first.attention_s,
        chunk1_s=first.duration_s,
        later_chunk_increment_s=later,
        itl_before_s=before if decoders else 0.0,
        itl_max_s=max(run.itl_s) if run.itl_s else 0.0,
        ttft_s=run.ttft_s[0],
    )


# ---------------------------------------------------------------------------
# 8. Tenant cost in weighted tokens


@dataclass(frozen=True)
class TenantCost(_Result):
    """Weighted-token cost per request of two tenants and B's share under round-robin."""

    cost_a: float
    cost_b: float
    ratio: float
    round_robin_share_b: float
    fair_share_b: float


def tenant_cost(
    *,
    a_input_tokens: int = 200,
    a_output_tokens: int = 100,
    b_input_tokens: int = 8000,
    b_output_tokens: int = 1000,
    input_weight: float = 1.0,
    output_weight: float = 3.0,
) -> TenantCost:
    """What one request of each tenant costs, in weighted tokens.

    Parameters
    ----------
    a_input_tokens, a_output_tokens, b_input_tokens, b_output_tokens : int
        Tokens per request of tenants A and B.
    input_weight, output_weight : float
        Cost of one input and one output token.  The default 3 is a rule of
        thumb; :func:`token_weights` prices it on the step model (about 4.8 for
        64 decoders of 2,048 tokens on Llama 3.1 8B and an H100 SXM).

    Returns
    -------
    TenantCost
        A = 500, B = 11,000, 22x per request; round-robin by request gives B
        22/23 = 96% of the weighted tokens; the token-fair scheduler of
        :mod:`lanes.gpu.fairness` gives B about half.
    """
    from .fairness import MAX_ADMISSIONS, Tenant, admissions_needed, schedule

    tokens = {}
    for name, value, lo in (("a_input_tokens", a_input_tokens, 1), ("a_output_tokens", a_output_tokens, 0),
                            ("b_input_tokens", b_input_tokens, 1), ("b_output_tokens", b_output_tokens, 0)):
        tokens[name] = _checks.integer(name, value, lo=lo)
        _checks.limit(name, tokens[name], MAX_REQUEST_TOKENS)
    a = Tenant("A", tokens["a_input_tokens"], tokens["a_output_tokens"])
    b = Tenant("B", tokens["b_input_tokens"], tokens["b_output_tokens"])
    kw = dict(input_weight=input_weight, output_weight=output_weight)
    cost_a, cost_b = a.cost(**kw), b.cost(**kw)
    if not (cost_a > 0 and cost_b > 0):
        raise ValueError(
            f"input_weight and output_weight must give each request a cost > 0 weighted tokens "
            f"(got cost_a={cost_a!r}, cost_b={cost_b!r})"
        )
    capacity = 1e6  # schedule's default run
    if max(admissions_needed((cost_a, cost_b), capacity, p) for p in ("round-robin", "token-fair")) <= MAX_ADMISSIONS:
        rr_b = schedule([a, b], policy="round-robin", **kw).shares["B"]
        fair_b = schedule([a, b], policy="token-fair", **kw).shares["B"]
    else:  # requests so cheap that the run would admit millions: the shares it tends to
        rr_b, fair_b = cost_b / (cost_a + cost_b), 0.5
    return TenantCost(
        cost_a=cost_a,
        cost_b=cost_b,
        ratio=cost_b / cost_a,
        round_robin_share_b=rr_b,
        fair_share_b=fair_b,
    )


# ---------------------------------------------------------------------------
# The output-token weight, from the step model


@dataclass(frozen=True)
class TokenWeights(_Result):
    """Engine time per input and per output token, and their ratio."""

    input_s_per_token: float
    output_s_per_token: float
    output_weight: float


def token_weights(
    *,
    decoders: int = 64,
    decoder_context_tokens: int = 2048,
    prompt_tokens: int = 200,
    mfu: float = 0.5,
    model: Model | str = "llama-3.1-8b",
    hardware: Hardware | str = "h100-sxm",
) -> TokenWeights:
    """How many input tokens one output token is worth, priced on the step model.

    An input (prompt) token rides in a compute-bound prefill: it costs its
    FLOPs, ``compute_s / prompt_tokens`` of a prefill of ``prompt_tokens``.  An
    output token comes from a memory-bound decode step shared by ``decoders``
    sequences: it costs ``step time / decoders``.  The ratio is the weight of an
    output token when input tokens weigh 1.  It is not a constant: fuller
    decode steps make output tokens cheaper.

    Parameters
    ----------
    decoders, decoder_context_tokens : int
        Sequences sharing each decode step (>= 1) and their context (tokens).
    prompt_tokens : int
        Length of the prompt whose tokens are priced (>= 1).
    mfu : float
        Model FLOPs utilisation in (0, 1].
    model, hardware : str or catalog entry

    Returns
    -------
    TokenWeights
        Seconds per input token, seconds per output token, and their ratio
        (about 4.8 for 64 decoders of 2,048 tokens and 200-token prompts on
        Llama 3.1 8B and an H100 SXM).
    """
    n = _checks.integer("decoders", decoders, lo=1, hi=MAX_DECODERS)
    ctx = _checks.integer("decoder_context_tokens", decoder_context_tokens, lo=0, hi=MAX_CONTEXT_TOKENS)
    p = _checks.integer("prompt_tokens", prompt_tokens, lo=1, hi=MAX_PROMPT_TOKENS)
    _checks.number("mfu", mfu, lo=0, hi=1, lo_open=True)
    m, h = _model(model), _hardware(hardware)
    input_s = step_cost([(0, p)], model=m, hardware=h, mfu=mfu).compute_s / p
    output_s = step_cost([(ctx, 1)] * n, model=m, hardware=h, mfu=mfu).duration_s / n
    return TokenWeights(input_s_per_token=input_s, output_s_per_token=output_s, output_weight=output_s / input_s)


CHAINS = {
    "littles_law": littles_law,
    "kv_in_flight": kv_in_flight,
    "goodput": goodput,
    "swap_vs_recompute": swap_vs_recompute,
    "hol_blocking": hol_blocking,
    "p99_knee": p99_knee,
    "long_prompt": long_prompt,
    "tenant_cost": tenant_cost,
}
"""The eight chains in card order, keyed by their JSON name."""


def all_chains() -> dict[str, _Result]:
    """Run every chain with the card's inputs; results keyed as in :data:`CHAINS`."""
    return {name: fn() for name, fn in CHAINS.items()}
