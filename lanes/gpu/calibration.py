"""A step-time model calibrated on measured GPU steps (standard library only).

:class:`StepModel` prices one engine step (a decode group plus any number of
prefill chunks) as the **sum** of the times of what the step does, because the
measurements say the parts add up rather than overlap.  Every token of the
step, whether a prompt token or a decoder's next token, goes through the same
layers, so it is priced by the same per-token terms; only what really differs
between them is priced apart: attention over each sequence's own context, and
logits (every decoder samples a token, a prefill chunk only from its last one).

With ``T`` the tokens in the step (decoders plus prompt-chunk tokens) and
``G`` the rows of logits (decoders plus chunks):

``step = layers x fixed_s_per_layer``
    the small per-layer kernels' fixed cost (norms, RoPE, residual adds,
    splits, kernel start-up), which no bandwidth or FLOP rate removes;
``+ ((W / weight_bytes_per_s)^p + (T x body FLOPs / matmul_flops_per_s)^p)^(1/p)``
    the weight matmuls of the layers: ``W`` bytes of weights streamed once per
    step, and ``2 x (params - embedding - LM head)`` FLOPs per token.  A small
    step is bound by the weight stream, a large one by the FLOPs; in between
    the two overlap only in part, which the exponent ``p`` (fitted, 1 = no
    overlap, infinity = a hard maximum) describes;
``+ T x s_per_token``
    what every token costs beyond its matmul FLOPs: its activations going
    through the element-wise kernels (RMSNorm in float32, RoPE, SiLU, residual
    adds, the fused matrices' splits) and what the matmuls lose at the step's
    shapes against the one large product the ceiling measured;
``+ G x 2 x vocab x d_model / matmul_flops_per_s``
    the LM head's logits, one row per decoder and one per prefill chunk;
``+ decode KV bytes / (kv_bytes_per_s_per_cta x min(batch x kv_heads, kv_ctas_to_saturate))``
    decode attention reads every decoder's own KV cache; the kernel runs one
    block per (sequence, KV head), and each block streams its share at a
    limited rate until enough blocks run to saturate HBM: a lone long
    sequence is slow per byte, a big batch runs at the aggregate KV read rate
    ``kv_bytes_per_s_per_cta x kv_ctas_to_saturate``;
``+ 4 x layers x d_model x chunk^2 / 2 / chunk_attention_flops_per_s``
    causal attention inside each prefill chunk;
``+ 4 x layers x d_model x chunk x prior / prior_attention_flops_per_s``
    attention of each chunk to its already-cached prefix (slower per FLOP in
    the measured implementation, which copies and expands the prefix's K/V);

and, for a step launched kernel by kernel (``eager=True``), never less than
``eager_floor_s``, the time the host takes to launch one forward pass.
Without ``eager`` the step is a CUDA-graph replay, as a serving engine runs it.

Three of the ten numbers are read off single rows of the file (the GEMV
ablation row, the matrix-product ceiling, the eager decode rows); the other
seven are fitted together to every timed step, with no parameter of its own
for any row.  Fitted values for the shipped H200 file are stored in
:data:`H200_LLAMA_8B` (``lanes.gpu.measured.fit_step_model()`` reproduces
them; a test checks):

==============================  ==================  ==========================
parameter                       H200, Llama 3.1 8B  how obtained
==============================  ==================  ==========================
fixed_s_per_layer               84.7 us  (2.71 ms)  least squares
weight_bytes_per_s              3.74 TB/s           GEMV ablation row
matmul_flops_per_s              735 TFLOP/s         matrix-product ceiling row
overlap_exponent                1.48                grid + golden section
s_per_token                     10.4 us             least squares
kv_bytes_per_s_per_cta          41.1 GB/s           least squares
kv_ctas_to_saturate             101                 grid + golden section
(aggregate KV read rate         4.17 TB/s)          product of the two above
chunk_attention_flops_per_s     533 TFLOP/s         least squares
prior_attention_flops_per_s     285 TFLOP/s         least squares
eager_floor_s                   27.0 ms             median of the eager rows
==============================  ==================  ==========================

Why these are physical.  The matmul rate is not fitted: a token's body FLOPs
(13.96 GFLOP for Llama 3.1 8B) go at the ceiling the same session measured,
and what the step's matmuls lose against that one large product lands in
``s_per_token``, with the activations' traffic (about 10 us a token: tens of
MB of element-wise reads and writes per token at a few TB/s).  Both
attention rates stay below the matrix-product ceiling, as a chain of matrix
products with a softmax between must.  The aggregate KV read rate lies above
the device-copy ceiling (3.77 TB/s) and below the datasheet's 4.8 TB/s.  That
is expected: a copy writes as many bytes as it reads, and HBM loses time
turning the bus around between reads and writes, while decode attention only
reads.  The decode rows show it without the fit: at a fixed batch of 16 (128
blocks, past saturation) going from 8,192 to 32,768 tokens of context adds
51.5 GB of KV reads and 12.0 ms, 4.28 TB/s; every pair of neighbouring
contexts at a batch of 16 or more gives 3.7 to 4.6 TB/s
(``measured.kv_read_rates``).

Residuals on the 36 fitted rows (28 decode, 8 prefill of 2,048 tokens or
more): median |error| 1.9 %, worst 5.9 %; leave-one-out: median 2.3 %,
worst 7.0 % (``measured.leave_one_out``).  Two prefill rows lie within 1.3 x
the eager floor and stay out of the fit: 1,024 tokens is predicted within
1 %; 512 tokens with no prior (34 ms, launch bound) sits at the 27 ms floor,
21 % low, while 512 tokens behind a 2,048-token prior (27.0 ms) matches it.
Fitted to the decode rows of at most 16 sequences (and the prefill rows), the
model predicts the 13 rows of 32 to 256 sequences with a median error of
4.9 %, worst 13.5 % (``measured.batch_holdout``); with at most 8 sequences no
row saturates the KV read and the reach fails (median 28 %).

Where the model is measured: decode steps of 1 to 256 sequences at 512 to
32,768 tokens of context (at most 524,288 cached tokens in a step), prefill
chunks of 2,048 to 32,768 tokens behind up to 28,672 cached ones, each kind
alone, for the measured model shape.  Everything else (a decode batch of
thousands, contexts under 512, a decode group and prefill chunks in one step,
another model) is extrapolation; :meth:`StepModel.outside_measured_range`
names it and ``python -m lanes steptime`` warns.

The model prices a step as a CUDA-graph replay (how the decode rows were
measured and how serving engines run decode); ``eager=True`` prices it
launched kernel by kernel, as the prefill rows were.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from .. import _checks

if TYPE_CHECKING:  # pragma: no cover
    from .transformer import Model


@dataclass(frozen=True)
class MeasuredRange:
    """The shapes a step model was fitted on: inside them it interpolates, outside it extrapolates.

    Parameters
    ----------
    shape : (layers, d_model, kv_heads, head_dim)
        The measured model's shape.
    decode_batch, decode_context : (lowest, highest)
        Sequences per decode step and tokens cached per sequence, over the fitted decode rows.
    decode_kv_tokens : int
        Most cached tokens (batch x context) read by one fitted decode step.
    prefill_chunk, prefill_prior : (lowest, highest)
        Tokens per prefill chunk and tokens cached before it, over the fitted prefill rows.
    prefill_tokens : int
        Most tokens (prior + chunk) a fitted prefill row attended over.
    """

    shape: tuple[int, int, int, int]
    decode_batch: tuple[int, int]
    decode_context: tuple[int, int]
    decode_kv_tokens: int
    prefill_chunk: tuple[int, int]
    prefill_prior: tuple[int, int]
    prefill_tokens: int

    def outside(self, model: Model, *, batch: int, context: float,
                prefills: Sequence[tuple[int, int]]) -> tuple[str, ...]:
        """Why a step lies outside the measured range, one short phrase per reason (empty if inside).

        ``context`` is the mean cached tokens per decoder; ``prefills`` are (tokens, prior) pairs.
        """
        batch = _checks.integer("batch", batch, lo=0)
        context = _checks.number("context", context, lo=0)
        prefills = _chunks(prefills)
        out = []
        shape = (model.layers, model.d_model, model.kv_heads, model.head_dim)
        if shape != self.shape:
            out.append(f"model {model.name} is not the measured shape "
                       f"({self.shape[0]} layers x {self.shape[1]}, {self.shape[2]} KV heads)")

        def span(what: str, value: float, lo_hi: tuple[int, int]) -> None:
            lo, hi = lo_hi
            if value < lo or value > hi:
                out.append(f"{what} {value:,.0f} outside the measured {lo:,}-{hi:,}")

        if batch:
            span("decode batch", batch, self.decode_batch)
            span("decode context", context, self.decode_context)
            if batch * context > self.decode_kv_tokens:
                out.append(f"decode step caches {batch * context:,.0f} tokens, "
                           f"more than the measured {self.decode_kv_tokens:,}")
        for n, p in prefills:
            span("prefill chunk", n, self.prefill_chunk)
            span("prefill prior", p, self.prefill_prior)
            if n + p > self.prefill_tokens:
                out.append(f"prefill prior + chunk {n + p:,} above the measured {self.prefill_tokens:,}")
        if batch and prefills:
            out.append("decoders and prefill chunks were measured apart, never in one step")
        if len(prefills) > 1:
            out.append("several prefill chunks in one step were never measured")
        return tuple(out)


@dataclass(frozen=True)
class StepModel:
    """Calibrated cost of one engine step; see the module docstring for the formula.

    Parameters
    ----------
    fixed_s_per_layer : float
        Fixed time per transformer layer per step (s).
    weight_bytes_per_s : float
        Rate at which the weights stream through the matmuls (bytes/s).
    matmul_flops_per_s : float
        Rate of the weight matmuls' FLOPs (FLOP/s), the measured matrix-product ceiling.
    overlap_exponent : float
        ``p`` of the soft maximum of weight-stream time and matmul FLOP time (>= 1).
    s_per_token : float
        Time per token in the step beyond its matmul FLOPs, prompt or decode token alike (s).
    kv_bytes_per_s_per_cta : float
        Decode-attention KV read rate of one (sequence, KV head) block (bytes/s).
    kv_ctas_to_saturate : float
        Blocks needed to reach the aggregate KV read rate.
    chunk_attention_flops_per_s : float
        Achieved rate of causal attention within a prefill chunk (FLOP/s).
    prior_attention_flops_per_s : float
        Achieved rate of a chunk's attention to its cached prefix (FLOP/s).
    eager_floor_s : float
        Shortest step launched kernel by kernel (s); 0 if unmeasured.
    source : str
        Where the numbers come from.
    measured_range : MeasuredRange or None
        The shapes the model was fitted on (None: unknown).
    """

    fixed_s_per_layer: float
    weight_bytes_per_s: float
    matmul_flops_per_s: float
    overlap_exponent: float
    s_per_token: float
    kv_bytes_per_s_per_cta: float
    kv_ctas_to_saturate: float
    chunk_attention_flops_per_s: float
    prior_attention_flops_per_s: float
    eager_floor_s: float
    source: str
    measured_range: MeasuredRange | None = None

    @property
    def kv_bytes_per_s(self) -> float:
        """Aggregate decode KV read rate once enough blocks run (bytes/s)."""
        return self.kv_bytes_per_s_per_cta * self.kv_ctas_to_saturate

    def breakdown(
        self,
        model: Model,
        *,
        decode: tuple[int, int] | None = None,
        prefills: Sequence[tuple[int, int]] = (),
        eager: bool = False,
    ) -> dict[str, float]:
        """Seconds spent on each part of one step.

        Parameters
        ----------
        model : Model
            Catalogue model (parameters, layers, KV heads, vocabulary, ...).
        decode : (batch, context) or None
            Decoders in the step and the tokens already cached per decoder.
        prefills : sequence of (tokens, prior)
            One prefill chunk each: tokens processed now, tokens already cached.
        eager : bool
            Launched kernel by kernel (floor ``eager_floor_s``) instead of as a graph.

        Returns
        -------
        dict
            ``fixed_s``, ``weights_s`` (the weight stream alone), ``matmul_s``
            (the matmul time not hidden under the weight stream), ``tokens_s``,
            ``logits_s``, ``decode_attention_s``, ``chunk_attention_s``,
            ``prior_attention_s``, ``launch_s`` (the eager floor's excess over
            the rest, 0 for a graph) and ``step_s``, their sum.
        """
        batch, context = _decode(decode)
        chunks = _chunks(prefills)
        return self.parts(model, batch=batch, kv_tokens=batch * context, prefills=chunks, eager=eager)

    def parts(
        self,
        model: Model,
        *,
        batch: int,
        kv_tokens: float,
        prefills: Sequence[tuple[int, int]],
        eager: bool = False,
    ) -> dict[str, float]:
        """:meth:`breakdown` for decoders of unequal context, inputs unchecked.

        ``batch`` decoders hold ``kv_tokens`` cached tokens between them;
        ``prefills`` are (tokens, prior) pairs.  Used by the step simulator.
        """
        tokens = batch
        chunk_pairs = 0.0
        prior_pairs = 0.0
        for n, p in prefills:
            tokens += n
            chunk_pairs += n * n / 2
            prior_pairs += n * p
        if tokens == 0:
            raise ValueError("step must hold at least one decoder or one prefill chunk (got none)")
        pair = model.attention_flops_per_pair
        ctas = min(batch * model.kv_heads, self.kv_ctas_to_saturate) if batch else 1.0
        weights = model.weight_bytes / self.weight_bytes_per_s
        flops = model.body_flops_per_token * tokens / self.matmul_flops_per_s
        linear = soft_max(weights, flops, self.overlap_exponent)
        parts = {
            "fixed_s": model.layers * self.fixed_s_per_layer,
            "weights_s": weights,
            "matmul_s": linear - weights,
            "tokens_s": tokens * self.s_per_token,
            "logits_s": (batch + len(prefills)) * model.head_flops_per_token / self.matmul_flops_per_s,
            "decode_attention_s": kv_tokens * model.kv_bytes_per_token
            / (self.kv_bytes_per_s_per_cta * ctas),
            "chunk_attention_s": pair * chunk_pairs / self.chunk_attention_flops_per_s,
            "prior_attention_s": pair * prior_pairs / self.prior_attention_flops_per_s,
        }
        gpu = sum(parts.values())
        parts["launch_s"] = max(0.0, self.eager_floor_s - gpu) if eager else 0.0
        parts["step_s"] = gpu + parts["launch_s"]
        return parts

    def step_s(
        self,
        model: Model,
        *,
        decode: tuple[int, int] | None = None,
        prefills: Sequence[tuple[int, int]] = (),
        eager: bool = False,
    ) -> float:
        """Duration of one step (s); arguments as in :meth:`breakdown`."""
        return self.breakdown(model, decode=decode, prefills=prefills, eager=eager)["step_s"]

    def outside_measured_range(
        self,
        model: Model,
        *,
        decode: tuple[int, int] | None = None,
        prefills: Sequence[tuple[int, int]] = (),
    ) -> tuple[str, ...]:
        """Why this step is extrapolated, one phrase per reason; empty inside the measured range.

        Arguments as in :meth:`breakdown`.  A model without a ``measured_range``
        answers with that one reason.
        """
        batch, context = _decode(decode)
        chunks = _chunks(prefills)
        if self.measured_range is None:
            return ("the step model does not record the shapes it was fitted on",)
        return self.measured_range.outside(model, batch=batch, context=context, prefills=chunks)


def _decode(decode: object) -> tuple[int, int]:
    """``decode`` as checked (batch, context) integers; None is no decoders."""
    if decode is None:
        return 0, 0
    if not isinstance(decode, (tuple, list)) or len(decode) != 2:
        raise ValueError(f"decode must be a (batch, context) pair of integers or None (got {decode!r})")
    return _checks.integer("decode batch", decode[0], lo=0), _checks.integer("decode context", decode[1], lo=0)


def _chunks(prefills: object) -> list[tuple[int, int]]:
    """``prefills`` as a list of checked (tokens, prior) integer pairs."""
    if isinstance(prefills, (str, bytes)) or not isinstance(prefills, (tuple, list)):
        raise ValueError(f"prefills must be a sequence of (tokens, prior) pairs (got {prefills!r})")
    out = []
    for pair in prefills:
        if not isinstance(pair, (tuple, list)) or len(pair) != 2:
            raise ValueError(f"prefills must hold (tokens, prior) pairs of integers (got {pair!r})")
        out.append((_checks.integer("prefill tokens", pair[0], lo=1), _checks.integer("prefill prior", pair[1], lo=0)))
    return out


def soft_max(a: float, b: float, p: float) -> float:
    """``(a^p + b^p)^(1/p)`` for non-negative ``a``, ``b`` and ``p >= 1``: the sum at 1, the maximum as p grows."""
    a = _checks.number("a", a, lo=0)
    b = _checks.number("b", b, lo=0)
    p = _checks.number("p", p, lo=1)
    hi = max(a, b)
    if hi == 0:
        return 0.0
    return hi * ((a / hi) ** p + (b / hi) ** p) ** (1 / p)


H200_LLAMA_8B = StepModel(
    fixed_s_per_layer=8.468161953818453e-05,
    weight_bytes_per_s=3739012666259.7134,
    matmul_flops_per_s=735305810411940.4,
    overlap_exponent=1.477460384740649,
    s_per_token=1.0350058317999626e-05,
    kv_bytes_per_s_per_cta=41056608278.41885,
    kv_ctas_to_saturate=101.45169789339964,
    chunk_attention_flops_per_s=533242844651543.2,
    prior_attention_flops_per_s=284753162498663.25,
    eager_floor_s=0.026997855663299562,
    source='least-squares fit to 36 timed steps on NVIDIA H200',
    measured_range=MeasuredRange(
        shape=(32, 4096, 8, 128),
        decode_batch=(1, 256),
        decode_context=(512, 32768),
        decode_kv_tokens=524288,
        prefill_chunk=(2048, 32768),
        prefill_prior=(0, 28672),
        prefill_tokens=32768,
    ),
)
"""Fit to the shipped H200 file (Llama 3.1 8B shapes); see the module docstring."""
