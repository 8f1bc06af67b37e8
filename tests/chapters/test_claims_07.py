"""Chapter 7 (batching): every claim the chapter makes, recomputed with lanes."""

import pytest

from lanes.gpu.batcher import simulate_batches
from lanes.gpu.continuous import BatchingScenario, decode_step_curve, simulate_batching
from lanes.gpu.hardware import get_hardware, get_model
from lanes.lane.jobstore import JobStore
from lanes.pool.sweep import SEEDS

from glued_values import glued

MODEL, GPU = get_model("llama-3.1-8b"), get_hardware("h100-sxm")
BATCHES = (1, 2, 4, 8, 16, 32, 64, 128, 256)
CONTEXT = 1024


@pytest.fixture(scope="module")
def curve():
    return {s.batch: s for s in decode_step_curve(BATCHES, context_tokens=CONTEXT, model=MODEL, hardware=GPU)}


class TestDecodeStep:
    def test_sixteen_sequences_cost_little_more_than_one(self, curve):
        # "sixteen sequences make the step only ~12% longer and multiply tokens/s ~14x"
        assert curve[16].step_s / curve[1].step_s < 1.15
        assert curve[16].tokens_per_s / curve[1].tokens_per_s > 14

    def test_decode_is_memory_bound_over_the_whole_range(self, curve):
        assert all(s.compute_s < s.memory_s for s in curve.values())

    def test_crossover_is_weights_over_kv_per_sequence_near_120(self, curve):
        crossover = MODEL.weight_bytes / (CONTEXT * MODEL.kv_bytes_per_token)
        assert 115 < crossover < 125
        # the table's rows on either side: weights are more than half the bytes at 64, less at 128
        assert curve[64].weight_share > 0.5 > curve[128].weight_share
        # and at the crossover itself, KV bytes equal the weights
        assert crossover * CONTEXT * MODEL.kv_bytes_per_token == pytest.approx(MODEL.weight_bytes)

    def test_four_times_the_context_puts_the_crossover_at_a_quarter_of_the_batch(self):
        one = MODEL.weight_bytes / (CONTEXT * MODEL.kv_bytes_per_token)
        four = MODEL.weight_bytes / (4 * CONTEXT * MODEL.kv_bytes_per_token)
        assert four == pytest.approx(one / 4)

    def test_doubling_the_batch_never_doubles_the_step(self, curve):
        ratios = [curve[b].step_s / curve[b // 2].step_s for b in BATCHES[1:]]
        assert max(ratios) < 1.6
        assert max(ratios) == ratios[-1]  # the largest is the last doubling, as the text says


class TestMicroBatcher:
    """The batcher claims, recomputed and compared with the numbers the chapter shows."""

    @pytest.fixture(scope="class")

    @classmethod
    def g(cls):
        return glued("07_batching")

    def test_no_wait_takes_the_queue_in_three_full_calls(self, g):
        r = simulate_batches(20, max_batch=8, max_wait_s=0.0, model_call_s=0.05)
        assert r.batch_sizes == (8, 8, 4)  # Triton / Ray Serve: what is queued goes together
        assert (g["nowait_calls"], g["nowait_total_ms"]) == (r.batches, pytest.approx(1e3 * r.total_s))
        assert g["nowait_total_ms"] == pytest.approx(3 * 50)
        assert g["burst_last"] == r.batch_sizes[-1]

    def test_a_200ms_wait_gives_the_same_batches_and_only_adds_latency(self, g):
        r = simulate_batches(20, max_batch=8, max_wait_s=0.2, model_call_s=0.05)
        none = simulate_batches(20, max_batch=8, max_wait_s=0.0, model_call_s=0.05)
        assert r.batch_sizes == none.batch_sizes
        assert r.total_s == pytest.approx(2 * 0.05 + 0.2 + 0.05)
        assert r.mean_latency_s > none.mean_latency_s
        assert (g["burst_calls"], g["burst_total_ms"]) == (r.batches, pytest.approx(1e3 * r.total_s))

    def test_the_deadline_variant_sends_each_request_alone(self, g):
        r = simulate_batches(20, max_batch=8, max_wait_s=0.0, model_call_s=0.05, rule="deadline")
        assert r.batch_sizes == (1,) * 20
        assert (g["deadline_calls"], g["deadline_total_ms"]) == (20, pytest.approx(1000))

    @staticmethod
    def exact(gap_ms, wait_ms):
        """The trickle run on a clock in whole milliseconds: every time is an integer, so
        an arrival at the instant a call ends ties with it exactly, as the chapter runs it."""
        return simulate_batches([k * gap_ms for k in range(20)], max_batch=8, max_wait_s=wait_ms,
                                model_call_s=50)

    def test_trickle_10ms_apart_no_wait_batches_and_a_wait_costs_latency(self, g):
        none, wait = self.exact(10, 0), self.exact(10, 200)
        assert 1 < none.batches < 20 and wait.batches < none.batches
        assert (g["gap10_calls0"], g["gap10_calls200"]) == (none.batches, wait.batches)
        assert g["gap10_ratio"] == pytest.approx(wait.mean_latency_s / none.mean_latency_s)
        assert g["gap10_ratio"] > 1

    def test_sparse_traffic_fuller_batches_slower_answers(self, g):
        runs = {w: self.exact(25, w) for w in (0, 20, 50, 100, 200)}
        assert runs[200].batches < runs[0].batches
        assert runs[200].mean_latency_s > runs[0].mean_latency_s
        assert (g["gap25_calls0"], g["gap25_calls200"]) == (runs[0].batches, runs[200].batches)
        assert (g["gap25_w0_ms"], g["gap25_w200_ms"]) == (runs[0].mean_latency_s, runs[200].mean_latency_s)

    def test_the_table_is_exact_not_a_floating_point_tie_break(self, g):
        """In seconds, 3 x 0.025 is 0.07500000000000001 and ties go by rounding: the
        chapter once showed 67.5, 87.0 and 107.5 ms where exact arithmetic gives these."""
        assert self.exact(25, 0).mean_latency_s == 62.5
        assert self.exact(10, 20).mean_latency_s == 90.5
        assert self.exact(25, 50).mean_latency_s == 112.5
        assert g["gap25_w0_ms"] == 62.5
        rounded = simulate_batches([k * 25 / 1000 for k in range(20)], max_batch=8, max_wait_s=0.0,
                                   model_call_s=0.05)
        assert 1e3 * rounded.mean_latency_s != pytest.approx(62.5)  # the tie the seconds break

    def test_the_textbook_rule_answers_its_check_question_with_twenty_calls(self, g):
        """The deadline rule is the common textbook example's; its check question (20 queued, max_wait 0)."""
        from glued_values import notebook
        from scripts import prose_tools as prose

        textbook = simulate_batches(20, max_batch=8, max_wait_s=0.0, model_call_s=0.05, rule="deadline")
        servers = simulate_batches(20, max_batch=8, max_wait_s=0.0, model_call_s=0.05)
        assert (g["deadline_calls"], g["nowait_calls"]) == (textbook.batches, servers.batches) == (20, 3)
        template = " ".join(next(t for _, t, _ in prose.templated_cells(notebook("07_batching"))
                                 if "{{deadline_calls" in t).split())
        assert "That is the rule of a common textbook example of a micro-batcher" in template
        assert ("how many calls answer {{n_req}} queued requests with `max_wait = 0`,"
                " has the answer {{deadline_calls}} under its own rule") in template
        assert "answers the same question with {{nowait_calls}} calls" in template
        assert "real rules" not in template  # the textbook rule is a rule in use, not a strawman

    def test_the_tie_rule_at_a_close_and_at_a_call_end(self, g):
        """An arrival at the instant its window closes misses it; one at the instant a call ends
        joins the next window.  The trickle table hinges on both: a hair either way changes it."""
        from glued_values import notebook
        from scripts import prose_tools as prose

        # the window opened at 0 closes at 50: the request arriving at 50 goes in a window of its own
        assert simulate_batches([0, 50], max_batch=8, max_wait_s=50, model_call_s=50).batch_sizes == (1, 1)
        assert simulate_batches([0, 49.999], max_batch=8, max_wait_s=50, model_call_s=50).batch_sizes == (2,)
        # the call of the first request ends at 50: the request arriving then joins the one queued at 25
        assert simulate_batches([0, 25, 50], max_batch=8, max_wait_s=0, model_call_s=50).batch_sizes == (1, 2)
        assert simulate_batches([0, 25, 50.001], max_batch=8, max_wait_s=0,
                                model_call_s=50).batch_sizes == (1, 1, 1)

        def nudged(gap_ms, wait_ms, by_ms):
            arrivals = [0] + [k * gap_ms + by_ms for k in range(1, 20)]
            return simulate_batches(arrivals, max_batch=8, max_wait_s=wait_ms, model_call_s=50).mean_latency_s

        assert g["gap25_w0_ms"] == self.exact(25, 0).mean_latency_s == 62.5
        assert nudged(25, 0, +0.001) > 80  # arriving a hair after each call ends: 85.0 ms
        assert self.exact(25, 50).mean_latency_s == 112.5
        assert nudged(25, 50, -0.001) < 90  # arriving a hair before each close: 87.5 ms
        template = " ".join(next(t for _, t, _ in prose.templated_cells(notebook("07_batching"))
                                 if "Real traffic trickles in" in t).split())
        assert ("a request that arrives at the instant its window closes misses it (the window closes first"
                " and the request waits for the next one), and a request that arrives at the instant a call"
                " ends is queued before the next window opens, so that window takes it") in template

    def test_no_wait_is_fastest_at_every_spacing(self, g):
        for gap_ms in (0, 10, 25):
            lat = {w: self.exact(gap_ms, w).mean_latency_s for w in (0, 20, 50, 100, 200)}
            assert min(lat, key=lat.get) == 0
        assert g["best_wait_everywhere_ms"] == 0


class TestWhatTheStepModelAssumes:
    def test_the_compute_column_states_its_mfu(self):
        """The compute column assumes an MFU: the chapter says which, where it introduces it."""
        from scripts import prose_tools as prose
        from glued_values import notebook

        g = glued("07_batching")
        step16 = decode_step_curve([16], context_tokens=CONTEXT, model=MODEL, hardware=GPU, mfu=g["mfu"])[0]
        full = decode_step_curve([16], context_tokens=CONTEXT, model=MODEL, hardware=GPU, mfu=1.0)[0]
        assert 1e3 * step16.compute_s == pytest.approx(0.537, abs=0.001)
        assert 1e3 * full.compute_s == pytest.approx(0.27, abs=0.01)  # at 989 TFLOP/s
        assert g["peak_tflops"] == pytest.approx(GPU.bf16_flops_per_s / 1e12)
        first = next(t for _, t, _ in prose.templated_cells(notebook("07_batching")) if "*compute*" in t)
        assert "{{mfu" in first

    def test_the_step_is_affine_in_the_batch(self, curve):
        """Each sequence adds the same slice (its KV reads) at any size; the crossover is
        where the slices add up to the weights' time, so the step there has doubled."""
        g = glued("07_batching")
        per_seq_ms = 1e3 * CONTEXT * MODEL.kv_bytes_per_token / GPU.hbm_bytes_per_s
        assert per_seq_ms == pytest.approx(0.040, abs=0.0005)
        assert g["slice_ms"] == pytest.approx([per_seq_ms] * (len(BATCHES) - 1))
        for a, b in zip(BATCHES, BATCHES[1:]):
            assert 1e3 * (curve[b].step_s - curve[a].step_s) / (b - a) == pytest.approx(per_seq_ms)
        assert g["cross_ratio"] == pytest.approx(2, abs=0.01)


class TestContinuousBatching:
    @pytest.fixture(scope="class")
    @classmethod
    def by_seed(cls):
        out = {}
        for seed in SEEDS:
            sc = BatchingScenario(seed=seed)
            out[seed] = {m: simulate_batching(sc, m).summary() for m in ("static", "continuous")}
        return out

    def test_ten_seeds(self):
        assert len(SEEDS) >= 10

    def test_continuous_beats_static_throughput_on_every_seed(self, by_seed):
        ratios = [r["continuous"]["tokens/s"] / r["static"]["tokens/s"] for r in by_seed.values()]
        assert min(ratios) > 1.3

    def test_continuous_keeps_more_slots_busy_on_every_seed(self, by_seed):
        static_max = max(r["static"]["slot use (%)"] for r in by_seed.values())
        cont_min = min(r["continuous"]["slot use (%)"] for r in by_seed.values())
        assert cont_min > static_max

    def test_median_latency_lower_on_every_seed(self, by_seed):
        assert all(r["continuous"]["p50 latency (s)"] < r["static"]["p50 latency (s)"] for r in by_seed.values())

    def test_both_modes_decode_the_same_tokens(self):
        sc = BatchingScenario(seed=SEEDS[0])
        a, b = (simulate_batching(sc, m) for m in ("static", "continuous"))
        assert sum(a.output_tokens) == sum(b.output_tokens)
        assert b.makespan_s < a.makespan_s


class TestQueues:
    def test_job_id_then_poll_to_done(self):
        store = JobStore()
        job = store.submit(["a", "b", "c"], deadline_s=7200)
        assert store.poll(job).state == "running"
        for lease in store.claim(now_s=0, limit=3):
            store.complete(lease.item_id, "ok", now_s=90)
        assert store.poll(job).state == "done"

    def test_a_bound_trades_refusals_for_fast_answers(self):
        flood = [k * 0.001 for k in range(200)]
        free = simulate_batches(flood, max_batch=8, max_wait_s=0.02, model_call_s=0.05)
        tight = simulate_batches(flood, max_batch=8, max_wait_s=0.02, model_call_s=0.05, max_queue=16)
        assert free.rejected == 0 and free.completed == 200
        assert tight.rejected > 0
        assert tight.mean_latency_s < free.mean_latency_s / 3
