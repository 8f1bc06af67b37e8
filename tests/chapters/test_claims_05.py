"""Every claim chapter 5 (starvation and aging) makes, computed with ``lanes``.

The designs and seeds are the notebook's: the anchor scenario on the ten seeds
of :data:`lanes.pool.sweep.SEEDS`, a promise of 5,000 batch jobs within the
six-hour window. The ten-seed sweep is rerun here on two seeds (:data:`SPOT`)
and checked against the chapter's glued per-run figures; claims about every
seed are checked on those figures (nbval reruns the chapter, so they are what
a fresh run gives).
"""

from __future__ import annotations

import pytest

import lanes
from lanes.pool.sweep import SEEDS

SC = lanes.anchor()  # the chapter's base scenario, on the anchor's 1 s clock
TARGET_JOBS = 5_000
DEADLINE_S = SC.ticks
HOUR = 3600
LATER_S = 2 * HOUR
DESIGNS = {
    "priority": lanes.parse_policy("priority"),
    "reserve:8": lanes.parse_policy("reserve:8"),
    "reserve:16": lanes.parse_policy("reserve:16"),
    "preempt": lanes.parse_policy("preempt"),
    "preempt, floor 24": lanes.parse_policy("preempt", floor=24),
    "preempt, aging 1 h": lanes.parse_policy("preempt", aging_s=HOUR),
    "hybrid:8": lanes.parse_policy("hybrid:8"),
    "hybrid:8, aging 1 h": lanes.parse_policy("hybrid:8", aging_s=HOUR),
}
AGING = ("preempt, aging 1 h", "hybrid:8, aging 1 h")
LATER = ("priority", "preempt, aging 1 h", "reserve:8", "hybrid:8, aging 1 h")
SPOT = (1, SC.seed)


def _summary(r):
    ticks = r.day.preempted_per_tick
    last = next((t for t in range(len(ticks) - 1, -1, -1) if ticks[t]), None)
    return {
        "p99": r.p99_s,
        "batch": r.day.batch_done_by(DEADLINE_S),
        "evictions": r.preempted,
        "last_eviction_s": last,
        "later_p99": r.window(LATER_S, SC.ticks)["p99"] if r.policy.spec in LATER else None,
        "slowest_hour": min(r.day.batch_done_by(HOUR * (h + 1)) - r.day.batch_done_by(HOUR * h)
                            for h in range(int(SC.hours))),
    }


#: The chapter's names for the summary fields.
_GLUED = {"p99": "p99_s", "batch": "batch_by_deadline", "evictions": "evictions",
          "last_eviction_s": "last_eviction_s", "later_p99": "p99_later_s", "slowest_hour": "slowest_hour"}


@pytest.fixture(scope="module")
def seeds():
    """Per design, a list of per-seed summaries (dicts): the chapter's, its spot seeds rerun here."""
    from glued_values import glued

    rows = glued("05_starvation_and_aging")["seed_rows"]
    out: dict[str, list[dict]] = {name: [] for name in DESIGNS}
    for row in rows:
        out[row["design"]].append({k: row[v] for k, v in _GLUED.items()})
    assert all(len(v) == len(SEEDS) for v in out.values()) and [r["seed"] for r in rows[::len(DESIGNS)]] == list(SEEDS)
    pols = [p.with_(spec=name) for name, p in DESIGNS.items()]
    for s in SPOT:
        for r in lanes.run_table(SC.with_(seed=s), pols):
            assert _summary(r) == out[r.policy.spec][SEEDS.index(s)], (s, r.policy.spec)
    return out


def kept(rows):
    return sum(r["batch"] >= TARGET_JOBS for r in rows)


def col(rows, key):
    return [r[key] for r in rows]


@pytest.fixture(scope="module")
def base():
    return lanes.run_table(SC, ["priority", "preempt", "hybrid:8"])


def test_anchor_preempt_nearly_stalls_midday_and_misses(base):
    per_hour = {
        r.policy.spec: [r.day.batch_done_by(HOUR * (h + 1)) - r.day.batch_done_by(HOUR * h) for h in range(int(SC.hours))]
        for r in base
    }
    pre = per_hour["preempt"]
    assert min(pre) * 3 < max(pre)
    assert pre.index(min(pre)) in (2, 3)  # the middle of the day
    for spec, hours in per_hour.items():
        assert min(hours) in (hours[2], hours[3]), spec  # every policy slows at midday
    assert base["preempt"].batch_done < TARGET_JOBS
    assert base["priority"].batch_done >= TARGET_JOBS and base["hybrid:8"].batch_done >= TARGET_JOBS


def test_preemption_stalls_at_the_peak_on_every_seed(seeds):
    """The first prediction asks what chapter 4 did not show: the slowest hour over the seeds."""
    from glued_values import glued

    g = glued("05_starvation_and_aging")
    slowest = col(seeds["preempt"], "slowest_hour")
    assert (g["pre_worst_lo"], g["pre_worst_hi"]) == (min(slowest), max(slowest))
    best = [max(r.day.batch_done_by(HOUR * (h + 1)) - r.day.batch_done_by(HOUR * h) for h in range(int(SC.hours)))
            for r in [lanes.simulate(SC, "preempt")]]
    assert max(slowest) < best[0] / 3  # "nearly stalls": under a third of its best hour


def test_promise_across_seeds(seeds):
    n = len(SEEDS)
    assert kept(seeds["preempt"]) == 0
    assert kept(seeds["hybrid:8"]) == n
    assert kept(seeds["priority"]) == n
    assert kept(seeds["reserve:16"]) == 0
    assert min(col(seeds["priority"], "p99")) > 2  # priority keeps it by making users wait


@pytest.fixture(scope="module")
def floors():
    values = [0, 8, 16, 24, 32]
    runs = lanes.run_table(SC, [lanes.parse_policy("preempt", floor=f) for f in values])
    return dict(zip(values, runs))


def test_floor_sweep_on_the_anchor_seed(floors):
    from glued_values import glued

    g = glued("05_starvation_and_aging")
    # "users hold {{peak_busy}} slots at once at the peak, far more than the {{f32_left}}"
    assert g["peak_busy"] == max(floors[0].day.busy_interactive) > 1.5 * g["f32_left"] == 1.5 * (SC.slots - 32)
    mid = SC.ticks // 2
    assert g["small_floor_p99_s"] == [floors[f].p99_s for f in (8, 16)]  # "at most" their largest
    assert max(floors[f].p99_s for f in (8, 16)) <= 2
    peak32 = floors[32].window(mid - HOUR // 2, mid + HOUR // 2)["p99"]
    assert peak32 > 120  # minutes
    assert max(floors[0].day.busy_interactive) > SC.slots - 32


def test_the_floor_tails_hold_on_five_seeds():
    from glued_values import glued

    g = glued("05_starvation_and_aging")
    few = SEEDS[:5]
    assert g["few_seeds"] == len(few) and SC.seed in few
    assert g["few_confidence"] == pytest.approx(1 - 2 * 0.5 ** len(few))
    assert len(g["few_small_p99_s"]) == 2 * len(few) and len(g["f32_peaks_s"]) == len(few)
    spot = lanes.run_table(SC.with_(seed=1), [lanes.parse_policy("preempt", floor=f) for f in (8, 16, 32)])
    mid = SC.ticks // 2
    assert [r.p99_s for r in spot[:2]] == g["few_small_p99_s"][:2]
    assert spot[2].window(mid - HOUR // 2, mid + HOUR // 2)["p99"] == g["f32_peaks_s"][0]
    assert max(g["few_small_p99_s"]) <= 2  # "barely move the users' p99" on every seed
    assert min(g["f32_peaks_s"]) > 10 * 60  # "another matter": over ten minutes on every seed
    assert min(g["f32_peaks_s"]) <= g["f32_peak_p99_s"] <= max(g["f32_peaks_s"])


def test_floor_24_spread_and_promise(seeds):
    p99 = col(seeds["preempt, floor 24"], "p99")
    assert max(p99) >= 3 * min(p99)  # wide spread across days
    assert kept(seeds["preempt, floor 24"]) == 0
    assert set(col(seeds["preempt"], "p99")) == {0}


def test_a_floor_guarantees_slots_not_work(seeds):
    from glued_values import glued

    g = glued("05_starvation_and_aging")
    f24, prio = seeds["preempt, floor 24"], seeds["priority"]
    ev = col(f24, "evictions")
    assert (g["f24_ev_lo"], g["f24_ev_hi"]) == (min(ev), max(ev))
    redone = min(ev) * SC.preempt_cost_s / (sum(SC.batch_service_s) / 2)
    assert g["f24_redone_lo"] == pytest.approx(redone) and g["cost_s"] == SC.preempt_cost_s
    # fewer jobs than strict priority on every seed, although the floor shields 24 slots
    assert max(g["f24_b"]) == max(col(f24, "batch")) < min(col(prio, "batch")) == min(g["prio_b"])
    assert kept(f24) == 0
    # and more than pure preemption without a floor: it caps the cut, it does not stop it
    assert min(col(f24, "batch")) > max(col(seeds["preempt"], "batch"))


def test_aging_turns_preemption_off_after_aging_s(seeds):
    aged = lanes.simulate(SC, "preempt", aging_s=HOUR)
    assert sum(aged.day.preempted_per_tick[LATER_S:]) == 0
    assert sum(aged.day.preempted_per_tick[HOUR:]) > 0  # stragglers just after the limit
    for name in AGING:
        for row in seeds[name]:
            assert HOUR < row["last_eviction_s"] <= HOUR + 10 * 60, name
    for row in seeds["preempt"]:  # without aging, evictions go on to the end of the day
        assert row["last_eviction_s"] > SC.ticks - 60


def test_aging_matches_the_plain_policy_until_aging_s():
    pairs = [("preempt", {}), ("hybrid:8", {})]
    for spec, _ in pairs:
        plain = lanes.simulate(SC, spec)
        aged = lanes.simulate(SC, spec, aging_s=HOUR)
        assert aged.day.batch_done_by(HOUR) == plain.day.batch_done_by(HOUR)
        assert aged.batch_done > plain.batch_done


def test_after_aging_users_wait_as_without_preemption(seeds):
    later = {name: col(seeds[name], "later_p99") for name in LATER}
    assert min(later["preempt, aging 1 h"]) >= 10 and min(later["priority"]) >= 10  # tens of seconds
    lo, hi = min(later["preempt, aging 1 h"]), max(later["preempt, aging 1 h"])
    assert lo <= max(later["priority"]) and min(later["priority"]) <= hi  # the ranges overlap
    lo, hi = min(later["hybrid:8, aging 1 h"]), max(later["hybrid:8, aging 1 h"])
    assert lo <= max(later["reserve:8"]) and min(later["reserve:8"]) <= hi
    assert max(later["hybrid:8, aging 1 h"]) < min(later["priority"])


def test_report_only_hybrid_gives_zero_wait_and_keeps_the_promise(seeds):
    n = len(SEEDS)
    both = [name for name, rows in seeds.items() if max(col(rows, "p99")) == 0 and kept(rows) == n]
    assert both == ["hybrid:8"]
    for name in ("priority", *AGING):
        assert kept(seeds[name]) == n and min(col(seeds[name], "p99")) > 0
    assert max(col(seeds["reserve:16"], "p99")) <= 3 and kept(seeds["reserve:16"]) == 0
    assert kept(seeds["preempt"]) == 0 and kept(seeds["preempt, floor 24"]) == 0


class TestAgingAsPriority:
    """``promote_s``: a waiting job's priority rises with its wait (the source's aging), against
    the immunity rule (``aging_s``), on the chapter's seeds (its glued figures; the anchor seed rerun)."""

    @pytest.fixture(scope="class")
    @classmethod
    def prom(cls):
        from glued_values import glued

        rows = glued("05_starvation_and_aging")["prom_rows"]
        names = ("preempt, promote 1 h", "hybrid:8, promote 1 h")
        out = {n: [r for r in rows if r["design"] == n] for n in names}
        assert all([r["seed"] for r in v] == list(SEEDS) for v in out.values())
        for n, base in zip(names, ("preempt", "hybrid:8")):
            r = lanes.simulate(SC, base, promote_s=HOUR)
            mine = out[n][SEEDS.index(SC.seed)]
            assert (mine["served_pct"], mine["p99_s"], mine["batch_by_deadline"]) == (
                pytest.approx(100 * r.day.interactive_done / r.n_arrivals), r.p99_s, r.day.batch_done_by(DEADLINE_S))
        return out

    def test_promotion_under_pure_preemption_starves_users(self, prom):
        from glued_values import glued

        g = glued("05_starvation_and_aging")
        served = [r["served_pct"] for r in prom["preempt, promote 1 h"]]
        assert (g["served_lo_pct"], g["served_hi_pct"]) == pytest.approx((min(served), max(served)))
        assert max(served) < 50  # most users never get a slot
        batch = [r["batch_by_deadline"] for r in prom["preempt, promote 1 h"]]
        assert g["pre_prom_batch"] == batch and g["backlog"] == SC.backlog
        assert max(batch) <= SC.backlog and g["promote_h"] == HOUR / 3600

    def test_behind_a_reserve_promotion_keeps_users_slots(self, prom, seeds):
        from glued_values import glued

        g = glued("05_starvation_and_aging")
        hyb = prom["hybrid:8, promote 1 h"]
        assert g["hyb_prom_p99_s"] == [r["p99_s"] for r in hyb]
        assert g["hyb_aging_p99_s"] == col(seeds["hybrid:8, aging 1 h"], "p99")
        assert all(r["served_pct"] > 99.9 for r in hyb)
        gain = [r["batch_by_deadline"] - a for r, a in zip(hyb, col(seeds["hybrid:8, aging 1 h"], "batch"))]
        assert g["hyb_prom_gain"] == gain and g["hyb_prom_gain_lo"] == min(gain)
        assert min(gain) > 0 or max(gain) < 0  # "more" (or "fewer") holds on every seed
