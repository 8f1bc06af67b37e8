"""Hypothesis strategies: small slot-pool scenarios and policies."""

from __future__ import annotations

from hypothesis import strategies as st

from lanes.pool.policies import VICTIMS, Policy
from lanes.pool.scenario import Scenario


@st.composite
def ranges(draw, lo: int, hi: int):
    a = draw(st.integers(lo, hi))
    b = draw(st.integers(a, hi))
    return (a, b)


@st.composite
def scenarios(draw, max_ticks: int = 900, tick_s: float = 0):
    ticks = draw(st.integers(60, max_ticks))
    trough = draw(st.floats(0, 4, allow_nan=False))
    return Scenario(
        slots=draw(st.integers(1, 12)),
        hours=ticks / 3600,
        backlog=draw(st.integers(0, 150)),
        batch_service_s=draw(ranges(1, 120)),
        inter_service_s=draw(ranges(1, 15)),
        trough_rate=trough,
        peak_rate=draw(st.floats(trough, trough + 4, allow_nan=False)),
        preempt_cost_s=draw(st.integers(0, 40)),
        seed=draw(st.integers(0, 2**32)),
        tick_s=tick_s,
    )


@st.composite
def policies(draw, slots: int, extensions: bool = True):
    kind = draw(st.sampled_from(["fifo", "priority", "reserve", "preempt", "hybrid"]))
    reserve = draw(st.integers(0, slots)) if kind in ("reserve", "hybrid") else 0
    if not extensions or kind == "fifo":
        return Policy(kind, reserve=reserve)
    return Policy(
        kind,
        reserve=reserve,
        floor=draw(st.one_of(st.just(0), st.integers(0, slots))),
        aging_s=draw(st.one_of(st.none(), st.integers(0, 600))),
        victim=draw(st.sampled_from(VICTIMS)),
        min_run_s=draw(st.one_of(st.just(0), st.integers(0, 60))),
    )


@st.composite
def runs(draw, extensions: bool = True):
    sc = draw(scenarios())
    return sc, draw(policies(sc.slots, extensions))
