"""lanes: interactive and batch inference traffic on one pool of GPU decode slots.

>>> import lanes
>>> lanes.run_table(lanes.anchor())["reserve:16"].p99_s     # the course's anchor table, on its 1 s clock
2

Public names load on first use, so ``import lanes`` stays cheap.  Models: :mod:`lanes.pool` (the slot
pool), :mod:`lanes.lane`, :mod:`lanes.gpu`, each importing only those before it; :mod:`lanes.display`
draws them; :mod:`lanes.exercises` holds the sets; ``cli`` is ``python -m lanes``.
"""

from __future__ import annotations

import importlib
from typing import Any

#: Where each public name lives: module (under lanes) -> the names it exports, space-separated.
_MODULES = {
    "pool.scenario": "Scenario anchor",
    "pool.policies": "Policy parse_policy DEFAULT_POLICIES VICTIMS",
    "pool.arrivals": "ArrivalStream draw_stream rate_per_s",
    "pool.engine": "simulate",
    "pool.table": "run_table PolicyTable parse_policies",
    "pool.results": "SlotPoolResult LATE_AFTER_S",
    "pool.littles": "busy_slots slot_budget poisson_tail poisson_quantile batch_trickle_interval_s headroom_slots",
    "pool.erlang": "erlang_b erlang_c mmc_mean_wait_s mmc_wait_tail halfin_whitt_beta sqrt_staffing servers_for_wait"
    " allen_cunneen_wait_s",
    "lane.interactive": "LaneScenario LanePolicy TenantLoad simulate_lane compare_policies",
    "lane.jobstore": "JobStore ProviderBatchAPI BatchLaneScenario simulate_batch_lane plan_overflow chunk",
    "gpu.continuous": "BatchingScenario simulate_batching compare_batching decode_step_curve",
    "lane.queueing": "mm1_response_quantile_s simulate_queue QueueRun",
    "gpu.kvpool": "KvScenario simulate_kv_pool KvPoolResult preemption_costs PreemptionCost pool_tokens_for",
    "gpu.hardware": "Hardware HARDWARE MODELS get_hardware get_model",
    "gpu.transformer": "Model",
    "gpu.chains": "littles_law kv_in_flight goodput swap_vs_recompute hol_blocking p99_knee long_prompt tenant_cost"
    " CHAINS all_chains",
    "gpu.steps": "Request StepRecord StepResult step_cost simulate_steps",
    "gpu.batcher": "MicroBatcher QueueFullError BatchRun simulate_batches run_async",
    "gpu.fairness": "Tenant schedule FairnessResult",
}
_EXPORTS = {name: module for module, names in _MODULES.items() for name in names.split()}

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
