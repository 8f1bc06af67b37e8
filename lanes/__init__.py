"""lanes: interactive and batch inference traffic on one pool of GPU decode slots.

The public names are loaded on first use, so ``import lanes`` is cheap and
never pulls in numpy, pandas, matplotlib or ipywidgets.

>>> import lanes
>>> table = lanes.run_table()                  # the course's anchor table
>>> table["reserve:16"].p99_s
2
"""

from __future__ import annotations

import importlib
from typing import Any

_EXPORTS = {
    "Scenario": "pool.scenario",
    "Policy": "pool.policies",
    "parse_policy": "pool.policies",
    "parse_policies": "pool.policies",
    "DEFAULT_POLICIES": "pool.policies",
    "VICTIMS": "pool.policies",
    "ArrivalStream": "pool.arrivals",
    "draw_stream": "pool.arrivals",
    "rate_per_s": "pool.arrivals",
    "simulate": "pool.engine",
    "run_table": "pool.engine",
    "SlotPoolResult": "pool.results",
    "PolicyTable": "pool.results",
    "LATE_AFTER_S": "pool.results",
    # course calculators and sweeps (lanes.sweep, the module, holds sweep(); it imports pandas when called)
    "sweep_scenarios": "pool.sweep",
    "busy_slots": "pool.littles",
    "slot_budget": "pool.littles",
    "poisson_tail": "pool.littles",
    "poisson_quantile": "pool.littles",
    "batch_trickle_interval_s": "pool.littles",
    "headroom_slots": "pool.littles",
    # the standard theory beside the simulator: Erlang B/C, M/M/c waits, staffing rules
    "erlang_b": "pool.erlang",
    "erlang_c": "pool.erlang",
    "mmc_mean_wait_s": "pool.erlang",
    "mmc_wait_tail": "pool.erlang",
    "halfin_whitt_beta": "pool.erlang",
    "sqrt_staffing": "pool.erlang",
    "servers_for_wait": "pool.erlang",
    "allen_cunneen_wait_s": "pool.erlang",
    # inside a lane and the batch lane as a product
    "LaneScenario": "lane.interactive",
    "LanePolicy": "lane.interactive",
    "TenantLoad": "lane.interactive",
    "simulate_lane": "lane.interactive",
    "compare_policies": "lane.interactive",
    "JobStore": "lane.jobstore",
    "ProviderBatchAPI": "lane.jobstore",
    "BatchLaneScenario": "lane.jobstore",
    "simulate_batch_lane": "lane.jobstore",
    "plan_overflow": "lane.jobstore",
    "chunk": "lane.jobstore",
    "BatchingScenario": "engine.continuous",
    "simulate_batching": "engine.continuous",
    "compare_batching": "engine.continuous",
    "decode_step_curve": "engine.continuous",
    # where the model breaks: queueing theory and a pool counted in KV blocks
    "mm1_response_quantile_s": "lane.queueing",
    "simulate_queue": "lane.queueing",
    "QueueRun": "lane.queueing",
    "KvScenario": "engine.kvpool",
    "simulate_kv_pool": "engine.kvpool",
    "KvPoolResult": "engine.kvpool",
    "preemption_costs": "engine.kvpool",
    "PreemptionCost": "engine.kvpool",
    "pool_tokens_for": "engine.kvpool",
    # engine-level models
    "Hardware": "engine.hardware",
    "Model": "engine.hardware",
    "HARDWARE": "engine.hardware",
    "MODELS": "engine.hardware",
    "get_hardware": "engine.hardware",
    "get_model": "engine.hardware",
    "littles_law": "engine.chains",
    "kv_in_flight": "engine.chains",
    "goodput": "engine.chains",
    "swap_vs_recompute": "engine.chains",
    "hol_blocking": "engine.chains",
    "p99_knee": "engine.chains",
    "long_prompt": "engine.chains",
    "tenant_cost": "engine.chains",
    "CHAINS": "engine.chains",
    "all_chains": "engine.chains",
    "Request": "engine.steps",
    "StepRecord": "engine.steps",
    "StepResult": "engine.steps",
    "step_cost": "engine.steps",
    "simulate_steps": "engine.steps",
    "MicroBatcher": "engine.batcher",
    "QueueFullError": "engine.batcher",
    "BatchRun": "engine.batcher",
    "simulate_batches": "engine.batcher",
    "run_async": "engine.batcher",
    "Tenant": "engine.fairness",
    "schedule": "engine.fairness",
    "FairnessResult": "engine.fairness",
}

__all__ = sorted(_EXPORTS)


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'lanes' has no attribute {name!r}")
    value = getattr(importlib.import_module(f".{module}", __name__), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))
