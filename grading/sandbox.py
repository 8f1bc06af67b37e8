"""Run untrusted code (a student's notebook, a submitted policy) in a box built from an allow-list.

The box is `bubblewrap <https://github.com/containers/bubblewrap>`_ (``bwrap``, Debian's
package ``bubblewrap``), started as an unprivileged uid of its own:

- every namespace is new (``--unshare-all``: user, PID, IPC, UTS, network, mount, cgroup), so
  the box has no network, its own SysV IPC objects and its own PID 1: when the job ends its
  PID namespace goes, and with it every process it started (``--die-with-parent`` too);
- ``--new-session`` (no terminal injection), no capabilities, no-new-privileges (no setuid);
  a system call filter (:func:`seccomp_program`) refuses the memory no rlimit counts
  (``memfd_create``, SysV ``shmget``), reaching into the box's other processes (``ptrace``,
  ``process_vm_readv``/``writev``; bubblewrap's pid 1's memory is covered too) and other
  machines' call conventions;
- its root holds only what a Python job needs: the interpreter's prefixes and the system
  libraries read-only, copies of ``lanes`` and ``grading`` read-only at :data:`SITE`, its own
  ``/proc`` and ``/dev`` (the root and ``/dev`` read-only), and size-limited private file
  systems (tmpfs) at :data:`JOB`, ``/tmp``, ``/var/tmp``, ``/dev/shm`` and :data:`ANSWERS`
  (2 MiB, for what the job hands back through its pipe): the files the caller put in the job folder are
  bound into :data:`JOB` one by one (read-only, but for the ``outputs`` it names), and
  whatever else the job writes stays in its tmpfs, so a full disk is the job's own failure
  and it all goes with the box. Nothing else of the disk is there (no checkout, no
  ``solutions/``, no home folder), so it works wherever the interpreter lives (``/tmp``,
  ``/opt``, a home folder, a venv); the checkout of ``lanes`` and ``grading`` and the paths given to
  :func:`hide` are covered even where they lie inside the interpreter's prefix;
- each job gets a cgroup v2 of its own where the machine allows it (memory for the whole
  job, shared memory included, no swap; a pids limit; one CPU at most and an equal CPU
  weight); elsewhere it falls back to rlimits (address space and CPU time per process,
  processes per uid) at nice 10, so that the grader and its judges come first (each box is a
  session of its own, which the kernel's autogroup scheduling shares the CPU by), and
  :func:`cgroup_warning` names what is missing. Either way the
  tmpfs sizes count against the job's memory: each process may map ``memory_mb - tmp_mb``.

Use::

    from grading import sandbox
    with sandbox.Box() as box:                       # one per run: a copy of lanes and grading, a cgroup
        job = pathlib.Path(tempfile.mkdtemp())
        with box.popen(sandbox.python_argv("grading.runner", "/job/nb.ipynb", ...),
                       job_dir=job, limits=sandbox.Limits(timeout_s=60),
                       stdin=subprocess.PIPE, stdout=subprocess.PIPE) as p:
            out, _ = p.communicate(b"...", timeout=60)
        # here every process of the job is gone and its cgroup removed

Units: seconds, MiB. Everything the box returns (exit status, files in the job folder,
bytes on a pipe) is the job's and is read as data.
"""

from __future__ import annotations

import compileall
import errno
import os
import pathlib
import random
import resource
import shutil
import signal
import stat
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass

__all__ = ["ANSWERS", "Box", "BoxedProcess", "JOB", "Limits", "SITE", "SandboxError", "bwrap_path",
           "cgroup_warning", "hide", "popen", "python_argv", "read_file", "remove_tree", "seccomp_program",
           "use_site"]

#: Where the job folder appears inside the box (read-write).
JOB = "/job"
#: A small private file system of the box's own for what a job hands back (its answers): 2 MiB.
ANSWERS = "/answers"
ANSWERS_MB = 2
#: Where the copies of ``lanes`` and ``grading`` appear inside the box (read-only; put it on ``sys.path``).
SITE = "/lanes-site"


class SandboxError(RuntimeError):
    """The box cannot be built on this machine; the message says what is missing and how to fix it."""


@dataclass(frozen=True)
class Limits:
    """What one job may use.

    Attributes
    ----------
    timeout_s : float
        Wall-clock limit, s (the caller enforces it with ``wait``/``communicate``; see
        :meth:`BoxedProcess.expired`).
    cpu_s : int
        CPU time per process, s (``RLIMIT_CPU``).
    memory_mb : int
        Memory, MiB: in a cgroup the memory of the whole job including its children, shared
        memory and tmpfs; each process's address space is ``memory_mb - tmp_mb`` (so that
        a process and the files it keeps in the tmpfs stay within ``memory_mb``).
    nproc : int
        Processes and threads of the job.
    file_mb : int
        Largest file a process may write, MiB.
    tmp_mb : int
        What the job may write in all, MiB: half of it is the size of :data:`JOB`, a quarter
        that of ``/tmp``, an eighth each that of ``/var/tmp`` and ``/dev/shm`` (all tmpfs).
        By default a quarter of ``memory_mb``, at most 256.
    cpus : float
        CPUs the job may use at once (cgroup ``cpu.max``; no effect without a cgroup).
    """

    timeout_s: float = 120.0
    cpu_s: int = 120
    memory_mb: int = 3072
    nproc: int = 64
    file_mb: int = 64
    tmp_mb: int | None = None
    cpus: float = 1.0

    def __post_init__(self) -> None:
        if self.tmp_mb is None and type(self.memory_mb) in (int, float) and self.memory_mb > 0:
            object.__setattr__(self, "tmp_mb", max(1, min(256, int(self.memory_mb) // 4)))
        for name in ("timeout_s", "cpu_s", "memory_mb", "nproc", "file_mb", "tmp_mb", "cpus"):
            value = getattr(self, name)
            if type(value) not in (int, float) or not value > 0:
                raise ValueError(f"Limits.{name} must be a number > 0 (got {value!r})")
        if self.tmp_mb * 2 > self.memory_mb:
            raise ValueError(f"Limits.tmp_mb must be at most half of memory_mb (got tmp_mb={self.tmp_mb}, "
                             f"memory_mb={self.memory_mb})")

    @property
    def address_space_mb(self) -> int:
        """Address space of each process, MiB: what the tmpfs may hold is taken from ``memory_mb``."""
        return int(self.memory_mb - self.tmp_mb)


def bwrap_path() -> str:
    """The ``bwrap`` program (``$LANES_BWRAP``, else on ``PATH``); :class:`SandboxError` if missing."""
    found = os.environ.get("LANES_BWRAP") or shutil.which("bwrap") or "/usr/bin/bwrap"
    if not (os.path.isfile(found) and os.access(found, os.X_OK)):
        raise SandboxError("the grading box needs bubblewrap: install Debian's package 'bubblewrap' "
                           "(apt-get install -y bubblewrap) or set LANES_BWRAP to a bwrap binary")
    return found


def python_argv(module: str, *args: str) -> list[str]:
    """A command that runs ``python -m module args...`` in the box, its packages first on the path.

    ``-E -s``: no ``PYTHON*`` variables and no user site folder; the copies of ``lanes``
    and ``grading`` at :data:`SITE` are put first on ``sys.path``.
    """
    boot = (f"import sys, runpy; sys.path[:0] = [{SITE!r}]; sys.argv[1:1] = []; "
            f"runpy.run_module({module!r}, run_name='__main__', alter_sys=True)")
    return [sys.executable, "-E", "-s", "-c", boot, *args]


def remove_tree(path: str | os.PathLike) -> None:
    """Remove ``path`` and everything under it, at any depth, without recursion or following links.

    Each pass lifts the folders two levels down to the top (``rename``), so every path used
    stays short however deep the tree is; folders are made writable first (one left 0555 by
    its owner goes too); what cannot be removed is left and skipped.
    """
    top = os.fspath(path)
    try:
        if not stat.S_ISDIR(os.lstat(top).st_mode):
            os.unlink(top)
            return
        os.chmod(top, 0o700)  # a folder made 0555 (by its owner) is emptied too
    except OSError:
        return
    stuck: set[str] = set()
    lifted = 0
    while True:
        progress = False
        try:
            with os.scandir(top) as it:
                children = list(it)
        except OSError:
            break
        for e in children:
            try:
                if not e.is_dir(follow_symlinks=False):
                    os.unlink(e.path)
                    continue
            except OSError:
                continue
            if e.name in stuck:
                continue
            try:
                os.chmod(e.path, 0o700)
            except OSError:
                pass
            try:
                with os.scandir(e.path) as it:
                    inner = list(it)
            except OSError:
                inner = []
            for g in inner:
                try:
                    if g.is_dir(follow_symlinks=False):
                        lifted += 1
                        os.chmod(g.path, 0o700)  # (moving a folder writes its "..")
                        os.rename(g.path, os.path.join(top, f"\x01lifted-{lifted}"))
                    else:
                        os.unlink(g.path)
                except OSError:
                    pass
            try:
                os.rmdir(e.path)
                progress = True
            except OSError:
                stuck.add(e.name)
        if not progress:
            break
    try:
        os.rmdir(top)
    except OSError:
        pass


_HIDDEN: list[pathlib.Path] = []


def hide(paths) -> None:
    """Cover ``paths`` (folders or files: answer keys, a course secret) in every box made from now on.

    The checkout ``lanes`` and ``grading`` are imported from (a folder with ``pyproject.toml``, ``.git`` or
    ``solutions/`` above the package) is always covered.
    """
    for p in paths:
        if p is not None and os.path.lexists(p) and _real(p) not in _HIDDEN:
            _HIDDEN.append(_real(p))


def _packages() -> list[pathlib.Path]:
    """The folders of the packages a job imports: ``lanes`` and this one, ``grading``."""
    import lanes

    return [_real(lanes.__file__).parent, _real(__file__).parent]


def _copy_packages(site: pathlib.Path) -> None:
    """Copy ``lanes`` and ``grading`` into ``site``, compiled, readable by every uid."""
    for package in _packages():  # a .pyc outside __pycache__ would import without its source
        shutil.copytree(package, site / package.name, ignore=lambda d, names: [
            n for n in names if n.endswith(".pyc") and os.path.basename(d) != "__pycache__"])
    # compiled here, once (what the checkout's caches hold already is kept): the box cannot
    # write them, and compiling lanes at each start cost more than a short notebook's own work
    compileall.compile_dir(site, ddir=SITE, quiet=1)
    for d, _, files in os.walk(site):
        os.chmod(d, 0o755)
        for f in files:
            os.chmod(os.path.join(d, f), 0o644)


def _always_hidden() -> list[pathlib.Path]:
    tops = {p.parent for p in _packages()}
    mine = [t for t in sorted(tops) if any((t / n).exists() for n in ("pyproject.toml", ".git", "solutions"))]
    return mine + _HIDDEN


# --------------------------------------------------------------------------- system calls

#: System calls no job may make, by machine (they fail with EPERM): memory that neither the
#: address-space limit nor a tmpfs size counts (a ``memfd_create`` file, a SysV shared memory
#: segment that stays after it is detached), which only a cgroup bounds; and reaching into another
#: process of the box (``ptrace``, ``process_vm_readv``/``writev``: bubblewrap's pid 1 and the
#: grading server run as the job's uid). Other machines' system
#: call conventions (i386 on x86_64, x32) are refused whole.
_DENIED_SYSCALLS = {
    "x86_64": (0xC000003E, {"shmget": 29, "memfd_create": 319, "ptrace": 101, "process_vm_readv": 310,
                            "process_vm_writev": 311}),
    "aarch64": (0xC00000B7, {"shmget": 194, "memfd_create": 279, "ptrace": 117, "process_vm_readv": 270,
                             "process_vm_writev": 271}),
}


def seccomp_program() -> bytes | None:
    """The box's system call filter (classic BPF, as ``bwrap --seccomp`` reads it), or ``None``
    on a machine without an entry in :data:`_DENIED_SYSCALLS`."""
    import platform
    import struct

    if platform.machine() not in _DENIED_SYSCALLS:
        return None
    arch, calls = _DENIED_SYSCALLS[platform.machine()]
    ld_w_abs, jeq_k, jge_k, ret_k = 0x20, 0x15, 0x35, 0x06
    kill, allow, eperm = 0x80000000, 0x7FFF0000, 0x00050000 | errno.EPERM
    numbers = sorted(set(calls.values()))
    prog = [(ld_w_abs, 0, 0, 4), (jeq_k, 1, 0, arch), (ret_k, 0, 0, kill), (ld_w_abs, 0, 0, 0),
            (jge_k, len(numbers) + 1, 0, 0x40000000)]  # x32's numbers: to the EPERM
    for i, nr in enumerate(numbers):  # to the EPERM, else fall through to the next test
        prog.append((jeq_k, len(numbers) - i, 0, nr))
    prog += [(ret_k, 0, 0, allow), (ret_k, 0, 0, eperm)]
    return b"".join(struct.pack("HBBI", *ins) for ins in prog)


# --------------------------------------------------------------------------- cgroups

_CG_CONTROLLERS = ("memory", "pids", "cpu")
_cgroup_note: str | None = None


def _cgroup2_mount() -> pathlib.Path | None:
    try:
        with open("/proc/self/mounts") as f:
            for line in f:
                parts = line.split()
                if len(parts) > 2 and parts[2] == "cgroup2":
                    return pathlib.Path(parts[1])
    except OSError:
        pass
    return None


def _write(path: pathlib.Path, text: str) -> None:
    with open(path, "w") as f:
        f.write(text)


def _make_cgroup_base() -> tuple[pathlib.Path | None, str]:
    """A fresh cgroup v2 for this run with memory, pids and cpu delegated, or (None, what is missing)."""
    mount = _cgroup2_mount()
    if mount is None:
        return None, "no cgroup v2 file system is mounted"
    parent = mount
    try:
        have = (parent / "cgroup.controllers").read_text().split()
    except OSError:
        return None, f"{parent} cannot be read"
    missing = [c for c in _CG_CONTROLLERS if c not in have]
    if missing:
        return None, f"cgroup v2 at {mount} lacks the {', '.join(missing)} controller(s)"
    if not os.access(parent, os.W_OK):
        return None, f"cgroup v2 at {mount} is not writable by this user"
    try:
        enabled = (parent / "cgroup.subtree_control").read_text().split()
        for c in _CG_CONTROLLERS:
            if c not in enabled:
                _write(parent / "cgroup.subtree_control", f"+{c}")
        base = parent / f"lanes-box-{os.getpid()}-{random.randrange(1 << 30):x}"
        base.mkdir()
        try:
            _write(base / "cgroup.subtree_control", " ".join(f"+{c}" for c in _CG_CONTROLLERS))
        except OSError:
            base.rmdir()
            raise
    except OSError as e:
        return None, f"cannot delegate {', '.join(_CG_CONTROLLERS)} in {mount} ({os.strerror(e.errno or 0)})"
    return base, ""


def cgroup_warning() -> str | None:
    """The one warning line when the last :class:`Box` fell back to rlimits, else ``None``."""
    return _cgroup_note


def _cg_pids(cg: pathlib.Path) -> list[int]:
    try:
        return [int(x) for x in (cg / "cgroup.procs").read_text().split()]
    except (OSError, ValueError):
        return []


def _cg_kill(cg: pathlib.Path) -> None:
    """Kill every process of cgroup ``cg`` and remove it (waits a few seconds at most)."""
    if not cg.exists():
        return
    for _ in range(250):
        try:
            _write(cg / "cgroup.kill", "1")
        except OSError:
            for pid in _cg_pids(cg):
                try:
                    os.kill(pid, signal.SIGKILL)
                except OSError:
                    pass
        try:
            cg.rmdir()
            return
        except FileNotFoundError:
            return
        except OSError:
            time.sleep(0.02)
    raise SandboxError(f"could not remove the job's cgroup {cg}")


# --------------------------------------------------------------------------- processes by uid


def _uid_processes(uid: int) -> list[int]:
    """Live processes of ``uid`` (zombies excluded)."""
    pids = []
    for d in os.scandir("/proc"):
        if not d.name.isdigit():
            continue
        try:
            if os.stat(d.path).st_uid != uid:
                continue
            with open(os.path.join(d.path, "stat")) as f:
                state = f.read().rsplit(")", 1)[1].split()[0]
        except (OSError, IndexError):
            continue
        if state not in "ZX":
            pids.append(int(d.name))
    return pids


def _kill_uid(uid: int) -> None:
    """SIGKILL every process of ``uid`` (as that uid: ``kill(-1)``) until none is left."""
    for _ in range(100):
        if not _uid_processes(uid):
            return
        pid = os.fork()
        if pid == 0:  # pragma: no cover - the child
            try:
                os.setgroups([])
                os.setgid(uid)
                os.setuid(uid)
                os.kill(-1, signal.SIGKILL)
            finally:
                os._exit(0)
        os.waitpid(pid, 0)
        time.sleep(0.02)
    raise SandboxError(f"could not stop the processes of uid {uid}")


# --------------------------------------------------------------------------- staging

_MS_RDONLY, _MS_REMOUNT, _MS_BIND, _MS_REC, _MS_PRIVATE = 1, 32, 4096, 16384, 1 << 18
_CLONE_NEWNS = 0x00020000


def _reachable(path: pathlib.Path) -> bool:
    """Whether any user may walk down to ``path`` (every folder above it has ``o+x``)."""
    try:
        return all(os.stat(p).st_mode & stat.S_IXOTH for p in path.parents)
    except OSError:
        return False


def _stage(pairs: list[tuple[str, str]]) -> None:
    """In the calling process (root, before it drops to the box's uid): a private mount
    namespace where each ``(path, stage)`` has ``path`` bound read-only on ``stage``."""
    import ctypes

    libc = ctypes.CDLL(None, use_errno=True)

    def mount(source, target, flags) -> None:
        enc = (lambda x: None if x is None else x.encode())
        if libc.mount(enc(source), enc(target), None, ctypes.c_ulong(flags), None) != 0:
            e = ctypes.get_errno()
            raise OSError(e, f"mount {target}: {os.strerror(e)}")

    if libc.unshare(_CLONE_NEWNS) != 0:
        e = ctypes.get_errno()
        raise OSError(e, f"unshare: {os.strerror(e)}")
    mount(None, "/", _MS_REC | _MS_PRIVATE)
    for path, stage in pairs:
        mount(path, stage, _MS_BIND | _MS_REC)


# --------------------------------------------------------------------------- the box


def _real(p: str | os.PathLike) -> pathlib.Path:
    return pathlib.Path(os.path.realpath(p))


class Box:
    """Where jobs run: one per grading run (read-only copies of ``lanes`` and ``grading``, a cgroup, uids).

    Parameters
    ----------
    hide : paths
        Folders and files never to show inside the box even where they lie under a folder
        the box needs (for example a checkout inside the interpreter's prefix): a folder is
        covered by an empty file system, a file by an empty one. Added to those of
        :func:`hide` and the checkout.
    extra_ro : paths
        More folders or files to show read-only at the same path (none by default).
    cgroups : bool
        Try a cgroup per job (default); ``False`` uses rlimits only.
    prefix : str
        Name prefix of the run's folder in the temp directory (``lanes-box-`` by default).
    site : path, optional
        The copies of ``lanes`` and ``grading`` of another box (its ``site``), made and checked by
        the process that started this one, as a grading run's judge uses its run's: nothing is
        copied, compiled or checked again (see :func:`use_site`).
    """

    def __init__(self, *, hide=(), extra_ro=(), cgroups: bool = True, prefix: str = "lanes-box-", site=None):
        global _cgroup_note
        if not sys.platform.startswith("linux"):
            raise SandboxError("the grading box needs Linux (bubblewrap and namespaces)")
        self.bwrap = bwrap_path()
        self.root = os.geteuid() == 0
        self.hide = [*_always_hidden(), *(_real(p) for p in hide if os.path.lexists(p))]
        self.extra_ro = [_real(p) for p in extra_ro if os.path.exists(p)]
        self._uids: set[int] = set()
        self.base = pathlib.Path(tempfile.mkdtemp(prefix=prefix))
        self.cgroup: pathlib.Path | None = None
        try:
            os.chmod(self.base, 0o711)
            self.site = self.base / "site" if site is None else _real(site)
            if site is None:
                _copy_packages(self.site)
            program = seccomp_program()
            if program is not None:
                (self.base / "seccomp.bpf").write_bytes(program)
                os.chmod(self.base / "seccomp.bpf", 0o644)
            if cgroups:
                self.cgroup, why = _make_cgroup_base()
            else:
                why = "cgroups were turned off"
            _cgroup_note = None if self.cgroup is not None else (
                f"warning: sandbox limits are per process (rlimits), not per job: {why}")
            if site is None:
                self._check()
        except BaseException:
            self.close()
            raise

    # -- layout -------------------------------------------------------------------------

    def _ro_paths(self) -> list[pathlib.Path]:
        """Read-only binds at the same path: the system libraries and the interpreter's prefixes."""
        want = []
        for p in ("/usr/lib", "/usr/lib64", "/usr/lib32", "/usr/bin", "/usr/share/zoneinfo",
                  "/etc/ld.so.cache", "/etc/ld.so.conf", "/etc/ld.so.conf.d", "/etc/localtime",
                  "/etc/alternatives"):
            if os.path.lexists(p) and not os.path.islink(p):
                want.append(pathlib.Path(p))
        for p in (sys.base_prefix, sys.prefix, sys.base_exec_prefix, sys.exec_prefix,
                  os.path.dirname(os.path.realpath(sys.executable)), os.path.dirname(sys.executable)):
            want.append(_real(p))
        # site folders outside the prefixes (a .pth's addsitedir, say): site-/dist-packages only,
        # never a source tree that an editable install puts on sys.path
        want += [_real(p) for p in sys.path if os.path.basename(p) in ("site-packages", "dist-packages")
                 and os.path.isdir(p)]
        want += self.extra_ro
        out: list[pathlib.Path] = []
        for p in sorted(set(want), key=lambda q: (len(q.parts), str(q))):
            if p == pathlib.Path("/") or any(p.is_relative_to(o) for o in out):
                continue
            out.append(p)
        return out

    def _args(self, job_dir: pathlib.Path, uid: int, limits: Limits,
              outputs: frozenset = frozenset()) -> tuple[list[str], list[tuple[str, str]]]:
        """bwrap's arguments, and the folders to stage first (see :func:`_stage`).

        A folder the box's uid may not reach (under a 0700 home, say ``/root/.pyenv``) is
        bound onto a staging folder of this run first, in a mount namespace of the starting
        process only, and bwrap binds it from there.
        """
        staged: list[tuple[str, str]] = []

        def src(path: pathlib.Path) -> str:
            if not self.root or _reachable(path):
                return str(path)
            stage = self.base / "stage" / str(len(staged))
            stage.mkdir(parents=True, exist_ok=True)
            if path.is_dir():
                stage = stage / "d"
                stage.mkdir(exist_ok=True)
            else:
                stage = stage / "f"
                stage.touch()
            for d in (self.base / "stage", stage.parent):
                os.chmod(d, 0o755)
            staged.append((str(path), str(stage)))
            return str(stage)

        mb = int(limits.tmp_mb)
        a = [self.bwrap, "--unshare-all", "--die-with-parent", "--new-session", "--cap-drop", "ALL",
             "--uid", str(uid), "--gid", str(uid), "--hostname", "box", "--clearenv"]
        for top in ("/bin", "/sbin", "/lib", "/lib64", "/lib32"):  # merged-/usr links as on the host
            if os.path.islink(top):
                a += ["--symlink", os.readlink(top), top]
        a += ["--proc", "/proc", "--dev", "/dev"]
        for t, share in (("/tmp", 4), ("/var/tmp", 8), ("/dev/shm", 8)):
            a += ["--perms", "1777", "--size", str(max(1, (mb << 20) // share)), "--tmpfs", t]
        ro = self._ro_paths()
        for p in ro:
            a += ["--ro-bind", src(p), str(p)]
        hidden = sorted(set(self.hide), key=lambda q: len(q.parts))
        for h in hidden:  # after the binds: an empty file system (or file) over them
            if any(h.is_relative_to(p) for p in ro) and not any(h != o and h.is_relative_to(o) for o in hidden):
                if os.path.isdir(h):
                    a += ["--size", "65536", "--tmpfs", str(h), "--remount-ro", str(h)]
                else:
                    a += ["--ro-bind", "/dev/null", str(h)]
        a += ["--ro-bind", src(self.site), SITE,
              "--perms", "0777", "--size", str(max(1, (mb << 20) // 2)), "--tmpfs", JOB,
              "--perms", "0777", "--size", str(ANSWERS_MB << 20), "--tmpfs", ANSWERS]
        for name in sorted(os.listdir(job_dir)):  # the caller's files, one by one
            a += ["--bind" if name in outputs else "--ro-bind", src(job_dir / name), f"{JOB}/{name}"]
        # bubblewrap's pid 1 runs as the job's uid and cannot be made undumpable: its memory is
        # covered; the root and /dev are read-only (what a job writes is in its sized tmpfs only)
        a += ["--ro-bind", "/dev/null", "/proc/1/mem", "--remount-ro", "/dev", "--remount-ro", "/", "--chdir", JOB]
        return a, staged

    def _pick_uid(self) -> int:
        if not self.root:
            return os.getuid()
        import pwd

        while True:
            uid = random.randrange(59000, 65000)
            if uid in self._uids or _uid_processes(uid):
                continue
            try:
                pwd.getpwuid(uid)
            except KeyError:
                self._uids.add(uid)
                return uid

    def _check(self) -> None:
        """Start ``python -c pass`` in a box once: a clear :class:`SandboxError` if that fails."""
        if self.root:
            for p in self._ro_paths():
                try:
                    mode = os.stat(p).st_mode
                except OSError:
                    continue
                if stat.S_ISDIR(mode) and (mode & 0o005) != 0o005:
                    raise SandboxError(f"{p} (needed in the box) cannot be read by other users (mode "
                                       f"{stat.S_IMODE(mode):o}): the box runs as an unprivileged uid; chmod o+rx it")
        job = pathlib.Path(tempfile.mkdtemp(dir=self.base))
        try:
            with self.popen([sys.executable, "-E", "-s", "-c", "pass"], job_dir=job,
                            limits=Limits(timeout_s=30), stderr=subprocess.PIPE) as p:
                try:
                    _, err = p.communicate(timeout=30)
                except subprocess.TimeoutExpired:
                    err = b"timed out"
            if p.returncode != 0:
                line = err.decode(errors="replace").strip().splitlines()
                why = line[-1][:200] if line else f"exit status {p.returncode}"
                hint = ("; allow unprivileged user namespaces (sysctl kernel.unprivileged_userns_clone=1, "
                        "or on Ubuntu 24.04 kernel.apparmor_restrict_unprivileged_userns=0)"
                        if "namespace" in why.lower() or "permission" in why.lower() else "")
                raise SandboxError(f"bubblewrap cannot start a box here: {why}{hint}")
        finally:
            remove_tree(job)

    @property
    def isolation(self) -> str:
        """One line saying what the box is on this machine."""
        who = "a fresh unprivileged uid" if self.root else "this user (not root)"
        lim = "a cgroup per job" if self.cgroup is not None else "rlimits per process"
        return f"bubblewrap: all namespaces new, allow-list root, {who}, {lim}"

    # -- jobs ---------------------------------------------------------------------------

    def popen(self, argv: list[str], *, job_dir: os.PathLike, limits: Limits = Limits(),
              stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
              env: dict | None = None, outputs=()) -> "BoxedProcess":
        """Start ``argv`` in a box whose :data:`JOB` shows the files of ``job_dir`` (an existing folder).

        ``argv[0]`` must exist inside the box (``sys.executable`` does: see :func:`python_argv`).
        ``stdin``/``stdout``/``stderr`` are as for :class:`subprocess.Popen` (``PIPE``, a file,
        ``DEVNULL``: the default). ``env`` replaces the box's environment (a small fixed one
        by default). Each file of ``job_dir`` appears in :data:`JOB` read-only, but those
        named in ``outputs``, made empty here and writable by the job (the one place it
        writes to the grader's disk, at most ``limits.file_mb`` each); all else it writes
        stays in the box's tmpfs. The job folder is handed to the box's uid for the run.
        """
        if not isinstance(limits, Limits):
            raise ValueError(f"limits must be a sandbox.Limits (got {type(limits).__name__})")
        job_dir = _real(job_dir)
        if not job_dir.is_dir():
            raise ValueError(f"job_dir must be an existing folder (got {str(job_dir)!r})")
        outputs = frozenset(outputs)
        for name in outputs:
            if not name or "/" in name or name in (".", ".."):
                raise ValueError(f"outputs must be plain file names in job_dir (got {name!r})")
            (job_dir / name).write_bytes(b"")
        uid = self._pick_uid()
        if self.root:
            for d, dirs, files in os.walk(job_dir):
                for name in [d, *(os.path.join(d, x) for x in dirs + files)]:
                    os.chown(name, uid, uid, follow_symlinks=False)
        cg = None
        if self.cgroup is not None:
            cg = self.cgroup / f"job-{uid}-{random.randrange(1 << 30):x}"
            cg.mkdir()
            _write(cg / "memory.max", str(limits.memory_mb << 20))
            if (cg / "memory.swap.max").exists():
                _write(cg / "memory.swap.max", "0")
            _write(cg / "pids.max", str(limits.nproc))
            _write(cg / "cpu.max", f"{int(limits.cpus * 100000)} 100000")
        box_env = {"PATH": "/usr/bin:/bin", "HOME": JOB, "TMPDIR": "/tmp", "LANG": "C.UTF-8",
                   "MPLBACKEND": "Agg", "OPENBLAS_NUM_THREADS": "1", "OMP_NUM_THREADS": "1",
                   "MKL_NUM_THREADS": "1", "PYTHONDONTWRITEBYTECODE": "1", "IPYTHONDIR": f"{JOB}/.ipython",
                   "MPLCONFIGDIR": f"{JOB}/.mpl"}
        if env is not None:
            box_env = dict(env)
        cmd, staged = self._args(job_dir, uid, limits, outputs)
        for k, v in box_env.items():
            cmd += ["--setenv", str(k), str(v)]
        cmd += ["--", *map(str, argv)]
        root = self.root

        def preexec() -> None:  # in the child, before bwrap starts
            if cg is not None:
                _write(cg / "cgroup.procs", "0")
            if staged:
                _stage(staged)
            resource.setrlimit(resource.RLIMIT_CPU, (limits.cpu_s, limits.cpu_s + 2))
            # per process as well as per job: a process that asks for too much gets a MemoryError
            space = limits.address_space_mb << 20  # what the tmpfs may hold is left out
            resource.setrlimit(resource.RLIMIT_AS, (space, space))
            resource.setrlimit(resource.RLIMIT_FSIZE, (limits.file_mb << 20, limits.file_mb << 20))
            resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
            if cg is None:  # no cgroup's CPU weight: the job yields to the grader and its judges
                os.nice(10)
            if root:
                os.setgroups([])
                os.setgid(uid)
                os.setuid(uid)
                resource.setrlimit(resource.RLIMIT_NPROC, (limits.nproc, limits.nproc))

        program = seccomp_program()
        filter_fd = None
        if program is not None:  # read by bwrap from an inherited descriptor, applied before the job runs
            filter_fd = os.open(self.base / "seccomp.bpf", os.O_RDONLY)
            cmd[1:1] = ["--seccomp", str(filter_fd)]
        try:
            proc = subprocess.Popen(cmd, stdin=stdin, stdout=stdout, stderr=stderr, env={},
                                    preexec_fn=preexec, start_new_session=True, close_fds=True, cwd="/",
                                    pass_fds=() if filter_fd is None else (filter_fd,))
        except BaseException:
            if cg is not None:
                _cg_kill(cg)
            raise
        finally:
            if filter_fd is not None:
                os.close(filter_fd)
        return BoxedProcess(proc, uid=uid if root else None, cgroup=cg, job_dir=job_dir, limits=limits)

    def close(self) -> None:
        """Remove the copies of the packages and the run's cgroup (stop jobs first)."""
        if self.cgroup is not None:
            for child in list(self.cgroup.iterdir()) if self.cgroup.exists() else []:
                if child.is_dir():
                    _cg_kill(child)
            _cg_kill(self.cgroup)
            self.cgroup = None
        remove_tree(self.base)

    def __enter__(self) -> "Box":
        return self

    def __exit__(self, *exc) -> None:
        self.close()


class BoxedProcess:
    """A job in a box: a :class:`subprocess.Popen` look-alike whose :meth:`kill` ends the whole job.

    ``stdin``, ``stdout``, ``stderr``, ``pid``, ``returncode``, ``poll``, ``wait`` and
    ``communicate`` are those of the ``bwrap`` process (its exit status is the job's). As a
    context manager, leaving it calls :meth:`kill`: every process of the job is gone (its PID
    namespace, and every process of its uid), its cgroup removed. The job folder stays.
    """

    def __init__(self, proc: subprocess.Popen, *, uid: int | None, cgroup: pathlib.Path | None,
                 job_dir: pathlib.Path, limits: Limits):
        self.proc, self.uid, self.cgroup, self.job_dir, self.limits = proc, uid, cgroup, job_dir, limits
        self.started = time.monotonic()
        self._done = False

    # Popen look-alike
    stdin = property(lambda self: self.proc.stdin)
    stdout = property(lambda self: self.proc.stdout)
    stderr = property(lambda self: self.proc.stderr)
    pid = property(lambda self: self.proc.pid)
    returncode = property(lambda self: self.proc.returncode)

    def poll(self):
        return self.proc.poll()

    def wait(self, timeout: float | None = None):
        return self.proc.wait(timeout)

    def communicate(self, input=None, timeout: float | None = None):
        return self.proc.communicate(input, timeout)

    @property
    def elapsed(self) -> float:
        """Seconds since the job started."""
        return time.monotonic() - self.started

    def expired(self) -> bool:
        """Whether the job has run longer than ``limits.timeout_s``."""
        return self.elapsed > self.limits.timeout_s

    def kill(self) -> None:
        """End the job: every process it started, its cgroup; idempotent."""
        if self._done:
            return
        if self.cgroup is not None:
            _cg_kill(self.cgroup)
        try:
            os.killpg(self.proc.pid, signal.SIGKILL)
        except OSError:
            pass
        try:
            self.proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            pass
        for f in (self.proc.stdin, self.proc.stdout, self.proc.stderr):
            if f is not None:
                try:
                    f.close()
                except OSError:
                    pass
        if self.uid is not None:  # the PID namespace is gone; make sure, by uid
            deadline = time.monotonic() + 2.0
            while _uid_processes(self.uid) and time.monotonic() < deadline:
                time.sleep(0.01)
            _kill_uid(self.uid)
        self._done = True

    def __enter__(self) -> "BoxedProcess":
        return self

    def __exit__(self, *exc) -> None:
        self.kill()


_DEFAULT: Box | None = None
_SHARED_SITE: str | None = None


def use_site(site: str | os.PathLike) -> None:
    """Make the box :func:`popen` shares on the copies of ``lanes`` and ``grading`` at ``site`` (another
    box's, made by the process that started this one: a grading run passes its own to each judge)."""
    global _SHARED_SITE
    _SHARED_SITE = os.fspath(site)


def popen(argv: list[str], *, job_dir: os.PathLike, limits: Limits = Limits(),
          stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
          env: dict | None = None, outputs=()) -> BoxedProcess:
    """:meth:`Box.popen` on a box shared by the process (made on first use, removed at exit)."""
    global _DEFAULT
    if _DEFAULT is None:
        import atexit

        _DEFAULT = Box(site=_SHARED_SITE)
        atexit.register(_DEFAULT.close)
    return _DEFAULT.popen(argv, job_dir=job_dir, limits=limits, stdin=stdin, stdout=stdout,
                          stderr=stderr, env=env, outputs=outputs)


def read_file(path: os.PathLike, limit: int) -> bytes | None:
    """The bytes of a regular file the job left, opened without following links, or ``None``.

    ``None`` when it is missing, a link, not a regular file, or larger than ``limit`` bytes.
    """
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
    except OSError:
        return None
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode) or st.st_size > limit:
            return None
        chunks, size = [], 0
        while True:
            b = os.read(fd, min(1 << 16, limit + 1 - size))
            if not b:
                break
            chunks.append(b)
            size += len(b)
            if size > limit:
                return None
        return b"".join(chunks)
    except OSError as e:
        if e.errno in (errno.EISDIR, errno.EINVAL):
            return None
        return None
    finally:
        os.close(fd)
