"""A decoder-only transformer's shape, and what the serving roofline derives from it.

:class:`Model` holds the parameter count, layers, widths, KV heads and vocabulary;
its properties give the bytes and FLOPs a step reads and computes (weights, KV cache
per token, attention per (query, key) pair).  The catalog of named models is
:data:`lanes.gpu.hardware.MODELS`; the step-time models of :mod:`lanes.gpu.calibration`
price a step from these shapes.
"""

from __future__ import annotations

from dataclasses import dataclass

from .. import _checks


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
