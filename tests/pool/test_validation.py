"""Bad input is refused at the boundary with one line naming the parameter."""

from __future__ import annotations

import pytest

from lanes import Policy, Scenario, parse_policies, parse_policy, simulate


class TestScenario:
    @pytest.mark.parametrize(
        "changes, message",
        [
            ({"slots": 0}, r"^slots must be an integer >= 1 \(got 0\)$"),
            ({"slots": -3}, r"^slots must be an integer >= 1 \(got -3\)$"),
            ({"slots": "64"}, r"^slots must be an integer >= 1 \(got '64'\)$"),
            ({"slots": 2.5}, r"^slots must be an integer >= 1 \(got 2.5\)$"),
            ({"hours": 0}, r"^hours must be a number > 0 \(got 0\)$"),
            ({"hours": 1 / 7}, r"^hours must be a whole number \(>= 1\) of seconds"),
            ({"backlog": -1}, r"^backlog must be an integer in \[0, 10000000\] \(got -1\)$"),
            ({"batch_service_s": (180, 60)}, r"^batch_service_s must have lo <= hi \(got 180 > 60\)$"),
            ({"batch_service_s": (0, 60)}, r"^batch_service_s lo must be an integer >= 1 \(got 0\)$"),
            ({"inter_service_s": 5}, r"^inter_service_s must be a pair \(lo, hi\)"),
            ({"trough_rate": -1.0}, r"^trough_rate must be a number in \[0, 500\] \(got -1.0\)$"),
            ({"peak_rate": float("nan")}, r"^peak_rate must be a number in \[0, 500\] \(got nan\)$"),
            ({"trough_rate": 4.0, "peak_rate": 3.0}, r"^peak_rate must be >= trough_rate \(got 3 < 4\)$"),
            ({"preempt_cost_s": -5}, r"^preempt_cost_s must be an integer >= 0 \(got -5\)$"),
            ({"seed": "x"}, r"^seed must be an integer \(got 'x'\)$"),
        ],
    )
    def test_refused(self, changes, message):
        with pytest.raises(ValueError, match=message):
            Scenario(**changes)

    def test_whole_floats_are_accepted_as_integers(self):
        sc = Scenario(slots=32.0, hours=0.5)
        assert sc.slots == 32 and isinstance(sc.slots, int) and sc.ticks == 1800


class TestPolicy:
    @pytest.mark.parametrize(
        "spec, message",
        [
            ("bogus", r"^policy must be one of fifo, priority, reserve:R, preempt, hybrid:R \(got 'bogus'\)$"),
            ("reserve", r"needs a reserve size"),
            ("reserve:x", r"^reserve in policy 'reserve:x' must be an integer >= 0 \(got 'x'\)$"),
            ("hybrid:-2", r"must be an integer >= 0 \(got -2\)$"),
            ("fifo:3", r"^policy must be one of"),
        ],
    )
    def test_bad_specs(self, spec, message):
        with pytest.raises(ValueError, match=message):
            parse_policy(spec)

    def test_reserve_larger_than_the_pool(self):
        with pytest.raises(ValueError, match=r"^reserve must be an integer in \[0, slots\] \(got 80, slots=64\)$"):
            simulate(Scenario(hours=0.1), "reserve:80")

    def test_floor_larger_than_the_pool(self):
        with pytest.raises(ValueError, match=r"^floor must be an integer in \[0, slots\] \(got 9, slots=8\)$"):
            simulate(Scenario(slots=8, hours=0.1), "priority", floor=9)

    @pytest.mark.parametrize(
        "field, value, message",
        [
            ("victim", "oldest", r"^victim must be one of youngest, most_remaining \(got 'oldest'\)$"),
            ("aging_s", -1, r"^aging_s must be an integer >= 0 \(got -1\)$"),
            ("promote_s", -5, r"^promote_s must be an integer >= 0 \(got -5\)$"),
            ("promote_s", "1h", r"^promote_s must be an integer >= 0 \(got '1h'\)$"),
            ("min_run_s", 1.5, r"^min_run_s must be an integer >= 0 \(got 1.5\)$"),
            ("floor", -1, r"^floor must be an integer >= 0 \(got -1\)$"),
        ],
    )
    def test_bad_extensions(self, field, value, message):
        with pytest.raises(ValueError, match=message):
            parse_policy("preempt", **{field: value})

    def test_empty_policy_list(self):
        with pytest.raises(ValueError, match="policies must list at least one policy"):
            parse_policies(" , ")

    def test_spec(self):
        p = parse_policy("hybrid:8")
        assert (p.spec, p.preempts, p.reserve) == ("hybrid:8", True, 8)
        assert Policy("reserve", reserve=4).spec == "reserve:4"


# ---------------------------------------------------------------------------
# Regression cases from issue 22: each crashed, hung or ate memory before.

import math  # noqa: E402
import os  # noqa: E402
import subprocess  # noqa: E402
import sys  # noqa: E402
import time  # noqa: E402

import numpy as np  # noqa: E402

import lanes  # noqa: E402
from lanes import _checks  # noqa: E402
from lanes.gpu import batcher, chains, continuous, fairness, kvpool, measured, steps  # noqa: E402
from lanes.lane import queueing  # noqa: E402
from lanes.pool import arrivals  # noqa: E402

HUGE = 10**400  # an int no float can hold


def refused(call, *names):
    """The ValueError ``call()`` raises: one line that names every one of ``names``."""
    with pytest.raises(ValueError) as info:
        call()
    message = str(info.value)
    assert "\n" not in message and len(message) < 300, message
    for name in names:
        assert name in message, (name, message)
    return message


class TestTypesBeforeArithmetic:
    @pytest.mark.parametrize(
        "call, name",
        [
            (lambda: Scenario(hours=HUGE), "hours"),
            (lambda: kvpool.KvScenario(block_tokens=HUGE), "block_tokens"),
            (lambda: lanes.slot_budget(8, HUGE, HUGE, 8), "trough_rate"),
            (lambda: chains.tenant_cost(a_input_tokens=HUGE), "a_input_tokens"),
            (lambda: arrivals.poisson_count(HUGE, 0.5), "lam"),
            (lambda: lanes.simulate("x"), "scenario"),
            (lambda: steps.simulate(5), "requests"),
            (lambda: continuous.decode_step_curve(5), "batch_sizes"),
            (lambda: continuous.decode_step_curve(np.array(3)), "batch_sizes"),
            (lambda: fairness.schedule([1]), "tenants"),
            (lambda: fairness.Tenant(None, 1, 1), "name"),
            (lambda: lanes.TenantLoad(HUGE, 1.0), "name"),
            (lambda: Scenario(batch_service_s=(1,)), "batch_service_s"),
            (lambda: lanes.LaneScenario(service_s=(1.0,)), "service_s"),
            (lambda: lanes.pool_tokens_for(model=np.array([[1.0, 2.0]])), "model"),
            (lambda: lanes.poisson_quantile(3.0, np.array([0.5, 0.9])), "q"),
            (lambda: lanes.simulate_lane(policy="fifo"), "policy"),
            (lambda: lanes.simulate_kv_pool((1,)), "scenario"),
            (lambda: lanes.chunk(0, 5), "documents"),
            (lambda: lanes.plan_overflow(5, 7.0), "capacity_items_per_h"),
            (lambda: measured.residuals(step_model="nope"), "step_model"),
            (lambda: measured.compare(records=False), "records"),
            (lambda: lanes.LanePolicy(fair_share=np.array([True, False])), "fair_share"),
        ],
    )
    def test_refused_naming_the_parameter(self, call, name):
        refused(call, name)

    def test_long_values_are_cut_in_messages(self):
        message = refused(lambda: Scenario(hours=10**70), "hours")
        assert message.endswith("(got 100000000000... (71 digits))")
        message = refused(lambda: Scenario(hours=10**5000), "hours")
        assert message.endswith("(got an integer of about 5001 digits)")

    def test_numpy_scalars_and_whole_floats_count_as_numbers(self):
        sc = Scenario(slots=np.int64(8), hours=np.float64(0.05), trough_rate=np.float32(1.0))
        assert sc.slots == 8 and isinstance(sc.slots, int)
        assert chains.long_prompt(decoders=64.0) == chains.long_prompt(decoders=64)
        assert batcher.simulate_batches(5.0) == batcher.simulate_batches(5)

    def test_step_cost_takes_catalog_names(self):
        by_name = lanes.step_cost([(0, 512)], model="llama-3.1-8b", hardware="h100-sxm")
        by_entry = lanes.step_cost([(0, 512)], model=lanes.get_model("llama-3.1-8b"),
                                   hardware=lanes.get_hardware("h100-sxm"))
        assert by_name == by_entry

    def test_a_stream_drawn_for_another_scenario_is_refused(self):
        small = Scenario(hours=0.05, backlog=60)
        refused(lambda: lanes.simulate(Scenario(), "hybrid:2", stream=lanes.draw_stream(small)), "stream")
        refused(lambda: lanes.simulate(small, "priority", stream=""), "stream")



def _trace():
    from lanes.pool import traces

    return traces.trace_from_requests([0, 0.4, 1.5, 7.25], [120, 900, 40, 64], [30, 200, 8, 12], name="t4")


class TestTracesReplayAndTheInterface:
    """Entries of the trace replay and the scheduler interface."""

    @pytest.mark.parametrize(
        "call, names",
        [
            (lambda: _replay().replay(None), ("trace",)),
            (lambda: _replay().trace_table(_trace(), base=""), ("base",)),
            (lambda: _replay().trace_table(_trace(), base=Scenario(hours=0.05), policies=5), ("policies",)),
            (lambda: _replay().hold_profile(None), ("trace",)),
            (lambda: _replay().hold_times_s(_trace(), batch=10**9), ("batch", "1000000")),
            (lambda: _replay().trace_requests((1,)), ("trace",)),
            (lambda: _replay().smallest_reserve(_trace(), base=Scenario(slots=1000, hours=0.05)), ("slots", "256")),
            (lambda: _traces().Trace("h200", [1, 2], 30, (1,)), ("prompt_tokens",)),
            (lambda: _traces().Trace("x", (1.0, 0.5), (1, 1), (1, 1)), ("arrival_s", "non-decreasing")),
            (lambda: _traces().Trace("x", (0.0, float("nan")), (1, 1), (1, 1)), ("arrival_s[1]",)),
            (lambda: _stats().percentile(None, 0.5), ("sorted_values",)),
            (lambda: _stats().percentile([1, 2], 2), ("q",)),
            (lambda: _traces().resolve(None), ("trace", "conv")),
            (lambda: _traces().load_trace((1,)), ("trace",)),
            (lambda: _traces().trace_from_requests(35.2, -1, b"1"), ("arrival_s",)),
            (lambda: _traces().trace_from_requests([0, 1], [5], [5]), ("one entry per request",)),
            (lambda: _traces().trace_scenario(_trace(), 92.5), ("hold_s",)),
            (lambda: _traces().trace_scenario(_trace(), [1.0, 2.0, 1e300, 3.0]), ("hold_s", "604800")),
            (lambda: _trace().counts(bin_s=1e-9), ("bin_s", "10000000")),
            (lambda: _trace().resample(1, block_s=1e-12), ("block_s",)),
            (lambda: _protocol().load_policy(None), ("source",)),
            (lambda: _protocol().load_policy("1/0\n", "p.py"), ("p.py", "ZeroDivisionError", "line 1")),
            (lambda: _protocol().Board(0), ("slots",)),
            (lambda: _protocol().load_policy_file(0), ("path",)),
            (lambda: lanes.simulate(Scenario(hours=0.05), object()), ("policy",)),
            (lambda: lanes.simulate(Scenario(hours=0.05), lambda obs: None, floor=2), ("extensions", "floor")),
            (lambda: lanes.rate_per_s(Scenario(hours=0.05), HUGE), ("t",)),
        ],
    )
    def test_refused_naming_the_parameter(self, call, names):
        refused(call, *names)

    def test_a_policy_file_that_raises_as_it_runs_is_one_line(self, tmp_path):
        f = tmp_path / "p.py"
        f.write_text("import nosuchmodule_lanes\n")
        message = refused(lambda: _protocol().load_policy_file(f), "ModuleNotFoundError", "line 1")
        assert str(f) in message


def _replay():
    from lanes.gpu import replay

    return replay


def _traces():
    from lanes.pool import traces

    return traces


def _stats():
    from lanes import _stats

    return _stats


def _protocol():
    from lanes.pool import protocol

    return protocol



class TestUnknownKeywords:
    @pytest.mark.parametrize(
        "call",
        [
            lambda: lanes.simulate(agin_s=5),
            lambda: lanes.run_table(agin_s=5),
            lambda: lanes.parse_policy("preempt", agin_s=5),
            lambda: lanes.pool.sweep.sweep_seeds(["fifo"], [1], agin_s=5),
        ],
    )
    def test_misspelt_extension_lists_the_known_ones(self, call):
        message = refused(call, "agin_s")
        assert "known: floor, aging_s, promote_s, victim, min_run_s" in message

    def test_keywords_passed_on_to_the_queue(self):
        message = refused(lambda: queueing.knee_sweep([0.5], agin_s=5), "agin_s")
        assert "requests" in message  # the known keywords are listed


class TestExactRules:
    def test_integer_bounds_print_exactly(self):
        message = refused(lambda: _checks.integer("decoders", 10_000_001, lo=0, hi=10_000_000), "decoders")
        assert message == "decoders must be an integer in [0, 10000000] (got 10000001)"

    def test_relative_rule_names_the_other_parameter(self):
        message = refused(lambda: kvpool.KvScenario(pool_tokens=8, block_tokens=16), "pool_tokens")
        assert message == "pool_tokens must be an integer >= block_tokens (got 8, block_tokens=16)"

    def test_relative_rule_in_the_step_simulator(self):
        refused(lambda: chains.long_prompt(decoders=9000, budget_tokens=8192), "decoders", "budget_tokens")


class TestNothingHangs:
    """Each call answers or refuses at once (well inside the fuzz's 10 s)."""

    @pytest.mark.parametrize(
        "call, name",
        [
            (lambda: chains.hol_blocking(short_prompts=10**9), "short_prompts"),
            (lambda: chains.hol_blocking(long_prompt_tokens=10**9), "long_prompt_tokens"),
            (lambda: chains.long_prompt(prompt_tokens=10**9), "prompt_tokens"),
            (lambda: chains.goodput(tpot_target_s=1e300), "tpot_target_s"),
            (lambda: fairness.schedule([fairness.Tenant("a", 1, 1)], capacity_weighted_tokens=1e17),
             "capacity_weighted_tokens"),
            (lambda: steps.simulate([steps.Request(10**9, 10**9)]), "requests"),
            (lambda: steps.simulate([steps.Request(100, 10)], budget_tokens=10**9, decoders=10**9 - 1), "decoders"),
            (lambda: lanes.simulate_batching(lanes.BatchingScenario(requests=10**7)), "requests"),
            (lambda: lanes.simulate_kv_pool(lanes.KvScenario(seconds=10**8)), "seconds"),
            (lambda: lanes.Scenario(hours=8761), "hours"),
            (lambda: lanes.Scenario(hours=1e-13), "hours"),
            (lambda: lanes.Scenario(hours=1000, peak_rate=500), "hours"),
            (lambda: lanes.LaneScenario(duration_s=1e12), "duration_s"),
            (lambda: lanes.BatchLaneScenario(items=10**9), "items"),
            (lambda: queueing.rho_limit(step=1e-9), "step"),
            (lambda: lanes.poisson_tail(HUGE, 3), "mean"),
            (lambda: asyncio_run(batcher.run_async(10**5, max_batch=1)), "requests"),
        ],
    )
    def test_refused_at_once(self, call, name):
        start = time.perf_counter()
        refused(call, name)
        assert time.perf_counter() - start < 5

    def test_poisson_quantile_with_a_large_mean_is_a_closed_form(self):
        start = time.perf_counter()
        k = lanes.poisson_quantile(1e12, 0.99)
        assert time.perf_counter() - start < 1
        assert abs(k - (1e12 + 2.326348 * 1e6)) < 10  # mean + z(0.99) x sd
        assert lanes.poisson_tail(1e12, k) == pytest.approx(0.01, rel=1e-3)
        assert lanes.poisson_tail(3.0, 10**9) == 0.0

    def test_tenant_cost_with_tiny_weights_answers(self):
        start = time.perf_counter()
        r = chains.tenant_cost(input_weight=1e-300, output_weight=1e-300)
        assert time.perf_counter() - start < 1
        assert r.ratio == pytest.approx(9000 / 300)
        assert r.round_robin_share_b == pytest.approx(9000 / 9300)


def asyncio_run(coroutine):
    """``asyncio.run`` in a fresh thread (a session's Playwright may run a loop in this one)."""
    import asyncio
    import concurrent.futures

    with concurrent.futures.ThreadPoolExecutor(1) as pool:
        return pool.submit(asyncio.run, coroutine).result()


def test_a_backlog_of_ten_million_needs_well_under_a_gigabyte():
    # VmHWM is this process's own peak: ru_maxrss would carry over the peak of the
    # (large) test worker that forked it, which Linux keeps across exec.
    code = (
        "import lanes\n"
        "lanes.draw_stream(lanes.Scenario(hours=0.01, backlog=10**7))\n"
        "print(next(l.split()[1] for l in open('/proc/self/status') if l.startswith('VmHWM:')))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120, check=True)
    assert int(out.stdout) * 1024 < 600 * 2**20  # kilobytes


# ---------------------------------------------------------------------------
# The command line: one line on stderr and status 2, or a normal result.


def cli(*args: str, stdin_pipe_head: int | None = None) -> subprocess.CompletedProcess:
    command = [sys.executable, "-m", "lanes", *args]
    if stdin_pipe_head is None:
        return subprocess.run(command, capture_output=True, text=True, timeout=120)
    shell = " ".join(map(repr, command)) + f" | head -c {stdin_pipe_head}"
    return subprocess.run(["bash", "-o", "pipefail", "-c", shell], capture_output=True, text=True, timeout=120)


class TestCommandLine:
    @pytest.mark.parametrize(
        "args, needle",
        [
            (["table", "--hours", "9000"], "hours must be at most 168 (a week) (got 9000.0)"),
            (["table", "--hours", "1e-13"], "hours must be a whole number (>= 1) of seconds"),
            (["table", "--slots", "9" * 5000], "--slots: must be an integer (got '9999"),
            (["table", "--slots", "9" * 4000], "slots must be an integer >= 1 and below 2**64 in size"),
            (["table", "--hours", "0.01", "--policies", "reserve:" + "9" * 4500], "reserve in policy 'reserve:999"),
            (["steptime", "--hardware", "h100-sxm", "--decode", "1000000000", "0"], "at most 1000000"),
        ],
    )
    def test_one_line_and_status_2(self, args, needle):
        out = cli(*args)
        lines = out.stderr.strip().splitlines()
        assert out.returncode == 2 and len(lines) == 1, out.stderr[-2000:]
        assert needle in lines[0] and len(lines[0]) < 300, lines[0][:400]

    def test_calibrated_steptime_prices_a_huge_batch(self):
        out = cli("steptime", "--decode", "1000000000", "0")
        assert out.returncode == 0 and "step" in out.stdout
        assert "Traceback" not in out.stderr and len(out.stderr.splitlines()) <= 1  # at most the range warning

    def test_closed_pipe_is_quiet(self):
        out = cli("chains", stdin_pipe_head=10)
        assert len(out.stdout) == 10
        assert "Traceback" not in out.stderr and "BrokenPipe" not in out.stderr, out.stderr


# ---------------------------------------------------------------------------
# The measured-steps loader: one line naming the file, the line and the field.


class TestLoader:
    GOOD = measured.DEFAULT_PATH.read_bytes().splitlines()

    def write(self, tmp_path, lines: list[bytes]):
        path = tmp_path / "steps.jsonl"
        path.write_bytes(b"\n".join(lines) + b"\n")
        return path

    def test_missing_file_and_directory(self, tmp_path):
        refused(lambda: measured.load_records(tmp_path / "nope.jsonl"), "path", "nope.jsonl")
        refused(lambda: measured.load_records(tmp_path), "path")
        refused(lambda: measured.load_records(5), "path")

    @pytest.mark.parametrize(
        "bad, where",
        [
            (b"\xff\xfe not text", "not UTF-8"),
            (b"[" * 100_000 + b"]" * 100_000, "not valid JSON"),
            (b'{"kind": "decode", "batch": 1' + b"0" * 5000 + b', "context": 0, "median_s": 0.01}', "not valid JSON"),
            (b'{"kind": "decode", "batch": 1' + b"0" * 400 + b', "context": 0, "median_s": 0.01}', "field 'batch'"),
            (b'{"kind": "decode", "batch": 8, "context": 0, "median_s": 1e400}', "field 'median_s'"),
        ],
    )
    def test_malformed_line(self, tmp_path, bad, where):
        path = self.write(tmp_path, [*self.GOOD[:3], bad, *self.GOOD[3:]])
        message = refused(lambda: measured.load_records(path), "steps.jsonl line 4", where)
        assert message.startswith("steps.jsonl line 4: ")
        refused(lambda: measured.fit_step_model(path), "steps.jsonl line 4")


class TestErlangSaveHookAndProgress:
    """Regressions the fuzz found in lanes.pool.erlang, .savehook and .progress."""

    @pytest.mark.parametrize("beta", [38.5, 74.47627260757405, 1e300])
    def test_the_halfin_whitt_limit_of_a_large_beta_is_zero_not_a_crash(self, beta):
        from lanes.pool import erlang

        p = erlang.halfin_whitt_wait_probability(beta)
        assert 0.0 <= p < 1e-300

    def test_the_limit_is_the_formula_where_the_formula_is_finite(self):
        from lanes.pool import erlang

        for beta in (1e-9, 0.1, 1.0, 2.5, 10.0, 30.0):
            direct = 1.0 / (1.0 + beta * erlang._big_phi(beta) / erlang._phi(beta))
            assert math.isclose(erlang.halfin_whitt_wait_probability(beta), direct, rel_tol=1e-12)

    @pytest.mark.parametrize("p_wait", [8.64097951574281e-290, 5e-324])
    def test_a_tiny_target_wait_gives_a_finite_beta(self, p_wait):
        from lanes.pool import erlang

        beta = erlang.halfin_whitt_beta(p_wait)
        assert 30 < beta < 40
        staff = erlang.sqrt_staffing(8.754857047704224, p_wait)
        assert staff == math.ceil(8.754857047704224 + beta * math.sqrt(8.754857047704224) - 1e-9)

    @pytest.mark.parametrize("nb", [None, (1,), 10**60, "notebook", ["cells"]])
    def test_clean_notebook_wants_a_dict(self, nb):
        from lanes.display import savehook

        refused(lambda: savehook.clean_notebook(nb), "nb", "dict")

    @pytest.mark.parametrize("outputs", [None, (1,), 10**60, {"output_type": "stream"}])
    def test_clean_outputs_wants_a_list(self, outputs):
        from lanes.display import savehook

        refused(lambda: savehook.clean_outputs(outputs), "outputs", "list")

    def test_parts_it_does_not_understand_are_left_as_they_are(self):
        from lanes.display import savehook

        odd = [1, {"output_type": "stream", "text": [1]}, {"output_type": "display_data", "data": 3}]
        assert savehook.clean_outputs(list(odd)) == odd
        nb = {"metadata": [], "cells": [5, {"cell_type": "code", "outputs": None}]}
        assert savehook.clean_notebook(nb) == {"metadata": [], "cells": [5, {"cell_type": "code", "outputs": None}]}

    @pytest.mark.parametrize(
        "model",
        [None, "llama-3.1-8b", 10**60, ["notebook"], {"type": "notebook", "content": None},
         {"type": "notebook", "content": {"cells": 5, "metadata": []}},
         {"type": "notebook", "content": {"cells": [{"cell_type": "code", "outputs": [1, {"output_type": 3}]}]}}],
    )
    def test_the_server_hook_never_raises_and_leaves_odd_models_untouched(self, model):
        import copy

        from lanes.display import savehook

        before = copy.deepcopy(model)
        assert savehook.pre_save(model=model, path="x.ipynb", contents_manager=None, agin_s=5) is None
        assert model == before

    @pytest.mark.parametrize(
        "args, names",
        [((None, 1, 2, 0.0), ("desc",)), (("x", 19, [1, 2], 0.0), ("total",)), (("x", 3, 2, 0.0), ("done", "total")),
         (("x", -1, 2, 0.0), ("done",)), (("x", 1, 2, float("nan")), ("elapsed_s",)), (("x", 1.5, 2, 0.0), ("done",))],
    )
    def test_progress_text_checks_its_arguments(self, args, names):
        from lanes.display import progress

        refused(lambda: progress.progress_text(*args), *names)
        assert progress.progress_text("runs", 40, 161, 3.2) == "runs: 40/161 (25%), 3 s"

    def test_a_billion_servers_is_refused_not_a_hang(self):
        from lanes.pool import erlang

        refused(lambda: erlang.erlang_b(10**9, 0.0665), "servers", "10000000", "1000000000")
        refused(lambda: erlang.erlang_c(10**9, 0.0665), "servers", "10000000")
        refused(lambda: erlang.servers_for_wait(1e9, 0.2), "load", "9999999")

    def test_erlang_b_stops_once_it_underflows_with_the_same_answer(self):
        from lanes.pool import erlang

        def full(c, a):  # the recurrence run to the end
            b = 1.0
            for k in range(1, c + 1):
                b = a * b / (k + a * b)
            return b

        for c, a in ((2000, 50.0), (5000, 0.0665), (64, 56.0), (100_000, 99_000.0)):
            assert erlang.erlang_b(c, a) == full(c, a)
        assert erlang.erlang_b(erlang.MAX_SERVERS, 0.0665) == 0.0

    def test_servers_for_wait_is_the_smallest_count_erlang_c_allows(self):
        from lanes.pool import erlang

        for load, p in ((56.0, 0.2), (0.3, 0.01), (950.0, 0.05)):
            c = erlang.servers_for_wait(load, p)
            assert erlang.erlang_c(c, load) <= p
            assert c - 1 <= load or erlang.erlang_c(c - 1, load) > p
