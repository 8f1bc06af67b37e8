"""The readable model (lanes.pool.model) and the fast loop (lanes.pool._fast): one model, two loops.

``test_pool_model.py`` holds both to an independent reading of the anchor program on tick clocks;
here the fast loop is held to the readable one on every clock, event-driven included, with the
eviction stall and batch arriving over the day, and the stall to a hand-made day and a closed form.
"""

from __future__ import annotations

import math
from pathlib import Path

import pytest
from hypothesis import given, settings, strategies as st

import lanes
from lanes.pool import model
from lanes.pool.arrivals import ArrivalStream
from test_pool_model import EXTENSION_SETS, fitted

MODEL = Path(model.__file__)


def same(a: lanes.SlotPoolResult, b: lanes.SlotPoolResult) -> bool:
    """Equal rows; slot use to 1e-12 (event-driven, the fast loop sums busy time over extra instants)."""
    ra, rb = a.row(), b.row()
    assert ra.pop("util") == pytest.approx(rb.pop("util"), rel=1e-12, abs=1e-12)
    assert ra == rb
    assert (a.stalled_s, a.batch_queued, a.n_interactive) == (b.stalled_s, b.batch_queued, b.n_interactive)
    assert a.inter_stalled_s == pytest.approx(b.inter_stalled_s, rel=1e-12, abs=1e-12)
    assert a.day.busy_interactive == b.day.busy_interactive and a.day.busy_batch == b.day.busy_batch
    return True


class TestTheFastLoopIsTheModel:
    @settings(max_examples=60, deadline=None, derandomize=True)
    @given(
        slots=st.integers(1, 12),
        tick=st.sampled_from([0, 0, 1, 0.5, 0.1]),
        kind=st.sampled_from(["fifo", "priority", "reserve", "preempt", "hybrid"]),
        reserve=st.integers(0, 4),
        ext=st.sampled_from(EXTENSION_SETS),
        seed=st.integers(0, 10**6),
        cost=st.sampled_from([0, 3, 15]),
        stall=st.sampled_from([0, 0, 0.24, 1.5]),
        batch_rates=st.sampled_from([(0, 0), (0.05, 0.2), (0.3, 0.0)]),
    )
    def test_on_random_scenarios(self, slots, tick, kind, reserve, ext, seed, cost, stall, batch_rates):
        sc = lanes.Scenario(slots=slots, hours=0.05, backlog=40, batch_service_s=(5, 40), inter_service_s=(1, 6),
                            trough_rate=0.5, peak_rate=3.0, preempt_cost_s=cost, seed=seed, tick_s=tick,
                            eviction_stall_s=stall, batch_trough_rate=batch_rates[0], batch_peak_rate=batch_rates[1])
        spec, _, ext = fitted(kind, reserve, ext, slots)
        assert same(lanes.simulate(sc, spec, **ext), model.simulate(sc, spec, **ext))

    @pytest.mark.parametrize("spec", lanes.DEFAULT_POLICIES)
    def test_on_an_hour_of_the_anchor_day_event_driven_with_the_stall(self, spec):
        sc = lanes.Scenario(hours=1, eviction_stall_s=0.24, preempt_cost_s=0, batch_peak_rate=0.1)
        assert same(lanes.simulate(sc, spec), model.simulate(sc, spec))

    def test_on_a_trace_replay_with_sub_second_holds(self):
        from lanes.gpu.replay import replay_inputs
        from lanes.pool.traces import load_trace

        sc, stream = replay_inputs(load_trace("code").window(0, 600), lanes.Scenario(backlog=2000))
        for spec in ("priority", "reserve:8", "hybrid:4"):
            assert same(lanes.simulate(sc, spec, stream=stream), model.simulate(sc, spec, stream=stream))

    def test_the_model_is_a_loop_to_read(self):
        lines = MODEL.read_text().splitlines()
        assert len(lines) < 200
        assert "heap" not in MODEL.read_text().replace("with a heap", "")  # no lazy-deletion heap in the model


def day(slots: int, batch_s: list[int], arrivals: list[tuple[float, float]], seconds: int) -> tuple:
    """A hand-made day: a backlog and requests (arrival s, hold s), event-driven."""
    sc = lanes.Scenario(slots=slots, hours=seconds / 3600, backlog=len(batch_s), preempt_cost_s=0,
                        eviction_stall_s=0.5, inter_service_s=(1, 10))
    whole = tuple(int(a) for a, _ in arrivals)
    stream = ArrivalStream(tuple(batch_s), whole, tuple(h for _, h in arrivals),
                           tuple(a - w for (a, _), w in zip(arrivals, whole)), seconds)
    return sc, stream


class TestTheStall:
    def test_a_hand_made_day(self):
        # Two slots, two 100 s batch jobs from t = 0; requests at 10 s (5 s) and 12 s (1 s); pure preemption,
        # a 0.5 s stall per eviction, no per-slot charge.  By hand:
        #   10.0: R1 evicts one job (B, the later of two equal starts: the second to take a slot); the stall
        #         moves A to 100.5 and R1 to 15.5.
        #   12.0: R2 evicts A; R2 and R1 move by 0.5: R2 ends 13.5, R1 16.0.
        #   13.5: A (the queue's head: evicted last) resumes with 100.5 - 12 = 88.5 s left: ends 102.0.
        #   16.0: B resumes with 100 - 10 = 90 s left: ends 106.0.
        sc, stream = day(2, [100, 100], [(10.0, 5.0), (12.0, 1.0)], 200)
        for run in (lanes.simulate, model.simulate):
            r = run(sc, "preempt", stream=stream)
            assert (r.preempted, r.batch_done, r.wait_s) == (2, 2, (0.0, 0.0))
            assert r.stalled_s == 1.0 and r.stalled_share == 1 / 200
            assert r.inter_stalled_s == 0.5 * 1 + 0.5 * 2  # R1 through both stalls, R2 through its own
            assert r.slowdown == pytest.approx((5 + 1 + 1.5) / 6)
            assert r.util == pytest.approx((102.0 + 106.0 - (13.5 - 12) - (16 - 10) + 16.0 - 10 + 13.5 - 12) / 400)
            busy = r.day.busy_batch
            assert busy[101] == 2 and busy[102] == 1 and busy[105] == 1 and busy[106] == 0

    def test_the_closed_form_at_light_load(self):
        # A pool kept full by batch; requests of 4 s at 0.05/s.  Each arrival evicts one job and stalls every
        # running sequence d: a request sits through its own stall and one per arrival during its stay,
        # about d (1 + rate (hold + d)).
        rate, hold, d = 0.05, 4, 0.5
        sc = lanes.Scenario(slots=8, backlog=5000, batch_service_s=(600, 900), inter_service_s=(hold, hold),
                            trough_rate=rate, peak_rate=rate, preempt_cost_s=0, eviction_stall_s=d)
        r = lanes.simulate(sc, "preempt")
        assert r.preempted == r.n_arrivals == r.n_interactive and r.p99_s == 0
        assert r.stalled_s == pytest.approx(r.n_arrivals * d)
        assert r.stalled_share == pytest.approx(r.n_arrivals * d / sc.ticks)
        assert r.slowdown == pytest.approx(1 + d * (1 + rate * (hold + d)) / hold, rel=0.02)

    def test_the_anchor_day_with_the_stall_as_the_cost_model(self):
        sc = lanes.Scenario(eviction_stall_s=0.24, preempt_cost_s=0)
        preempt, hybrid = (lanes.simulate(sc, spec) for spec in ("preempt", "hybrid:8"))
        assert preempt.p99_s > 0.5 and hybrid.p99_s > 1
        assert preempt.stalled_share > 0.4 and preempt.slowdown > 1.5
        plain = lanes.simulate(sc.with_(eviction_stall_s=0), "preempt")
        assert plain.p99_s == 0 and plain.stalled_s == 0 and plain.slowdown == 1

    def test_a_tick_clock_rounds_the_stall_up_to_whole_ticks(self):
        sc, stream = day(2, [100, 100], [(10.0, 5.0), (12.0, 1.0)], 200)
        r = lanes.simulate(sc.with_(tick_s=1), "preempt", stream=stream)
        assert r.stalled_s == 2.0  # two evictions, 0.5 s each rounded up to one tick

    def test_a_scheduler_is_refused_the_stall_in_one_line(self):
        with pytest.raises(ValueError, match="eviction_stall_s and batch arrivals apply to built-in policies only"):
            lanes.simulate(lanes.Scenario(hours=0.01, eviction_stall_s=0.2), lambda obs: None)


class TestBatchArrivingOverTheDay:
    SC = lanes.Scenario(slots=16, backlog=0, batch_service_s=(60, 180), trough_rate=0.5, peak_rate=1.5,
                        batch_trough_rate=0.02, batch_peak_rate=0.1)

    def test_the_draw_follows_its_own_curve_and_leaves_the_rest_alone(self):
        stream = lanes.draw_stream(self.SC)
        expected = (0.02 + 0.1) / 2 * self.SC.ticks
        assert abs(len(stream.batch_arrival_tick) - expected) < 5 * math.sqrt(expected)
        first, middle = (sum(1 for t in stream.batch_arrival_tick if a <= t < a + 3600) for a in (0, 9000))
        assert middle > 2 * first  # the peak is mid-window
        plain = lanes.draw_stream(self.SC.with_(batch_trough_rate=0, batch_peak_rate=0))
        assert (plain.arrival_tick, plain.inter_service_s) == (stream.arrival_tick, stream.inter_service_s)
        assert all(60 <= s <= 180 for s in stream.batch_arrival_service_s)

    def test_aging_by_priority_is_a_dial(self):
        # Batch arrives all day on a pool users keep busy: without promotion it waits behind every request;
        # promotion after promote_s lets it in, and the sooner it is promoted, the more it finishes.
        sc = self.SC.with_(slots=8, trough_rate=1.0, peak_rate=1.4, inter_service_s=(4, 8))
        done = [lanes.simulate(sc, "priority", promote_s=p).batch_done for p in (None, 1800, 600, 120)]
        p99 = [lanes.simulate(sc, "priority", promote_s=p).p99_s for p in (None, 1800, 600, 120)]
        assert done == sorted(done) and done[-1] > done[0]
        assert p99 == sorted(p99) and p99[-1] > p99[0]

    def test_on_the_default_day_promotion_buys_batch_work_with_the_users_wait(self):
        # book/reference_simulator.md: under preempt, batch arriving all day (no backlog), the sooner
        # a job is promoted the more batch finishes, and every setting costs users against none; the
        # p99 need not rise as promotion comes sooner (here it falls: fewer promoted jobs pile up).
        sc = lanes.Scenario(backlog=0, batch_trough_rate=0.3, batch_peak_rate=0.1)
        runs = [lanes.simulate(sc, "preempt", promote_s=p) for p in (None, 3600, 900, 60)]
        done = [r.batch_done for r in runs]
        assert done == sorted(done) and done[1] > done[0]
        assert runs[0].p99_s < 1 < 60 < min(r.p99_s for r in runs[1:])
        assert runs[-1].p99_s < runs[1].p99_s

    def test_bad_rates_are_refused_in_one_line(self):
        with pytest.raises(ValueError, match="batch_peak_rate"):
            lanes.Scenario(batch_peak_rate=-1)
        with pytest.raises(ValueError, match="batch arrivals"):
            lanes.Scenario(hours=168, batch_trough_rate=400, batch_peak_rate=400)
