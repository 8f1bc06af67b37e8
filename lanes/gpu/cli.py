"""Engine-level subcommands: ``chains``, ``prefill`` (step simulator) and ``steptime`` (one step).

``python -m lanes chains [--json]`` prints every chain with the card's inputs.
``python -m lanes prefill --budget 8192 --order fcfs --prompts 32768 500 500 [--json]``
runs :func:`lanes.gpu.steps.simulate` for prompts that all arrive at t = 0, in the
order given.
``python -m lanes steptime --hardware h200-measured --model llama-3.1-8b --decode 64 2048
--prefill 512 0 [--json]`` prices one engine step holding a decode group and any
number of prefill chunks.  Only the standard library is imported here.
"""

from __future__ import annotations

import argparse
import json
import sys

_TITLES = {
    "littles_law": "Little's law for an LLM server",
    "kv_in_flight": "KV in flight and the naive ceiling",
    "goodput": "Goodput at a TPOT target",
    "swap_vs_recompute": "Swap or recompute a preempted request",
    "hol_blocking": "Head-of-line blocking under FCFS",
    "p99_knee": "The p99 TTFT knee",
    "long_prompt": "A 100K-token prompt under the budget",
    "tenant_cost": "Tenant cost in weighted tokens",
}


def add_subcommands(subparsers) -> None:
    """Register ``chains`` and ``prefill`` on the top-level parser's subparsers."""
    chains = subparsers.add_parser(
        "chains",
        help="the eight batching and scheduling chains, with the card's inputs",
        description="Recompute every figure of the batching and scheduling card.",
    )
    chains.add_argument("--json", action="store_true", help="one JSON object of unrounded numbers")
    chains.set_defaults(func=_chains)

    prefill = subparsers.add_parser(
        "prefill",
        help="step-level prefill/decode simulation of prompts arriving together",
        description=(
            "Run the step simulator for prompts that all arrive at t = 0, in the order given; "
            "print TTFT per prompt and every engine step."
        ),
    )
    prefill.add_argument("--prompts", nargs="+", type=int, required=True, metavar="TOKENS",
                         help="prompt lengths in tokens, in arrival order")
    prefill.add_argument("--budget", type=int, default=8192, help="token budget per step (default 8192)")
    prefill.add_argument("--order", default="fcfs", help="fcfs or by-length (default fcfs)")
    prefill.add_argument("--output-tokens", type=int, default=1,
                         help="output tokens per prompt, the first included (default 1)")
    prefill.add_argument("--decoders", type=int, default=0, help="background decoders running from t = 0")
    prefill.add_argument("--decoder-context", type=int, default=0,
                         help="tokens of context per background decoder")
    prefill.add_argument("--model", default="llama-3.1-8b", help="model name (default llama-3.1-8b)")
    prefill.add_argument("--hardware", default="h100-sxm", help="hardware name (default h100-sxm)")
    prefill.add_argument("--mfu", type=float, default=0.5, help="model FLOPs utilisation in (0, 1] (default 0.5)")
    prefill.add_argument("--json", action="store_true", help="one JSON object of unrounded numbers")
    prefill.set_defaults(func=_prefill)

    steptime = subparsers.add_parser(
        "steptime",
        help="time of one engine step: a decode group plus prefill chunks",
        description=(
            "Price one engine step holding a decode group (BATCH sequences with CONTEXT tokens "
            "cached each) and any number of prefill chunks (TOKENS processed behind PRIOR cached "
            "tokens, one --prefill per chunk). A calibrated profile such as h200-measured uses "
            "the step model fitted to measured steps; a datasheet profile uses the roofline."
        ),
    )
    steptime.add_argument("--hardware", default="h200-measured", help="hardware name (default h200-measured)")
    steptime.add_argument("--model", default="llama-3.1-8b", help="model name (default llama-3.1-8b)")
    steptime.add_argument("--decode", nargs=2, type=int, metavar=("BATCH", "CONTEXT"),
                          help="decoders in the step and tokens cached per decoder")
    steptime.add_argument("--prefill", nargs=2, type=int, action="append", default=[],
                          metavar=("TOKENS", "PRIOR"),
                          help="one prefill chunk: tokens processed, tokens already cached (repeatable)")
    steptime.add_argument("--eager", action="store_true",
                          help="launched kernel by kernel, not as a CUDA graph (calibrated profiles only)")
    steptime.add_argument("--mfu", type=float, default=0.5,
                          help="model FLOPs utilisation for datasheet profiles (default 0.5)")
    steptime.add_argument("--json", action="store_true", help="one JSON object of unrounded numbers")
    steptime.set_defaults(func=_steptime)


# ---------------------------------------------------------------------------
# Formatting


def _fmt_seconds(v: float) -> str:
    if v == 0:
        return "0 s"
    if abs(v) < 1e-3:
        return f"{v * 1e6:.3g} us"
    if abs(v) < 1:
        return f"{v * 1e3:.3g} ms"
    return f"{v:.4g} s"


def _fmt_number(v: float) -> str:
    if isinstance(v, int):
        return f"{v:,}"
    if abs(v) >= 1000:
        return f"{v:,.0f}"
    return f"{v:.4g}"


def format_quantity(field: str, value: float) -> str:
    """Show a result field with the unit its name carries (``_s``, ``_bytes``, ``_per_s``...)."""
    per = ""
    name = field
    if name.endswith("_per_token"):
        per, name = "/token", name[: -len("_per_token")]
    if "share" in name:
        return f"{value:.1%}"
    if name.endswith("bytes_per_s"):
        return f"{value / 1e9:.3g} GB/s{per}"
    if name.endswith("bytes") or name.startswith("kv_bytes"):
        return f"{value / 1e9:.3g} GB{per}" if value >= 1e6 else f"{_fmt_number(value)} B{per}"
    if "tokens_per_s" in name:
        return f"{_fmt_number(value)} tok/s{per}"
    if name.endswith("_rps") or name.endswith("rate_per_s"):
        return f"{value:.3g} req/s{per}"
    if name.endswith("_s"):
        return _fmt_seconds(value) + per
    if name in ("throughput_gain", "rho_max"):
        return f"{value:.3g} ({value:.1%})"
    return _fmt_number(value) + per


def _chains(args: argparse.Namespace) -> int:
    from .chains import all_chains

    results = all_chains()
    if args.json:
        print(json.dumps({name: r.to_dict() for name, r in results.items()}))
        return 0
    blocks = []
    for name, result in results.items():
        d = result.to_dict()
        width = max(len(k) for k in d)
        lines = [f"{_TITLES[name]}  [{name}]"]
        lines += [f"  {k:<{width}}  {format_quantity(k, v)}" for k, v in d.items()]
        blocks.append("\n".join(lines))
    print("\n\n".join(blocks))
    return 0


def _prefill(args: argparse.Namespace) -> int:
    from .steps import Request, simulate

    requests = [Request(p, output_tokens=args.output_tokens) for p in args.prompts]
    result = simulate(
        requests,
        budget_tokens=args.budget,
        order=args.order,
        model=args.model,
        hardware=args.hardware,
        mfu=args.mfu,
        decoders=args.decoders,
        decoder_context_tokens=args.decoder_context,
    )
    if args.json:
        print(json.dumps(result.to_dict()))
        return 0
    print(f"{len(requests)} prompts, budget {args.budget:,} tokens/step, order {args.order}, "
          f"{args.model} on {args.hardware} at MFU {args.mfu:g}")
    print()
    print(f"{'#':>3}  {'prompt':>8}  {'TTFT':>10}")
    for i, (r, t) in enumerate(zip(requests, result.ttft_s)):
        print(f"{i:>3}  {r.prompt_tokens:>8,}  {_fmt_seconds(t):>10}")
    print(f"mean TTFT {_fmt_seconds(result.mean_ttft_s)}, last finish {_fmt_seconds(result.makespan_s)}")
    print()
    print(f"{'step':>4}  {'start':>10}  {'duration':>10}  {'prefill':>8}  {'decode':>6}  {'bound':>7}")
    for s in result.steps:
        bound = "memory" if s.memory_s > s.linear_s + s.attention_s else "compute"
        print(f"{s.index:>4}  {_fmt_seconds(s.start_s):>10}  {_fmt_seconds(s.duration_s):>10}  "
              f"{s.prefill_tokens:>8,}  {s.decode_tokens:>6,}  {bound:>7}")
    return 0


def steptime(
    *,
    hardware: str = "h200-measured",
    model: str = "llama-3.1-8b",
    decode: tuple[int, int] | None = None,
    prefills: list[tuple[int, int]] | tuple = (),
    eager: bool = False,
    mfu: float = 0.5,
) -> dict:
    """The ``steptime`` result as a dict: ``step_s`` and a ``breakdown`` of seconds.

    On a calibrated profile the breakdown holds the parts of
    :meth:`lanes.gpu.calibration.StepModel.breakdown` (they add up to
    ``step_s``) and ``outside_measured_range`` lists why the step lies
    outside the shapes the model was fitted on (empty inside them, and on a
    datasheet profile); on a datasheet profile the breakdown holds the
    roofline's ``memory_s``, ``linear_s`` and ``attention_s`` (the step is
    the larger of memory and their sum).  Raises ``ValueError`` naming the
    parameter on bad input.
    """
    from .. import _checks
    from .hardware import get_hardware, get_model
    from .steps import step_cost

    h, m = get_hardware(hardware), get_model(model)
    if decode is not None:
        batch = _checks.integer("--decode BATCH", decode[0], lo=1)
        context = _checks.integer("--decode CONTEXT", decode[1], lo=0)
    else:
        batch, context = 0, 0
    chunks = [
        (_checks.integer("--prefill TOKENS", n, lo=1), _checks.integer("--prefill PRIOR", p, lo=0))
        for n, p in prefills
    ]
    if not batch and not chunks:
        raise ValueError("--decode or --prefill must give the step some work (got neither)")
    mfu = _checks.number("--mfu", mfu, lo=0, hi=1, lo_open=True)
    outside: tuple[str, ...] = ()
    if h.calibration is not None:
        parts = h.calibration.breakdown(m, decode=(batch, context), prefills=chunks, eager=eager)
        step = parts.pop("step_s")
        outside = h.calibration.outside_measured_range(m, decode=(batch, context) if batch else None,
                                                       prefills=chunks)
    else:
        if eager:
            raise ValueError(f"--eager needs a calibrated hardware profile such as h200-measured (got {hardware!r})")
        from .steps import MAX_STEP_SEQUENCES

        _checks.limit("--decode BATCH", batch + len(chunks), MAX_STEP_SEQUENCES,
                      why=f"sequences one step prices on a datasheet profile such as {hardware}")
        cost = step_cost([(context, 1)] * batch + [(p, n) for n, p in chunks], model=m, hardware=h, mfu=mfu)
        parts = {"memory_s": cost.memory_s, "linear_s": cost.linear_s, "attention_s": cost.attention_s}
        step = cost.duration_s
    return {
        "step_s": step,
        "breakdown": parts,
        "hardware": hardware,
        "model": model,
        "decode": [batch, context] if batch else None,
        "prefill": [list(c) for c in chunks],
        "eager": eager,
        "tokens": batch + sum(n for n, _ in chunks),
        "outside_measured_range": list(outside),
    }


def _steptime(args: argparse.Namespace) -> int:
    out = steptime(hardware=args.hardware, model=args.model, decode=args.decode,
                   prefills=args.prefill, eager=args.eager, mfu=args.mfu)
    if out["outside_measured_range"]:
        print("steptime: warning: outside the measured range, the model extrapolates: "
              + "; ".join(out["outside_measured_range"]), file=sys.stderr)
    if args.json:
        print(json.dumps(out))
        return 0
    work = []
    if out["decode"]:
        work.append(f"decode {out['decode'][0]:,} x {out['decode'][1]:,}")
    work += [f"prefill {n:,} (prior {p:,})" for n, p in out["prefill"]]
    parts = ", ".join(f"{k[:-2].replace('_', ' ')} {_fmt_seconds(v)}" for k, v in out["breakdown"].items() if v)
    mode = " eager" if args.eager else ""
    print(f"{args.model} on {args.hardware}{mode}: {' + '.join(work)}: step {_fmt_seconds(out['step_s'])} ({parts})")
    return 0
