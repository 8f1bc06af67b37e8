"""A step-time model calibrated on measured GPU steps (standard library only).

:class:`StepModel` prices one engine step (a decode group plus any number of
prefill chunks) as the **sum** of the times of what the step does, because the
measurements say the parts add up rather than overlap:

``step = layers x fixed_s_per_layer``
    the small per-layer kernels (norms, RoPE, residual adds, splits, the
    attention kernels' start-up), a cost no bandwidth or FLOP rate removes;
``+ weight_bytes / weight_bytes_per_s``
    every weight read once per step at the measured GEMV streaming rate;
``+ 2 x params x tokens / matmul_flops_per_s``
    the weight matmuls' FLOPs for every token in the step (decoders and chunks
    share one pass, so the weights are read once for all of them);
``+ prefill tokens x prefill_s_per_token``
    what a prompt token costs beyond its FLOPs: its keys and values expanded
    from the KV heads to all query heads, and activations too large for the
    cache making round trips to HBM (decoders' tokens avoid both);
``+ decode KV bytes / (kv_bytes_per_s_per_cta x min(batch x kv_heads, kv_ctas_to_saturate))``
    decode attention reads every decoder's KV cache; the kernel runs one block
    per (sequence, KV head), and each block streams its share at a limited rate
    until enough blocks run to saturate HBM: a lone long sequence is slow per
    byte, a big batch runs at the aggregate KV bandwidth
    ``kv_bytes_per_s_per_cta x kv_ctas_to_saturate``;
``+ 4 x layers x d_model x chunk^2 / 2 / chunk_attention_flops_per_s``
    causal attention inside each prefill chunk;
``+ 4 x layers x d_model x chunk x prior / prior_attention_flops_per_s``
    attention of each chunk to its already-cached prefix (slower per FLOP in
    the measured implementation, which copies and expands the prefix's K/V);

and, for a step launched kernel by kernel (``eager=True``), never less than
``eager_floor_s``, the time the host takes to launch one forward pass.
Without ``eager`` the step is a CUDA-graph replay, as a serving engine runs it.

Fitted values for the shipped H200 file are stored in :data:`H200_LLAMA_8B`
(``lanes.engine.measured.fit_step_model()`` reproduces them; a test checks):

==============================  ==================  ==========================
parameter                       H200, Llama 3.1 8B  how obtained
==============================  ==================  ==========================
fixed_s_per_layer               81.8 us  (2.62 ms)  least squares
weight_bytes_per_s              3.74 TB/s           GEMV ablation row
matmul_flops_per_s              713 TFLOP/s         least squares (decode)
kv_bytes_per_s_per_cta          40.6 GB/s           least squares
kv_ctas_to_saturate             103                 grid + golden section
(aggregate KV bandwidth         4.19 TB/s)          product of the two above
prefill_s_per_token             5.74 us             least squares (prefill)
chunk_attention_flops_per_s     495 TFLOP/s         least squares (prefill)
prior_attention_flops_per_s     284 TFLOP/s         least squares (prefill)
eager_floor_s                   27.0 ms             median of the eager rows
==============================  ==================  ==========================

The fitted matmul rate is 97 % of the 735 TFLOP/s the same session measured
for one large matrix product; the per-prefill-token cost matches the traffic
of expanding a token's K/V to 32 heads and of its activations.

Residuals on the 36 fitted rows (28 decode, 8 prefill of 2,048 tokens or
more): median |error| 2.0 %, worst 4.7 %; leave-one-out: median 2.5 %,
worst 5.5 % (``measured.leave_one_out``).  Two prefill rows lie within
1.3 x the eager floor and stay out of the fit: 1,024 tokens is predicted
5.3 % high; 512 tokens with no prior (34 ms, launch bound) sits at the
27 ms floor, 21 % low, while 512 tokens behind a 2,048-token prior (27.0 ms)
matches the floor.

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
    from .hardware import Model


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
        Achieved rate of the weight matmuls' FLOPs, charged per token (FLOP/s).
    kv_bytes_per_s_per_cta : float
        Decode-attention KV read rate of one (sequence, KV head) block (bytes/s).
    kv_ctas_to_saturate : float
        Blocks needed to reach the aggregate KV read rate.
    prefill_s_per_token : float
        Time per prefill token beyond its matmul FLOPs (s).
    chunk_attention_flops_per_s : float
        Achieved rate of causal attention within a prefill chunk (FLOP/s).
    prior_attention_flops_per_s : float
        Achieved rate of a chunk's attention to its cached prefix (FLOP/s).
    eager_floor_s : float
        Shortest step launched kernel by kernel (s); 0 if unmeasured.
    source : str
        Where the numbers come from.
    """

    fixed_s_per_layer: float
    weight_bytes_per_s: float
    matmul_flops_per_s: float
    kv_bytes_per_s_per_cta: float
    kv_ctas_to_saturate: float
    prefill_s_per_token: float
    chunk_attention_flops_per_s: float
    prior_attention_flops_per_s: float
    eager_floor_s: float
    source: str

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
            Catalogue model (parameters, layers, KV heads, ...).
        decode : (batch, context) or None
            Decoders in the step and the tokens already cached per decoder.
        prefills : sequence of (tokens, prior)
            One prefill chunk each: tokens processed now, tokens already cached.
        eager : bool
            Launched kernel by kernel (floor ``eager_floor_s``) instead of as a graph.

        Returns
        -------
        dict
            ``fixed_s``, ``weights_s``, ``matmul_s``, ``prefill_tokens_s``, ``decode_attention_s``,
            ``chunk_attention_s``, ``prior_attention_s``, ``launch_s`` (the
            eager floor's excess over the rest, 0 for a graph) and ``step_s``,
            their sum.
        """
        batch, context = decode if decode is not None else (0, 0)
        batch = _checks.integer("decode batch", batch, lo=0)
        context = _checks.integer("decode context", context, lo=0)
        chunks = [
            (_checks.integer("prefill tokens", n, lo=1), _checks.integer("prefill prior", p, lo=0))
            for n, p in prefills
        ]
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
        parts = {
            "fixed_s": model.layers * self.fixed_s_per_layer,
            "weights_s": model.weight_bytes / self.weight_bytes_per_s,
            "matmul_s": model.linear_flops_per_token * tokens / self.matmul_flops_per_s,
            "prefill_tokens_s": (tokens - batch) * self.prefill_s_per_token,
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


H200_LLAMA_8B = StepModel(
    fixed_s_per_layer=8.17589757080682e-05,
    weight_bytes_per_s=3739012666259.7134,
    matmul_flops_per_s=713292992924910.6,
    kv_bytes_per_s_per_cta=40646246073.638054,
    kv_ctas_to_saturate=103.14059669357329,
    prefill_s_per_token=5.738598153078564e-06,
    chunk_attention_flops_per_s=495462738670520.1,
    prior_attention_flops_per_s=283550123341541.44,
    eager_floor_s=0.026997855663299562,
    source="least-squares fit to 36 timed steps on NVIDIA H200",
)
"""Fit to the shipped H200 file (Llama 3.1 8B shapes); see the module docstring."""
