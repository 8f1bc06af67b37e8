"""Micro-batcher: twenty requests in batches of 8, the batch window, the max_wait trade-off, backpressure, validation."""

import asyncio

import pytest

from lanes.gpu.batcher import MicroBatcher, QueueFullError, run_async, simulate_batches


def run_loop(coroutine):
    """``asyncio.run`` in a thread of its own.

    In a parallel test run another file's session may hold Playwright's sync API, which
    keeps an event loop running in the worker's main thread; a fresh thread has none.
    """
    import concurrent.futures

    with concurrent.futures.ThreadPoolExecutor(1) as pool:
        return pool.submit(asyncio.run, coroutine).result()


class TestVirtualClock:
    def test_seed_example_20_requests_max_batch_8_is_three_batches(self):
        r = simulate_batches(20, max_batch=8, max_wait_s=0.02, model_call_s=0.05)
        assert r.batch_sizes == (8, 8, 4)
        assert r.batches == 3
        assert r.completed == 20
        # two full batches run at once, the last waits max_wait_s for company
        assert r.total_s == pytest.approx(3 * 0.05 + 0.02)

    def test_no_wait_still_takes_what_is_queued(self):
        # Triton's dynamic batcher and Ray Serve's @serve.batch: a zero wait never
        # waits for company, but the requests already queued go together.
        r = simulate_batches(20, max_batch=8, max_wait_s=0.0)
        assert r.batch_sizes == (8, 8, 4)
        assert r.total_s == pytest.approx(3 * 0.05)

    def test_no_wait_batches_what_piled_up_during_a_call(self):
        # one every 10 ms, a 50 ms call: each call's arrivals form the next batch
        r = simulate_batches([i * 0.01 for i in range(11)], max_batch=8, max_wait_s=0.0, model_call_s=0.05)
        assert r.batch_sizes == (1, 5, 5)

    def test_the_deadline_variant_sends_each_request_alone_with_no_wait(self):
        r = simulate_batches(20, max_batch=8, max_wait_s=0.0, rule="deadline")
        assert r.batch_sizes == (1,) * 20
        assert r.total_s == pytest.approx(20 * 0.05)

    def test_the_rules_agree_once_the_window_has_time(self):
        arrivals = [i * 0.003 for i in range(40)]
        for w in (0.01, 0.02, 0.2):
            assert (simulate_batches(arrivals, max_wait_s=w).batch_sizes
                    == simulate_batches(arrivals, max_wait_s=w, rule="deadline").batch_sizes)

    def test_long_wait_same_batches_more_time(self):
        r = simulate_batches(20, max_batch=8, max_wait_s=0.2)
        assert r.batch_sizes == (8, 8, 4)
        assert r.total_s == pytest.approx(3 * 0.05 + 0.2)

    def test_spread_arrivals_fill_batches_while_the_model_runs(self):
        r = simulate_batches([i * 0.004 for i in range(20)], max_batch=8)
        assert sum(r.batch_sizes) == 20
        assert r.batch_sizes[0] == 5  # 0, 4, ..., 16 ms arrive inside the 20 ms window

    def test_bounded_queue_rejects_above_its_limit(self):
        r = simulate_batches(20, max_batch=8, max_queue=10)
        assert r.rejected == 10
        assert r.completed == 10

    def test_every_request_is_answered_or_rejected(self):
        arrivals = [i * 0.001 for i in range(200)]
        r = simulate_batches(arrivals, max_batch=4, max_queue=16)
        assert r.completed + r.rejected == 200
        assert r.rejected > 0
        assert max(r.batch_sizes) <= 4


class TestWindowRules:
    """The batch window: closes when full or when max_wait after it opened is up."""

    def test_a_full_window_closes_at_once_not_at_max_wait(self):
        r = simulate_batches([0.0, 0.001, 0.002], max_batch=3, max_wait_s=1.0, model_call_s=0.05)
        assert r.batch_sizes == (3,)
        assert r.total_s == pytest.approx(0.002 + 0.05)

    def test_an_arrival_exactly_at_the_close_misses_the_window(self):
        r = simulate_batches([0.0, 0.02], max_batch=8, max_wait_s=0.02, model_call_s=0.05)
        assert r.batch_sizes == (1, 1)

    def test_the_window_counts_from_when_it_opened_not_from_the_first_arrival(self):
        # the second request arrives during the first call; its window opens when the call ends
        r = simulate_batches([0.0, 0.03, 0.06], max_batch=8, max_wait_s=0.02, model_call_s=0.05)
        assert r.batch_sizes == (1, 2)
        assert r.total_s == pytest.approx(0.02 + 0.05 + 0.02 + 0.05)

    def test_a_burst_during_an_open_window_still_meets_the_queue_bound(self):
        r = simulate_batches([0.0] + [0.01] * 10, max_batch=8, max_wait_s=0.02, max_queue=3)
        assert r.rejected == 7
        assert r.batch_sizes == (4,)


class TestAsyncio:
    def test_seed_example_gives_8_8_4(self):
        r = run_loop(run_async(20, max_batch=8, max_wait_s=0.02, model_call_s=0.05))
        assert r.batch_sizes == (8, 8, 4)
        assert r.total_s >= 3 * 0.05

    def test_no_wait_takes_the_queue_in_asyncio_too(self):
        r = run_loop(run_async(20, max_batch=8, max_wait_s=0.0, model_call_s=0.01))
        assert r.batch_sizes == (8, 8, 4)
        d = run_loop(run_async(6, max_batch=8, max_wait_s=0.0, model_call_s=0.001, rule="deadline"))
        assert d.batch_sizes == (1,) * 6

    def test_matches_the_virtual_clock(self):
        real = run_loop(run_async(20, max_batch=6, max_wait_s=0.01, model_call_s=0.01))
        assert real.batch_sizes == simulate_batches(20, max_batch=6, max_wait_s=0.01, model_call_s=0.01).batch_sizes

    def test_results_come_back_to_their_callers(self):
        async def main():
            b = MicroBatcher(max_batch=4, max_wait_s=0.005, model_call_s=0.001, handler=lambda xs: [x * 2 for x in xs])
            worker = asyncio.create_task(b.run())
            out = await asyncio.gather(*(b.submit(i) for i in range(10)))
            worker.cancel()
            return out

        assert run_loop(main()) == [2 * i for i in range(10)]

    def test_full_queue_raises_a_clear_error(self):
        async def main():
            b = MicroBatcher(max_queue=2, model_call_s=0.001)
            return await asyncio.gather(*(b.submit(i) for i in range(3)))

        with pytest.raises(QueueFullError, match=r"queue is full: 2 requests waiting \(max_queue=2\)"):
            run_loop(main())

    def test_run_async_counts_rejections(self):
        r = run_loop(run_async(20, max_queue=10, model_call_s=0.005))
        assert (r.completed, r.rejected) == (10, 10)


class TestValidation:
    def test_max_batch_zero(self):
        with pytest.raises(ValueError, match=r"max_batch must be an integer >= 1 \(got 0\)"):
            simulate_batches(20, max_batch=0)

    def test_unknown_rule(self):
        with pytest.raises(ValueError, match="rule must be one of 'queued', 'deadline'"):
            simulate_batches(3, rule="greedy")
        with pytest.raises(ValueError, match="rule"):
            MicroBatcher(rule="fifo")

    def test_negative_wait(self):
        with pytest.raises(ValueError, match="max_wait_s must be a number >= 0"):
            MicroBatcher(max_wait_s=-0.1)

    def test_max_queue_zero(self):
        with pytest.raises(ValueError, match="max_queue must be an integer >= 1"):
            simulate_batches(20, max_queue=0)

    def test_negative_arrival_time(self):
        with pytest.raises(ValueError, match="arrival time must be a number >= 0"):
            simulate_batches([0.0, -1.0])
