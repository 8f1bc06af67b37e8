"""Step-level prefill and decode simulator: an engine loop with a token budget.

Every engine step runs one forward pass over a batch of tokens:

* each running decoder contributes one token (decoders are served first);
* the rest of the **token budget** goes to waiting prompts, in the order the
  ordering policy gives (``"fcfs"`` or ``"by-length"``), a long prompt being
  **chunked** across as many steps as it needs; optionally no prompt takes more
  than ``max_chunk_tokens`` of one step (vLLM's ``long_prefill_token_threshold``),
  so the prompts behind it share every step;
* the step lasts ``max(compute, memory)`` on the roofline:

  - compute = linear FLOPs ``2 x params x tokens`` plus attention FLOPs
    ``4 x layers x d_model x q x (prior + q / 2)`` for every sequence in the
    step, where ``q`` is its query tokens this step and ``prior`` the tokens
    already in its KV cache (causal within a chunk: on average each new token
    sees half the chunk), divided by peak FLOP/s x MFU;
  - memory = bytes of weights plus the KV cache every sequence in the step
    reads (``kv_bytes_per_token x prior``), divided by HBM bandwidth.

A prompt's first output token appears at the end of the step that processes its
last prompt chunk (that is its TTFT); each further output token takes one
decode step.  Requests may arrive over time; the engine idles until the next
arrival when it has nothing to do.  Optionally a number of *background*
decoders are already running when the run starts and keep decoding until the
last request finishes (for example 64 decoders of long conversations).

The head-of-line and 100K-prompt chains in :mod:`lanes.gpu.chains` are computed with
:func:`simulate`; nothing there is re-derived by hand.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass
from typing import Union

from .. import _checks
from ..pool.traces import Trace
from .hardware import Hardware, get_hardware, get_model
from .transformer import Model

# ---------------------------------------------------------------------------
# Inputs


def _resolve(model: Model | str, hardware: Hardware | str) -> tuple[Model, Hardware]:
    """Catalog entries from entries or names (names checked against the catalog)."""
    m = model if isinstance(model, Model) else get_model(model)
    h = hardware if isinstance(hardware, Hardware) else get_hardware(hardware)
    return m, h


@dataclass(frozen=True)
class Request:
    """One request: a prompt to prefill, then output tokens to decode.

    Parameters
    ----------
    prompt_tokens : int
        Prompt length in tokens (>= 1).
    output_tokens : int
        Output tokens including the first one, which the last prefill step
        produces (>= 1; 1 means the request leaves right after its first token).
    arrival_s : float
        Arrival time in seconds (>= 0).
    """

    prompt_tokens: int
    output_tokens: int = 1
    arrival_s: float = 0.0

    def __post_init__(self) -> None:
        object.__setattr__(self, "prompt_tokens", _checks.integer("prompt_tokens", self.prompt_tokens, lo=1))
        object.__setattr__(self, "output_tokens", _checks.integer("output_tokens", self.output_tokens, lo=1))
        object.__setattr__(self, "arrival_s", _checks.number("arrival_s", self.arrival_s, lo=0))


@dataclass(frozen=True)
class StepCost:
    """Cost of one engine step (seconds, FLOPs, bytes).

    On a datasheet profile the step lasts ``max(compute, memory)`` (the
    roofline).  On a calibrated profile (``hardware.calibration`` set) the
    parts add up, as the measurements say: ``overhead_s`` (fixed per-layer
    kernels) plus memory time (weights streamed, decoders' KV read, every
    token's activations) plus compute time (the matmul FLOPs not hidden under
    the weight stream, logits, prefill attention), and ``additive`` is True.
    """

    linear_flops: float
    attention_flops: float
    memory_bytes: float
    linear_s: float
    attention_s: float
    memory_s: float
    overhead_s: float = 0.0
    additive: bool = False

    @property
    def compute_s(self) -> float:
        """Time to do the step's FLOPs at the achieved rate (s)."""
        return self.linear_s + self.attention_s

    @property
    def duration_s(self) -> float:
        """Step time (s): ``max(compute, memory)``, or the sum of the parts when ``additive``."""
        if self.additive:
            return self.overhead_s + self.memory_s + self.compute_s
        return max(self.compute_s, self.memory_s)


def step_cost(
    sequences: Sequence[tuple[int, int]],
    *,
    model: Model | str,
    hardware: Hardware | str,
    mfu: float = 0.5,
) -> StepCost:
    """Roofline cost of one forward pass over ``sequences`` (checked; see :func:`unchecked_step_cost`).

    ``model`` and ``hardware`` are catalog entries or their names; at most
    :data:`MAX_STEP_SEQUENCES` sequences, each a pair of integers
    ``(prior_tokens >= 0, query_tokens >= 1)``.
    """
    seqs = _checks.sequence("sequences", sequences, what="(prior_tokens, query_tokens) pairs", max_len=MAX_STEP_SEQUENCES)
    pairs = []
    for pair in seqs:
        prior, q = _checks.pair("sequences", pair, "a list of (prior_tokens, query_tokens) pairs")
        pairs.append((_checks.integer("prior_tokens", prior, lo=0), _checks.integer("query_tokens", q, lo=0)))
    _checks.number("mfu", mfu, lo=0, hi=1, lo_open=True)
    m, h = _resolve(model, hardware)
    return unchecked_step_cost(pairs, model=m, hardware=h, mfu=mfu)


def unchecked_step_cost(
    sequences: Sequence[tuple[int, int]],
    *,
    model: Model,
    hardware: Hardware,
    mfu: float = 0.5,
) -> StepCost:
    """Roofline cost of one forward pass over ``sequences``, inputs taken as they come.

    :func:`step_cost` checks its arguments and calls this; the step simulators
    (:func:`simulate` here, :mod:`lanes.gpu.continuous`) call it directly with
    sequences they built and catalog entries they resolved, because checking
    every pair of every step costs more than the step's arithmetic.

    Parameters
    ----------
    sequences : sequence of (prior_tokens, query_tokens)
        For each sequence in the step, the tokens already in its KV cache and
        the tokens it processes now (1 for a decoder, the chunk length for a
        prompt chunk).
    model, hardware : Model, Hardware
        Catalog entries (see :mod:`lanes.gpu.hardware`).
    mfu : float
        Model FLOPs utilisation in (0, 1]; ignored (but checked) on a
        calibrated profile such as ``"h200-measured"``, whose rates are
        already the achieved ones.

    Returns
    -------
    StepCost
        Linear and attention FLOPs, bytes read, and the times they take.
        On a calibrated profile a sequence with one query token is a decoder
        (CUDA-graph step, see :class:`lanes.gpu.calibration.StepModel`).
    """
    flops_per_s = hardware.achieved_flops_per_s(mfu)
    tokens = 0
    pairs = 0.0
    kv_tokens = 0
    for prior, q in sequences:
        tokens += q
        pairs += q * (prior + q / 2)
        kv_tokens += prior
    linear = model.linear_flops_per_token * tokens
    attention = model.attention_flops_per_pair * pairs
    memory = model.weight_bytes + model.kv_bytes_per_token * kv_tokens
    if hardware.calibration is not None:
        decoders = [prior for prior, q in sequences if q == 1]
        chunks = [(q, prior) for prior, q in sequences if q != 1]
        p = hardware.calibration.parts(model, batch=len(decoders), kv_tokens=sum(decoders), prefills=chunks)
        return StepCost(
            linear_flops=linear,
            attention_flops=attention,
            memory_bytes=memory,
            linear_s=p["matmul_s"] + p["logits_s"],
            attention_s=p["chunk_attention_s"] + p["prior_attention_s"],
            memory_s=p["weights_s"] + p["decode_attention_s"] + p["tokens_s"],
            overhead_s=p["fixed_s"],
            additive=True,
        )
    return StepCost(
        linear_flops=linear,
        attention_flops=attention,
        memory_bytes=memory,
        linear_s=linear / flops_per_s,
        attention_s=attention / flops_per_s,
        memory_s=memory / hardware.hbm_bytes_per_s,
    )


# ---------------------------------------------------------------------------
# Ordering policies: a sort key over waiting prompts, one signature for all.


@dataclass
class _Waiting:
    index: int
    arrival_s: float
    prompt_tokens: int
    done_tokens: int = 0

    @property
    def remaining(self) -> int:
        return self.prompt_tokens - self.done_tokens


def _fcfs(w: _Waiting) -> tuple:
    return (w.arrival_s, w.index)


def _by_length(w: _Waiting) -> tuple:
    return (w.remaining, w.arrival_s, w.index)


ORDERS: dict[str, Callable[[_Waiting], tuple]] = {"fcfs": _fcfs, "by-length": _by_length}
"""Prefill orderings by name: first come first served, or shortest remaining prompt first."""


# ---------------------------------------------------------------------------
# Results


@dataclass(frozen=True)
class StepRecord:
    """What happened in one engine step.

    ``in_system`` counts requests that had arrived and not finished when the step
    started (background decoders excluded): the "waiting plus running" gauge.
    """

    index: int
    start_s: float
    duration_s: float
    prefill_tokens: int
    decode_tokens: int
    linear_s: float
    attention_s: float
    memory_s: float
    in_system: int

    @property
    def end_s(self) -> float:
        """Time the step ends (s)."""
        return self.start_s + self.duration_s

    @property
    def tokens(self) -> int:
        """Tokens processed in the step (prefill plus decode)."""
        return self.prefill_tokens + self.decode_tokens


@dataclass(frozen=True)
class StepResult:
    """Outcome of :func:`simulate`; per-request tuples are in input order.

    Attributes
    ----------
    arrival_s, ttft_s, finish_s : tuple of float
        Arrival time, time to first token (from arrival) and time the last
        output token appeared, per request (s).
    steps : tuple of StepRecord
        Every engine step, in time order.
    """

    arrival_s: tuple[float, ...]
    ttft_s: tuple[float, ...]
    finish_s: tuple[float, ...]
    steps: tuple[StepRecord, ...]

    @property
    def itl_s(self) -> tuple[float, ...]:
        """Inter-token latency decoders saw: the duration of every step that decoded (s)."""
        return tuple(s.duration_s for s in self.steps if s.decode_tokens > 0)

    @property
    def mean_ttft_s(self) -> float:
        """Mean TTFT over all requests (s)."""
        return sum(self.ttft_s) / len(self.ttft_s)

    @property
    def time_in_system_s(self) -> tuple[float, ...]:
        """Per request, finish minus arrival (s): Little's W, one sample each."""
        return tuple(f - a for a, f in zip(self.arrival_s, self.finish_s))

    @property
    def makespan_s(self) -> float:
        """Time the last request finished (s)."""
        return max(self.finish_s)

    def to_dict(self) -> dict:
        """Plain dict of unrounded numbers (steps as a list of dicts), ready for JSON."""
        return {
            "ttft_s": list(self.ttft_s),
            "mean_ttft_s": self.mean_ttft_s,
            "arrival_s": list(self.arrival_s),
            "finish_s": list(self.finish_s),
            "makespan_s": self.makespan_s,
            "itl_s": list(self.itl_s),
            "steps": [asdict(s) for s in self.steps],
        }


# ---------------------------------------------------------------------------
# The engine loop

RequestLike = Union[Request, int]

#: Documented limits of :func:`simulate`, so that a run answers in seconds:
#: requests per run, background decoders, engine steps, and sequence-steps
#: (the sequences priced, summed over steps: each costs about 0.4 us).
MAX_REQUESTS = 20_000
MAX_DECODERS = 65_536
MAX_STEPS = 200_000
MAX_SEQUENCE_STEPS = 20_000_000
#: Most sequences :func:`step_cost` prices in one step.
MAX_STEP_SEQUENCES = 1_000_000




def simulate(
    requests: Sequence[RequestLike],
    *,
    budget_tokens: int = 8192,
    order: str = "fcfs",
    model: Model | str = "llama-3.1-8b",
    hardware: Hardware | str = "h100-sxm",
    mfu: float = 0.5,
    decoders: int = 0,
    decoder_context_tokens: int = 0,
    max_chunk_tokens: int | None = None,
) -> StepResult:
    """Run the engine step by step until every request has finished.

    Parameters
    ----------
    requests : sequence of Request or int, or a Trace
        The requests; a bare int is a prompt of that many tokens arriving at
        t = 0 with one output token.  Ties in arrival time keep input order.
        A :class:`lanes.pool.traces.Trace` gives one request per traced one
        (its arrival, prompt and output tokens).
    budget_tokens : int
        Maximum tokens (prefill plus decode) per step, vLLM's
        ``max_num_batched_tokens`` (>= 1).
    order : {"fcfs", "by-length"}
        Which waiting prompt gets the budget first.
    model, hardware : str or catalog entry
        Names from :mod:`lanes.gpu.hardware` or the entries themselves.
    mfu : float
        Model FLOPs utilisation in (0, 1].
    decoders : int
        Background decoders already running at t = 0 (< ``budget_tokens``).
    decoder_context_tokens : int
        Tokens in each background decoder's KV cache at t = 0.
    max_chunk_tokens : int, optional
        Most prompt tokens one request may take in one step (>= 1): the cap on
        one prompt's share of a step, so a long prompt leaves the rest of the
        budget to the prompts behind it.  None (the default): no cap, a prompt
        takes all the budget left.

    Returns
    -------
    StepResult
        TTFT and finish time per request (input order) and every step.
    """
    if isinstance(requests, Trace):  # a request trace: its arrivals, prompts and outputs
        requests = [
            Request(prompt_tokens=p, output_tokens=o, arrival_s=t)
            for t, p, o in zip(requests.arrival_s, requests.prompt_tokens, requests.output_tokens)
        ]
    items = _checks.sequence("requests", requests, what="Request or prompt lengths", max_len=MAX_REQUESTS)
    reqs = [r if isinstance(r, Request) else Request(prompt_tokens=r) for r in items]
    if not reqs:
        raise ValueError("requests must contain at least one request (got 0)")
    budget = _checks.integer("budget_tokens", budget_tokens, lo=1)
    key = ORDERS[_checks.choice("order", order, tuple(ORDERS))]
    mfu = _checks.number("mfu", mfu, lo=0, hi=1, lo_open=True)
    bg = _checks.integer("decoders", decoders, lo=0, hi=min(budget - 1, MAX_DECODERS))
    bg_context = _checks.integer("decoder_context_tokens", decoder_context_tokens, lo=0)
    cap = None if max_chunk_tokens is None else _checks.integer("max_chunk_tokens", max_chunk_tokens, lo=1)
    m, h = _resolve(model, hardware)
    # Steps the run needs at least: the longest output, and every prompt token through the budget.
    per_step = budget - bg if cap is None else min(budget - bg, cap)  # at least one prompt's tokens per step
    fewest = max(max(r.output_tokens for r in reqs), -(-max(r.prompt_tokens for r in reqs) // per_step),
                 -(-sum(r.prompt_tokens for r in reqs) // (budget - bg)))
    if fewest > MAX_STEPS or fewest * (bg + 1) > MAX_SEQUENCE_STEPS:
        raise ValueError(
            f"requests need at least {fewest} engine steps with {bg} decoders; the limits are "
            f"{MAX_STEPS} steps and {MAX_SEQUENCE_STEPS} sequence-steps (steps x decoders)"
        )
    work = 0

    n = len(reqs)
    pending = sorted(range(n), key=lambda i: (reqs[i].arrival_s, i))
    pending.reverse()  # pop() from the end gives the next arrival
    waiting: list[_Waiting] = []
    running: list[list[int]] = []  # [index, context_tokens, outputs_left]
    ttft = [math.nan] * n
    finish = [math.nan] * n
    steps: list[StepRecord] = []
    unfinished = n
    t = 0.0

    while unfinished:
        while pending and reqs[pending[-1]].arrival_s <= t:
            i = pending.pop()
            waiting.append(_Waiting(i, reqs[i].arrival_s, reqs[i].prompt_tokens))
        if not waiting and not running and not bg:
            t = reqs[pending[-1]].arrival_s  # idle until the next arrival
            continue

        in_system = len(waiting) + len(running)
        left = budget - bg
        seqs: list[tuple[int, int]] = [(bg_context, 1)] * bg
        decoding = running[:left]
        running = running[left:] + decoding  # rotate if decoders outnumber the budget
        left -= len(decoding)
        seqs += [(d[1], 1) for d in decoding]
        chunks: list[tuple[_Waiting, int]] = []
        for w in sorted(waiting, key=key):
            if left <= 0:
                break
            take = min(w.remaining, left) if cap is None else min(w.remaining, left, cap)
            chunks.append((w, take))
            seqs.append((w.done_tokens, take))
            left -= take

        work += len(seqs)
        if len(steps) >= MAX_STEPS or work > MAX_SEQUENCE_STEPS:
            raise ValueError(
                f"requests need more than {MAX_STEPS} engine steps or {MAX_SEQUENCE_STEPS} sequence-steps "
                f"(the documented limits of the step simulator)"
            )
        cost = unchecked_step_cost(seqs, model=m, hardware=h, mfu=mfu)
        end = t + cost.duration_s
        prefill_tokens = sum(take for _, take in chunks)
        steps.append(
            StepRecord(
                index=len(steps),
                start_s=t,
                duration_s=cost.duration_s,
                prefill_tokens=prefill_tokens,
                decode_tokens=bg + len(decoding),
                linear_s=cost.linear_s,
                attention_s=cost.attention_s,
                memory_s=cost.memory_s,
                in_system=in_system,
            )
        )

        if bg:
            bg_context += 1
        for d in decoding:
            d[1] += 1
            d[2] -= 1
            if d[2] == 0:
                finish[d[0]] = end
                unfinished -= 1
        running = [d for d in running if d[2] > 0]
        for w, take in chunks:
            w.done_tokens += take
            if w.remaining == 0:
                waiting.remove(w)
                ttft[w.index] = end - w.arrival_s
                outputs_left = reqs[w.index].output_tokens - 1
                if outputs_left:
                    running.append([w.index, w.prompt_tokens, outputs_left])
                else:
                    finish[w.index] = end
                    unfinished -= 1
        t = end

    return StepResult(
        arrival_s=tuple(r.arrival_s for r in reqs),
        ttft_s=tuple(ttft),
        finish_s=tuple(finish),
        steps=tuple(steps),
    )


simulate_steps = simulate
"""Package-level name for :func:`simulate` (``lanes.simulate`` is the slot-pool simulator)."""


def prefill_service_s(
    prompt_tokens: int,
    *,
    model: str = "llama-3.1-8b",
    hardware: str = "h100-sxm",
    mfu: float = 0.5,
) -> float:
    """Duration of one prefill step of ``prompt_tokens`` on the roofline (s)."""
    tokens = _checks.integer("prompt_tokens", prompt_tokens, lo=1)
    m, h = _resolve(model, hardware)
    return step_cost([(0, tokens)], model=m, hardware=h, mfu=mfu).duration_s
