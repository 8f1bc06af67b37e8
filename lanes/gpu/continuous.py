"""Why batching pays, and static against continuous batching.

A decode step reads every weight once, whether it serves one sequence or
sixteen.  :func:`decode_step_curve` prices one decode step on the roofline of
:func:`lanes.gpu.steps.step_cost` for a range of batch sizes: while the weights
dominate the bytes read, the step time hardly moves and tokens per second grow
almost in proportion to the batch.

:func:`simulate_batching` then runs a queue of requests with different output
lengths through ``slots`` decode slots in one of two modes:

* ``"static"``: take up to ``slots`` waiting requests, decode until the
  *longest* of them is done, return every answer together, then take the next
  batch.  Slots whose sequence has finished sit idle until the batch ends.
* ``"continuous"``: at every step, a finished sequence leaves and a waiting one
  takes its slot (vLLM, TGI and SGLang schedule this way).

Each step lasts the roofline time of the sequences decoding in it (context =
prompt plus tokens generated so far).  Prefill is left out on purpose: it is
the same in both modes and the chain chapters treat it.  Standard library only
apart from :mod:`lanes.gpu.steps` and :mod:`lanes.gpu.hardware`.
"""

from __future__ import annotations

import random
from collections import deque
from collections.abc import Sequence
from dataclasses import dataclass, replace

from .. import _checks
from .._stats import percentile
from .hardware import Hardware, get_hardware, get_model
from .transformer import Model
from .steps import MAX_STEP_SEQUENCES
from .steps import unchecked_step_cost as step_cost  # the sequences here are built checked

#: Most tokens one :func:`simulate_batching` run decodes (requests x the longest
#: output): about 6 s on the course machine.
MAX_DECODED_TOKENS = 10_000_000
#: Largest batch :func:`decode_step_curve` prices.
MAX_DECODE_BATCH = 1_000_000

__all__ = [
    "MODES",
    "BatchingResult",
    "BatchingScenario",
    "DecodeStep",
    "compare_batching",
    "decode_step_curve",
    "simulate_batching",
]

MODES = ("static", "continuous")
"""Batching modes."""


def _resolve(model: Model | str, hardware: Hardware | str) -> tuple[Model, Hardware]:
    m = model if isinstance(model, Model) else get_model(model)
    h = hardware if isinstance(hardware, Hardware) else get_hardware(hardware)
    return m, h


@dataclass(frozen=True)
class DecodeStep:
    """One decode step at a given batch size, on the roofline.

    Attributes
    ----------
    batch : int
        Sequences decoding in the step (one token each).
    step_s : float
        Step time, ``max(compute_s, memory_s)`` (s).
    memory_s, compute_s : float
        Time to read weights plus KV cache, and time for the FLOPs (s).
    weight_share : float
        Fraction of the bytes read that are weights.
    tokens_per_s : float
        ``batch / step_s``.
    """

    batch: int
    step_s: float
    memory_s: float
    compute_s: float
    weight_share: float
    tokens_per_s: float


def decode_step_curve(
    batch_sizes: Sequence[int] = (1, 2, 4, 8, 16, 32, 64, 128, 256),
    *,
    context_tokens: int = 1024,
    model: Model | str = "llama-3.1-8b",
    hardware: Hardware | str = "h100-sxm",
    mfu: float = 0.5,
) -> tuple[DecodeStep, ...]:
    """Price one decode step for each batch size.

    Parameters
    ----------
    batch_sizes : sequence of int
        Batch sizes (each >= 1).
    context_tokens : int
        Tokens already in each sequence's KV cache (>= 0).
    model, hardware : str or catalog entry
        From :mod:`lanes.gpu.hardware`.
    mfu : float
        Model FLOPs utilisation in (0, 1].

    Returns
    -------
    tuple of DecodeStep
        One per batch size, in the order given.
    """
    m, h = _resolve(model, hardware)
    ctx = _checks.integer("context_tokens", context_tokens, lo=0)
    _checks.number("mfu", mfu, lo=0, hi=1, lo_open=True)
    sizes = _checks.sequence("batch_sizes", batch_sizes, what="batch sizes")
    sizes = [_checks.integer("batch size", b, lo=1) for b in sizes]
    for b in sizes:
        _checks.limit("batch size", b, MAX_DECODE_BATCH)
    _checks.limit("batch_sizes", sum(sizes), MAX_STEP_SEQUENCES, why="sequences priced in all")
    out = []
    for b in sizes:
        c = step_cost([(ctx, 1)] * b, model=m, hardware=h, mfu=mfu)
        out.append(
            DecodeStep(
                batch=b,
                step_s=c.duration_s,
                memory_s=c.memory_s,
                compute_s=c.compute_s,
                weight_share=m.weight_bytes / c.memory_bytes,
                tokens_per_s=b / c.duration_s,
            )
        )
    return tuple(out)


@dataclass(frozen=True)
class BatchingScenario:
    """A queue of requests for a few decode slots.

    Parameters
    ----------
    requests : int
        Requests, all waiting at t = 0 (>= 1).
    slots : int
        Sequences decoded at once (>= 1).
    output_tokens : (int, int)
        Output length range; each request's is uniform in it (tokens).
    prompt_tokens : int
        Prompt length of every request (tokens, its KV context at the first step).
    model, hardware : str
        Catalog names (see :mod:`lanes.gpu.hardware`).
    mfu : float
        Model FLOPs utilisation in (0, 1].
    seed : int
        Seed for the output lengths.
    """

    requests: int = 64
    slots: int = 16
    output_tokens: tuple[int, int] = (16, 512)
    prompt_tokens: int = 512
    model: str = "llama-3.1-8b"
    hardware: str = "h100-sxm"
    mfu: float = 0.5
    seed: int = 3

    def __post_init__(self) -> None:
        object.__setattr__(self, "requests", _checks.integer("requests", self.requests, lo=1))
        object.__setattr__(self, "slots", _checks.integer("slots", self.slots, lo=1))
        object.__setattr__(self, "output_tokens", _checks.int_range("output_tokens", self.output_tokens, lo=1))
        object.__setattr__(self, "prompt_tokens", _checks.integer("prompt_tokens", self.prompt_tokens, lo=0))
        object.__setattr__(self, "mfu", _checks.number("mfu", self.mfu, lo=0, hi=1, lo_open=True))
        object.__setattr__(self, "seed", _checks.integer("seed", self.seed, big=True))
        _resolve(self.model, self.hardware)
        most = self.requests * self.output_tokens[1]
        if most > MAX_DECODED_TOKENS:
            raise ValueError(
                f"requests x output_tokens hi must be at most {MAX_DECODED_TOKENS} decoded tokens "
                f"(got {_checks.show(most)}: requests={_checks.show(self.requests)}, output_tokens={self.output_tokens})"
            )

    def lengths(self) -> tuple[int, ...]:
        """Every request's output length (tokens), drawn from ``random.Random(seed)``."""
        rng = random.Random(self.seed)
        lo, hi = self.output_tokens
        return tuple(rng.randint(lo, hi) for _ in range(self.requests))

    def with_(self, **changes) -> "BatchingScenario":
        """A copy with some fields changed (validated again)."""
        return replace(self, **changes)


def _pct(values: Sequence[float], q: float) -> float:
    return percentile(sorted(values), q)


@dataclass(frozen=True)
class BatchingResult:
    """Outcome of :func:`simulate_batching`.

    Attributes
    ----------
    mode : str
        ``"static"`` or ``"continuous"``.
    output_tokens : tuple of int
        Output length per request (tokens).
    finish_s : tuple of float
        When each request's answer was returned (s after t = 0).
    step_start_s, step_active : tuple
        Start time (s) and sequences decoding, per step.
    slots : int
        Slots available.
    """

    mode: str
    output_tokens: tuple[int, ...]
    finish_s: tuple[float, ...]
    step_start_s: tuple[float, ...]
    step_active: tuple[int, ...]
    slots: int

    @property
    def makespan_s(self) -> float:
        """Time the last answer was returned (s)."""
        return max(self.finish_s)

    @property
    def tokens_per_s(self) -> float:
        """Output tokens over the makespan."""
        return sum(self.output_tokens) / self.makespan_s

    @property
    def slot_use(self) -> float:
        """Mean fraction of slots decoding, weighted by step time."""
        ends = self.step_start_s[1:] + (self.makespan_s,)
        busy = sum(a * (e - s) for a, s, e in zip(self.step_active, self.step_start_s, ends))
        return busy / (self.slots * self.makespan_s)

    def summary(self) -> dict[str, float | str]:
        """The numbers the chapter tabulates."""
        return {
            "mode": self.mode,
            "steps": len(self.step_active),
            "makespan (s)": self.makespan_s,
            "tokens/s": self.tokens_per_s,
            "slot use (%)": 100 * self.slot_use,
            "mean latency (s)": sum(self.finish_s) / len(self.finish_s),
            "p50 latency (s)": _pct(self.finish_s, 0.5),
            "p90 latency (s)": _pct(self.finish_s, 0.9),
        }

    def to_frame(self):
        """One row per request: output tokens and finish time (pandas imported here)."""
        import pandas as pd

        return pd.DataFrame({"output_tokens": self.output_tokens, "finish_s": self.finish_s}).rename_axis("request")


def simulate_batching(scenario: BatchingScenario | None = None, mode: str = "continuous") -> BatchingResult:
    """Decode every request of ``scenario`` in ``mode`` and time it on the roofline.

    Parameters
    ----------
    scenario : BatchingScenario, optional
        Requests and slots (default: 64 requests, 16 slots, 16-512 output tokens).
    mode : {"static", "continuous"}
        See the module docstring.

    Returns
    -------
    BatchingResult
        Per-request finish times and the per-step occupancy.
    """
    sc = BatchingScenario() if _checks.instance("scenario", scenario, BatchingScenario, none_ok=True) is None else scenario
    _checks.choice("mode", mode, MODES)
    m, h = _resolve(sc.model, sc.hardware)
    lengths = sc.lengths()
    waiting: deque[int] = deque(range(sc.requests))
    active: list[list[int]] = []  # [request, tokens generated]
    batch: list[int] = []  # static: requests of the current batch
    finish = [0.0] * sc.requests
    starts: list[float] = []
    counts: list[int] = []
    t = 0.0
    cost_cache: dict[tuple[int, int], float] = {}

    while waiting or active:
        if mode == "continuous" or not active:
            while waiting and len(active) < sc.slots:
                k = waiting.popleft()
                active.append([k, 0])
                batch.append(k)
        seqs = [(sc.prompt_tokens + g, 1) for _, g in active]
        key = (len(seqs), sum(p for p, _ in seqs))
        if key not in cost_cache:  # step time depends only on the count and total context
            cost_cache[key] = step_cost(seqs, model=m, hardware=h, mfu=sc.mfu).duration_s
        starts.append(t)
        counts.append(len(active))
        t += cost_cache[key]
        for a in active:
            a[1] += 1
        for k, g in active:
            if g == lengths[k] and mode == "continuous":
                finish[k] = t
        active = [a for a in active if a[1] < lengths[a[0]]]
        if mode == "static" and not active:
            for k in batch:
                finish[k] = t  # the whole batch comes back when its longest answer is done
            batch = []
    return BatchingResult(
        mode=mode,
        output_tokens=lengths,
        finish_s=tuple(finish),
        step_start_s=tuple(starts),
        step_active=tuple(counts),
        slots=sc.slots,
    )


def compare_batching(scenario: BatchingScenario | None = None):
    """Both modes on one scenario, as a DataFrame indexed by mode (pandas imported here)."""
    import pandas as pd

    return pd.DataFrame([simulate_batching(scenario, m).summary() for m in MODES]).set_index("mode")
