"""Every claim chapter 4 (preemption and its cost) makes, computed with ``lanes``.

The runs mirror the notebook's: the anchor scenario on the ten seeds of
:data:`lanes.pool.sweep.SEEDS`, at eviction costs of 0, 15 and 60 s, and a
two-hour day for the victim study.
"""

from __future__ import annotations

import pytest

import lanes
from lanes.pool.sweep import SEEDS, sweep_seeds

pd = pytest.importorskip("pandas")

SC = lanes.Scenario()
COSTS = (0, SC.preempt_cost_s, 60)
HOUR = 3600


@pytest.fixture(scope="module")
def anchor():
    return lanes.run_table(SC, ["priority", "reserve:8", "preempt", "hybrid:8"])


@pytest.fixture(scope="module")
def tables():
    return {
        (s, c): lanes.run_table(SC.with_(seed=s, preempt_cost_s=c), ["preempt", "hybrid:8"])
        for s in SEEDS
        for c in COSTS
    }


@pytest.fixture(scope="module")
def runs(tables):
    heads = {s: lanes.simulate(SC.with_(seed=s), "reserve:16") for s in SEEDS}
    rows = [{"seed": s, "cost_s": c, "arrivals": r.n_arrivals, **r.row()} for (s, c), t in tables.items() for r in t]
    rows += [{"seed": s, "cost_s": c, "arrivals": r.n_arrivals, **r.row()} for s, r in heads.items() for c in COSTS]
    return pd.DataFrame(rows)


def at(runs, cost, policy):
    part = runs[(runs["cost_s"] == cost) & (runs["policy"] == policy)]
    assert len(part) == len(SEEDS)
    return part.set_index("seed")


def test_anchor_preemption_zero_wait_fewest_batch(anchor):
    pre, hyb = anchor["preempt"], anchor["hybrid:8"]
    assert (pre.p50_s, pre.p99_s, pre.max_s) == (0, 0, 0)
    assert pre.batch_done == min(r.batch_done for r in anchor)
    assert (hyb.p50_s, hyb.p99_s, hyb.max_s) == (0, 0, 0)
    assert hyb.preempted < pre.preempted and hyb.batch_done > pre.batch_done


def test_at_anchor_cost_preempt_fewest_batch_most_evictions_no_overlap(runs):
    pre = at(runs, SC.preempt_cost_s, "preempt")
    for other in ("hybrid:8", "reserve:16"):
        o = at(runs, SC.preempt_cost_s, other)
        assert pre["batch_done"].max() < o["batch_done"].min()
        assert pre["preempted"].min() > o["preempted"].max()


def test_about_a_quarter_of_arrivals_evict_not_all(runs):
    pre = at(runs, SC.preempt_cost_s, "preempt")
    frac = pre["preempted"] / pre["arrivals"]
    assert frac.between(0.25, 0.30).all(), frac
    assert (pre["p99"] == 0).all()
    assert pre["max"].max() <= 1  # a wait happens only when no batch job is left to evict


def test_slots_freed_per_second_a_little_more_than_arrivals(anchor):
    # "a little more than", not "almost as many as": more slots free than requests arrive
    from glued_values import glued

    pre = anchor["preempt"]
    freed = (pre.interactive_done + pre.batch_done) / SC.ticks
    arrive = pre.n_arrivals / SC.ticks
    assert arrive < freed < 1.1 * arrive
    g = glued("04_preemption")
    assert g["freed_per_s"] > g["arrive_per_s"]


def test_repeated_work_adds_up_to_whole_slots(anchor):
    pre = anchor["preempt"]
    idle_slots = pre.preempted * SC.preempt_cost_s / 3600 / SC.hours
    assert 10 < idle_slots < SC.slots


def test_cost_sweep_orders(runs):
    n = len(SEEDS)
    pre0, hyb0 = at(runs, 0, "preempt"), at(runs, 0, "hybrid:8")
    assert (pre0["batch_done"] > hyb0["batch_done"]).sum() == n  # free evictions: preempt ahead
    for cost in (SC.preempt_cost_s, 60):
        pre, hyb = at(runs, cost, "preempt"), at(runs, cost, "hybrid:8")
        assert (hyb["batch_done"] > pre["batch_done"]).sum() == n
    head = at(runs, SC.preempt_cost_s, "reserve:16")
    assert (at(runs, SC.preempt_cost_s, "hybrid:8")["batch_done"] > head["batch_done"]).sum() == n
    assert (head["batch_done"] > at(runs, 60, "hybrid:8")["batch_done"]).sum() == n
    # reserve:16 is flat in the cost: it never evicts
    assert (head["preempted"] == 0).all()


def test_preempt_collapses_at_60_s_and_bands_do_not_overlap(runs):
    pre60 = at(runs, 60, "preempt")["batch_done"]
    assert pre60.max() < 500
    for cost in (SC.preempt_cost_s, 60):
        bands = sorted(
            (at(runs, cost, p)["batch_done"].min(), at(runs, cost, p)["batch_done"].max())
            for p in ("preempt", "hybrid:8", "reserve:16")
        )
        assert all(hi < lo for (_, hi), (lo, _) in zip(bands, bands[1:]))


def test_peak_hour_evicts_more_than_first_hour(tables, anchor):
    mid = SC.ticks // 2
    for (s, c), t in tables.items():
        if c != SC.preempt_cost_s:
            continue
        for r in t:
            peak = sum(r.preempted_per_tick[mid - HOUR // 2 : mid + HOUR // 2])
            assert peak > sum(r.preempted_per_tick[:HOUR]), (s, r.policy.spec)
    pre, hyb = anchor["preempt"], anchor["hybrid:8"]
    assert sum(hyb.preempted_per_tick[:HOUR]) * 4 < sum(pre.preempted_per_tick[:HOUR])  # hybrid starts low
    hourly = [sum(pre.preempted_per_tick[h * HOUR : (h + 1) * HOUR]) for h in range(int(SC.hours))]
    assert min(hourly) > 0  # pure preemption evicts all day
    assert hourly.index(max(hourly)) in (2, 3)  # and most around the daily peak


@pytest.fixture(scope="module")
def victims():
    short = SC.with_(hours=2)
    variants = {
        "youngest": {},
        "most remaining": {"victim": "most_remaining"},
        "youngest, min run 30 s": {"min_run_s": 30},
        "most remaining, min run 30 s": {"victim": "most_remaining", "min_run_s": 30},
    }
    pols = [lanes.parse_policy("preempt", **kw).with_(spec=name) for name, kw in variants.items()]
    return sweep_seeds(pols, SEEDS, short)


def test_victim_order_and_minimum_run(victims):
    n = len(SEEDS)
    jobs = victims.pivot(index="seed", columns="policy", values="batch_done")
    p99 = victims.pivot(index="seed", columns="policy", values="p99_s")
    assert (jobs["most remaining"] > jobs["youngest"]).sum() == n
    assert (p99[["youngest", "most remaining"]] == 0).all().all()
    assert (jobs["most remaining, min run 30 s"] < jobs["most remaining"]).sum() == n
    assert (jobs["youngest, min run 30 s"] > jobs["youngest"]).sum() == n
    assert (p99[["youngest, min run 30 s", "most remaining, min run 30 s"]] > 0).all().all()


def test_dear_evictions_headroom_wins(runs):
    dear = runs[runs["cost_s"] == 60]
    ok = dear[dear["p99"] < 5]
    winners = ok.loc[ok.groupby("seed")["batch_done"].idxmax(), "policy"]
    assert list(winners) == ["reserve:16"] * len(SEEDS)
    pre, hyb = at(runs, 60, "preempt"), at(runs, 60, "hybrid:8")
    assert (pre["p99"] < 5).all() and (hyb["p99"] < 5).all()
    assert (hyb["batch_done"] > 3 * pre["batch_done"]).all()  # several times preempt's output
