"""The online judge: a student's scheduler run tick by tick by a simulator that trusts nothing.

The judge (this process) owns the clock, the hidden scenario and every piece
of bookkeeping: it runs the day in the engine's one loop (:func:`lanes.simulate`),
with the student's policy as its scheduler, and computes every metric itself.  The student's scheduler runs in a child
process, in the grading sandbox (:mod:`grading.sandbox`), and sees
only what the judge tells it over a pipe, one line per tick:

judge to child, once
    ``{"source": ..., "slots": S, "preempt_cost_s": C, "backlog": [s0, s1, ...]}``:
    the policy's source and the pool as it is at t = 0 (the batch backlog's
    slot times are known; see :mod:`lanes.pool.protocol`).  The child answers
    ``["ready"]`` once the policy is loaded.
judge to child, every tick
    ``[t, k, [ids]]``: ``k`` interactive requests arrived at tick ``t`` (they
    take the next ``k`` ids) and the jobs ``ids`` finished their work.
child to judge, every tick
    ``[t, [start ids], [evict ids]]``, the policy's decision; ``[t, "decision-type"]``
    when it returned something else; or ``["error", "raised"]`` when the policy raised.
judge to child, at the end of a day it ran to the end
    ``["end"]``; the child answers ``["bye"]`` and leaves.

The child hosts a policy for several days, one after another (set 13's key judges
two per question): its first process loads what a policy may import, then forks a fresh
process for each day, which reads that day's first line, so each day starts as in a child of
its own, and the box is started once. After a day that did not end well the box is stopped;
the next day starts another.

The child keeps its own copy of the :class:`~lanes.pool.protocol.Board` from
these messages and calls the policy with its observation.  The judge checks
every answer (the engine's Board checks the rules): it must come within the per-decision time limit, be one line of
the expected shape for this tick, with nothing sent out of turn, and keep the
interface's rules.  Anything else (a crash, a stall, a flood, garbage, a
broken rule, the whole run exceeding its limit) ends the run with a verdict
that is not ``ok``, and the child and everything it started are killed.

The hidden scenario (its seed above all) never leaves this process: the
child gets no arguments and no environment that carry it, and a future
arrival is never sent before its tick.  Nothing the policy chooses comes back
to the student: a failing day is one of a few :data:`VERDICTS` (it crashed, it
took too long, it gave an invalid decision), said once per set by
:func:`compare_on_days`, with no day, tick, id, exception or rule in it, so a policy
cannot smuggle what it saw of a hidden day into the student's report by choosing
how to fail (``Verdict.reason`` names the rule broken, for the instructor's tools).

Once the policy's source is about to run, the child binds itself with a
seccomp filter (:func:`_guard`): the kernel then refuses it every system
call but reading and writing its pipes, memory, clocks and exit, so the
policy cannot open a file, import a module not already loaded, fork, exec,
start a thread or use a socket, and nothing it does in Python can undo that.
"""

from __future__ import annotations

import gc
import json
import os
import resource
import select
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field

from lanes.pool.protocol import Board, Decision, DecisionError, load_policy

# The judge's side imports the simulator inside judge() (and the exercises in compare_on_days()):
# the child, which runs this module too, never has the built-in policies loaded, and cannot import
# them once guarded; and it starts faster without them (once per policy judged).

#: Modules a judged policy may import (loaded before the policy is; importing any other fails).
ALLOWED_MODULES = ("math", "collections", "heapq", "itertools", "functools", "bisect", "dataclasses",
                   "statistics", "typing", "operator", "lanes.pool.protocol")


@dataclass(frozen=True)
class JudgeLimits:
    """Time and size limits of one judged run.

    Attributes
    ----------
    decision_s : float
        Wall-clock backstop for the policy's answer to one tick, s (a policy that
        sleeps; what it computes is bounded by ``cpu_s``).
    startup_s : float
        Wall-clock backstop to start the child and load the policy, s.
    run_s : float or None
        Wall-clock backstop for the whole run after start-up, s; ``None``: 60 s
        plus 10 times the CPU limit (generous: a machine at load 20 must not fail an
        honest policy, whose limit is its CPU time).
    cpu_s : float or None
        CPU time of the policy's process for one day (loading it included), s, enforced
        by the kernel (``RLIMIT_CPU``, which the policy cannot raise); ``None``: 10 s
        plus 5 ms per tick (a 6-hour day needs a few seconds).
    line_bytes : int
        Longest answer line accepted, bytes.
    memory_mb : int
        Memory of the child, MiB.
    """

    decision_s: float = 30.0
    startup_s: float = 60.0
    run_s: float | None = None
    line_bytes: int = 1 << 16
    memory_mb: int = 768
    cpu_s: float | None = None

    def cpu_limit_s(self, ticks: int) -> int:
        """The day's CPU limit, whole seconds (as ``RLIMIT_CPU`` counts)."""
        import math

        return max(1, math.ceil(self.cpu_s if self.cpu_s is not None else 10.0 + 0.005 * ticks))

    def run_limit_s(self, ticks: int) -> float:
        return self.run_s if self.run_s is not None else 60.0 + 10.0 * self.cpu_limit_s(ticks)


@dataclass(frozen=True)
class Verdict:
    """The outcome of judging one policy on one scenario.

    Attributes
    ----------
    ok : bool
        The policy answered every tick, on time, within the rules.
    reason : str
        Why not, in one line (empty when ``ok``).
    row : dict or None
        The run's table row (:meth:`lanes.SlotPoolResult.row`, labelled ``policy``),
        computed by the judge; ``None`` unless ``ok``.
    ticks : int
        Ticks answered.
    elapsed_s : float
        Wall-clock time of the run, start-up included, s.
    n_arrivals, n_admitted : int
        Interactive requests that arrived, and that got a slot (a policy that
        leaves requests waiting has a p99 over fewer).
    timed_out : bool
        The run ended because the policy took too long (to load, to answer a
        tick, or in all).
    kind : str
        What the judge saw, one of :data:`VERDICTS`' keys (``""`` when ``ok``): the
        only part of a failure that reaches the student.
    """

    ok: bool
    reason: str
    row: dict | None
    ticks: int
    elapsed_s: float
    n_arrivals: int = 0
    n_admitted: int = 0
    timed_out: bool = False
    kind: str = ""


#: The texts a student sees for a day the policy failed, by what the judge saw: a few fixed
#: ones, so that a policy choosing how to fail from what it saw of a hidden day carries out at
#: most which of them occurred in the set (each is said once per set; see compare_on_days).
VERDICTS = {
    "crash": "on a hidden day the policy crashed (it could not be loaded, raised an exception, or its process ended)",
    "timeout": "on a hidden day the policy took too long (to load, to decide, or in all)",
    "invalid": "on a hidden day the policy gave an invalid decision (one the interface's rules refuse, "
               "or an answer that is not a decision)",
    "differs": "on a hidden day the policy ran, but its waits, evictions or batch output differ from the rule's",
    "judge": "the judge could not run the policy on this machine (tell your instructor)",
}


class _Fail(Exception):
    """Ends a judged run: the message is the verdict's reason, ``kind`` a key of :data:`VERDICTS`."""

    def __init__(self, reason: str, kind: str = "invalid") -> None:
        super().__init__(reason)
        self.kind = kind


class _TooLong(_Fail):
    """Ends a judged run that ran past one of its time limits."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason, "timeout")


def judge(source: str, scenario, *, limits: JudgeLimits = JudgeLimits(), stream=None,
          host: _Host | None = None) -> Verdict:
    """Judge the policy defined by ``source`` (a module's text) on ``scenario`` (on the 1 s clock).

    The day runs in :func:`lanes.simulate`, the policy in the child standing in for its
    scheduler (:class:`_Remote`); the engine's Board checks every decision against the
    interface's rules.  ``stream`` (an :class:`~lanes.pool.arrivals.ArrivalStream` drawn for
    ``scenario``, as :func:`lanes.simulate` takes it) replaces the scenario's random day, such
    as with a replayed trace.  ``host``: the child to run the day in (its next fork, see
    :class:`_Host`), kept for the next day when this one ends well; a child of its own when
    omitted.  Returns a :class:`Verdict`; never raises because of what the policy does.
    """
    from lanes.pool.arrivals import ArrivalStream, draw_stream
    from lanes.pool.engine import simulate
    from lanes.pool.scenario import Scenario

    if not isinstance(source, str):
        raise ValueError(f"source must be the policy's Python source as a str (got {type(source).__name__})")
    if not isinstance(scenario, Scenario):
        raise ValueError(f"scenario must be a lanes.Scenario (got {type(scenario).__name__})")
    if scenario.tick_s != 1:
        raise ValueError(f"scenario must run on the 1 s clock: the judge asks the policy once a second "
                         f"(got tick_s={scenario.tick_s})")
    if stream is not None and not isinstance(stream, ArrivalStream):
        raise ValueError(f"stream must be an ArrivalStream or None (got {type(stream).__name__})")
    backlog = list((draw_stream(scenario) if stream is None else stream).batch_service_s)
    # A run makes many small records that never form cycles; pausing the cycle collector
    # saves it from scanning them (and the draws) again and again.
    collecting = gc.isenabled()
    gc.disable()
    began = time.perf_counter()
    remote = None
    own, host = host is None, host or _Host(limits)
    ok = False
    try:
        pipe = host.pipe()
        hello = {"source": source, "slots": scenario.slots, "preempt_cost_s": scenario.preempt_cost_s,
                 "backlog": backlog, "cpu_s": limits.cpu_limit_s(scenario.ticks)}
        pipe.send(json.dumps(hello) + "\n", began + limits.startup_s)
        hello = pipe.receive(began + limits.startup_s)
        if hello == ["cpu"]:
            raise _TooLong("the policy used more than its CPU time while starting")
        if hello == ["error", "guard"]:
            raise _Fail("the judge could not restrict the policy's process on this machine", "judge")
        if type(hello) is list and len(hello) == 2 and hello[0] == "error":
            raise _Fail("the policy could not be loaded (its code raised an exception)", "crash")
        if hello != ["ready"]:
            raise _Fail("the policy did not start (it should define one class with decide(obs), or one function)",
                        "crash")
        remote = _Remote(pipe, limits.decision_s, time.perf_counter() + limits.run_limit_s(scenario.ticks))
        try:
            result = simulate(scenario, remote, stream=stream)
        except DecisionError as exc:
            raise _Fail(_broke(exc.rule)) from None
        verdict = Verdict(True, "", result.row(), scenario.ticks, time.perf_counter() - began,
                          result.n_arrivals, result.n_interactive)
        if not own:  # the day is over: this fork leaves, and the host forks afresh for the next
            pipe.send('["end"]\n', time.perf_counter() + limits.decision_s)
            ok = pipe.receive(time.perf_counter() + limits.decision_s) == ["bye"]
        return verdict
    except _Fail as exc:
        return Verdict(False, str(exc), None, remote.t if remote else 0, time.perf_counter() - began,
                       timed_out=isinstance(exc, _TooLong), kind=exc.kind)
    except OSError:  # the pipe broke: the child is gone
        return Verdict(False, "the policy's process ended", None, remote.t if remote else 0,
                       time.perf_counter() - began, kind="crash")
    finally:
        if own or not ok:
            host.close()
        if collecting:
            gc.enable()


class _Host:
    """The child that hosts a policy, in its box, for the days judged one after another.

    It loads what a policy may import once, then forks a fresh process for each day, which
    binds itself (:func:`_guard`), loads the policy and answers that day's ticks: each day
    starts as in a child of its own, and the box is started once (set 13's key judges two
    days per question). After a day that did not end well the host is closed; the next day
    starts another.
    """

    def __init__(self, limits: JudgeLimits) -> None:
        self.limits = limits
        self.child = self.job = self._pipe = None

    def pipe(self) -> _Pipe:
        """The pipe to the host's next fork (the host is started on first use)."""
        if self.child is None:
            self.job = tempfile.mkdtemp(prefix="lanes-judge-")
            self.child = launch(self.job, self.limits)
            self._pipe = _Pipe(self.child.stdin.fileno(), self.child.stdout.fileno(), self.limits.line_bytes)
        return self._pipe

    def close(self) -> None:
        """Stop the host and everything it started."""
        if self.child is not None:
            self.child.kill()
            shutil.rmtree(self.job, ignore_errors=True)
        self.child = self.job = self._pipe = None


class _Remote:
    """The child's policy as the engine's scheduler: :func:`lanes.simulate` calls ``decide`` every tick.

    Each call tells the child what changed since its last answer, as its copy of the board
    needs it: how many requests arrived this tick (the back of the waiting queue) and which
    jobs left their slots (those its last decision left running that run no longer).  The
    child's answer goes back to the engine unchecked: the engine's Board checks it.
    """

    name = "policy"  # the row's label

    def __init__(self, pipe: _Pipe, decision_s: float, deadline: float) -> None:
        self.pipe, self.decision_s, self.deadline = pipe, decision_s, deadline
        self.t = 0  # ticks answered
        self.running: list[int] = []  # ids holding slots at the last observation, in the order they took them
        self.last = Decision()  # the last decision, which the engine carried out

    def decide(self, obs) -> Decision:
        t = obs.t
        evicted = set(self.last.evict)
        after = [i for i in self.running if i not in evicted] + list(self.last.start)  # as the decision left them
        now = [job.id for job in obs.running]
        held = set(now)
        finished = [i for i in after if i not in held]
        arrived = 0
        for request in reversed(obs.waiting):
            if request.arrival != t:
                break
            arrived += 1
        start = time.perf_counter()
        self.pipe.send(f"[{t},{arrived},[{','.join(map(str, finished))}]]\n", start + self.decision_s)
        decision = _decision(self.pipe.receive(min(self.deadline, start + self.decision_s), t), t)
        self.running, self.last, self.t = now, decision, t + 1
        return decision


def _decision(answer: object, t: int) -> Decision:
    """The decision in a child's answer for tick ``t``, or :class:`_Fail` saying what is wrong."""
    if type(answer) is list and len(answer) == 2 and answer[0] == "error":
        raise _Fail("the policy raised an exception", "crash")
    if answer == ["cpu"]:  # the host's word: the day's process was stopped at its CPU limit
        raise _TooLong("the policy used more than its CPU time while running")
    if answer == [t, "decision-type"]:
        raise _Fail(_broke("decision-type"))
    if type(answer) is not list or len(answer) != 3 or type(answer[1]) is not list or type(answer[2]) is not list:
        raise _Fail("the policy's answer is not a decision")
    if answer[0] != t or type(answer[0]) is not int:
        raise _Fail("the policy answered out of turn")
    return Decision(answer[1], answer[2])


def _broke(rule: str) -> str:
    """The verdict for a broken rule: the judge's own words, nothing the policy chose (not even the tick).

    A verdict reaches the student's report, so anything the policy could vary in it (an
    exception's name, the tick it fails at, an id) would carry what it saw of a hidden day out.
    """
    from lanes.pool.protocol import RULES

    return f"the policy broke rule {rule!r}" if rule in RULES else "the policy broke a rule"


class _Pipe:
    """Lines to and from the child, with deadlines, a size limit and a check for talking out of turn."""

    def __init__(self, write_fd: int, read_fd: int, line_bytes: int) -> None:
        self.write_fd, self.read_fd, self.line_bytes = write_fd, read_fd, line_bytes
        self.buf = bytearray()
        self.poll = select.poll()
        self.poll.register(read_fd, select.POLLIN | select.POLLHUP | select.POLLERR)
        self.poll_out = select.poll()
        self.poll_out.register(write_fd, select.POLLOUT | select.POLLERR)
        os.set_blocking(write_fd, False)  # a child that stops reading must not hang the judge

    def send(self, text: str, deadline: float) -> None:
        if self.buf:  # anything already here was sent before it was asked for
            raise _Fail("the policy wrote to the pipe out of turn")
        data = memoryview(text.encode())
        while data:
            try:
                data = data[os.write(self.write_fd, data):]
            except BlockingIOError:
                left = deadline - time.perf_counter()
                if left <= 0 or not self.poll_out.poll(max(1, int(left * 1000) + 1)):
                    raise _Fail("the policy's process stopped reading", "timeout") from None

    def receive(self, deadline: float, t: int | None = None) -> object:
        where = "while starting" if t is None else "while running"
        while True:
            end = self.buf.find(b"\n")
            if end >= 0:
                line = self.buf[:end]
                del self.buf[:end + 1]
                try:
                    return json.loads(line.decode())
                except ValueError:  # UnicodeDecodeError too
                    raise _Fail(f"the policy's answer {where} is not one line of JSON") from None
            if len(self.buf) > self.line_bytes:
                raise _Fail(f"the policy flooded the pipe {where} (over {self.line_bytes} bytes)")
            left = deadline - time.perf_counter()
            if left <= 0 or not self.poll.poll(max(1, int(left * 1000) + 1)):
                raise _TooLong(f"the policy took too long {where}")
            data = os.read(self.read_fd, 1 << 16)
            if not data:
                raise _Fail(f"the policy's process ended {where}", "crash")
            self.buf += data


# --- starting the child ---------------------------------------------------------------


def launch(job_dir: str, limits: JudgeLimits):
    """Start the child that hosts the policy, with pipes on its stdin and stdout.

    In the grading sandbox when it can be built; else (no ``bwrap`` on this
    machine) a plain subprocess with resource limits, which hides nothing of
    the disk and relies on the child's seccomp filter alone.
    """
    from . import sandbox

    lim = sandbox.Limits(timeout_s=limits.startup_s + 3600.0, cpu_s=3600, memory_mb=limits.memory_mb,
                         nproc=16, file_mb=1, tmp_mb=16, cpus=1.0)
    try:
        return sandbox.popen(sandbox.python_argv("grading.online"), job_dir=job_dir, limits=lim,
                             stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
    except sandbox.SandboxError as exc:
        global _WARNED
        if not _WARNED:
            _WARNED = True
            print(f"warning: the online judge runs policies outside the sandbox ({str(exc).splitlines()[0][:160]})",
                  file=sys.stderr)
        return PlainChild(job_dir, limits)


_WARNED = False


class PlainChild:
    """The fallback child: ``python -I`` in its own session under rlimits, killed as a group."""

    def __init__(self, job_dir: str, limits: JudgeLimits) -> None:
        import resource

        def rlimits() -> None:
            mem = limits.memory_mb << 20
            resource.setrlimit(resource.RLIMIT_AS, (mem, mem))
            resource.setrlimit(resource.RLIMIT_FSIZE, (1 << 20, 1 << 20))
            resource.setrlimit(resource.RLIMIT_CORE, (0, 0))

        import lanes

        site = list(dict.fromkeys(os.path.dirname(os.path.dirname(os.path.abspath(f)))
                                  for f in (lanes.__file__, __file__)))
        boot = (f"import sys; sys.path[:0] = {site!r}; import runpy; "
                "runpy.run_module('grading.online', run_name='__main__')")
        self.p = subprocess.Popen([sys.executable, "-I", "-S", "-c", boot], cwd=job_dir, env={},
                                  stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                                  start_new_session=True, preexec_fn=rlimits)
        self.stdin, self.stdout = self.p.stdin, self.p.stdout

    def kill(self) -> None:
        import signal

        try:
            os.killpg(self.p.pid, signal.SIGKILL)
        except OSError:
            pass
        self.p.wait()
        for f in (self.stdin, self.stdout):
            try:
                f.close()
            except OSError:
                pass


# --- the child's side -------------------------------------------------------------------


#: System calls the policy's process may make once the policy is loaded, by machine: memory,
#: the pipes already open, clocks and sleeping, signals' returns and exit. Every other call fails with
#: EPERM: no open, exec, fork, clone (threads), socket, kill or ptrace.
_ALLOWED_SYSCALLS = {
    "x86_64": (0xC000003E, {"read": 0, "write": 1, "close": 3, "fstat": 5, "lseek": 8, "mmap": 9, "mprotect": 10,
                            "munmap": 11, "brk": 12, "rt_sigreturn": 15, "readv": 19, "writev": 20,
                            "sched_yield": 24, "mremap": 25, "madvise": 28, "nanosleep": 35, "getpid": 39, "exit": 60,
                            "gettimeofday": 96, "getrusage": 98, "futex": 202, "clock_gettime": 228,
                            "clock_getres": 229, "clock_nanosleep": 230, "exit_group": 231, "newfstatat": 262, "getrandom": 318}),
    "aarch64": (0xC00000B7, {"read": 63, "write": 64, "close": 57, "fstat": 80, "lseek": 62, "mmap": 222,
                             "mprotect": 226, "munmap": 215, "brk": 214, "rt_sigreturn": 139, "readv": 65,
                             "writev": 66, "sched_yield": 124, "nanosleep": 101, "clock_nanosleep": 115, "mremap": 216, "madvise": 233, "getpid": 172,
                             "exit": 93, "gettimeofday": 169, "getrusage": 165, "futex": 98,
                             "clock_gettime": 113, "clock_getres": 114, "exit_group": 94, "newfstatat": 79,
                             "getrandom": 278}),
}


def _seccomp_program() -> bytes:
    """A seccomp filter (classic BPF) allowing :data:`_ALLOWED_SYSCALLS` of this machine, EPERM otherwise."""
    import errno
    import platform
    import struct

    machine = platform.machine()
    if machine not in _ALLOWED_SYSCALLS:
        raise OSError(f"no system call filter for {machine}")
    arch, calls = _ALLOWED_SYSCALLS[machine]
    ld_w_abs, jeq_k, ret_k = 0x20, 0x15, 0x06
    kill, allow, eperm = 0x80000000, 0x7FFF0000, 0x00050000 | errno.EPERM
    numbers = sorted(set(calls.values()))
    prog = [(ld_w_abs, 0, 0, 4), (jeq_k, 1, 0, arch), (ret_k, 0, 0, kill), (ld_w_abs, 0, 0, 0)]
    for i, nr in enumerate(numbers):  # jump to the ALLOW at the end, else fall through to the next test
        prog.append((jeq_k, len(numbers) - i, 0, nr))
    prog += [(ret_k, 0, 0, eperm), (ret_k, 0, 0, allow)]
    return b"".join(struct.pack("HBBI", *ins) for ins in prog)


def _guard() -> None:
    """From here on the kernel refuses this process everything but :data:`_ALLOWED_SYSCALLS`.

    A seccomp filter cannot be removed or widened by the process it binds, so nothing the
    policy does in Python (rewriting objects, ``ctypes``) reaches it.
    """
    import ctypes

    program = _seccomp_program()
    libc = ctypes.CDLL(None, use_errno=True)
    buf = ctypes.create_string_buffer(program, len(program))

    class Prog(ctypes.Structure):
        _fields_ = [("len", ctypes.c_ushort), ("filter", ctypes.c_void_p)]

    prog = Prog(len(program) // 8, ctypes.cast(buf, ctypes.c_void_p))
    pr_set_no_new_privs, pr_set_seccomp, mode_filter = 38, 22, 2
    if libc.prctl(pr_set_no_new_privs, 1, 0, 0, 0) != 0 or \
            libc.prctl(pr_set_seccomp, mode_filter, ctypes.byref(prog), 0, 0) != 0:
        raise OSError(ctypes.get_errno(), "seccomp filter refused")


def _child_main() -> int:
    """Host the policy: load what it may import, then a fresh fork of this process per day."""
    import importlib

    for name in ALLOWED_MODULES:
        importlib.import_module(name)
    while True:
        pid = os.fork()
        if pid == 0:  # pragma: no cover - the day's process, which never returns here
            code = 1
            try:
                code = _day()
            finally:
                os._exit(code)
        _, status = os.waitpid(pid, 0)
        code = os.waitstatus_to_exitcode(status)
        if code in (-signal.SIGXCPU, -signal.SIGKILL):  # its CPU limit (soft, then hard): say so
            try:
                os.write(1, b'["cpu"]\n')
            except OSError:
                pass
        if code != 0:  # the day did not end with "bye" (or no day came)
            return 1


def _day() -> int:
    """One day: read the judge's lines, keep a board, answer each tick; 0 when the judge ends the day."""
    inp = os.fdopen(os.dup(0), "rb", buffering=1 << 16)
    out = os.dup(1)
    devnull = os.open(os.devnull, os.O_RDWR)
    for fd in (0, 1, 2):  # the policy's prints and reads go nowhere; only this code uses the pipe
        os.dup2(devnull, fd)
    hello = json.loads(inp.readline())
    cpu = int(hello["cpu_s"])  # the kernel stops this process there (SIGXCPU, then SIGKILL)
    resource.setrlimit(resource.RLIMIT_CPU, (cpu, cpu + 1))
    board = Board(hello["slots"], hello["preempt_cost_s"])
    for service_s in hello["backlog"]:
        board.add_batch(service_s, 0)
    dumps, loads, write = json.dumps, json.loads, os.write
    try:
        _guard()
    except Exception:  # noqa: BLE001 - no guard, no policy
        write(out, b'["error", "guard"]\n')
        return 1
    try:
        scheduler = load_policy(hello["source"], "policy.py")
    except BaseException as exc:  # noqa: BLE001 - anything the policy's source does is its own failure
        write(out, b'["error", "raised"]\n')
        return 1
    decide = scheduler.decide
    write(out, b'["ready"]\n')
    for line in inp:
        message = loads(line.decode())
        if message == ["end"]:
            write(out, b'["bye"]\n')
            return 0
        t, k, done = message
        for _ in range(k):
            board.add_request(t)
        board.finish(done)
        try:
            decision = decide(board.observe(t))
            if type(decision) is not Decision or type(decision.start) not in (list, tuple) \
                    or type(decision.evict) not in (list, tuple):
                reply = dumps([t, "decision-type"]) + "\n"  # the judge names the rule
            else:
                reply = dumps([t, list(decision.start), list(decision.evict)]) + "\n"
        except BaseException as exc:  # noqa: BLE001
            write(out, b'["error", "raised"]\n')
            return 1
        write(out, reply.encode())
        try:
            board.apply(t, decision, check=False)  # the judge checks it
        except Exception:  # noqa: BLE001 - a decision the judge refuses too, and says why
            return 1
    return 1


if __name__ == "__main__":
    sys.exit(_child_main())


# --- for answer keys ----------------------------------------------------------------------


def figures(row: dict) -> dict:
    """A table row without its ``policy`` name: what a policy is judged on."""
    return {k: x for k, x in row.items() if k != "policy"}


def compare_on_days(source: str | list, days: list, policy: object, *, limits: JudgeLimits = JudgeLimits(),
                    expected: list | None = None, **extensions: object) -> list[tuple[bool, str]]:
    """Judge ``source`` (a str, or the lines :func:`source_of` makes) on each of ``days`` against a rule.

    Returns, per day, whether the judged row equals the engine's row for
    ``policy`` (a built-in spec with ``extensions``, or a reference scheduler),
    and a message: one of :data:`VERDICTS` (no expected value, no day), each said on the first
    day it applies only (the others' messages are empty), so that what reaches the student
    is which of a few things happened, never a choice per day.  ``limits`` are each run's.
    ``expected``: the rule's rows on the days, without ``policy``, when the caller has them
    already (else simulated here). Once the policy runs out of time on a day it is not run on
    the days after (each would cost the same wait again): they fail too, silently.
    """
    from lanes.exercises.source import source_text
    from lanes.pool.engine import simulate

    kinds: list[str] = []  # per day: "" (the rule's row), or what went wrong
    source = source_text(source)
    host = _Host(limits)  # one box for the days, a fresh fork of its child for each
    try:
        for i, day in enumerate(days, 1):
            verdict = judge(source, day, limits=limits, host=host)
            if not verdict.ok:
                kinds.append(verdict.kind or "crash")
                if verdict.timed_out:
                    kinds += ["timeout"] * (len(days) - i)
                    break
                continue
            want = expected[i - 1] if expected is not None else figures(simulate(day, policy, **extensions).row())
            kinds.append("" if figures(verdict.row) == want else "differs")
    finally:
        host.close()
    out, said = [], set()
    for kind in kinds:
        out.append((not kind, "" if not kind or kind in said else VERDICTS[kind]))
        said.add(kind)
    return out
