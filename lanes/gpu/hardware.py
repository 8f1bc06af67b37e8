"""Catalog of accelerators and models, as plain data with a source for every constant.

:class:`Hardware` is one accelerator; a model's shape is :class:`lanes.gpu.transformer.Model`.

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
from .transformer import Model

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
