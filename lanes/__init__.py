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
    "Scenario": "scenario",
    "Policy": "policies",
    "parse_policy": "policies",
    "parse_policies": "policies",
    "DEFAULT_POLICIES": "policies",
    "VICTIMS": "policies",
    "ArrivalStream": "arrivals",
    "draw_stream": "arrivals",
    "rate_per_s": "arrivals",
    "simulate": "slotpool",
    "run_table": "slotpool",
    "SlotPoolResult": "results",
    "PolicyTable": "results",
    "LATE_AFTER_S": "results",
    # course calculators and sweeps (lanes.sweep, the module, holds sweep(); it imports pandas when called)
    "sweep_scenarios": "sweep",
    "busy_slots": "littles",
    "slot_budget": "littles",
    "poisson_tail": "littles",
    "poisson_quantile": "littles",
    "batch_trickle_interval_s": "littles",
    "headroom_slots": "littles",
    # inside a lane and the batch lane as a product
    "LaneScenario": "lane",
    "LanePolicy": "lane",
    "TenantLoad": "lane",
    "simulate_lane": "lane",
    "compare_policies": "lane",
    "JobStore": "jobstore",
    "ProviderBatchAPI": "jobstore",
    "BatchLaneScenario": "jobstore",
    "simulate_batch_lane": "jobstore",
    "plan_overflow": "jobstore",
    "chunk": "jobstore",
    "BatchingScenario": "continuous",
    "simulate_batching": "continuous",
    "compare_batching": "continuous",
    "decode_step_curve": "continuous",
    # where the model breaks: queueing theory and a pool counted in KV blocks
    "mm1_response_quantile_s": "queueing",
    "simulate_queue": "queueing",
    "QueueRun": "queueing",
    "KvScenario": "kvpool",
    "simulate_kv_pool": "kvpool",
    "KvPoolResult": "kvpool",
    "preemption_costs": "kvpool",
    "PreemptionCost": "kvpool",
    "pool_tokens_for": "kvpool",
    # engine-level models
    "Hardware": "hardware",
    "Model": "hardware",
    "HARDWARE": "hardware",
    "MODELS": "hardware",
    "get_hardware": "hardware",
    "get_model": "hardware",
    "littles_law": "chains",
    "kv_in_flight": "chains",
    "goodput": "chains",
    "swap_vs_recompute": "chains",
    "hol_blocking": "chains",
    "p99_knee": "chains",
    "long_prompt": "chains",
    "tenant_cost": "chains",
    "CHAINS": "chains",
    "all_chains": "chains",
    "Request": "steps",
    "StepRecord": "steps",
    "StepResult": "steps",
    "step_cost": "steps",
    "simulate_steps": "steps",
    "MicroBatcher": "batcher",
    "QueueFullError": "batcher",
    "BatchRun": "batcher",
    "simulate_batches": "batcher",
    "run_async": "batcher",
    "Tenant": "fairness",
    "schedule": "fairness",
    "FairnessResult": "fairness",
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
