"""Interactive lane: 429 at the front, deadline drops, fair share, adaptive LIFO, validation."""

import pytest

from lanes.lane.interactive import OUTCOMES, LanePolicy, LaneScenario, TenantLoad, simulate_lane

SURGE = LaneScenario(
    tenants=(TenantLoad("a", 6.0, surge_rate_per_s=12.0, surge_start_s=60, surge_end_s=180),),
    duration_s=300,
)
FLOOD = LaneScenario(
    tenants=(TenantLoad("small", 2.0), TenantLoad("flood", 4.0, surge_rate_per_s=30.0, surge_start_s=60, surge_end_s=180)),
    duration_s=300,
)


def _p50_latency_in(result, lo, hi):
    lat = sorted(r.latency_s for r in result.records if r.latency_s is not None and lo <= r.arrival_s < hi)
    return lat[len(lat) // 2]


class TestBoundedQueue:
    def test_a_full_queue_rejects_at_once(self):
        r = simulate_lane(SURGE, LanePolicy(max_queue=10))
        assert r.count("rejected") > 0
        rejected = [x for x in r.records if x.outcome == "rejected"]
        assert all(x.start_s is None and x.finish_s is None for x in rejected)
        assert max(r.queue_len) <= 10

    def test_unbounded_queue_rejects_nothing_and_grows(self):
        r = simulate_lane(SURGE, LanePolicy())
        assert r.count("rejected") == 0
        assert max(r.queue_len) > 100

    def test_bounded_queue_raises_goodput_over_unbounded(self):
        unbounded = simulate_lane(SURGE, LanePolicy())
        bounded = simulate_lane(SURGE, LanePolicy(max_queue=30))
        assert bounded.goodput_per_s() > 2 * unbounded.goodput_per_s()
        assert bounded.wasted_slot_s() < unbounded.wasted_slot_s() / 2

    def test_every_request_has_exactly_one_outcome(self):
        r = simulate_lane(SURGE, LanePolicy(max_queue=20, drop_expired=True))
        assert sum(r.count(o) for o in OUTCOMES) == len(r.records)


class TestDeadlineDrop:
    def test_an_expired_request_is_never_started(self):
        r = simulate_lane(SURGE, LanePolicy(drop_expired=True))
        assert r.count("expired") > 0
        for x in r.records:
            if x.start_s is not None:
                assert x.start_s - x.arrival_s < SURGE.deadline_s
            if x.outcome == "expired":
                assert x.start_s is None

    def test_without_the_drop_expired_requests_are_started(self):
        r = simulate_lane(SURGE, LanePolicy())
        assert any(x.wait_s is not None and x.wait_s >= SURGE.deadline_s for x in r.records)


class TestFairShare:
    def test_fair_share_protects_the_small_tenant(self):
        shared = simulate_lane(FLOOD, LanePolicy(max_queue=40, drop_expired=True))
        fair = simulate_lane(FLOOD, LanePolicy(max_queue=20, drop_expired=True, fair_share=True))
        n = len([x for x in fair.records if x.tenant == "small"])
        assert shared.count("rejected", "small") > 0.1 * n
        assert fair.count("rejected", "small") == 0
        assert fair.count("served", "small") > 0.95 * n

    def test_the_flood_waits_behind_itself(self):
        fair = simulate_lane(FLOOD, LanePolicy(max_queue=20, fair_share=True))
        assert fair.count("rejected", "flood") > 1000
        assert fair.latency_quantile_s(0.5, "flood") > 2 * fair.latency_quantile_s(0.5, "small")


class TestAdaptiveLifo:
    def test_lifo_keeps_p50_low_under_overload_while_fifo_grows(self):
        fifo = simulate_lane(SURGE, LanePolicy())
        lifo = simulate_lane(SURGE, LanePolicy(order="adaptive-lifo", queue_timeout_s=2.0))
        early, late = _p50_latency_in(fifo, 60, 90), _p50_latency_in(fifo, 150, 180)
        assert late > early + 20  # FIFO: every arrival waits behind a longer queue
        assert _p50_latency_in(lifo, 150, 180) < 2.0
        assert lifo.count("served") > 1.5 * fifo.count("served")

    def test_lifo_is_fifo_when_not_overloaded(self):
        calm = LaneScenario(tenants=(TenantLoad("a", 3.0),), duration_s=120)
        a = simulate_lane(calm, LanePolicy())
        b = simulate_lane(calm, LanePolicy(order="adaptive-lifo", overload_after_s=60))
        assert [x.start_s for x in a.records] == [x.start_s for x in b.records]

    def test_queue_timeout_drops_only_when_waited_too_long(self):
        r = simulate_lane(SURGE, LanePolicy(order="adaptive-lifo", queue_timeout_s=2.0))
        assert r.count("timed-out") > 0
        assert all(x.wait_s <= 2.0 or x.wait_s <= r.policy.overload_after_s for x in r.records if x.wait_s is not None)


class TestDeterminism:
    def test_same_seed_same_run(self):
        assert simulate_lane(SURGE, LanePolicy()).records == simulate_lane(SURGE, LanePolicy()).records

    def test_every_policy_sees_the_same_arrivals(self):
        a = simulate_lane(SURGE, LanePolicy())
        b = simulate_lane(SURGE, LanePolicy(max_queue=5))
        assert [x.arrival_s for x in a.records] == [x.arrival_s for x in b.records]

    def test_other_seed_other_arrivals(self):
        a = simulate_lane(SURGE, LanePolicy())
        b = simulate_lane(SURGE.with_(seed=2), LanePolicy())
        assert len(a.records) != len(b.records) or a.records[0].arrival_s != b.records[0].arrival_s


class TestTable:
    def test_to_frame_has_a_row_per_request(self):
        pd = pytest.importorskip("pandas")
        r = simulate_lane(SURGE.with_(duration_s=30), LanePolicy())
        df = r.to_frame()
        assert isinstance(df, pd.DataFrame)
        assert len(df) == len(r.records)
        assert {"tenant", "wait_s", "outcome"} <= set(df.columns)


class TestValidation:
    @pytest.mark.parametrize(
        "kwargs, match",
        [
            ({"slots": 0}, r"slots must be an integer >= 1 \(got 0\)"),
            ({"deadline_s": 0}, r"deadline_s must be a number > 0 \(got 0\)"),
            ({"service_s": (2, 1)}, r"service_s must have lo <= hi"),
            ({"tenants": ()}, r"tenants must be a non-empty sequence"),
            ({"tenants": (TenantLoad("a", 1), TenantLoad("a", 2))}, r"unique names \(got a, a\)"),
        ],
    )
    def test_scenario(self, kwargs, match):
        with pytest.raises(ValueError, match=match):
            LaneScenario(**kwargs)

    @pytest.mark.parametrize(
        "kwargs, match",
        [
            ({"max_queue": 0}, r"max_queue must be an integer >= 1 \(got 0\)"),
            ({"order": "lifo"}, r"order must be one of fifo, adaptive-lifo \(got 'lifo'\)"),
            ({"queue_timeout_s": -1}, r"queue_timeout_s must be a number > 0"),
            ({"drop_expired": "yes"}, r"drop_expired must be True or False"),
        ],
    )
    def test_policy(self, kwargs, match):
        with pytest.raises(ValueError, match=match):
            LanePolicy(**kwargs)

    def test_tenant(self):
        with pytest.raises(ValueError, match=r"rate_per_s must be a number >= 0 \(got -1\)"):
            TenantLoad("a", -1)
        with pytest.raises(ValueError, match=r"surge_end_s must be >= surge_start_s"):
            TenantLoad("a", 1, surge_rate_per_s=2, surge_start_s=10, surge_end_s=5)
