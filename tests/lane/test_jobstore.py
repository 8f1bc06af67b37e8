"""Batch job store: job IDs, durable state, idempotent items, overflow to a provider."""

import pytest

from lanes.lane.jobstore import (
    BatchLaneScenario,
    JobStore,
    ProviderBatchAPI,
    chunk,
    daily_capacity_items_per_h,
    plan_overflow,
    simulate_batch_lane,
)


class TestJobs:
    def test_submit_returns_an_id_and_poll_counts_items(self):
        s = JobStore()
        job = s.submit(chunk([f"d{i}" for i in range(10)], 3), deadline_s=100)
        assert job == "job-0001"
        st = s.poll(job)
        assert (st.items, st.pending, st.done, st.state) == (4, 4, 0, "running")

    def test_same_idempotency_key_same_job(self):
        s = JobStore()
        a = s.submit(["x", "y"], deadline_s=100, idempotency_key="nightly-eval")
        b = s.submit(["x", "y"], deadline_s=100, idempotency_key="nightly-eval")
        assert a == b
        assert s.poll(a).items == 2
        assert s.counter("jobs") == 1

    def test_the_store_survives_a_restart(self, tmp_path):
        path = str(tmp_path / "jobs.db")
        s = JobStore(path)
        job = s.submit(["a", "b"], deadline_s=100)
        (lease,) = s.claim(0, 1)
        s.complete(lease.item_id, "A")
        s.close()
        again = JobStore(path)
        assert again.poll(job).done == 1
        assert again.results(job) == {"job-0001/0": "A"}
        assert [x.item_id for x in again.claim(1, 5)] == ["job-0001/1"]


class TestIdempotentItems:
    def test_a_retried_item_yields_one_result(self):
        s = JobStore()
        job = s.submit(["a"], deadline_s=1000)
        (first,) = s.claim(0, 1, lease_s=10)
        assert s.claim(5, 1, lease_s=10) == []  # still leased
        (retry,) = s.claim(10, 1, lease_s=10)  # lease ran out: handed out again
        assert retry.item_id == first.item_id and retry.attempt == 2
        assert s.complete(retry.item_id, "r2") is True
        assert s.complete(first.item_id, "r1") is False  # the slow first worker reports late
        assert s.results(job) == {"job-0001/0": "r2"}
        assert s.counter("duplicate_results") == 1

    def test_done_items_are_never_handed_out_again(self):
        s = JobStore()
        s.submit(["a", "b"], deadline_s=1000)
        for lease in s.claim(0, 2, lease_s=1):
            s.complete(lease.item_id, "ok")
        assert s.claim(500, 10) == []

    def test_each_item_has_its_own_deadline(self):
        s = JobStore()
        job = s.submit(["urgent", "later"], deadline_s=1000, item_deadlines_s=[10, 1000])
        assert [x.payload for x in s.claim(20, 5)] == ["later"]
        st = s.poll(job)
        assert st.expired == 1 and st.state == "failed"

    def test_unknown_item_is_an_error(self):
        with pytest.raises(ValueError, match=r"item_id must name a stored item \(got 'nope'\)"):
            JobStore().complete("nope", "x")


class TestOverflow:
    def test_overflow_triggers_exactly_when_the_deadline_cannot_be_met(self):
        assert plan_overflow(100, [50, 50]).overflow_items == 0
        assert plan_overflow(101, [50, 50]).overflow_items == 1
        assert plan_overflow(101, [50, 50]).in_house_items == 100

    def test_provider_must_fit_before_the_deadline(self):
        assert plan_overflow(10, [1] * 30).provider_in_time
        assert not plan_overflow(10, [1] * 20).provider_in_time

    def test_provider_returns_results_after_its_turnaround(self):
        p = ProviderBatchAPI(window_s=100, turnaround_s=60)
        p.submit(["a", "b"], now_s=0)
        assert p.collect(59) == []
        assert p.collect(60) == ["a", "b"]
        assert p.collect(1000) == []

    def test_overflow_finishes_a_job_the_lane_alone_cannot(self):
        alone = simulate_batch_lane(BatchLaneScenario(overflow=False))
        both = simulate_batch_lane(BatchLaneScenario(overflow=True))
        assert alone.on_time_fraction < 0.6
        assert both.on_time_fraction == 1.0
        assert both.done_by_provider[-1] == both.plan.overflow_items > 0
        assert both.results_stored == both.scenario.items

    def test_a_job_that_fits_sends_nothing(self):
        r = simulate_batch_lane(BatchLaneScenario(items=1000, deadline_h=12))
        assert r.plan.overflow_items == 0
        assert r.done_by_provider[-1] == 0
        assert r.on_time_fraction == 1.0

    def test_retries_and_repeated_reports_never_add_results(self):
        r = simulate_batch_lane(BatchLaneScenario(items=1000, deadline_h=12, crash_prob=0.2, repeat_report_prob=0.3))
        assert r.attempts > r.done_in_house[-1]
        assert r.duplicate_results > 0
        assert r.results_stored == r.done_in_house[-1] == 1000


class TestCapacity:
    def test_trough_has_more_room_than_peak(self):
        caps = daily_capacity_items_per_h()
        assert caps[0] > caps[12]
        # peak: 64 - 8 headroom - 5 req/s x 8 s = 16 idle slots -> 960 one-minute items an hour
        assert min(caps) == pytest.approx(16 * 60, rel=0.01)


class TestValidation:
    def test_deadline_must_be_after_now(self):
        with pytest.raises(ValueError, match=r"deadline_s must be a number > 5"):
            JobStore().submit(["a"], deadline_s=5, now_s=5)

    def test_empty_job(self):
        with pytest.raises(ValueError, match=r"items must contain at least one item \(got 0\)"):
            JobStore().submit([], deadline_s=5)

    def test_scenario(self):
        with pytest.raises(ValueError, match=r"items must be an integer in \[1, 50000\] \(got 0\)"):
            BatchLaneScenario(items=0)
        with pytest.raises(ValueError, match=r"provider_turnaround_h must be a number in \[0, 24\]"):
            BatchLaneScenario(provider_turnaround_h=30)
