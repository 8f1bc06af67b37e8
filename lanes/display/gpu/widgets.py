"""ipywidgets explorers for the engine chapters: one per chain, two for where the model breaks.

Defined in :mod:`lanes.display.explorers` (controls, model call, charts);
:func:`lanes.display.pool.widgets.lab` gives each its JupyterLab form: controls
above a figure and a small table, re-rendered when a control is released.
Tests (and readers without a live kernel) can set
``explorer.controls[name].value`` and read ``explorer.table.value``.
ipywidgets, matplotlib and pandas are imported inside the functions.
"""

from __future__ import annotations

from typing import Any

from lanes.display import explorers as _ex
from lanes.display.explorers import BATCH_CONTEXTS  # noqa: F401 - the KV explorer's choices, named here too
from ..pool.widgets import lab

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

def littles_chain_explorer() -> Any:
    """Chains 1 and 2: rate, TTFT, output length and TPOT to requests in flight, KV and the naive ceiling. (:func:`lanes.display.explorers.littles_chain`)"""
    return lab(_ex.littles_chain())


def goodput_explorer() -> Any:
    """Chain 3: context length, TPOT target and accelerator to the goodput cliff. (:func:`lanes.display.explorers.goodput`)"""
    return lab(_ex.goodput())


def swap_explorer() -> Any:
    """Chain 4: context, link bandwidth and MFU to swap against recompute. (:func:`lanes.display.explorers.swap`)"""
    return lab(_ex.swap())


def hol_explorer() -> Any:
    """Chain 5: a long prompt ahead of short ones, FCFS against by-length, on the step simulator. (:func:`lanes.display.explorers.hol`)"""
    return lab(_ex.hol())


def knee_explorer() -> Any:
    """Chain 6: mean prefill time, target and percentile to the utilisation knee (M/M/1). (:func:`lanes.display.explorers.knee`)"""
    return lab(_ex.knee())


def long_prompt_explorer() -> Any:
    """Chain 7: prompt length, decoders and budget to chunks and the decoders' inter-token latency. (:func:`lanes.display.explorers.long_prompt`)"""
    return lab(_ex.long_prompt())


def tenant_explorer() -> Any:
    """Chain 8: tenant B's request shape and the output weight to costs and shares. (:func:`lanes.display.explorers.tenant`)"""
    return lab(_ex.tenant())


def kv_headroom_explorer(scenario: Any = None) -> Any:
    """Where it breaks: headroom counted in sequence slots, in KV tokens, or both. (:func:`lanes.display.explorers.kv_headroom`)"""
    return lab(_ex.kv_headroom(scenario))


def preemption_cost_explorer(scenario: Any = None) -> Any:
    """Where it breaks: what one eviction costs three ways, fed to the slot pool's preempting policy. (:func:`lanes.display.explorers.preemption_cost`)"""
    return lab(_ex.preemption_cost(scenario))


def microbatch_explorer(requests: int = 20, model_call_s: float = 0.05) -> Any:
    """Micro-batcher on the virtual clock: move ``max_wait_s``, ``max_batch`` and the arrival spacing (:func:`lanes.display.explorers.microbatch`)."""
    return lab(_ex.microbatch(requests, model_call_s))
