"""Every public callable answers or refuses cleanly, within time and memory limits.

The callables are discovered from the public names of ``lanes.pool``,
``lanes.lane``, ``lanes.gpu`` and ``lanes.display`` (each module's ``__all__``, or its
non-underscore functions and classes), so a function added later is fuzzed
without touching this file.  What is left out is listed in ``EXCLUDED_MODULES``
and ``EXCLUDED`` with the reason.

Hypothesis draws the arguments from each signature: the default, values near
it, and hostile ones (ints past float range, bools, strings, ``None``, numpy
scalars and arrays, sequences where a count is wanted, negative and huge
sizes, a misspelt keyword).  The calls run in a few long-lived worker
processes, each call under a time limit (``CALL_LIMIT_S``; longer for the few
slow-by-design callables of ``SLOW_CALLS_S``, with the reason) and a memory limit
(``MEMORY_LIMIT_BYTES`` of growth in resident memory).  A call passes if it
returns, or raises ``ValueError`` whose message names a parameter; a
``TypeError`` that Python itself raises for an unexpected or missing argument
of a fixed signature also passes (the function never ran).  Catch-all
``**extensions`` must refuse a misspelt name with a ``ValueError`` listing the
known ones.  In the CI size each callable gets at most ``CALLABLE_BUDGET_S``
of call time (a slow model gets fewer examples); ``LANES_FUZZ_EXAMPLES`` turns
the budget off.

    python -m pytest -q -p no:nbval tests/test_fuzz.py          # CI size (~30 s)
    LANES_FUZZ_EXAMPLES=400 python -m pytest -q -p no:nbval tests/test_fuzz.py
    python tests/test_fuzz.py [EXAMPLES] [NAME_FILTER]           # report, no assert
"""

from __future__ import annotations

import importlib
import inspect
import itertools
import math
import multiprocessing
import os
import pkgutil
import re
import sys
import tempfile
import time
import traceback
from dataclasses import dataclass, fields, is_dataclass
from typing import Any

import pytest
from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import strategies as st

#: Examples drawn per callable (the CI size); raise it for a longer run.
EXAMPLES = int(os.environ.get("LANES_FUZZ_EXAMPLES", "12"))
#: CPU seconds one call may take before it counts as a hang.
#: The models aim at about 10 s on an idle machine; the check allows twice
#: that so that a busy CI machine (2 shared cores) does not flake.
CALL_LIMIT_S = float(os.environ.get("LANES_FUZZ_CALL_LIMIT_S", "20"))
#: A call that uses no CPU (it blocks) counts as a hang after this many times its limit in wall time.
WALL_FACTOR = 5.0
#: Longer limits for callables whose ordinary input takes seconds by design, with the reason.
SLOW_CALLS_S = {
    # refits the step model once per measured row: 4 s of CPU, 8 s of wall time at load 5 here,
    # and past 20 s when the fuzz's two workers share the 2 cores with other jobs
    "lanes.gpu.measured.leave_one_out": 60.0,
}
#: Growth of a worker's peak resident memory one call may cause.
MEMORY_LIMIT_BYTES = 1 << 30
#: Seconds of answered calls one callable may use before its remaining examples
#: are skipped (a slow model gets fewer examples, so the CI run stays short).
CALLABLE_BUDGET_S = float(os.environ.get("LANES_FUZZ_BUDGET_S", "1.5" if "LANES_FUZZ_EXAMPLES" not in os.environ else "1e9"))
#: Worker processes the calls are spread over.
WORKERS = int(os.environ.get("LANES_FUZZ_WORKERS", "2"))

#: The models, and the display's save hook and progress line.  The display's figures and
#: explorers (lanes.display.pool, .lane, .gpu: packages, not walked) draw what the models
#: made and are fuzzed through the models.
PARTS = ("lanes.pool", "lanes.lane", "lanes.gpu", "lanes.display")
#: Modules left out, with the reason.
EXCLUDED_MODULES = {
    "cli": "argparse types and handlers; the command line has its own tests (test_validation.py)",
}

#: Callables left out, with the reason.
EXCLUDED = {
    "lanes.pool.protocol.View": "a read-only window the Board hands a scheduler over its own queues",
    "lanes.gpu.steps.unchecked_step_cost": "step_cost without its checks, for the step simulators; fuzzed through step_cost",
    # records the models return: built by the models from validated input, not by users
    **{
        name: "a result record built by a model, not an entry point"
        for name in (
            "lanes.pool.arrivals.ArrivalStream", "lanes.pool.results.SlotPoolResult", "lanes.pool.day.Day",
            "lanes.pool.table.PolicyTable", "lanes.pool.littles.SlotBudget",
            "lanes.lane.interactive.LaneRecord", "lanes.lane.interactive.LaneResult",
            "lanes.lane.jobstore.ItemLease", "lanes.lane.jobstore.JobStatus",
            "lanes.lane.jobstore.OverflowPlan", "lanes.lane.jobstore.BatchLaneResult",
            "lanes.lane.queueing.QueueRun", "lanes.lane.service_order.OrderRun", "lanes.gpu.batcher.BatchRun",
            "lanes.gpu.chains.LittlesLaw", "lanes.gpu.chains.KvInFlight",
            "lanes.gpu.chains.Goodput", "lanes.gpu.chains.SwapVsRecompute",
            "lanes.gpu.chains.HolBlocking", "lanes.gpu.chains.P99Knee",
            "lanes.gpu.chains.LongPrompt", "lanes.gpu.chains.TenantCost", "lanes.gpu.chains.ChunkCap",
            "lanes.gpu.chains.TokenWeights", "lanes.gpu.continuous.DecodeStep",
            "lanes.gpu.continuous.BatchingResult", "lanes.gpu.fairness.FairnessResult",
            "lanes.gpu.kvpool.KvPoolResult", "lanes.gpu.kvpool.PreemptionCost",
            "lanes.gpu.replay.HoldProfile", "lanes.pool.protocol.Observation",
            "lanes.pool.protocol.Running", "lanes.pool.protocol.Request", "lanes.pool.protocol.QueuedBatch",
            "lanes.gpu.measured.Residual", "lanes.gpu.steps.StepCost",
            "lanes.gpu.steps.StepRecord", "lanes.gpu.steps.StepResult",
        )
    },
    "lanes.gpu.batcher.QueueFullError": "an exception class",
    "lanes.pool.protocol.DecisionError": "an exception class",
    "lanes.gpu.batcher.MicroBatcher": "an asyncio object driven by run_async; fuzzed through run_async",
    "lanes.lane.jobstore.JobStore": "an SQLite store driven by simulate_batch_lane; fuzzed through it",
    "lanes.lane.jobstore.ProviderBatchAPI": "a stand-in provider driven by simulate_batch_lane; fuzzed through it",
    "lanes.gpu.calibration.StepModel": "fitted coefficients made by fit_step_model; fuzzed through it",
    "lanes.display.progress.progress_enabled": "reads the environment for a progress line",
    # pandas helpers over a frame a sweep returned
    "lanes.pool.sweep.spread": "groups a sweep's pandas frame; fuzzed through the sweeps",
    "lanes.pool.sweep.seeds_meeting": "groups a sweep's pandas frame; fuzzed through the sweeps",
    "lanes.pool.sweep.smallest_meeting": "groups a sweep's pandas frame; fuzzed through the sweeps",
}


#: Parameters always drawn (never left at their default), with the reason.
ALWAYS_DRAWN = {
    # A sweep runs one simulation per point; its default is the full anchor day
    # repeated for every seed and reserve, minutes by design (it shows a progress bar).
    "lanes.pool.sweep": ("base", "scenarios"),
    # 10,000 items through an SQLite store, about 2 s a call: fine once, too slow to repeat
    "lanes.lane.jobstore.simulate_batch_lane": ("scenario",),
}


def _modules() -> list[str]:
    """The modules fuzzed: every public module of :data:`PARTS`."""
    return [f"{part}.{info.name}" for part in PARTS
            for info in pkgutil.iter_modules(importlib.import_module(part).__path__)
            if not info.name.startswith("_")]


def public_callables() -> dict[str, Any]:
    """Every public function and class of the model packages, by dotted name, minus exclusions."""
    found: dict[str, Any] = {}
    for module_name in _modules():
        if module_name.rsplit(".", 1)[1] in EXCLUDED_MODULES:
            continue
        module = importlib.import_module(module_name)
        names = getattr(module, "__all__", None)
        if names is None:
            names = [
                n for n, v in vars(module).items()
                if not n.startswith("_") and getattr(v, "__module__", None) == module.__name__
            ]
        for name in names:
            value = getattr(module, name)
            if inspect.isfunction(value) or inspect.isclass(value):
                found[f"{module.__name__}.{name}"] = value
    return {k: v for k, v in found.items() if k not in EXCLUDED}


# ----------------------------------------------------------------- arguments


@dataclass(frozen=True)
class Build:
    """A value made in the worker (a scenario, a model, a temporary file)."""

    what: str
    arg: Any = None


#: Examples of objects a parameter may need, made in the worker.
BUILDERS = {
    "Scenario": lambda _: _imp("lanes.pool.scenario").Scenario(hours=0.05, backlog=60),
    "Policy": lambda _: _imp("lanes.pool.policies").Policy("reserve", reserve=2),
    "Model": lambda _: _imp("lanes.gpu.hardware").get_model("llama-3.1-8b"),
    "Hardware": lambda _: _imp("lanes.gpu.hardware").get_hardware("h100-sxm"),
    "LaneScenario": lambda _: _imp("lanes.lane.interactive").LaneScenario(duration_s=30),
    "LanePolicy": lambda _: _imp("lanes.lane.interactive").LanePolicy(max_queue=4),
    "TenantLoad": lambda _: _imp("lanes.lane.interactive").TenantLoad("a", 2.0),
    "BatchingScenario": lambda _: _imp("lanes.gpu.continuous").BatchingScenario(requests=8),
    "KvScenario": lambda _: _imp("lanes.gpu.kvpool").KvScenario(seconds=120, warmup_s=10, backlog=50),
    "BatchLaneScenario": lambda _: _imp("lanes.lane.jobstore").BatchLaneScenario(items=200),
    "StepModel": lambda _: _imp("lanes.gpu.measured").fit_step_model(),
    "ArrivalStream": lambda _: _imp("lanes.pool.arrivals").draw_stream(
        _imp("lanes.pool.scenario").Scenario(hours=0.05, backlog=60)
    ),
    "Tenant": lambda _: _imp("lanes.gpu.fairness").Tenant("a", 200, 100),
    "Request": lambda _: _imp("lanes.gpu.steps").Request(300, 4),
    "Trace": lambda _: _imp("lanes.pool.traces").trace_from_requests(
        [0, 0.4, 1.5, 2.0, 7.25, 9.0], [120, 900, 40, 3000, 64, 500], [30, 200, 8, 400, 12, 90], name="fuzz"
    ),
    "Board": lambda _: _imp("lanes.pool.protocol").Board(4, 2),
    "numpy": lambda spec: __import__("numpy").array(spec),
    "numpy_scalar": lambda spec: getattr(__import__("numpy"), spec[0])(spec[1]),
    "file": lambda content: _temp_file(content),
    "missing_file": lambda _: os.path.join(tempfile.gettempdir(), "lanes-fuzz-no-such-file.jsonl"),
    "lazy": lambda items: [_materialise(x) for x in items],
}


def _imp(name: str):
    return importlib.import_module(name)


def _temp_file(content: bytes) -> str:
    fd, path = tempfile.mkstemp(prefix="lanes-fuzz-", suffix=".jsonl")
    with os.fdopen(fd, "wb") as f:
        f.write(content)
    return path


def _materialise(value: Any) -> Any:
    if isinstance(value, Build):
        return BUILDERS[value.what](value.arg)
    if isinstance(value, list):
        return [_materialise(v) for v in value]
    if isinstance(value, tuple):
        return tuple(_materialise(v) for v in value)
    return value


HOSTILE = st.sampled_from(
    [
        10**400, -(10**400), 10**18, 10**9, -1, 0, -0.5, 1e-13, 1e300, float("nan"), float("inf"),
        True, False, None, "", "x", "64", b"1", [], [1, 2], (1,), (3, 2, 1), {"a": 1}, object,
        Build("numpy", [1, 2]), Build("numpy", 3), Build("numpy", [[1.0, 2.0]]),
        Build("numpy_scalar", ("int64", 7)), Build("numpy_scalar", ("float64", 2.5)),
        Build("numpy_scalar", ("bool_", True)),
    ]
)

_JSON_LINE = st.one_of(
    st.just(b'{"kind": "decode", "batch": 8, "context": 1024, "step_s": 0.01}'),
    st.just(b'{"kind": "prefill", "chunk": 512, "prior": 0, "step_s": 0.02}'),
    st.just(b'{"kind": "decode", "batch": 1e400, "context": -1, "step_s": "x"}'),
    st.just(b"[" * 5000 + b"]" * 5000),
    st.just(b"\xff\xfe\x00garbage"),
    st.just(b'{"kind": "meta", "model": 5}'),
    st.binary(max_size=40),
    st.text(max_size=40).map(str.encode),
)
FILES = st.one_of(
    st.lists(_JSON_LINE, max_size=6).map(lambda lines: Build("file", b"\n".join(lines))),
    st.just(Build("missing_file")),
)

NAME_POOLS = {
    "model": ["llama-3.1-8b", "llama-3.3-70b", "nope"],
    "hardware": ["h100-sxm", "h200", "a100-80gb", "H100", "nope"],
    "name": ["llama-3.1-8b", "h100-sxm", "h200", "a", "b"],
    "policy": ["fifo", "priority", "reserve:4", "preempt", "hybrid:2", "token-fair", "round-robin", "bogus"],
    "rule": ["slots:8", "blocks", "tokens", "slots:x", "bogus"],
    "mode": ["continuous", "static", "bogus"],
    "order": ["fcfs", "shortest", "fifo", "by-length", "bogus"],
    "service": ["exponential", "lognormal", "deterministic", "prompt", "bogus"],
    "kind": ["fifo", "priority", "reserve", "preempt", "hybrid", "bogus"],
    "victim": ["youngest", "most_remaining", "bogus"],
    "field": ["slots", "backlog", "hours", "bogus"],
    "metric": ["p99_s", "p50_s", "bogus"],
}


def _good_number(default: Any) -> st.SearchStrategy:
    """Values near a numeric default, small enough that a model runs quickly."""
    if isinstance(default, bool):
        return st.booleans()
    if isinstance(default, int):
        hi = max(4, abs(default) * 2)
        return st.integers(min(0, default), hi)
    return st.floats(0, max(1.0, abs(default) * 2), allow_nan=False)


def _good_value(name: str, default: Any, annotation: str) -> st.SearchStrategy:
    for key, pool in NAME_POOLS.items():
        if name == key or name.endswith("_" + key):
            return st.sampled_from(pool)
    if name in ("path", "records"):
        return FILES
    for type_name in sorted(BUILDERS, key=len, reverse=True):
        if type_name[0].isupper() and re.search(rf"\b{type_name}\b", annotation):
            if "Sequence" in annotation or "tuple[" in annotation and "..." in annotation:
                return st.lists(st.just(Build(type_name)), min_size=1, max_size=3)
            return st.just(Build(type_name))
    if isinstance(default, (int, float)) and default is not None:
        return _good_number(default)
    if isinstance(default, tuple) and default and all(isinstance(x, (int, float)) for x in default):
        return st.lists(_good_number(default[0]), min_size=len(default), max_size=len(default)).map(
            lambda xs: tuple(sorted(xs))
        )
    if isinstance(default, str):
        return st.one_of(st.just(default), st.text(max_size=8))
    if "int" in annotation:
        return st.integers(0, 64)
    if "float" in annotation:
        return st.floats(0, 100, allow_nan=False)
    return st.just(default) if default is not inspect.Parameter.empty else st.none()


#: Arguments for required parameters, by name.
REQUIRED = {
    "requests": st.lists(
        st.one_of(st.just(Build("Request")), st.tuples(st.integers(1, 4000), st.integers(1, 64))),
        min_size=1, max_size=6,
    ),
    "tenants": st.lists(
        st.one_of(st.just(Build("Tenant")), st.tuples(st.sampled_from("abc"), st.integers(0, 9000), st.integers(0, 2000))),
        min_size=1, max_size=4,
    ),
    "sequences": st.lists(st.tuples(st.integers(0, 4000), st.integers(0, 8000)), min_size=1, max_size=6),
    "documents": st.lists(st.text(max_size=20), max_size=6),
    "rhos": st.lists(st.floats(0.05, 0.95), min_size=1, max_size=3),
    "capacity_items_per_h": st.lists(st.floats(0, 500), min_size=1, max_size=30),
    "sorted_waits": st.lists(st.integers(0, 100), min_size=1, max_size=10).map(sorted),
    "policies": st.one_of(
        st.just("fifo,priority"), st.lists(st.sampled_from(["fifo", "priority", "reserve:2", "preempt"]), min_size=1, max_size=3)
    ),
    "values": st.lists(st.integers(1, 16), min_size=1, max_size=3),
    "spec": st.sampled_from(["fifo", "priority", "reserve:4", "hybrid:2", "preempt", "bogus", "reserve:x"]),
    "specs": st.sampled_from(["fifo,priority", "reserve:4", " , ", "bogus"]),
    "name": st.sampled_from(["a", "llama-3.1-8b", "h100-sxm", "h200"]),
    "kind": st.sampled_from(["fifo", "priority", "reserve", "preempt", "hybrid", "bogus"]),
    # traces: columns of numbers, one hold time per request of the built trace (6) or a wrong count
    "arrival_s": st.lists(st.floats(0, 50), min_size=1, max_size=6),
    "prompt_tokens": st.lists(st.integers(1, 4000), min_size=1, max_size=6),
    "output_tokens": st.lists(st.integers(1, 400), min_size=1, max_size=6),
    "hold_s": st.lists(st.floats(0.01, 30), min_size=5, max_size=7),
    "sorted_values": st.lists(st.integers(0, 100), min_size=0, max_size=10).map(sorted),
    "name_or_path": st.sampled_from(["conv", "code", "nope", ""]),
    # a student's policy source (and a backlog as a list of slot times)
    "backlog": st.lists(st.integers(1, 60), max_size=6),
    "source": st.sampled_from([
        "def policy(obs):\n    return None\n", "def (:\n", "1/0\n", "x = 1\n",
        "class P:\n    def decide(self, obs):\n        pass\n",
    ]),
    "label": st.sampled_from(["fifo", ""]),
}


@st.composite
def calls(draw, func: Any) -> tuple[tuple, dict]:
    """(args, kwargs) for one call of ``func``: some parameters left at their default."""
    signature = inspect.signature(func)
    always = ALWAYS_DRAWN.get(func.__module__, ()) + ALWAYS_DRAWN.get(f"{func.__module__}.{func.__name__}", ())
    args: list[Any] = []
    kwargs: dict[str, Any] = {}
    hostile_budget = draw(st.sampled_from([0, 0, 1, 1, 2]))
    for name, p in signature.parameters.items():
        if p.kind in (p.VAR_POSITIONAL, p.VAR_KEYWORD):
            continue
        annotation = str(p.annotation)
        required = p.default is p.empty
        roll = draw(st.integers(0, 9))
        if name in always and roll < 6:
            roll = 6  # drawn, not left at the default
        if hostile_budget and roll < 3:
            hostile_budget -= 1
            value = draw(st.one_of(HOSTILE, FILES) if name in ("path", "records") else HOSTILE)
        elif required:
            value = draw(REQUIRED[name] if name in REQUIRED else _good_value(name, p.default, annotation))
        elif roll < 6:
            continue  # leave the default
        else:
            value = draw(_good_value(name, p.default, annotation))
        if name in always and value is None:
            value = draw(_good_value(name, p.default, annotation))  # None means the slow default
        if p.kind is p.POSITIONAL_ONLY or (p.kind is p.POSITIONAL_OR_KEYWORD and required and not kwargs):
            args.append(value)
        else:
            kwargs[name] = value
    if draw(st.integers(0, 19)) == 0:
        kwargs["agin_s"] = 5  # a misspelt keyword
    return tuple(args), kwargs


def draw_calls(func: Any, n: int) -> list[tuple[tuple, dict]]:
    """``n`` calls of ``func`` drawn by hypothesis, reproducibly (derandomized)."""
    out: list[tuple[tuple, dict]] = []

    @settings(
        max_examples=n, database=None, derandomize=True, phases=[Phase.generate],
        suppress_health_check=list(HealthCheck), deadline=None,
    )
    @given(calls(func))
    def collect(call):
        out.append(call)

    collect()
    return out[:n]


# ------------------------------------------------------------------- workers


def _worker(conn) -> None:
    import resource

    try:  # a hard cap well above the checked growth, so a runaway call cannot take the machine
        resource.setrlimit(resource.RLIMIT_AS, (6 << 30, 6 << 30))
    except (ValueError, OSError):
        pass
    while True:
        job = conn.recv()
        if job is None:
            return
        dotted, args, kwargs = job
        before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
        module, _, name = dotted.rpartition(".")
        try:
            func = getattr(importlib.import_module(module), name)
            args, kwargs = _materialise(args), {k: _materialise(v) for k, v in kwargs.items()}
            start = time.perf_counter()
            result = func(*args, **kwargs)
            if inspect.iscoroutine(result):  # an async entry point: run it to the end
                import asyncio

                asyncio.run(result)
            outcome = ("ok", "", time.perf_counter() - start)
        except ValueError as exc:
            outcome = ("ValueError", str(exc), 0.0)
        except BaseException as exc:  # noqa: BLE001 - every other exception is what we look for
            tb = traceback.extract_tb(exc.__traceback__)
            where = f"{os.path.basename(tb[-1].filename)}:{tb[-1].lineno}" if tb else "?"
            kind = type(exc).__name__
            if isinstance(exc, TypeError) and tb and tb[-1].filename == __file__:
                kind = "signature"  # Python refused the call itself: a missing or unexpected argument
            outcome = (kind, f"{str(exc)[:200]} [{where}]", 0.0)
        grown = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024 - before
        conn.send((*outcome, grown))


def _cpu_s(pid: int) -> float:
    """CPU seconds (user + system) process ``pid`` has used so far (Linux: /proc/PID/stat)."""
    try:
        with open(f"/proc/{pid}/stat", encoding="ascii", errors="replace") as f:
            fields = f.read().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
    except (OSError, ValueError, IndexError):
        return 0.0


def _over_limit(pid: int, cpu_at_start: float, started: float, limit_s: float) -> bool:
    """A call is a hang once it has used ``limit_s`` of CPU (so a busy machine that shares the
    cores does not fail it), or has run :data:`WALL_FACTOR` times that long in wall time
    (a call that blocks without computing)."""
    return (_cpu_s(pid) - cpu_at_start > limit_s) or (time.monotonic() - started > WALL_FACTOR * limit_s)


class Workers:
    """A few long-lived child processes that run calls with time and memory limits."""

    def __init__(self, n: int) -> None:
        self.ctx = multiprocessing.get_context("spawn")
        self.slots = [self._start() for _ in range(n)]

    def _start(self):
        parent, child = self.ctx.Pipe()
        proc = self.ctx.Process(target=_worker, args=(child,), daemon=True)
        proc.start()
        return [proc, parent, None, 0.0, 0.0]  # process, pipe, job in flight, started at, its CPU then

    def run(self, jobs: list[tuple[str, tuple, dict]], budget_s: float = math.inf) -> list[tuple | None]:
        """Run the jobs; a callable's jobs after its ``budget_s`` of call time are skipped (None)."""
        results: list[tuple | None] = [None] * len(jobs)
        spent: dict[str, float] = {}
        todo = list(enumerate(jobs))[::-1]
        busy = 0
        while todo or busy:
            for slot in self.slots:
                while slot[2] is None and todo and spent.get(todo[-1][1][0], 0.0) > budget_s:
                    todo.pop()  # this callable has had its share of time
                if slot[2] is None and todo:
                    index, job = todo.pop()
                    slot[1].send(job)
                    slot[2], slot[3], slot[4] = index, time.monotonic(), _cpu_s(slot[0].pid)
                    busy += 1
            time.sleep(0.001)
            for i, slot in enumerate(self.slots):
                proc, pipe, index, started, cpu0 = slot
                if index is None:
                    continue
                if pipe.poll():
                    try:
                        result = pipe.recv()
                    except EOFError:
                        result = ("died", f"worker exit code {proc.exitcode}", 0.0, 0)
                elif not proc.is_alive():
                    result = ("died", f"worker exit code {proc.exitcode}", 0.0, 0)
                elif _over_limit(proc.pid, cpu0, started, limit := SLOW_CALLS_S.get(jobs[index][0], CALL_LIMIT_S)):
                    result = ("timeout", f"no answer in {limit:g} s of CPU", 0.0, 0)
                else:
                    continue
                results[index] = result
                spent[jobs[index][0]] = spent.get(jobs[index][0], 0.0) + (result[2] or CALL_LIMIT_S * (result[0] == "timeout"))
                busy -= 1
                slot[2] = None
                if result[0] in ("died", "timeout") or result[3] > MEMORY_LIMIT_BYTES:
                    proc.kill()
                    proc.join()
                    self.slots[i] = self._start()
        return results  # type: ignore[return-value]

    def close(self) -> None:
        for proc, pipe, *_ in self.slots:
            try:
                pipe.send(None)
            except (BrokenPipeError, OSError):
                pass
            proc.join(timeout=5)
            if proc.is_alive():
                proc.kill()


# ------------------------------------------------------------------ verdicts


def known_names(callables: dict[str, Any]) -> set[str]:
    """Every parameter and field name of the public callables (what a message may name)."""
    names: set[str] = {"policy", "policies", "path", "records", "tenants", "requests"}
    for func in callables.values():
        try:
            names.update(inspect.signature(func).parameters)
        except (TypeError, ValueError):
            pass
        if is_dataclass(func):
            names.update(f.name for f in fields(func))
    return {n for n in names if n not in ("self", "args", "kwargs", "extensions")}


def verdict(result: tuple, names: set[str]) -> str | None:
    """None when the outcome is acceptable, otherwise what went wrong."""
    kind, message, _seconds, grown = result
    if grown > MEMORY_LIMIT_BYTES:
        return f"memory: grew {grown / 2**30:.1f} GiB"
    if kind == "ok" or kind == "signature":
        return None
    if kind == "ValueError":
        words = set(re.findall(r"[A-Za-z_][A-Za-z0-9_]*", message))
        names_one = words & names or re.match(r"^\S+ line \d+: ", message) or message.startswith("cannot read ")
        if names_one and "\n" not in message.strip() and len(message) < 400:
            return None
        return f"ValueError naming no parameter (or not one line): {message[:200]}"
    return f"{kind}: {message}"


def fuzz(examples: int, name_filter: str = "", timings: dict[str, float] | None = None) -> dict[str, list[str]]:
    """Run the fuzz; return the failures by callable (first example of each kind).

    ``timings``, when given, receives the seconds each callable's successful calls took.
    """
    callables = public_callables()
    names = known_names(callables)
    jobs = []
    counter: dict[str, Any] = {d: itertools.count() for d in callables}
    for dotted, func in callables.items():
        if name_filter in dotted:
            jobs.extend((dotted, args, kwargs) for args, kwargs in draw_calls(func, examples))
    # Interleave the callables, so that every one is reached early and the budget skips only repeats.
    jobs.sort(key=lambda job: next(counter[job[0]]))
    workers = Workers(WORKERS)
    try:
        results = workers.run(jobs, CALLABLE_BUDGET_S)
    finally:
        workers.close()
    failures: dict[str, list[str]] = {}
    seen: set[tuple[str, str]] = set()
    for (dotted, args, kwargs), result in zip(jobs, results):
        if result is None:
            continue  # skipped: the callable's time budget was spent
        if timings is not None:
            timings[dotted] = timings.get(dotted, 0.0) + result[2]
        bad = verdict(result, names)
        if bad is None:
            continue
        key = (dotted, re.sub(r"\(got .*", "", bad)[:60])
        if key in seen:
            continue
        seen.add(key)
        call = ", ".join([*map(_short, args), *(f"{k}={_short(v)}" for k, v in kwargs.items())])
        failures.setdefault(dotted, []).append(f"{dotted.rpartition('.')[2]}({call}) -> {bad}")
    return failures


def _short(value: Any) -> str:
    text = repr(value)
    return text if len(text) < 60 else text[:57] + "..."


# --------------------------------------------------------------------- tests


def test_discovery_finds_the_public_models():
    found = public_callables()
    for dotted in ("lanes.pool.engine.simulate", "lanes.gpu.chains.hol_blocking", "lanes.lane.jobstore.chunk"):
        assert dotted in found
    import lanes

    for name in lanes.__all__:  # every top-level callable is fuzzed or excluded with a reason
        value = getattr(lanes, name)
        if callable(value):
            dotted = f"{value.__module__}.{value.__name__}"
            assert dotted in found or dotted in EXCLUDED, dotted


def test_exclusions_name_real_callables():
    found: set[str] = set()
    for module_name in _modules():
        module = importlib.import_module(module_name)
        found.update(f"{module.__name__}.{n}" for n in vars(module))
    stale = sorted((set(EXCLUDED) | set(SLOW_CALLS_S)) - found)
    assert not stale, f"exclusions that name nothing (remove them): {stale}"


def test_every_public_callable_answers_or_refuses():
    failures = fuzz(EXAMPLES)
    report = "\n".join(line for lines in failures.values() for line in lines)
    assert not failures, f"{sum(map(len, failures.values()))} bad outcomes:\n{report}"


if __name__ == "__main__":
    n = int(sys.argv[1]) if len(sys.argv) > 1 else EXAMPLES
    t0 = time.perf_counter()
    spent: dict[str, float] = {}
    result = fuzz(n, sys.argv[2] if len(sys.argv) > 2 else "", spent)
    for lines in result.values():
        print("\n".join(lines))
    slowest = sorted(spent.items(), key=lambda kv: -kv[1])[:8]
    print("slowest (s in calls that answered):", ", ".join(f"{k.rpartition('.')[2]} {v:.1f}" for k, v in slowest))
    print(f"{sum(map(len, result.values()))} bad outcomes in {time.perf_counter() - t0:.1f} s")


def test_a_call_is_a_hang_by_its_cpu_time_or_by_a_long_block():
    """A call on a busy machine is not failed for waiting its turn on the cores: the limit is
    CPU time, and only a call that blocks WALL_FACTOR times its limit is a hang by the clock."""
    pid, now = os.getpid(), time.monotonic()
    cpu = _cpu_s(pid)
    assert cpu > 0
    assert _over_limit(pid, cpu - 2.0, now, 1.0)  # two CPU seconds used against a limit of one
    assert _over_limit(pid, cpu, now - WALL_FACTOR - 0.5, 1.0)  # blocked past the wall cap
    assert not _over_limit(pid, cpu, now - WALL_FACTOR + 1.0, 1.0)  # slow by the clock only
