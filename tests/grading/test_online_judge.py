"""The online judge: honest policies earn their marks, hostile ones earn 0 and leave nothing behind."""

from __future__ import annotations

import glob
import json
import os
import pathlib
import tempfile
import textwrap
import time

import pytest
from hypothesis import given, settings

import lanes
from grading import online
from grading.judge import load_key
from lanes.exercises import get_set
from lanes.exercises.source import source_of
from strategies import scenarios

ROOT = pathlib.Path(__file__).resolve().parents[2]
SOLUTIONS = ROOT / "solutions"
SLUG = "13_write_a_scheduler"
MASTER = SOLUTIONS / SLUG / f"{SLUG}.ipynb"
needs_key = pytest.mark.skipif(not (SOLUTIONS / SLUG / "key.py").is_file(), reason="answer keys not here")

#: A short day on a small pool where the rules differ: requests wait, batch is evicted.
DAY = lanes.anchor(hours=0.1, slots=12, backlog=120, trough_rate=0.6, peak_rate=1.6, seed=77)
#: Tight wall-clock limits, for hostile policies only (a test that waits out a sleeper or a spinner).
FAST = online.JudgeLimits(decision_s=0.5, startup_s=8.0, run_s=20.0)
#: The grader's own limits, for every honest policy: CPU time with wall-clock backstops, so a loaded
#: machine cannot fail it (wall-clock limits of 0.5 s and then 5 s a decision once did, at load 15-20).
HONEST = online.JudgeLimits()


def _solution(class_name: str) -> str:
    """The master notebook's solution cell that defines ``class_name`` (markers dropped)."""
    nb = json.loads(MASTER.read_text())
    for cell in nb["cells"]:
        src = "".join(cell["source"])
        if cell["cell_type"] == "code" and f"class {class_name}" in src:
            return "\n".join(line for line in src.splitlines() if "# BEGIN SOLUTION" not in line
                             and "# END SOLUTION" not in line) + "\n"
    raise AssertionError(f"no cell defines {class_name}")


def _answer(source: str, **constants) -> list[str]:
    """An answer as ``source_of`` makes it, from source text in a temporary module."""
    import importlib.util

    with tempfile.NamedTemporaryFile("w", suffix=".py", delete=False) as f:
        f.write("\n".join(f"{k} = {v!r}" for k, v in constants.items()) + "\n" + source)
    try:
        spec = importlib.util.spec_from_file_location("honest_policy", f.name)
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        obj = next(v for k, v in vars(module).items() if isinstance(v, type) and hasattr(v, "decide")
                   and v.__module__ == "honest_policy")
        return source_of(obj, **constants)
    finally:
        os.unlink(f.name)


def _judge(body: str, scenario=DAY, limits=HONEST):
    return online.judge("from lanes.pool.protocol import Decision\n" + textwrap.dedent(body), scenario, limits=limits)


def test_a_policy_that_runs_out_of_time_is_not_run_again_on_the_later_days(monkeypatch):
    """One hidden day's time-out costs the wait once: the days after it fail unrun (a policy
    that spins would spin again), and a rule broken on one day still lets the next day run."""
    days = [DAY] + [lanes.anchor(hours=0.1, slots=12, backlog=120, trough_rate=0.6, peak_rate=1.6, seed=s)
                    for s in (78, 79)]
    spin = "from lanes.pool.protocol import Decision\ndef decide(obs):\n    while obs.t >= 0:\n        pass\n"
    judged = []
    judge = online.judge
    monkeypatch.setattr(online, "judge", lambda *a, **k: judged.append(1) or judge(*a, **k))
    out = online.compare_on_days(spin, days, "priority", limits=FAST)
    assert len(judged) == 1  # one wait, not three
    assert out == [(False, online.VERDICTS["timeout"]), (False, ""), (False, "")], out  # said once
    broken = "from lanes.pool.protocol import Decision\ndef decide(obs):\n    return Decision(start=[10**9])\n"
    out = online.compare_on_days(broken, days[:2], "priority", limits=FAST)
    assert out == [(False, online.VERDICTS["invalid"]), (False, "")], out


def _parent(pid: int) -> int:
    """The parent of ``pid`` as the host sees it (0 when it is gone)."""
    try:
        with open(f"/proc/{pid}/stat", encoding="ascii", errors="replace") as f:
            return int(f.read().rsplit(")", 1)[1].split()[1])
    except (OSError, ValueError, IndexError):
        return 0


def _ours_or_orphaned(pid: int) -> bool:
    """Started by this test process, or orphaned (left to init): what a judge here may leave.

    A policy child that outlived its judge would be re-parented to init, so it still counts;
    the judge children of a class graded by another test worker at the same time (their
    boxes have their own parent chain) do not.
    """
    me, p = os.getpid(), pid
    for _ in range(64):
        p = _parent(p)
        if p == me:
            return True
        if p <= 1:
            return p == 1 and _parent(pid) == 1
    return False


def _leftovers() -> tuple[set, set]:
    """Job folders of the judge, and processes running its child module."""
    folders = set(glob.glob(os.path.join(tempfile.gettempdir(), "lanes-judge-*")))
    procs = set()
    for pid in os.listdir("/proc"):
        if not pid.isdigit():
            continue
        try:
            with open(f"/proc/{pid}/cmdline", "rb") as f:
                if b"grading.online" in f.read() and _ours_or_orphaned(int(pid)):
                    procs.add(pid)
        except OSError:
            continue
    return folders, procs


def _left_after(before: tuple[set, set], seconds: float = 3.0) -> tuple[set, set]:
    """:func:`_leftovers` once it is ``before`` again, or after ``seconds``: while another test
    worker's box is torn down, its first process shows orphaned for a moment (its parent, the
    outer bwrap, went first) with ``grading.online`` in its command line; a process left behind
    by a judge stays."""
    deadline = time.monotonic() + seconds
    while (now := _leftovers()) != before and time.monotonic() < deadline:
        time.sleep(0.05)
    return now


@pytest.fixture(autouse=True, scope="module")
def private_tempdir(tmp_path_factory):
    """The judge's job folders go to a temp dir of this module's own, so the leftover check
    sees only this module's judges, not those another test worker runs at the same time."""
    saved = tempfile.tempdir
    tempfile.tempdir = str(tmp_path_factory.mktemp("judge-tmp"))
    yield
    tempfile.tempdir = saved


@pytest.fixture(autouse=True)
def test_secret():
    """The key's hidden days come from the course secret: the test suite's public one here."""
    from lanes.exercises.variants import TEST_SECRET, set_course_secret

    set_course_secret(TEST_SECRET)
    yield
    set_course_secret(None)


# --- honest policies ----------------------------------------------------------------------


class TestHonest:
    def test_example_policy_online_equals_the_engine(self):
        verdict = online.judge((ROOT / "examples" / "policies" / "hybrid.py").read_text(), DAY, limits=HONEST)
        assert verdict.ok, verdict.reason
        assert verdict.row == {**lanes.simulate(DAY, "hybrid:8").row(), "policy": "policy"}
        assert verdict.ticks == DAY.ticks
        r = lanes.simulate(DAY, "hybrid:8")
        assert (verdict.n_arrivals, verdict.n_admitted) == (r.n_arrivals, r.n_interactive)

    def test_passes_beside_twenty_cpu_hogs(self):
        """At load 20 an honest policy still earns its marks: the judge limits its CPU time, and its
        wall-clock limits are only backstops. Each hog is a session of its own (the kernel's autogroup
        gives every session an equal share), the hardest neighbours for the box to share a CPU with."""
        import subprocess
        import sys

        hogs = [subprocess.Popen([sys.executable, "-c", "while True: pass"], start_new_session=True)
                for _ in range(20)]
        try:
            time.sleep(0.5)  # every hog running before the judge starts
            assert all(h.poll() is None for h in hogs)
            verdict = online.judge((ROOT / "examples" / "policies" / "hybrid.py").read_text(), DAY,
                                   limits=HONEST)
        finally:
            for h in hogs:
                h.kill()
                h.wait()
        assert verdict.ok, verdict.reason
        assert verdict.row == {**lanes.simulate(DAY, "hybrid:8").row(), "policy": "policy"}

    @settings(max_examples=6, deadline=None)
    @given(scenarios(max_ticks=400, tick_s=1))
    def test_judged_rows_equal_the_engine_on_random_days(self, scenario):
        verdict = online.judge((ROOT / "examples" / "policies" / "priority.py").read_text(), scenario, limits=HONEST)
        assert verdict.ok, verdict.reason
        assert verdict.row == {**lanes.simulate(scenario, "priority").row(), "policy": "policy"}

    def test_given_arrivals_replace_the_draws(self):
        drawn = lanes.draw_stream(DAY)
        quiet = lanes.ArrivalStream(drawn.batch_service_s, (), (), ())  # nobody arrives: batch has the pool
        verdict = online.judge((ROOT / "examples" / "policies" / "priority.py").read_text(), DAY, limits=HONEST,
                               stream=quiet)
        assert verdict.ok and verdict.n_arrivals == 0
        assert verdict.row == {**lanes.simulate(DAY, "priority", stream=quiet).row(), "policy": "policy"}
        with pytest.raises(ValueError, match="stream must be drawn for this scenario"):
            online.judge("def f(obs): pass\n", DAY, stream=lanes.ArrivalStream((60,), (), (), ()))
        with pytest.raises(ValueError, match="1 s clock"):
            online.judge("def f(obs): pass\n", DAY.with_(tick_s=0.5))

    def test_prints_go_nowhere(self):
        verdict = _judge("""
            def chatty(obs):
                print("tick", obs.t, "free", obs.free)
                return Decision(start=[r.id for r in obs.waiting][: obs.free])
        """)
        assert verdict.ok, verdict.reason

    @needs_key
    @pytest.mark.parametrize("student", ["alice"])  # the grader's class test covers three
    def test_floor_and_aging_earn_full_marks(self, student):
        key = load_key(SOLUTIONS, SLUG)
        v = get_set(SLUG).variant(student)
        floor = _answer(_solution("FloorPolicy"), FLOOR=v.floor, CAP=v.evict_cap)
        aging = _answer(_solution("AgingPolicy"), AGING_S=v.aging_s, NEAR_S=v.near_s)
        for q, answer in (("q1", {"q1_policy": floor}), ("q2", {"q2_policy": aging})):
            checks = getattr(key, q)(answer, v)
            assert checks and all(c.ok for c in checks), [c.message for c in checks]

    @needs_key
    def test_the_other_rule_earns_nothing(self):
        key = load_key(SOLUTIONS, SLUG)
        v = get_set(SLUG).variant("")
        aging_as_floor = _answer(_solution("AgingPolicy"), AGING_S=v.aging_s, NEAR_S=v.near_s)
        assert not any(c.ok for c in key.q1({"q1_policy": aging_as_floor}, v))


# --- hostile policies ---------------------------------------------------------------------

HOSTILE = {
    "reads the answer key": f"""
        SECRET = open({str(SOLUTIONS / SLUG / 'key.py')!r}).read()
        def f(obs):
            return Decision()
    """,
    "reads the judge's memory": """
        import os
        def f(obs):
            with open(f"/proc/{os.getppid()}/mem", "rb") as mem:
                mem.read(4096)
            return Decision()
    """,
    "lists the judge's folders": """
        import os
        def f(obs):
            os.listdir("/")
            return Decision()
    """,
    "sleeps": """
        import time
        def f(obs):
            if obs.t == 5:
                time.sleep(3)
            return Decision()
    """,
    "spins in its first decision": """
        def f(obs):
            while True:
                pass
    """,
    "writes to the pipe out of turn": """
        import os
        def f(obs):
            for fd in range(3, 12):
                try:
                    os.write(fd, f"[{obs.t}, [], []]\\n".encode())
                except OSError:
                    pass
            return Decision()
    """,
    "floods the pipe": """
        def f(obs):
            return Decision(start=list(range(10**5)))
    """,
    "answers garbage": """
        def f(obs):
            return "start everything"
    """,
    "answers a generator": """
        def f(obs):
            return Decision(start=(r.id for r in obs.waiting))
    """,
    "answers ids that are not integers": """
        def f(obs):
            return Decision(start=[float("nan")] if obs.waiting else [])
    """,
    "starts jobs that are not waiting": """
        def f(obs):
            return Decision(start=[j.id for j in obs.running][:1] or [10**9])
    """,
    "evicts an interactive request": """
        def f(obs):
            return Decision(evict=[j.id for j in obs.running if j.kind == "interactive"][:1],
                            start=[r.id for r in obs.waiting][: obs.free])
    """,
    "starts a process": """
        import os
        def f(obs):
            os.system("sleep 100 &")  # the shell cannot start (exit status 127)
            os.fork()
            return Decision()
    """,
    "calls the C library": """
        import ctypes
        def f(obs):
            libc = ctypes.CDLL(None)
            if libc.open(b"/proc/self/status", 0) >= 0 or libc.syscall(57) >= 0:  # open; fork (x86_64)
                return Decision()
            raise RuntimeError("refused")
    """,
    "rewrites what it can reach": """
        import gc
        for obj in gc.get_objects():  # a guard that lives in Python can be rewritten this way
            for cell in getattr(obj, "__closure__", None) or ():
                if type(cell.cell_contents) is tuple and all(type(x) is str for x in cell.cell_contents):
                    cell.cell_contents = ("nothing",)
        import wave  # not loaded before the policy: it cannot be read now
        policy = lambda obs: Decision()
    """,
    "imports the built-in policies": """
        from lanes.pool import engine, policies  # the rules the engine runs
        policy = lambda obs: Decision()
    """,
    "eats memory": """
        HOARD = bytearray(4 << 30)
        def f(obs):
            return Decision()
    """,
    "starts a thread": """
        import threading
        def f(obs):
            threading.Thread(target=lambda: None).start()
            return Decision()
    """,
    "exits": """
        import os
        def f(obs):
            os._exit(0)
    """,
}


#: What the verdict's reason says for some of them.
REASONS = {
    "sleeps": "took too long",
    "spins in its first decision": "took too long",
    "writes to the pipe out of turn": "out of turn",
    "floods the pipe": "flooded",
    "answers garbage": "'decision-type'",
    "answers a generator": "'decision-type'",
    "answers ids that are not integers": "'decision-type'",
    "starts jobs that are not waiting": "'start-queued'",
    "evicts an interactive request": "'evict-batch-only'",
    "imports the built-in policies": "could not be loaded",
    "rewrites what it can reach": "could not be loaded",
    "calls the C library": "raised an exception",
    "starts a process": "raised an exception",
}


class TestHostile:
    @pytest.mark.parametrize("name", list(HOSTILE))
    def test_is_refused_and_leaves_nothing_behind(self, name):
        before = _leftovers()
        # the flood must be written before it can be seen: 0.5 s to build and encode 10**5 ids once
        # ran out on a loaded machine ("took too long" instead of "flooded")
        verdict = _judge(HOSTILE[name], limits=HONEST if name == "floods the pipe" else FAST)
        assert not verdict.ok and verdict.row is None and verdict.reason
        assert REASONS.get(name, "") in verdict.reason
        assert _left_after(before) == before
        assert verdict.elapsed_s < FAST.startup_s + 5

    def test_no_policy_text_reaches_the_verdict(self):
        verdict = _judge("""
            class Leak(Exception):
                pass
            def f(obs):
                raise Leak("arrivals so far: " + str([r.arrival for r in obs.waiting]))
        """)
        assert not verdict.ok and "arrivals" not in verdict.reason and "Leak" not in verdict.reason

    def test_cannot_learn_the_hidden_seed(self):
        secret = 0x5EED_0FAB_16DA_7777
        day = DAY.with_(seed=secret)
        # If it found the seed anywhere it can look, it would say so by starting a job that
        # is not waiting; failing that it brute-forces small seeds against the backlog it is
        # shown, and takes far longer than a decision may.
        verdict = _judge(f"""
            import os, sys, random
            def f(obs):
                places = [repr(sys.argv), repr(dict(os.environ)), repr(sys.orig_argv)]
                for path in ("/proc/self/cmdline", "/proc/self/environ", "/proc/1/cmdline"):
                    try:
                        places.append(open(path).read())
                    except Exception:
                        pass
                if any(str({secret}) in p or hex({secret}) in p for p in places):
                    return Decision(start=[10**9])
                sizes = [j.remaining_s for j in obs.batch_queue[:20]]
                for seed in range(10**7):
                    rng = random.Random(seed)
                    if [rng.randint(1, 600) for _ in range(3)] == sizes[:3]:
                        break
                return Decision()
        """, scenario=day, limits=FAST)
        assert not verdict.ok and verdict.reason == "the policy took too long while running"

    @needs_key
    def test_hostile_answers_score_zero_through_the_key(self):
        key = load_key(SOLUTIONS, SLUG)
        v = get_set(SLUG).variant("bob")
        for name in ("reads the answer key", "floods the pipe"):
            source = "from lanes.pool.protocol import Decision\n" + textwrap.dedent(HOSTILE[name])
            checks = key.q1({"q1_policy": source.splitlines()}, v)
            assert not any(c.ok for c in checks), name


class TestWithoutTheSandbox:
    """Where bwrap is missing the judge falls back to a plain child under rlimits and its seccomp filter."""

    @pytest.fixture(autouse=True)
    def plain(self, monkeypatch):
        monkeypatch.setattr(online, "launch", lambda job, limits: online.PlainChild(job, limits))

    def test_honest_still_equals_the_engine(self):
        verdict = online.judge((ROOT / "examples" / "policies" / "priority.py").read_text(), DAY, limits=HONEST)
        assert verdict.ok and verdict.row == {**lanes.simulate(DAY, "priority").row(), "policy": "policy"}

    @pytest.mark.parametrize("name", ["reads the answer key", "reads the judge's memory", "starts a process",
                                      "sleeps", "imports the built-in policies", "calls the C library"])
    def test_hostile_still_refused(self, name):
        before = _leftovers()
        verdict = _judge(HOSTILE[name], limits=FAST)
        assert not verdict.ok and REASONS.get(name, "") in verdict.reason
        assert _left_after(before) == before


def test_the_days_of_a_policy_share_one_box_and_each_starts_afresh(monkeypatch):
    """compare_on_days starts one box for a policy's days and a fresh fork of its child for each
    day: what a day's policy leaves in a module it imported is gone the next day, and a day that
    fails closes the box (the next day gets a new one)."""
    launched = []
    launch = online.launch
    monkeypatch.setattr(online, "launch", lambda *a, **k: launched.append(1) or launch(*a, **k))
    days = [DAY.with_(seed=s) for s in (78, 79, 80)]
    # priority on a day it finds math unmarked, a broken rule on a day it finds it marked
    marks = ("import math\nfrom lanes.pool.protocol import Decision\nFRESH = not hasattr(math, 'lanes_mark')\n"
             "math.lanes_mark = 1\n"
             "def decide(obs):\n    start = [r.id for r in obs.waiting][:obs.free] if FRESH else [10**9]\n"
             "    return Decision(start=start + [b.id for b in obs.batch_queue][:obs.free - len(start)])\n")
    out = online.compare_on_days(marks, days, "priority", limits=HONEST)
    assert [ok for ok, _ in out] == [True] * 3 and len(launched) == 1, (out, launched)
    launched.clear()
    once = ("from lanes.pool.protocol import Decision\n"  # breaks a rule on the small pool only
            "def decide(obs):\n    start = [r.id for r in obs.waiting][:obs.free] if obs.slots > 8 else [10**9]\n"
            "    return Decision(start=start + [b.id for b in obs.batch_queue][:obs.free - len(start)])\n")
    out = online.compare_on_days(once, [days[0], days[1].with_(slots=8), days[2]], "priority", limits=HONEST)
    assert [ok for ok, _ in out] == [True, False, True] and len(launched) == 2, (out, launched)
