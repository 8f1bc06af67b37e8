"""The slot-pool engine against an independent reading of the model, written here, at any clock.

``reading`` below follows the anchor program line by line (a list of running
jobs counted down every tick), generalised the way the docs of
:mod:`lanes.pool.scenario` and :mod:`lanes.pool.arrivals` describe: ticks of
``tick_s`` seconds, each arrival at its drawn instant inside its second, and
the four extensions.  It shares no code with the package.
"""

from __future__ import annotations

import math
import random
from collections import deque

import pytest
from hypothesis import given, settings, strategies as st

import lanes


def reading(sc: lanes.Scenario, kind: str, reserve: int = 0, floor: int = 0, aging_s=None,
            victim: str = "youngest", min_run_s: int = 0, promote_s=None) -> dict:
    n = round(1 / sc.tick_s)  # ticks per second
    rng = random.Random(sc.seed)
    batch_q = deque([[rng.randint(*sc.batch_service_s) * n, 0, 0] for _ in range(sc.backlog)])  # left, waited, since
    arrivals: dict[int, list[int]] = {}  # tick -> holds (in ticks), in arrival order
    T = sc.ticks
    per_second = []
    for t in range(T):
        lam = sc.trough_rate + (sc.peak_rate - sc.trough_rate) * (1 - math.cos(2 * math.pi * t / T)) / 2
        u, k = rng.random(), 0
        p = cum = math.exp(-lam)
        while u > cum and k < 10_000:
            k += 1
            p *= lam / k
            cum += p
        per_second.append([rng.randint(*sc.inter_service_s) for _ in range(k)])
    offsets = random.Random(f"offsets {sc.seed}")
    for t, holds in enumerate(per_second):
        for off, hold in zip(sorted(offsets.random() for _ in holds), holds):
            arrivals.setdefault(t * n + int(off * n), []).append(hold * n)
    inter_q: deque = deque()
    running: list[list] = []  # [kind, left, start, waited]
    waits, done, pre, busy = [], 0, 0, 0
    for t in range(T * n):
        inter_q.extend((t, h) for h in arrivals.get(t, []))
        for r in running:
            r[1] -= 1
        done += sum(1 for r in running if r[1] <= 0 and r[0] == "batch")
        running = [r for r in running if r[1] > 0]
        n_batch = sum(1 for r in running if r[0] == "batch")
        # Promotion (priority aging): the batch queue's head, once it has waited promote_s in all, ranks
        # with the requests as if it had arrived at the tick its wait reached promote_s.
        head_rank = None
        if promote_s is not None and batch_q:
            left, waited, since = batch_q[0]
            if waited + t - since >= promote_s * n:
                head_rank = t - (waited + t - since - promote_s * n)
        if kind in ("preempt", "hybrid"):
            ahead = [a for a, _ in inter_q if head_rank is None or a <= head_rank]
            need = len(ahead) - (sc.slots - len(running))
            ok = [r for r in running if r[0] == "batch" and t - r[2] >= min_run_s * n
                  and (aging_s is None or r[3] <= aging_s * n) and (promote_s is None or r[3] < promote_s * n)]
            ok.sort(key=(lambda r: -r[2]) if victim == "youngest" else (lambda r: -r[1]))
            for v in ok[: max(0, min(need, n_batch - floor))]:
                running.remove(v)
                batch_q.appendleft([v[1] + sc.preempt_cost_s * n, v[3], t])
                pre += 1
                n_batch -= 1
        free = sc.slots - len(running)
        if kind == "fifo":
            while free and (batch_q or inter_q):
                if batch_q:
                    left, waited, since = batch_q.popleft()
                    running.append(["batch", left, t, waited + t - since])
                else:
                    a, s = inter_q.popleft()
                    waits.append(t - a)
                    running.append(["inter", s, t, t - a])
                free -= 1
        else:
            n_inter = len(running) - n_batch
            headroom = reserve if kind in ("reserve", "hybrid") else 0
            while free:  # one slot at a time, to the higher-ranked of the two queues' heads
                inter_ok = inter_q and not (floor and (batch_q or n_batch) and n_inter >= sc.slots - floor)
                batch_ok = batch_q and (free > headroom or n_batch < floor)
                rank = None
                if promote_s is not None and batch_q:
                    left, waited, since = batch_q[0]
                    if waited + t - since >= promote_s * n:
                        rank = since - waited + promote_s * n
                if batch_ok and (not inter_ok or (rank is not None and rank < inter_q[0][0])):
                    left, waited, since = batch_q.popleft()
                    running.append(["batch", left, t, waited + t - since])
                    n_batch += 1
                elif inter_ok:
                    a, s = inter_q.popleft()
                    waits.append(t - a)
                    running.append(["inter", s, t, t - a])
                    n_inter += 1
                else:
                    break
                free -= 1
        busy += len(running)
    waits.sort()
    pct = lambda q: waits[min(len(waits) - 1, int(q * len(waits)))] / n if waits else -1  # noqa: E731
    return {"p50": pct(0.5), "p99": pct(0.99), "max": waits[-1] / n if waits else -1,
            "late": sum(w > 2 * n for w in waits) / max(1, len(waits)), "batch_done": done,
            "preempted": pre, "util": busy / (T * n * sc.slots)}


#: The extension settings the property tests draw from (test_model.py draws from them too).
EXTENSION_SETS = [{}, {"floor": 2}, {"aging_s": 20}, {"victim": "most_remaining"}, {"min_run_s": 7},
                  {"floor": 1, "aging_s": 0, "victim": "most_remaining", "min_run_s": 3},
                  {"promote_s": 30}, {"promote_s": 0, "floor": 2},
                  {"promote_s": 60, "aging_s": 20, "victim": "most_remaining", "min_run_s": 3}]


def fitted(kind: str, reserve: int, ext: dict, slots: int) -> tuple[str, int, dict]:
    """A drawn policy fitted to the pool: its spec, its reserve and its extensions (fifo takes none)."""
    r = min(reserve, slots) if kind in ("reserve", "hybrid") else 0
    spec = kind if kind in ("fifo", "priority", "preempt") else f"{kind}:{r}"
    return spec, r, {} if kind == "fifo" else {k: (min(v, slots) if k == "floor" else v) for k, v in ext.items()}


def engine_row(sc: lanes.Scenario, spec: str, **ext) -> dict:
    row = lanes.simulate(sc, spec, **ext).row()
    del row["policy"]
    return row


def approx(row: dict) -> dict:
    return {k: pytest.approx(v, abs=1e-9) for k, v in row.items()}


class TestAgainstTheReading:
    def test_the_anchor_day_at_one_second(self):
        sc = lanes.Scenario(hours=1, tick_s=1)
        for spec, kind, r in (("priority", "priority", 0), ("reserve:8", "reserve", 8), ("hybrid:8", "hybrid", 8)):
            assert engine_row(sc, spec) == reading(sc, kind, r), spec

    @settings(max_examples=25, deadline=None, derandomize=True)
    @given(
        slots=st.integers(1, 12),
        tick=st.sampled_from([1, 0.5, 0.25, 0.1]),
        kind=st.sampled_from(["fifo", "priority", "reserve", "preempt", "hybrid"]),
        reserve=st.integers(0, 4),
        ext=st.sampled_from(EXTENSION_SETS),
        seed=st.integers(0, 10**6),
        cost=st.sampled_from([0, 3, 15]),
    )
    def test_random_scenarios_and_clocks(self, slots, tick, kind, reserve, ext, seed, cost):
        sc = lanes.Scenario(slots=slots, hours=0.05, backlog=40, batch_service_s=(5, 40), inter_service_s=(1, 6),
                            trough_rate=0.5, peak_rate=3.0, preempt_cost_s=cost, seed=seed, tick_s=tick)
        spec, r, ext = fitted(kind, reserve, ext, slots)
        assert approx(engine_row(sc, spec, **ext)) == reading(sc, kind, r, **ext)


class TestPromotion:
    """Aging as priority (``promote_s``): the engine against the reading, and what it changes."""

    SC = lanes.Scenario(slots=6, hours=0.1, backlog=60, batch_service_s=(10, 40), inter_service_s=(2, 8),
                        trough_rate=0.6, peak_rate=1.6, preempt_cost_s=5)

    @pytest.mark.parametrize("seed", [1, 2, 3])
    @pytest.mark.parametrize("tick", [1, 0.5, 0.1])
    def test_the_engine_agrees_with_the_reading(self, seed, tick):
        sc = self.SC.with_(seed=seed, tick_s=tick)
        for spec, kind, r in (("priority", "priority", 0), ("reserve:2", "reserve", 2), ("preempt", "preempt", 0),
                              ("hybrid:1", "hybrid", 1)):
            for promote_s in (0, 20, 90):
                row = reading(sc, kind, r, promote_s=promote_s)
                assert approx(engine_row(sc, spec, promote_s=promote_s)) == row, (spec, promote_s)

    def test_promotion_trades_interactive_waits_for_batch_work(self):
        sc = self.SC.with_(seed=4)
        plain, promoted = (engine_row(sc, "priority", **ext) for ext in ({}, {"promote_s": 60}))
        assert promoted["batch_done"] > plain["batch_done"]
        assert promoted["p99"] > plain["p99"]

    def test_promotion_after_the_day_changes_nothing_and_never_evicts_a_promoted_job(self):
        sc = self.SC.with_(seed=5)
        assert engine_row(sc, "hybrid:1", promote_s=sc.ticks) == engine_row(sc, "hybrid:1")
        assert engine_row(sc, "preempt", promote_s=0)["preempted"] == 0  # every job starts promoted


class TestTheClock:
    """What the 1 s clock hides: at a step-sized clock almost every arrival at a full pool evicts."""

    @pytest.fixture(scope="class")
    @classmethod
    def day(cls):
        return {tick: {spec: lanes.simulate(lanes.Scenario(tick_s=tick, preempt_cost_s=3), spec)
                       for spec in ("preempt", "hybrid:8")} for tick in (1, 0.02)}

    def test_preemption_evicts_on_most_arrivals_at_a_step_sized_clock(self, day):
        per_arrival = {tick: r["preempt"].preempted / r["preempt"].n_arrivals for tick, r in day.items()}
        assert per_arrival[0.02] > 0.5 > per_arrival[1]

    def test_hybrid_finishes_more_batch_than_preempt_with_a_cheap_swap_only_at_a_fine_clock(self, day):
        assert day[0.02]["hybrid:8"].batch_done > day[0.02]["preempt"].batch_done
        assert day[1]["hybrid:8"].batch_done < day[1]["preempt"].batch_done

    def test_the_reading_agrees_on_a_smaller_pool_at_the_step_sized_clock(self):
        sc = lanes.Scenario(slots=8, hours=0.1, backlog=200, batch_service_s=(20, 60), trough_rate=0.5,
                            peak_rate=0.8, preempt_cost_s=3, tick_s=0.02)
        rows = {spec: reading(sc, kind, r) for spec, kind, r in (("preempt", "preempt", 0), ("hybrid:2", "hybrid", 2))}
        for spec, row in rows.items():
            assert approx(engine_row(sc, spec)) == row, spec
        n_arrivals = lanes.draw_stream(sc).n_arrivals
        assert rows["preempt"]["preempted"] / n_arrivals > 0.5

    def test_event_driven_clock_is_the_fine_clocks_limit(self):
        sc = lanes.Scenario(hours=1, preempt_cost_s=3)
        fine, event = (lanes.simulate(sc.with_(tick_s=t), "preempt") for t in (0.01, 0))
        assert fine.preempted <= event.preempted <= 1.05 * fine.preempted
        assert event.preempted / event.n_arrivals > 0.9


class TestTheDraws:
    # the anchor's ranges; one slot time; ranges of 2**k and 2**k + 1 numbers (randint draws k + 1 bits
    # and draws again about half the time); a week-long one
    @pytest.mark.parametrize("batch_s, inter_s", [((60, 180), (4, 12)), ((7, 7), (1, 1)), ((1, 1025), (1, 16)),
                                                  ((2, 65), (3, 258)), ((1, 604_800), (5, 5))])
    def test_the_one_second_stream_is_the_anchor_programs(self, batch_s, inter_s):
        """Every slot time is ``randint``'s number, in the anchor's order, however it is drawn."""
        sc = lanes.Scenario(hours=0.1, backlog=300, batch_service_s=batch_s, inter_service_s=inter_s, seed=17)
        rng = random.Random(sc.seed)
        backlog = [rng.randint(*batch_s) for _ in range(300)]
        stream = lanes.draw_stream(sc)
        assert list(stream.batch_service_s) == backlog
        holds = []
        for t in range(sc.ticks):
            k = lanes.pool.arrivals.poisson_count(lanes.rate_per_s(sc, t), rng.random())
            holds += [rng.randint(*inter_s) for _ in range(k)]
        assert list(stream.inter_service_s) == holds

    def test_the_clock_does_not_change_the_draws(self):
        sc = lanes.Scenario(hours=0.1)
        assert lanes.draw_stream(sc) is lanes.draw_stream(sc.with_(tick_s=0.02))

    @pytest.mark.parametrize("tick", [0.3, -1, 2, 0.7])
    def test_a_clock_that_does_not_divide_a_second_is_refused(self, tick):
        with pytest.raises(ValueError, match="tick_s must be"):
            lanes.Scenario(tick_s=tick)

    def test_a_window_past_a_week_is_refused_naming_the_limit(self):
        with pytest.raises(ValueError, match=r"hours must be at most 168 \(a week\)"):
            lanes.Scenario(hours=169)
