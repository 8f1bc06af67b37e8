#!/usr/bin/env python3
"""Time engine steps of a transformer on your own CUDA GPU; write a step-timing JSONL file.

The file has the format of ``lanes/gpu/data/h200-llama-3.1-8b-steps.jsonl``
(one JSON object per line: env, ceiling, link, decode, prefill and ablation
rows), so ``lanes.gpu.measured.load_records(path)`` reads it and
``measured.hardware_from_file(path)`` fits a step model for your GPU; set the
file variable at the top of chapter 11 to it to re-run the chapter.

Needs PyTorch with CUDA (not a dependency of ``lanes``)::

    python scripts/measure_steps.py --out my-gpu.jsonl            # Llama 3.1 8B shape
    python scripts/measure_steps.py --layers 16 --d 2048 --heads 16 --kv-heads 4 \\
        --ffn 8192 --vocab 32000 --out small.jsonl                # another shape
    python scripts/measure_steps.py --quick --out quick.jsonl     # a smaller grid
    python scripts/measure_steps.py --large-batches --out big.jsonl   # + decode batches to 4,096
    python scripts/measure_steps.py --only-large-batches --out check.jsonl  # those rows alone

A file written with ``--only-large-batches`` has no prefill rows, so the
loader refuses it as a fitting file; it is a held-out check instead: read its
lines with ``json`` and pass the list to
``lanes.gpu.measured.residuals(H200_LLAMA_8B, records)``.

The model is random BF16 weights in plain PyTorch: fused QKV and gate/up
matrices, RMSNorm, RoPE, grouped-query attention through
``scaled_dot_product_attention``, a static KV cache filled with random values,
greedy argmax.  Decode steps replay as CUDA graphs (one eager row per
``--eager-batches`` for comparison); prefill passes run eagerly.  Each time is
the median of timed repetitions after warm-up, measured with CUDA events.

Only :func:`main` and the ``_torch_*`` helpers import torch; the record
builders are plain Python and tested without it (``tests/gpu/test_measured.py``).
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
from collections.abc import Sequence

LLAMA_8B = {"layers": 32, "d": 4096, "heads": 32, "kv_heads": 8, "head_dim": 128,
            "ffn": 14336, "vocab": 128256}
DECODE_BATCHES = (1, 8, 16, 32, 64, 128, 256)
DECODE_CONTEXTS = (512, 2048, 4096, 8192, 32768)
LARGE_DECODE_BATCHES = (512, 1024, 2048, 4096)  # --large-batches: past the shipped grid
LARGE_DECODE_CONTEXTS = (128, 256, 512)
PREFILL_CHUNKS = (512, 1024, 2048, 4096, 8192, 16384, 32768)
PREFILL_WITH_PRIOR = ((2048, 512), (8192, 4096), (28672, 4096), (24576, 8192))  # (prior, chunk)


# ---------------------------------------------------------------------------
# Record builders (plain Python)


def param_count(shape: dict) -> int:
    """Parameters of the shape: embeddings, untied LM head, per-layer QKV/O/gate-up/down and norms."""
    d, L, hd = shape["d"], shape["layers"], shape["head_dim"]
    q, kv = shape["heads"] * hd, shape["kv_heads"] * hd
    per_layer = d * (q + 2 * kv) + q * d + d * 2 * shape["ffn"] + shape["ffn"] * d + 2 * d
    return 2 * shape["vocab"] * d + L * per_layer + d


def kv_bytes_per_token(shape: dict, bytes_per_value: int = 2) -> int:
    """KV-cache bytes per token: K and V, every layer, every KV head."""
    return 2 * shape["layers"] * shape["kv_heads"] * shape["head_dim"] * bytes_per_value


def timing(times_s: Sequence[float]) -> dict:
    """``median_s``, ``min_s``, ``max_s`` and ``reps`` of timed repetitions (seconds)."""
    if not times_s or any(not (t > 0) for t in times_s):
        raise ValueError(f"times_s must be a non-empty list of positive seconds (got {list(times_s)!r})")
    return {"median_s": statistics.median(times_s), "min_s": min(times_s),
            "max_s": max(times_s), "reps": len(times_s)}


def env_record(shape: dict, *, torch_version: str, gpu: str, sms: int, memory_bytes: int,
               dtype: str = "torch.bfloat16", smi: str = "") -> dict:
    """The ``env`` line: software, GPU, model shape, parameters, KV bytes per token."""
    return {"kind": "env", "torch": torch_version, "device": "cuda", "shape": dict(shape),
            "params": param_count(shape), "kv_bytes_per_token": kv_bytes_per_token(shape),
            "dtype": dtype, "gpu": gpu, "sms": sms, "memory_bytes": memory_bytes, "smi": smi}


def ceiling_record(what: str, times_s: Sequence[float], *, bytes: int | None = None,
                   flops: int | None = None) -> dict:
    """A ``ceiling`` line: a device copy (``bytes`` read plus written) or a matmul (``flops``)."""
    t = timing(times_s)
    rec = {"kind": "ceiling", "what": what}
    if bytes is not None:
        rec |= {"bytes": bytes, "bytes_per_s": bytes / t["median_s"]}
    else:
        rec |= {"flops": flops, "flops_per_s": flops / t["median_s"]}
    return rec | t


def link_record(what: str, pinned: bool, nbytes: int, times_s: Sequence[float]) -> dict:
    """A ``link`` line: ``what`` is "device to host" or "host to device"."""
    t = timing(times_s)
    return {"kind": "link", "what": what, "pinned": pinned, "bytes": nbytes,
            "bytes_per_s": nbytes / t["median_s"]} | t


def decode_record(batch: int, context: int, times_s: Sequence[float], shape: dict,
                  eager_times_s: Sequence[float] | None = None) -> dict:
    """A ``decode`` line: ``batch`` sequences with ``context`` cached tokens each, one token each."""
    t = timing(times_s)
    rec = {"kind": "decode", "batch": batch, "context": context,
           "kv_bytes": batch * context * kv_bytes_per_token(shape)} | t
    rec["tokens_per_s"] = batch / t["median_s"]
    if eager_times_s:
        rec["eager_median_s"] = statistics.median(eager_times_s)
    return rec


def prefill_record(chunk: int, prior: int, times_s: Sequence[float]) -> dict:
    """A ``prefill`` line: ``chunk`` tokens processed behind ``prior`` cached tokens."""
    t = timing(times_s)
    return {"kind": "prefill", "prior": prior, "chunk": chunk,
            "tokens_per_s": chunk / t["median_s"]} | t


def ablation_record(batch: int, context: int, attention: bool, lm_head: bool,
                    times_s: Sequence[float]) -> dict:
    """An ``ablation`` line: the decode step with attention and/or the LM head left out."""
    return {"kind": "ablation", "batch": batch, "context": context, "attention": attention,
            "lm_head": lm_head} | timing(times_s)


def gemv_record(nbytes: int, times_s: Sequence[float], layers: int) -> dict:
    """The ablation line of the gate/up matrix-vector products alone: the weight-streaming rate."""
    t = timing(times_s)
    return {"kind": "ablation", "what": f"{layers} gate/up GEMVs alone (batch 1)", "bytes": nbytes,
            "bytes_per_s": nbytes / t["median_s"]} | t


def fits_in_memory(batch: int, context: int, shape: dict, memory_bytes: float, headroom: float = 0.85) -> bool:
    """Whether weights plus a static KV cache of ``batch x context`` fit in ``headroom`` of memory."""
    need = 2 * param_count(shape) + batch * context * kv_bytes_per_token(shape)
    return need < headroom * memory_bytes


def decode_grid(shape: dict, memory_bytes: float, batches=DECODE_BATCHES, contexts=DECODE_CONTEXTS,
                max_kv_bytes: float = 70e9) -> list[tuple[int, int]]:
    """The (batch, context) decode shapes that fit in memory and under ``max_kv_bytes`` of KV."""
    return [(b, c) for c in contexts for b in batches
            if fits_in_memory(b, c, shape, memory_bytes) and b * c * kv_bytes_per_token(shape) <= max_kv_bytes]


def decode_plan(shape: dict, memory_bytes: float, *, quick: bool = False, large_batches: bool = False,
                only_large: bool = False) -> list[tuple[int, int]]:
    """Every (batch, context) decode row the script will time, in order.

    The standard grid (``DECODE_BATCHES`` x ``DECODE_CONTEXTS``, the last
    context dropped by ``quick``), then with ``large_batches`` the batches of
    ``LARGE_DECODE_BATCHES`` at the short contexts of ``LARGE_DECODE_CONTEXTS``
    (up to 4,096 sequences; shapes past memory or 70 GB of KV are left out,
    as in :func:`decode_grid`).  ``only_large`` keeps the large rows alone.
    """
    contexts = DECODE_CONTEXTS[:-1] if quick else DECODE_CONTEXTS
    plan = [] if only_large else decode_grid(shape, memory_bytes, contexts=contexts)
    if large_batches or only_large:
        plan += [bc for bc in decode_grid(shape, memory_bytes, batches=LARGE_DECODE_BATCHES,
                                          contexts=LARGE_DECODE_CONTEXTS) if bc not in plan]
    return plan


# ---------------------------------------------------------------------------
# The measurement (PyTorch)


def _torch_timer(torch, fn, warmup: int, reps: int) -> list[float]:
    for _ in range(warmup):
        fn()
    torch.cuda.synchronize()
    out = []
    for _ in range(reps):
        a, b = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        a.record()
        fn()
        b.record()
        b.synchronize()
        out.append(a.elapsed_time(b) / 1e3)
    return out


class _Model:
    """Random-weight decoder in plain PyTorch (see the module docstring)."""

    def __init__(self, torch, shape: dict, max_tokens: int):
        self.t, self.s = torch, shape
        dev, dt = "cuda", torch.bfloat16
        d, hd, H, K, F = shape["d"], shape["head_dim"], shape["heads"], shape["kv_heads"], shape["ffn"]

        def w(*size):
            return torch.randn(*size, device=dev, dtype=dt) * 0.02

        self.emb = w(shape["vocab"], d)
        self.head = w(shape["vocab"], d)
        self.layers = [dict(qkv=w((H + 2 * K) * hd, d), o=w(d, H * hd), gu=w(2 * F, d), down=w(d, F),
                            n1=torch.ones(d, device=dev, dtype=dt), n2=torch.ones(d, device=dev, dtype=dt))
                       for _ in range(shape["layers"])]
        self.norm = torch.ones(d, device=dev, dtype=dt)
        pos = torch.arange(max_tokens, device=dev, dtype=torch.float32)
        inv = 1.0 / (500000 ** (torch.arange(0, hd, 2, device=dev, dtype=torch.float32) / hd))
        ang = torch.outer(pos, inv)
        self.cos, self.sin = ang.cos().to(dt), ang.sin().to(dt)

    def rms(self, x, g):
        x32 = x.float()
        return (x32 * self.t.rsqrt(x32.pow(2).mean(-1, keepdim=True) + 1e-5)).to(x.dtype) * g

    def rope(self, x, pos):  # x (..., T, hd), pos (T,) or (B, 1)
        c, s = self.cos[pos], self.sin[pos]
        x1, x2 = x[..., ::2], x[..., 1::2]
        return self.t.stack((x1 * c - x2 * s, x1 * s + x2 * c), dim=-1).flatten(-2)

    def mlp(self, L, h):
        g, u = (h @ L["gu"].T).chunk(2, dim=-1)
        return (self.t.nn.functional.silu(g) * u) @ L["down"].T

    def decode(self, tokens, kcache, vcache, context, attention=True, lm_head=True):
        """One decode step: tokens (B,), caches (layers, B, K, ctx+1, hd); returns next tokens."""
        t, s = self.t, self.s
        B = tokens.shape[0]
        H, K, hd = s["heads"], s["kv_heads"], s["head_dim"]
        x = self.emb[tokens]
        pos = t.full((B, 1), context, device="cuda", dtype=t.long)
        for i, L in enumerate(self.layers):
            h = self.rms(x, L["n1"])
            q, k, v = (h @ L["qkv"].T).split([H * hd, K * hd, K * hd], dim=-1)
            if attention:
                q = self.rope(q.view(B, H, hd), pos).view(B, K, H // K, hd)
                k = self.rope(k.view(B, K, hd), pos)
                kcache[i, :, :, context] = k
                vcache[i, :, :, context] = v.view(B, K, hd)
                a = t.nn.functional.scaled_dot_product_attention(
                    q, kcache[i, :, :, : context + 1], vcache[i, :, :, : context + 1])
                a = a.reshape(B, H * hd)
            else:
                a = q
            x = x + a @ L["o"].T
            x = x + self.mlp(L, self.rms(x, L["n2"]))
        x = self.rms(x, self.norm)
        if not lm_head:
            return x[:, 0]
        return (x @ self.head.T).argmax(-1)

    def prefill(self, tokens, kprior, vprior):
        """One eager prefill pass of tokens (T,) behind cached K/V (layers, K, prior, hd)."""
        t, s = self.t, self.s
        T = tokens.shape[0]
        H, K, hd = s["heads"], s["kv_heads"], s["head_dim"]
        prior = 0 if kprior is None else kprior.shape[2]
        pos = t.arange(prior, prior + T, device="cuda")
        x = self.emb[tokens]
        for i, L in enumerate(self.layers):
            h = self.rms(x, L["n1"])
            q, k, v = (h @ L["qkv"].T).split([H * hd, K * hd, K * hd], dim=-1)
            q = self.rope(q.view(T, H, hd).transpose(0, 1), pos)
            k = self.rope(k.view(T, K, hd).transpose(0, 1), pos)
            v = v.view(T, K, hd).transpose(0, 1)
            if prior:
                k = t.cat((kprior[i], k), dim=1)
                v = t.cat((vprior[i], v), dim=1)
            k = k.repeat_interleave(H // K, dim=0)
            v = v.repeat_interleave(H // K, dim=0)
            if prior:
                from torch.nn.attention.bias import causal_lower_right
                mask = causal_lower_right(T, prior + T)
                a = t.nn.functional.scaled_dot_product_attention(q[None], k[None], v[None], attn_mask=mask)[0]
            else:
                a = t.nn.functional.scaled_dot_product_attention(q, k, v, is_causal=True)
            x = x + a.transpose(0, 1).reshape(T, H * hd) @ L["o"].T
            x = x + self.mlp(L, self.rms(x, L["n2"]))
        return (self.rms(x[-1:], self.norm) @ self.head.T).argmax(-1)


def _torch_decode_times(torch, model, shape, batch, context, reps, graph=True, **kw):
    L, K, hd = shape["layers"], shape["kv_heads"], shape["head_dim"]
    kc = torch.randn(L, batch, K, context + 1, hd, device="cuda", dtype=torch.bfloat16)
    vc = torch.randn_like(kc)
    tok = torch.randint(0, shape["vocab"], (batch,), device="cuda")
    with torch.no_grad():
        if not graph:
            return _torch_timer(torch, lambda: model.decode(tok, kc, vc, context, **kw), 3, reps)
        stream = torch.cuda.Stream()
        stream.wait_stream(torch.cuda.current_stream())
        with torch.cuda.stream(stream):
            for _ in range(2):
                model.decode(tok, kc, vc, context, **kw)
        torch.cuda.current_stream().wait_stream(stream)
        g = torch.cuda.CUDAGraph()
        with torch.cuda.graph(g):
            model.decode(tok, kc, vc, context, **kw)
        times = _torch_timer(torch, g.replay, 3, reps)
    del g, kc, vc
    torch.cuda.empty_cache()
    return times


def _torch_prefill_times(torch, model, shape, chunk, prior, reps):
    L, K, hd = shape["layers"], shape["kv_heads"], shape["head_dim"]
    kp = vp = None
    if prior:
        kp = torch.randn(L, K, prior, hd, device="cuda", dtype=torch.bfloat16)
        vp = torch.randn_like(kp)
    tok = torch.randint(0, shape["vocab"], (chunk,), device="cuda")
    with torch.no_grad():
        times = _torch_timer(torch, lambda: model.prefill(tok, kp, vp), 3, reps)
    del kp, vp
    torch.cuda.empty_cache()
    return times


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--out", required=True, help="JSONL file to write")
    for key, default in LLAMA_8B.items():
        p.add_argument(f"--{key.replace('_', '-')}", type=int, default=default, dest=key,
                       help=f"model shape: {key} (default {default}, Llama 3.1 8B)")
    p.add_argument("--decode-reps", type=int, default=25)
    p.add_argument("--prefill-reps", type=int, default=5)
    p.add_argument("--quick", action="store_true", help="a smaller grid (contexts up to 8,192, chunks up to 8,192)")
    p.add_argument("--eager-batches", type=int, nargs="*", default=[1, 64],
                   help="decode batches (at 2,048 context) also timed without a CUDA graph")
    p.add_argument("--large-batches", action="store_true",
                   help="also time decode batches of 512 to 4,096 at 128 to 512 tokens of context "
                        "(past the shipped grid; about a minute more on an H200)")
    p.add_argument("--only-large-batches", action="store_true",
                   help="time the ceilings and the large decode batches only (no links, prefill or ablation): "
                        "a short check of the step model past its fitted range")
    args = p.parse_args(argv)
    shape = {k: getattr(args, k) for k in LLAMA_8B}

    import torch  # not a dependency of lanes: only this script needs it

    if not torch.cuda.is_available():
        print("measure_steps: error: a CUDA GPU is needed", file=sys.stderr)
        return 2
    props = torch.cuda.get_device_properties(0)
    contexts = DECODE_CONTEXTS[:-1] if args.quick else DECODE_CONTEXTS
    chunks = [c for c in PREFILL_CHUNKS if not args.quick or c <= 8192]
    only_large = args.only_large_batches
    plan = decode_plan(shape, props.total_memory, quick=args.quick, large_batches=args.large_batches,
                       only_large=only_large)
    records = [env_record(shape, torch_version=torch.__version__, gpu=props.name,
                          sms=props.multi_processor_count, memory_bytes=props.total_memory)]
    torch.manual_seed(0)

    def emit(rec):
        records.append(rec)
        print(json.dumps(rec), flush=True)

    # ceilings and links
    n = 512 * 2**20
    a = torch.empty(n, dtype=torch.uint8, device="cuda")
    b = torch.empty_like(a)
    emit(ceiling_record("device copy", _torch_timer(torch, lambda: b.copy_(a), 3, 20), bytes=2 * n))
    del a, b
    m = torch.randn(8192, 8192, device="cuda", dtype=torch.bfloat16)
    emit(ceiling_record("bf16 matmul 8192^3", _torch_timer(torch, lambda: m @ m, 3, 20), flops=2 * 8192**3))
    del m
    g = 2**30
    dev = torch.empty(g, dtype=torch.uint8, device="cuda")
    for pinned in () if only_large else (True, False):
        host = torch.empty(g, dtype=torch.uint8, pin_memory=pinned)
        emit(link_record("device to host", pinned, g, _torch_timer(torch, lambda: host.copy_(dev), 1, 5)))
        emit(link_record("host to device", pinned, g, _torch_timer(torch, lambda: dev.copy_(host), 1, 5)))
        del host
    del dev
    torch.cuda.empty_cache()

    max_tokens = max(max(contexts) + 2, max(chunks) + max(p for p, _ in PREFILL_WITH_PRIOR) + 2)
    model = _Model(torch, shape, max_tokens)
    for bsz, ctx in plan:
        times = _torch_decode_times(torch, model, shape, bsz, ctx, args.decode_reps)
        eager = None
        if ctx == 2048 and bsz in args.eager_batches:
            eager = _torch_decode_times(torch, model, shape, bsz, ctx, args.decode_reps, graph=False)
        emit(decode_record(bsz, ctx, times, shape, eager))
    if only_large:
        chunks = []
    for c in chunks:
        emit(prefill_record(c, 0, _torch_prefill_times(torch, model, shape, c, 0, args.prefill_reps)))
    for prior, c in () if only_large else PREFILL_WITH_PRIOR:
        if not args.quick or prior + c <= 16384:
            emit(prefill_record(c, prior, _torch_prefill_times(torch, model, shape, c, prior, args.prefill_reps)))
    for bsz in () if only_large else (1, 64):
        for attention in (True, False):
            for lm_head in (True, False):
                times = _torch_decode_times(torch, model, shape, bsz, 2048, args.decode_reps,
                                            attention=attention, lm_head=lm_head)
                emit(ablation_record(bsz, 2048, attention, lm_head, times))
    x = torch.randn(1, shape["d"], device="cuda", dtype=torch.bfloat16)
    gus = [L["gu"] for L in model.layers]
    nbytes = sum(w.numel() * w.element_size() for w in gus)
    if not only_large:
        emit(gemv_record(nbytes, _torch_timer(torch, lambda: [x @ w.T for w in gus], 3, args.decode_reps),
                         shape["layers"]))

    with open(args.out, "w", encoding="utf-8") as f:
        for rec in records:
            f.write(json.dumps(rec) + "\n")
    print(f"wrote {len(records)} lines to {args.out}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
