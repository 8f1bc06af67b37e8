"""ipywidgets explorers for the engine chapters: one per chain, two for where the model breaks.

Every explorer is assembled by :func:`lanes.display.pool.widgets.explorer_box`: controls
above a figure and a small table, re-rendered when a control is released.
Tests (and readers without a live kernel) can set
``explorer.controls[name].value`` and read ``explorer.table.value``.
ipywidgets, matplotlib and pandas are imported inside the functions.
"""

from __future__ import annotations

from typing import Any

from lanes.gpu import chains
from lanes.gpu.batcher import simulate_batches
from ..pool.widgets import dropdown, figure_axes, slider, explorer_box

__all__ = [
    "microbatch_explorer",
    "goodput_explorer",
    "hol_explorer",
    "kv_headroom_explorer",
    "knee_explorer",
    "littles_chain_explorer",
    "long_prompt_explorer",
    "preemption_cost_explorer",
    "swap_explorer",
    "tenant_explorer",
]


def _float_slider(description: str, value: float, lo: float, hi: float, step: float) -> Any:
    import ipywidgets as w

    return w.FloatSlider(
        value=value, min=lo, max=hi, step=step, description=description, continuous_update=False, style={"description_width": "initial"}
    )


def littles_chain_explorer() -> Any:
    """Chains 1 and 2: rate, TTFT, output length and TPOT to requests in flight, KV and the naive ceiling."""
    from .plots import plot_kv_ceiling

    controls = {
        "rate": _float_slider("requests/s", 10.0, 1.0, 40.0, 1.0),
        "ttft_ms": slider("TTFT (ms)", 500, 100, 2000, 100),
        "output_tokens": slider("output tokens", 300, 50, 1000, 50),
        "tpot_ms": slider("TPOT (ms)", 25, 5, 60, 1),
    }

    def render(rate: float, ttft_ms: int, output_tokens: int, tpot_ms: int) -> tuple[Any, dict[str, Any]]:
        ll = chains.littles_law(arrival_rate_per_s=rate, ttft_s=ttft_ms / 1e3, output_tokens=output_tokens, tpot_s=tpot_ms / 1e3)
        kv = chains.kv_in_flight(in_system=ll.in_system, w_s=ll.w_s)
        fig, (ax,) = figure_axes(1, (6, 3.2))
        plot_kv_ceiling([i * 0.5 for i in range(1, 101)], ax, ttft_s=ttft_ms / 1e3, output_tokens=output_tokens, tpot_s=tpot_ms / 1e3)
        ax.plot([rate], [kv.kv_bytes / 1e9], "o", color="black")
        rows = {
            "W (s)": f"{ll.w_s:.3f}",
            "L, requests in system": f"{ll.in_system:.2f}",
            "sequences decoding": f"{ll.decoding:.2f}",
            "tokens/s": f"{ll.tokens_per_s:,.0f}",
            "KV in flight (GB)": f"{kv.kv_bytes / 1e9:.1f}",
            "naive ceiling (req/s)": f"{kv.ceiling_rps:.1f}",
        }
        return fig, rows

    return explorer_box(controls, render, "Little's law and KV in flight: change the request shape")


def goodput_explorer() -> Any:
    """Chain 3: context length, TPOT target and accelerator to the goodput cliff."""
    from lanes.gpu.hardware import HARDWARE
    from .plots import plot_goodput_cliff

    controls = {
        "context_tokens": slider("context (tokens)", 2048, 512, 16384, 512),
        "target_ms": slider("TPOT target (ms)", 10, 6, 40, 1),
        "hardware": dropdown("GPU", list(HARDWARE), "h100-sxm"),
    }

    def render(context_tokens: int, target_ms: int, hardware: str) -> tuple[Any, dict[str, Any]]:
        g = chains.goodput(context_tokens=context_tokens, tpot_target_s=target_ms / 1e3, hardware=hardware)
        fig, (ax,) = figure_axes(1, (6, 3.2))
        plot_goodput_cliff(range(1, 257), ax, context_tokens=context_tokens, tpot_target_s=target_ms / 1e3, hardware=hardware)
        rows = {
            "TPOT at 64 (ms)": f"{g.tpot_small_s * 1e3:.1f}",
            "tok/s at 64": f"{g.tokens_per_s_small:,.0f}",
            "TPOT at 128 (ms)": f"{g.tpot_large_s * 1e3:.1f}",
            "tok/s at 128": f"{g.tokens_per_s_large:,.0f}",
            "goodput at 128 (tok/s)": f"{g.goodput_large_tokens_per_s:,.0f}",
            "largest batch meeting target": g.max_batch_at_target,
        }
        return fig, rows

    return explorer_box(controls, render, "Goodput at a TPOT target: change the context, the target, the GPU")


def swap_explorer() -> Any:
    """Chain 4: context, link bandwidth and MFU to swap against recompute."""
    from .plots import plot_swap_break_even

    controls = {
        "context_tokens": slider("context (tokens)", 4096, 512, 32768, 512),
        "link_gbps": _float_slider("copy bandwidth (GB/s)", 50.0, 1.0, 100.0, 0.5),
        "mfu": _float_slider("MFU", 0.5, 0.1, 1.0, 0.05),
    }

    def render(context_tokens: int, link_gbps: float, mfu: float) -> tuple[Any, dict[str, Any]]:
        r = chains.swap_vs_recompute(context_tokens=context_tokens, link_bytes_per_s=link_gbps * 1e9, mfu=mfu)
        fig, (ax,) = figure_axes(1, (6, 3.2))
        plot_swap_break_even([b * 1e9 for b in (0.5, 1, 2, 3, 5, 8, 12, 20, 35, 50, 75, 100, 150)], ax, context_tokens=context_tokens, mfu=mfu)
        ax.plot([link_gbps], [r.swap_s_per_token * 1e6], "o", color="black")
        rows = {
            "swap (us/token)": f"{r.swap_s_per_token * 1e6:.1f}",
            "recompute (us/token)": f"{r.recompute_s_per_token * 1e6:.1f}",
            "break-even (GB/s)": f"{r.break_even_bytes_per_s / 1e9:.1f}",
            "cheaper": "swap" if r.swap_s_per_token < r.recompute_s_per_token else "recompute",
        }
        return fig, rows

    return explorer_box(controls, render, "Swap or recompute: change the context, the copy bandwidth, the MFU")


def hol_explorer() -> Any:
    """Chain 5: a long prompt ahead of short ones, FCFS against by-length, on the step simulator."""
    from .plots import plot_step_timeline
    from lanes.gpu.steps import Request, simulate

    controls = {
        "long_prompt_tokens": slider("long prompt (tokens)", 32768, 4096, 65536, 4096),
        "short_prompts": slider("short prompts", 10, 1, 30, 1),
        "budget_tokens": slider("token budget", 8192, 1024, 16384, 1024),
    }

    def render(long_prompt_tokens: int, short_prompts: int, budget_tokens: int) -> tuple[Any, dict[str, Any]]:
        h = chains.hol_blocking(long_prompt_tokens=long_prompt_tokens, short_prompts=short_prompts, budget_tokens=budget_tokens)
        reqs = [Request(long_prompt_tokens)] + [Request(500)] * short_prompts
        runs = {o: simulate(reqs, order=o, budget_tokens=budget_tokens) for o in ("fcfs", "by-length")}
        fig, (ax,) = figure_axes(1, (7, 2.6))
        plot_step_timeline(runs, ax)
        rows = {
            "full steps ahead of the short prompts": h.steps_ahead,
            "short TTFT, FCFS (s)": f"{h.short_ttft_fcfs_s:.2f}",
            "short TTFT, by length (s)": f"{h.short_ttft_by_length_s:.2f}",
            "long prompt's extra wait (s)": f"{h.long_delay_s:.2f}",
            "mean TTFT, FCFS -> by length (s)": f"{h.mean_ttft_fcfs_s:.2f} -> {h.mean_ttft_by_length_s:.2f}",
        }
        return fig, rows

    return explorer_box(controls, render, "Head-of-line blocking: change the long prompt, the short ones, the budget")


def knee_explorer() -> Any:
    """Chain 6: mean prefill time, target and percentile to the utilisation knee (M/M/1)."""
    from .plots import plot_p99_knee

    controls = {
        "service_ms": _float_slider("mean prefill S (ms)", 66.5, 10.0, 200.0, 0.5),
        "target_s": _float_slider("target (s)", 1.0, 0.2, 3.0, 0.1),
        "percentile": dropdown("percentile", [0.9, 0.95, 0.99, 0.999], 0.99),
    }

    def render(service_ms: float, target_s: float, percentile: float) -> tuple[Any, dict[str, Any]]:
        k = chains.p99_knee(service_s=service_ms / 1e3, p99_target_s=target_s, percentile=percentile)
        fig, (ax,) = figure_axes(1, (6, 3.2))
        plot_p99_knee(ax, service_s=service_ms / 1e3, p99_target_s=target_s, percentile=percentile)
        ax.axvline(k.rho_max, color="grey", ls=":", lw=1.5)
        rows = {
            "percentile factor": f"{k.p99_factor:.2f}",
            "highest utilisation": f"{k.rho_max:.2f}",
            "highest rate (req/s)": f"{k.max_rate_per_s:.1f}",
            "slope at 70%": f"{k.slope_high_load:.1f}",
            "slope at 50%": f"{k.slope_low_load:.1f}",
        }
        return fig, rows

    return explorer_box(controls, render, "The tail-latency knee: change S, the target, the percentile")


def long_prompt_explorer() -> Any:
    """Chain 7: prompt length, decoders and budget to chunks and the decoders' inter-token latency."""
    from .plots import plot_itl
    from lanes.gpu.steps import Request, simulate

    controls = {
        "prompt_tokens": slider("prompt (tokens)", 100_000, 10_000, 200_000, 10_000),
        "decoders": slider("decoders", 64, 1, 256, 1),
        "budget_tokens": slider("token budget", 8192, 1024, 16384, 1024),
    }

    def render(prompt_tokens: int, decoders: int, budget_tokens: int) -> tuple[Any, dict[str, Any]]:
        lp = chains.long_prompt(prompt_tokens=prompt_tokens, decoders=decoders, budget_tokens=budget_tokens)
        run = simulate([Request(prompt_tokens)], budget_tokens=budget_tokens, decoders=decoders, decoder_context_tokens=2048)
        fig, (ax,) = figure_axes(1, (6, 3.2))
        plot_itl({f"budget {budget_tokens:,}": run}, ax)
        ax.axhline(lp.itl_before_s * 1e3, color="grey", ls="--", lw=1)
        rows = {
            "chunks": lp.chunks,
            "chunk 1 (ms)": f"{lp.chunk1_s * 1e3:.0f}",
            "each later chunk adds (ms)": f"{lp.later_chunk_increment_s * 1e3:.0f}",
            "ITL before (ms)": f"{lp.itl_before_s * 1e3:.1f}",
            "worst ITL (ms)": f"{lp.itl_max_s * 1e3:.0f}",
            "TTFT of the long prompt (s)": f"{lp.ttft_s:.2f}",
        }
        return fig, rows

    return explorer_box(controls, render, "A long prompt under the budget: change its length, the decoders, the budget")


def tenant_explorer() -> Any:
    """Chain 8: tenant B's request shape and the output weight to costs and shares."""
    from lanes.gpu.fairness import Tenant, schedule
    from .plots import plot_tenant_shares

    controls = {
        "b_input_tokens": slider("B input tokens", 8000, 200, 32000, 200),
        "b_output_tokens": slider("B output tokens", 1000, 50, 4000, 50),
        "output_weight": _float_slider("output weight", 3.0, 1.0, 6.0, 0.5),
    }

    def render(b_input_tokens: int, b_output_tokens: int, output_weight: float) -> tuple[Any, dict[str, Any]]:
        c = chains.tenant_cost(b_input_tokens=b_input_tokens, b_output_tokens=b_output_tokens, output_weight=output_weight)
        tenants = [Tenant("A", 200, 100), Tenant("B", b_input_tokens, b_output_tokens)]
        res = [schedule(tenants, policy=p, output_weight=output_weight) for p in ("round-robin", "token-fair")]
        fig, (ax,) = figure_axes(1, (6, 2.6))
        plot_tenant_shares(res, ax)
        rows = {
            "cost A (weighted tokens)": f"{c.cost_a:,.0f}",
            "cost B (weighted tokens)": f"{c.cost_b:,.0f}",
            "B / A": f"{c.ratio:.1f}x",
            "B's share, round-robin": f"{c.round_robin_share_b:.0%}",
            "B's share, token-fair": f"{c.fair_share_b:.0%}",
        }
        return fig, rows

    return explorer_box(controls, render, "Tenant cost: change tenant B's requests and the output weight")


#: Batch sequence sizes offered by :func:`kv_headroom_explorer` (label -> KV tokens).
BATCH_CONTEXTS: dict[str, int] = {"2K (like a chat)": 2_000, "8K": 8_000, "32K": 32_000, "100K": 100_000}


def kv_headroom_explorer(scenario: Any = None) -> Any:
    """Where it breaks: headroom counted in sequence slots, in KV tokens, or both."""
    from lanes.gpu.kvpool import KvScenario, simulate_kv_pool
    from .plots import plot_kv_pool

    sc = KvScenario() if scenario is None else scenario
    controls = {
        "batch": dropdown("batch context", list(BATCH_CONTEXTS), "32K"),
        "keep_slots": slider("keep slots free", 16, 0, 48, 4),
        "keep_tokens": slider("keep KV tokens free", 0, 0, 200_000, 10_000),
    }

    def render(batch: str, keep_slots: int, keep_tokens: int) -> tuple[Any, dict[str, Any]]:
        r = simulate_kv_pool(sc.with_(batch_tokens=BATCH_CONTEXTS[batch]), f"slots:{keep_slots}+tokens:{keep_tokens}")
        fig, (ax,) = figure_axes(1, (6, 3.2))
        plot_kv_pool(r, ax)
        rows = {
            "chat p99 wait (s)": r.p99_wait_s,
            "chats waiting > 2 s": f"{r.late_fraction:.1%}",
            "batch sequences done": r.batch_done,
            "KV in use": f"{r.mean_kv_used:.0%}",
            "running sequences (mean)": f"{r.mean_sequences:.1f}",
            "decode step (ms, mean)": f"{r.mean_step_s * 1e3:.1f}",
        }
        return fig, rows

    return explorer_box(controls, render, "Headroom in slots or in KV: change the batch context and the reserves")


def preemption_cost_explorer(scenario: Any = None) -> Any:
    """Where it breaks: what one eviction costs three ways, fed to the slot pool's preempting policy."""
    from lanes.gpu.kvpool import preemption_costs
    from lanes.pool.scenario import Scenario
    from lanes.pool.engine import simulate

    sc = Scenario(hours=2) if scenario is None else scenario
    controls = {
        "context_k": slider("context (K tokens)", 128, 4, 256, 4),
        "scattered_gbps": _float_slider("scattered copy GB/s", 3.5, 1.0, 50.0, 0.5),
        "checkpoint_s": slider("checkpoint interval (s)", 60, 0, 300, 10),
    }

    def render(context_k: int, scattered_gbps: float, checkpoint_s: int) -> tuple[Any, dict[str, Any]]:
        pc = preemption_costs(context_k * 1024, scattered_bytes_per_s=scattered_gbps * 1e9, checkpoint_interval_s=checkpoint_s)
        costs = pc.as_slot_costs(slots=sc.slots)
        done = {k: simulate(sc.with_(preempt_cost_s=c), "preempt").batch_done for k, c in costs.items()}
        fig, (ax,) = figure_axes(1, (6, 3.0))
        ax.barh(list(costs), list(done.values()), color="#ff7f0e")
        for y, (k, v) in enumerate(done.items()):
            ax.text(v, y, f" {costs[k]} slot-s", va="center")
        ax.set_xlabel("batch jobs done under 'preempt'")
        rows = {f"{k} (slot-s per eviction)": v for k, v in costs.items()}
        return fig, rows

    return explorer_box(controls, render, "What an eviction costs: change the context, the copies, the checkpoints")


def microbatch_explorer(requests: int = 20, model_call_s: float = 0.05) -> Any:
    """Micro-batcher on the virtual clock: move ``max_wait_s``, ``max_batch`` and the arrival spacing."""
    import ipywidgets as w

    from .plots import plot_microbatch

    style = {"description_width": "initial"}
    controls = {
        "max_wait_ms": w.IntSlider(value=20, min=0, max=300, step=10, description="max_wait (ms)", continuous_update=False, style=style),
        "max_batch": w.IntSlider(value=8, min=1, max=20, description="max_batch", continuous_update=False, style=style),
        "gap_ms": w.IntSlider(value=0, min=0, max=50, step=5, description="gap between arrivals (ms)", continuous_update=False, style=style),
    }

    def render(max_wait_ms: int, max_batch: int, gap_ms: int) -> tuple[Any, dict[str, Any]]:
        arrivals = [k * gap_ms / 1000 for k in range(requests)]
        r = simulate_batches(arrivals, max_batch=max_batch, max_wait_s=max_wait_ms / 1000, model_call_s=model_call_s)
        fig, axes = figure_axes(2, (9, 3.2))
        plot_microbatch({f"max_wait {max_wait_ms} ms": r}, axes)
        return fig, {
            "batches": r.batches,
            "batch sizes": " ".join(map(str, r.batch_sizes)),
            "total time (ms)": f"{1e3 * r.total_s:.0f}",
            "mean latency (ms)": f"{1e3 * r.mean_latency_s:.0f}",
        }

    return explorer_box(controls, render, f"Micro-batcher, {requests} requests, {1e3 * model_call_s:g} ms per call")
