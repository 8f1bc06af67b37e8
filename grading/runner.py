"""Step 1 of grading: execute a student notebook and export only its answers, as plain JSON.

Run inside the sandbox (an unprivileged user, resource limits, a scratch folder holding
only the notebooks)::

    python -E -s -c BOOT NOTEBOOK OUT_JSON SLUG      # one notebook
    python -E -s -c BOOT --serve SLUG_1 ... SLUG_N   # scripts/grade.py: a student's N notebooks

``--serve`` runs ``/job/<k>.ipynb`` (set ``SLUG_k``) into ``/job/<k>.json`` for k = 1 ... N,
each in a fork of one process that has imported what every notebook imports: starting an
interpreter and importing ``lanes`` cost more than a short set's own work (:func:`serve`).

Every code cell runs in order in one namespace, a module ``__main__`` (no kernel, no Otter:
the form checks and the init cell are skipped, since they need the tests folder, which is
not here). Plain Python cells are compiled and run here, each registered with ``linecache``
as IPython registers a cell, so code that reads its own source back works; the first cell
that is not plain Python (a magic, a shell escape, top-level ``await``) or a call of
``get_ipython()`` starts an IPython shell on the same namespace, which runs the rest.
Importing IPython costs about as much CPU as a short set's own work, and most notebooks
never need it. A cell that raises (``SystemExit`` included) is recorded (its index and the
exception's first line) and execution goes on. Then the set's answer variables (and
``STUDENT``, and whether any cell set it) are converted with :func:`lanes.exercises.forms.to_plain` and written to
``OUT_JSON``. Nothing this process writes is trusted: the grader reads the JSON as data and
checks every value again.
"""

from __future__ import annotations

import gc
import json
import os
import re
import signal
import sys
import time

_SKIP = re.compile(r"^\s*(?:#[^\n]*\n\s*)*(?:import otter\s*\n\s*grader\s*=\s*otter\.Notebook\([^)]*\)"
                   r"|grader\.check(?:_all)?\((?:\"\w*\"|'\w*')?\))\s*$")


def export(namespace: dict, path: str, slug: str, errors: list) -> None:
    """Write the answers found in ``namespace``."""
    from lanes.exercises.forms import FormError, to_plain
    from lanes.exercises.registry import get_set

    answers, refused = {}, {}
    for q in get_set(slug).questions:
        for var, form in q.answers:
            if var not in namespace:
                continue
            try:
                answers[var] = to_plain(namespace[var], form.describe())
            except FormError as e:
                refused[var] = str(e)
            except Exception as e:  # a hostile object raising from a conversion
                refused[var] = f"could not be read ({type(e).__name__})"
    student = namespace.get("STUDENT", "")
    data = {"answers": answers, "refused": refused, "errors": errors,
            "student": student if type(student) is str else None, "student_set": "STUDENT" in namespace}
    text = json.dumps(data)
    folder = os.path.dirname(path)
    if folder == ANSWERS:  # the box's answers file system is for this file alone: room for it
        for name in os.listdir(folder):
            if name != os.path.basename(path):
                from .sandbox import remove_tree

                remove_tree(os.path.join(folder, name))
    with open(path, "w") as f:
        f.write(text)


class _NoChecks:
    """Stands in for Otter's ``grader``: checks are skipped while grading."""

    def __getattr__(self, name):
        return lambda *args, **kwargs: None


class Cells:
    """Runs cells in one ``__main__`` namespace: plain Python here, IPython once a cell needs it."""

    def __init__(self) -> None:
        import codeop
        import types

        self.main = types.ModuleType("__main__")
        sys.modules["__main__"] = self.main
        self.ns = self.main.__dict__
        self.ns.update(grader=_NoChecks(), get_ipython=self._ipython, display=lambda *a, **k: None)
        self.compile = codeop.Compile()  # keeps the __future__ flags of earlier cells, as IPython does
        self.shell = None
        self.count = 0

    def _ipython(self):
        """The IPython shell on this namespace (started on first use)."""
        if self.shell is None:
            from IPython.core.interactiveshell import InteractiveShell
            from traitlets.config import Config

            config = Config()
            config.HistoryManager.enabled = False
            self.ns.pop("get_ipython", None)
            self.ns.pop("display", None)
            class Shell(InteractiveShell):  # what a kernel does of magics, without a kernel
                def enable_gui(self, gui=None):  # %matplotlib inline: no event loop to start
                    return None

                def system(self, cmd):  # !cmd, %pip, %conda: refused in one line, the cell fails alone
                    raise RuntimeError("shell commands (!cmd, %pip, %conda) are not run while grading: "
                                       "install packages in your own environment, not from the notebook")

                getoutput = system  # x = !cmd

            self.shell = Shell.instance(config=config, colors="nocolor", user_module=self.main)
        return self.shell

    def run(self, source: str) -> BaseException | None:
        """Run one cell; the exception it raised, or ``None``."""
        import inspect
        import linecache

        if self.shell is None:
            self.count += 1
            name = f"<cell-{self.count}>"
            try:
                code = self.compile(source, name, "exec")
            except SyntaxError:
                code = None  # a magic, a shell escape: IPython's syntax
            if code is not None and not code.co_flags & inspect.CO_COROUTINE:
                linecache.cache[name] = (len(source), None, source.splitlines(True), name)
                try:
                    exec(code, self.ns)
                except BaseException as e:  # noqa: BLE001 - a cell's failure is recorded, as IPython does
                    return e
                return None
        result = self._ipython().run_cell(source, store_history=True, silent=False)
        return result.error_before_exec or result.error_in_exec


def main(argv: list | None = None) -> int:
    from lanes.exercises.public import first_line  # as the public check repeats a cell's error

    argv = sys.argv[1:] if argv is None else argv
    nb_path, out_path, slug = argv[0], argv[1], argv[2]
    with open(nb_path, encoding="utf-8") as f:
        nb = json.load(f)
    code_cells = [(i, c) for i, c in enumerate(nb.get("cells", [])) if c.get("cell_type") == "code"]
    del nb
    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, 1)
    os.dup2(devnull, 2)
    os.environ.setdefault("MPLBACKEND", "Agg")
    cells = Cells()
    errors = []
    for index, cell in code_cells:
        source = cell.get("source", "")
        source = "".join(source) if isinstance(source, list) else str(source)
        if not source.strip() or _SKIP.match(source):
            continue
        err = cells.run(source)
        if err is not None:
            errors.append({"cell": index, "error": first_line(err)})
    # through the module, as a cell would call it: what a notebook did to it is its own doing
    __import__("grading.runner", fromlist=["export"]).export(cells.ns, out_path, slug, errors[:100])
    return 0


#: The folders a notebook may write to in its box (the job folder, the box's tmpfs scratch folders).
WRITABLE = ("/job", "/tmp", "/var/tmp", "/dev/shm", "/answers")
#: Where a notebook's answers file is written in the box (:data:`grading.sandbox.ANSWERS`).
ANSWERS = "/answers"


def serve(slugs: list) -> int:
    """Run the notebooks ``/job/1.ipynb`` ... of sets ``slugs`` one at a time, as the box's first process.

    Each notebook runs in a fork of this process (:func:`main`, into ``/job/<k>.json``), so
    it starts in the state this process has after importing ``lanes``, and whatever it does
    to modules, the process or its limits goes with its fork. After each, every other process
    of the box is killed and what the notebook wrote is removed (:func:`_reset`), so the next
    one starts as in a box of its own; then the line ``<k> <exit status> <n>`` (negative: the
    signal that stopped it) and the ``n`` bytes of its answers file (``-1``: none that can be
    read, over :data:`MAX_ANSWERS_BYTES`) go to stdout, for the grader, which times each
    notebook by these and stops the whole box when one runs too long. The answers file is written
    in the box's own 2 MiB file system :data:`ANSWERS` (the export clears it first, so a
    notebook that filled the others still hands its answers in) and goes with the box:
    nothing the box writes reaches the grader's disk. The notebook cannot write on that
    pipe (its stdout is ``/dev/null``, and the pipe is root's when the grader runs as root, so
    ``/proc/<pid>/fd`` does not open it); it can kill this process, which ends the box, and
    the grader goes on with the student's other notebooks in a new one. Each notebook's
    answers file is emptied before it starts, whatever an earlier one wrote there. This process
    is made undumpable before any notebook runs (:func:`_undumpable`), so a notebook can neither
    attach to it nor open its memory.
    """
    if os.getpid() != 2 or os.getppid() != 1:  # kill(-1) below must reach only this box's processes
        print("--serve runs only as the first process of a grading box (bubblewrap's pid 2)", file=sys.stderr)
        return 2
    _undumpable()
    import codeop, inspect, linecache, types  # noqa: F401,E401 - what every notebook imports, once
    # what most sets use (the slot pool) or several do (the GPU's steps, the table, the queueing formulas)
    import lanes.exercises, lanes.gpu.steps, lanes.pool.engine, lanes.pool.erlang, lanes.pool.table  # noqa: F401,E401

    # A simulated day makes many small records and no cycles: the cycle collector, run every 700
    # of them, took 7% of the masters' CPU here; every 20,000, about 3% (it still runs).
    gc.set_threshold(20_000, 10, 10)
    keep = {f"{k}.ipynb" for k in range(1, len(slugs) + 1)}  # (an answers file left by another goes)
    for k, slug in enumerate(slugs, 1):
        open(f"{ANSWERS}/{k}.json", "w").close()  # empty, whatever an earlier notebook wrote there
        pid = os.fork()
        if pid == 0:  # pragma: no cover - the fork, which never returns here
            code = 1
            try:
                code = main([f"/job/{k}.ipynb", f"{ANSWERS}/{k}.json", slug])
            finally:
                os._exit(code)
        _, status = os.waitpid(pid, 0)
        _kill_the_rest()  # before its answers are read: nothing it left can change them now
        data = _exported(f"{ANSWERS}/{k}.json")
        _reset(keep)
        out = f"{k} {os.waitstatus_to_exitcode(status)} {-1 if data is None else len(data)}\n".encode()
        os.write(1, out + (data or b""))  # (a pipe: the grader reads all of it)
        try:
            os.unlink(f"{ANSWERS}/{k}.json")
        except OSError:
            pass
    return 0


#: Largest answers file a notebook's export may leave (bytes): what the server sends on.
MAX_ANSWERS_BYTES = 1 << 20


def _exported(path: str) -> bytes | None:
    """The bytes of the answers file ``path`` (in the box's sized tmpfs), ``b""`` when missing,
    ``None`` when it is not a regular file or larger than :data:`MAX_ANSWERS_BYTES`."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
    except FileNotFoundError:
        return b""
    except OSError:
        return None
    try:
        import stat

        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode) or st.st_size > MAX_ANSWERS_BYTES:
            return None
        chunks, size = [], 0
        while size <= MAX_ANSWERS_BYTES:
            b = os.read(fd, 1 << 16)
            if not b:
                break
            chunks.append(b)
            size += len(b)
        return None if size > MAX_ANSWERS_BYTES else b"".join(chunks)
    except OSError:
        return None
    finally:
        os.close(fd)


def _undumpable() -> None:
    """Make this process not dumpable (``PR_SET_DUMPABLE`` 0), before any student code runs: a
    notebook (a fork of it, its uid) can then neither attach to it nor open its ``/proc/<pid>/mem``
    (the box's system call filter refuses ``ptrace`` besides)."""
    import ctypes

    if ctypes.CDLL(None, use_errno=True).prctl(4, 0, 0, 0, 0) != 0:  # PR_SET_DUMPABLE
        raise OSError(ctypes.get_errno(), "prctl(PR_SET_DUMPABLE, 0) failed")


def _reset(keep: set) -> None:
    """Kill every process of the box but this one (and bubblewrap's pid 1), remove its SysV IPC
    objects, then empty :data:`WRITABLE` but for the files ``keep`` of the job folder (the notebooks)."""
    from .sandbox import remove_tree

    _kill_the_rest()
    _remove_ipc()
    for folder in WRITABLE:
        try:
            names = os.listdir(folder)
        except OSError:
            continue
        for name in names:
            if folder != "/job" or name not in keep:
                remove_tree(os.path.join(folder, name))


def _remove_ipc() -> None:
    """Remove every SysV message queue and semaphore set of the box (its own IPC namespace): what a
    notebook leaves there must not reach the next one (shared memory the box's filter refuses)."""
    import ctypes

    libc = ctypes.CDLL(None, use_errno=True)
    ipc_rmid = 0
    for kind, remove in (("msg", lambda i: libc.msgctl(i, ipc_rmid, None)),
                         ("sem", lambda i: libc.semctl(i, 0, ipc_rmid))):
        try:
            with open(f"/proc/sysvipc/{kind}") as f:
                rows = f.read().splitlines()[1:]
        except OSError:
            continue
        for row in rows:
            fields = row.split()
            if len(fields) > 1 and fields[1].isdigit():
                remove(int(fields[1]))


def _kill_the_rest() -> None:
    """Kill every process of the box but this one (and bubblewrap's pid 1)."""
    for _ in range(1000):
        try:
            os.kill(-1, signal.SIGKILL)  # every process this one may signal: the box's, in its PID namespace
        except ProcessLookupError:
            break
        time.sleep(0.001)  # until they are gone and pid 1 has reaped them


if __name__ == "__main__":
    sys.exit(serve(sys.argv[2:]) if sys.argv[1:2] == ["--serve"] else main())
