"""Catalog of accelerators and models, as plain data with a source for every constant.

The engine-level chains and the step simulator read peak compute, memory
bandwidth, parameter counts and KV-cache sizes from here, so a notebook can swap
``"h100-sxm"`` for ``"h200"`` or the 8B model for the 70B one and see every
figure move.  Units are in the field names: bytes, bytes per second, FLOP/s.

Look entries up with :func:`get_hardware` and :func:`get_model`; an unknown name
raises ``ValueError`` listing the names that exist.
"""

from __future__ import annotations

from dataclasses import dataclass

from .. import _checks
from .calibration import H200_LLAMA_8B, StepModel

GB = 1e9
"""Bytes in a (decimal) gigabyte, the unit of datasheets."""

KIB = 1024
"""Bytes in a kibibyte: KV sizes per token are powers of two."""


@dataclass(frozen=True)
class Hardware:
    """One accelerator, described by the two rooflines that matter for inference.

    Parameters
    ----------
    name : str
        Catalog key, e.g. ``"h100-sxm"``.
    hbm_bytes_per_s : float
        Peak HBM bandwidth in bytes per second.
    bf16_flops_per_s : float
        Peak dense (no sparsity) BF16 tensor-core throughput in FLOP/s.
    memory_bytes : float
        HBM capacity in bytes.
    source : str
        Where the numbers come from.
    calibration : StepModel or None
        A step-time model fitted to measured steps.  When set, step costs
        (:func:`lanes.gpu.steps.step_cost` and every chain built on it) come
        from it instead of the roofline, and MFU is ignored: the fitted rates
        are already achieved rates.  The roofline fields then hold measured
        ceilings.
    """

    name: str
    hbm_bytes_per_s: float
    bf16_flops_per_s: float
    memory_bytes: float
    source: str
    calibration: StepModel | None = None

    def __post_init__(self) -> None:
        _checks.text("name", self.name)
        _checks.text("source", self.source, empty=True)
        if self.calibration is not None:
            from .calibration import StepModel

            _checks.instance("calibration", self.calibration, StepModel, none_ok=True)
        _checks.number("hbm_bytes_per_s", self.hbm_bytes_per_s, lo=0, lo_open=True)
        _checks.number("bf16_flops_per_s", self.bf16_flops_per_s, lo=0, lo_open=True)
        _checks.number("memory_bytes", self.memory_bytes, lo=0, lo_open=True)

    def achieved_flops_per_s(self, mfu: float) -> float:
        """Compute throughput actually reached at model FLOPs utilisation ``mfu`` (FLOP/s).

        ``mfu`` must be in (0, 1]; 0.5 on an H100 SXM gives 494.5 TFLOP/s.
        """
        mfu = _checks.number("mfu", mfu, lo=0, hi=1, lo_open=True)
        return self.bf16_flops_per_s * mfu


@dataclass(frozen=True)
class Model:
    """A decoder-only transformer, as far as the serving roofline needs it.

    Parameters
    ----------
    name : str
        Catalog key, e.g. ``"llama-3.1-8b"``.
    params : float
        Parameter count (weights read once per step; 2 FLOPs per parameter per token).
    layers : int
        Transformer blocks.
    d_model : int
        Hidden size; equals query heads x head dimension, so attention costs
        ``4 x layers x d_model`` FLOPs per (query, key) pair.
    kv_heads : int
        Key/value heads (grouped-query attention).
    head_dim : int
        Dimension of one head.
    bytes_per_param : int
        2 for BF16 weights and KV cache.
    source : str
        Where the numbers come from.
    vocab : int
        Vocabulary size (0 if unknown).  With it the calibrated step model
        splits the parameters into the token embedding (a lookup, no FLOPs),
        the LM head (logits, ``vocab x d_model`` weights, untied from the
        embedding as in Llama 3.1 and 3.3) and the transformer body.
    """

    name: str
    params: float
    layers: int
    d_model: int
    kv_heads: int
    head_dim: int
    bytes_per_param: int
    source: str
    vocab: int = 0

    def __post_init__(self) -> None:
        _checks.text("name", self.name)
        _checks.text("source", self.source, empty=True)
        _checks.number("params", self.params, lo=0, lo_open=True)
        _checks.integer("layers", self.layers, lo=1)
        _checks.integer("d_model", self.d_model, lo=1)
        _checks.integer("kv_heads", self.kv_heads, lo=1)
        _checks.integer("head_dim", self.head_dim, lo=1)
        _checks.integer("bytes_per_param", self.bytes_per_param, lo=1)
        _checks.integer("vocab", self.vocab, lo=0)
        if 2 * self.vocab * self.d_model >= self.params:
            raise ValueError(
                f"vocab must leave parameters for the layers: 2 x vocab x d_model < params "
                f"(got vocab={self.vocab}, d_model={self.d_model}, params={self.params!r})")

    @property
    def weight_bytes(self) -> float:
        """Bytes of weights read at every engine step (16.06e9 for Llama 3.1 8B in BF16)."""
        return self.params * self.bytes_per_param

    @property
    def kv_bytes_per_token(self) -> int:
        """KV-cache bytes per token: K and V, every layer, every KV head.

        ``2 x layers x kv_heads x head_dim x bytes``: 131,072 B (128 KiB) for
        Llama 3.1 8B, 327,680 B (320 KiB) for Llama 3.3 70B.
        """
        return 2 * self.layers * self.kv_heads * self.head_dim * self.bytes_per_param

    @property
    def linear_flops_per_token(self) -> float:
        """FLOPs of the weight matmuls per token processed: 2 x parameters."""
        return 2.0 * self.params

    @property
    def head_flops_per_token(self) -> float:
        """FLOPs of the LM head for one row of logits: 2 x vocab x d_model (0 if ``vocab`` is 0)."""
        return 2.0 * self.vocab * self.d_model

    @property
    def body_flops_per_token(self) -> float:
        """FLOPs of the transformer layers' weight matmuls per token (no embedding, no LM head).

        ``2 x (params - 2 x vocab x d_model)``: 13.96e9 for Llama 3.1 8B.  With
        ``vocab`` 0 it is ``linear_flops_per_token``.
        """
        return 2.0 * (self.params - 2 * self.vocab * self.d_model)

    @property
    def attention_flops_per_pair(self) -> float:
        """FLOPs per (query token, attended key) pair: 4 x layers x d_model (QK^T and AV)."""
        return 4.0 * self.layers * self.d_model


_NVIDIA = "NVIDIA {} datasheet, dense BF16 (without sparsity)"

HARDWARE: dict[str, Hardware] = {
    h.name: h
    for h in (
        Hardware(
            name="h100-sxm",
            hbm_bytes_per_s=3.35e12,  # 3.35 TB/s HBM3
            bf16_flops_per_s=989e12,  # 989 TFLOP/s dense BF16 (1,979 with sparsity)
            memory_bytes=80 * GB,
            source=_NVIDIA.format("H100 Tensor Core GPU (SXM5)"),
        ),
        Hardware(
            name="h200",
            hbm_bytes_per_s=4.8e12,  # 4.8 TB/s HBM3e
            bf16_flops_per_s=989e12,  # same Hopper tensor cores as the H100 SXM
            memory_bytes=141 * GB,
            source=_NVIDIA.format("H200 Tensor Core GPU (SXM)"),
        ),
        Hardware(
            name="h200-measured",
            hbm_bytes_per_s=3.772e12,  # measured 512 MiB device copy, read + write
            bf16_flops_per_s=735.3e12,  # measured 8192^3 BF16 matmul
            memory_bytes=141 * GB,
            source=(
                "one NVIDIA H200 SXM, 2026-11-30: ceilings measured, step costs from "
                "lanes.gpu.calibration.H200_LLAMA_8B (fit to lanes/gpu/data/"
                "h200-llama-3.1-8b-steps.jsonl)"
            ),
            calibration=H200_LLAMA_8B,
        ),
        Hardware(
            name="a100-80gb",
            hbm_bytes_per_s=2.039e12,  # 2,039 GB/s HBM2e (SXM)
            bf16_flops_per_s=312e12,  # 312 TFLOP/s dense BF16 (624 with sparsity)
            memory_bytes=80 * GB,
            source=_NVIDIA.format("A100 Tensor Core GPU (80GB SXM)"),
        ),
    )
}
"""Accelerators by catalog name."""

MODELS: dict[str, Model] = {
    m.name: m
    for m in (
        Model(
            name="llama-3.1-8b",
            params=8.03e9,  # 8.03B parameters -> 16.06 GB of BF16 weights
            layers=32,
            d_model=4096,
            kv_heads=8,  # grouped-query attention: 32 query heads share 8 KV heads
            head_dim=128,  # -> 2 x 32 x 8 x 128 x 2 B = 128 KiB of KV per token
            bytes_per_param=2,  # BF16
            source="Meta Llama 3.1 model card and config.json (meta-llama/Llama-3.1-8B)",
            vocab=128256,  # untied embedding and LM head: 2 x 525M of the 8.03B parameters
        ),
        Model(
            name="llama-3.3-70b",
            params=70.6e9,  # 70.6B parameters -> 141.2 GB of BF16 weights
            layers=80,
            d_model=8192,
            kv_heads=8,
            head_dim=128,  # -> 2 x 80 x 8 x 128 x 2 B = 320 KiB of KV per token
            bytes_per_param=2,  # BF16
            source="Meta Llama 3.3 model card and config.json (meta-llama/Llama-3.3-70B-Instruct)",
            vocab=128256,
        ),
    )
}
"""Models by catalog name."""


def get_hardware(name: str) -> Hardware:
    """Return the accelerator called ``name`` (one of :data:`HARDWARE`)."""
    return HARDWARE[_checks.choice("hardware", name, tuple(HARDWARE))]


def get_model(name: str) -> Model:
    """Return the model called ``name`` (one of :data:`MODELS`)."""
    return MODELS[_checks.choice("model", name, tuple(MODELS))]
