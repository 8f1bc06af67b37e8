"""Shared fixtures and the order of the test files.

The built web book: one build per test run. The browser test (test_site.py)
reads ``_build/html``; any other file that needs the book asks for the same
``built_site`` fixture. Under pytest-xdist (scripts/test.sh runs the tests in
parallel) each worker process has its own session, so the build is guarded by
a file lock and marked with the run's id: the first worker to need the book
builds it, the others wait for it and reuse it.

The order: the longest files first (LONGEST_FIRST), and under xdist the
files of SAME_WORKER on one worker, one after the other.

The book is built from the committed notebooks' stored outputs
(``execute_notebooks: "off"`` in _config.yml); strict nbval checks those
outputs against a fresh run in the same test run.
"""

from __future__ import annotations

import fcntl
import os
import pathlib
import re
import shutil
import subprocess
import sys

import pytest

#: Real-shaped LMS exports that tests/grading/test_term.py grades: data, not notebooks for nbval.
collect_ignore = ["lms_samples"]

ROOT = pathlib.Path(__file__).resolve().parents[1]
HTML_DIR = ROOT / "_build" / "html"
#: The book's build as CI runs it (``jupyter-book build . -W -n --keep-going``), by this Python.
BUILD_COMMAND = ["scripts/build_book.sh"]
#: Held while the book is built, so two worker processes never build at once.
BUILD_LOCK = ROOT / "_build" / ".built_site.lock"
#: Written after a successful build: the id of the test run that built it.
BUILD_STAMP = ROOT / "_build" / ".built_site.run"

#: Test files that take longest, in the order they should start. Under xdist
#: (--dist loadfile) a worker takes a whole file at a time, so starting the
#: long ones first keeps one worker from finishing a long file alone at the end.
#: Names missing from the tree are ignored; files not named keep their order.
LONGEST_FIRST = (
    "tests/exercises/test_exercises.py",  # with the other graded-class files: SAME_WORKER below
    "notebooks/05_starvation_and_aging.ipynb",  # about 95 s of CPU each (2026-12-04)
    "notebooks/03_headroom.ipynb",
    "tests/grading/test_online_judge.py",
    "tests/site/test_site.py",
    "tests/grading/test_grading_class.py",
    "tests/grading/test_grading_robustness.py",
    "notebooks/10_where_it_breaks.ipynb",
    "tests/test_packaging.py",
    "tests/test_fuzz.py",
    "tests/site/test_jupyterlab.py",
    "notebooks/04_preemption.ipynb",
    "tests/exercises/test_sets_new.py",
    "notebooks/12_real_traffic.ipynb",
    "notebooks/02_why_priority_fails.ipynb",
)


#: Files that must run on one worker, one after the other (one xdist work unit):
#: test_grading_class and test_grading_robustness read the class that the session's
#: ``graded_class`` fixture grades once, as test_exercises does, so on one worker it is
#: graded once, not once per worker. test_online_judge may run anywhere: its leftover
#: check looks only at its own temp dir and at the judge processes it started (or that
#: were orphaned), never at a class another worker is grading.
SAME_WORKER = {
    "tests/exercises/test_exercises.py": "grading",
    "tests/grading/test_grading_class.py": "grading",
    "tests/grading/test_grading_robustness.py": "grading",
}


@pytest.hookimpl(optionalhook=True)  # a pytest-xdist hook: ignored without xdist
def pytest_xdist_make_scheduler(config, log):
    """--dist loadfile, with the files of SAME_WORKER joined into one work unit."""
    if config.getvalue("dist") != "loadfile":
        return None  # another --dist mode: xdist's own scheduler
    from xdist.scheduler import LoadFileScheduling

    class FilesAndGroups(LoadFileScheduling):
        def _split_scope(self, nodeid: str) -> str:
            return work_unit(nodeid)

    return FilesAndGroups(config, log)


def work_unit(nodeid: str) -> str:
    """The xdist work unit of a test: its file, or its SAME_WORKER group."""
    file = nodeid.split("::", 1)[0]
    return SAME_WORKER.get(file, file)


def pytest_collection_modifyitems(config, items):
    """Run the files named in LONGEST_FIRST first; keep every file's own order."""
    rank = {name: i for i, name in enumerate(LONGEST_FIRST)}
    last = len(LONGEST_FIRST)

    def key(item):
        path = pathlib.Path(str(item.path))
        try:
            rel = path.relative_to(ROOT).as_posix()
        except ValueError:
            rel = path.as_posix()
        return rank.get(rel, last)

    items.sort(key=key)  # stable: the tests of one file stay in collection order


# Property tests draw the same examples on every run (fixed seeds everywhere): a CI result
# does not depend on luck, and a failure seen once is seen again. LANES_HYPOTHESIS=explore
# draws fresh examples each run, to search wider while developing.
try:
    from hypothesis import settings as _hypothesis_settings
except ImportError:  # pragma: no cover - the requirements bring hypothesis
    pass
else:
    _hypothesis_settings.register_profile("lanes", derandomize=True, database=None)
    _hypothesis_settings.register_profile("explore", database=None)
    _hypothesis_settings.load_profile("explore" if os.environ.get("LANES_HYPOTHESIS") == "explore" else "lanes")


#: When set, every test's worker, start and end (seconds since the epoch) and node id are
#: appended to this file, one tab-separated line each: where a parallel run waits shows there.
TIMELINE = os.environ.get("LANES_TEST_TIMELINE")


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_protocol(item, nextitem):
    """Record the test's span in LANES_TEST_TIMELINE (setup, call and teardown together), and
    the CPU seconds it used: this process's, and its reaped child processes' (kernels, browsers,
    grading boxes)."""
    import resource
    import time

    def cpu() -> float:
        own, kids = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
        return own.ru_utime + own.ru_stime + kids.ru_utime + kids.ru_stime

    start, cpu0 = time.time(), cpu()
    yield
    if TIMELINE:
        worker = os.environ.get("PYTEST_XDIST_WORKER", "main")
        with open(TIMELINE, "a", encoding="utf-8") as f:
            f.write(f"{worker}\t{start:.3f}\t{time.time():.3f}\t{item.nodeid}\t{cpu() - cpu0:.3f}\n")


def _run_id() -> str | None:
    """The id that every xdist worker of one run shares; None without xdist."""
    return os.environ.get("PYTEST_XDIST_TESTRUNUID")


def _build() -> None:
    if shutil.which("jupyter-book") is None:
        pytest.fail(
            "jupyter-book is not on PATH; install the requirements: "
            "python -m pip install -r requirements.txt",
            pytrace=False,
        )
    proc = subprocess.run(
        BUILD_COMMAND, cwd=ROOT, capture_output=True, text=True, check=False,
        env={**os.environ, "PYTHON": sys.executable},
    )
    if proc.returncode != 0:
        log = re.sub(r"\x1b\[[0-9;]*m", "", proc.stdout + "\n" + proc.stderr).splitlines()
        problems = list(dict.fromkeys(line for line in log if "WARNING" in line or "ERROR" in line))
        shown = "\n".join(problems[:40] or log[-40:])
        pytest.fail(
            f"`{' '.join(BUILD_COMMAND)}` failed with exit code {proc.returncode}:\n{shown}",
            pytrace=False,
        )
    assert (HTML_DIR / "index.html").is_file(), "the build wrote no _build/html/index.html"


@pytest.fixture(scope="session")
def built_site() -> pathlib.Path:
    """Build the book with warnings as errors (once per run), or reuse it if told to."""
    if os.environ.get("LANES_BOOK_BUILT") == "1" and (HTML_DIR / "index.html").is_file():
        return HTML_DIR
    run = _run_id()
    BUILD_LOCK.parent.mkdir(parents=True, exist_ok=True)
    with open(BUILD_LOCK, "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # released when the file closes
        if run is not None and (HTML_DIR / "index.html").is_file() and BUILD_STAMP.is_file() \
                and BUILD_STAMP.read_text(encoding="utf-8") == run:
            return HTML_DIR  # another worker of this run built it
        BUILD_STAMP.unlink(missing_ok=True)
        _build()
        if run is not None:
            BUILD_STAMP.write_text(run, encoding="utf-8")
    return HTML_DIR


# --- The graded class (tests/hostile/klass.py) ---------------------------------
# One class of honest and hostile notebooks, graded once per session (per worker
# under xdist) and read by test_grading_class, test_grading_robustness and
# test_exercises.


@pytest.fixture(scope="session")
def graded_class(tmp_path_factory):
    """The class of tests/hostile/klass.py, graded once as root through the box."""
    from hostile import klass

    why = klass.skip_reason()
    if why:
        pytest.skip(why)
    _claim_the_class_for_this_worker()
    return klass.grade_class(tmp_path_factory.mktemp("graded-class"))


@pytest.fixture
def shared_pool_runs(monkeypatch):
    """Within one test, a slot-pool run of a built-in policy already made is not made again.

    In process, a set's master and its answer key simulate the same days with the same
    policies (the key recomputes what the master computed: about half of the key's work for
    sets 03, 04, 05, 12 and 14): the key gets the run the master made. A run is a pure
    function of its scenario, its policy and its draws (frozen values, compared whole), and
    its result is read-only, so sharing it changes no answer and no verdict; a run that
    differs in anything is made. Shared too: a key's reference rule (a scheduler class of a
    module :func:`grading.judge.load_key` loaded), by its class and its parameters, when one
    test judges several answers against it. A student's scheduler always runs. The runs are
    dropped after the test (a capstone day's run holds about 3 MB: a test that makes many
    different runs, such as the capstone's check of every member, goes without).
    """
    from lanes.pool import engine
    from lanes.pool.policies import Policy

    run = engine.run
    made: dict = {}

    def shared(sc, rule, stream):
        if isinstance(rule, Policy):
            key = (sc, rule, stream)
        elif type(rule).__module__.startswith("lanes_key_") and isinstance(getattr(rule, "__dict__", None), dict) \
                and all(type(x) in (int, float, str, bool, type(None)) for x in vars(rule).values()):
            key = (sc, type(rule).__module__, type(rule).__qualname__, tuple(sorted(vars(rule).items())), stream)
        else:
            return run(sc, rule, stream)
        if key not in made:
            made[key] = run(sc, rule, stream)
        return made[key]

    monkeypatch.setattr(engine, "run", shared)
    return made


def _class_mark(run: str) -> pathlib.Path:
    """The file in which the first worker of run ``run`` to grade the class writes its id."""
    import tempfile

    return pathlib.Path(tempfile.gettempdir()) / f"lanes-graded-class-{run}"


def pytest_configure(config):
    """On an xdist controller, choose the run's id (the workers' PYTEST_XDIST_TESTRUNUID), so
    that pytest_sessionfinish knows which class mark is this run's."""
    if hasattr(config, "workerinput") or not getattr(config.option, "numprocesses", None):
        return
    if getattr(config.option, "testrunuid", "unset") is None:
        import uuid

        config.option.testrunuid = uuid.uuid4().hex


@pytest.hookimpl(trylast=True)  # after the session's fixtures are torn down
def pytest_sessionfinish(session, exitstatus):
    """On the xdist controller, when the workers are done: remove the run's class mark.

    On a worker, collect the garbage now and freeze what is left. The worker reports
    that it finished right after this hook; the controller then ends every worker's
    gateway, and execnet interrupts (SIGINT) a worker still busy 5 s later. What a
    worker still does then is pytest's unconfigure, whose full ``gc.collect()`` walks
    the whole heap: on a large one, under load, it can take longer, and the interrupt
    lands in a gc callback (hypothesis registers one), a KeyboardInterrupt traceback at
    the end of a passing run. Frozen objects are not walked again, so that collection
    has almost nothing left to do.
    """
    if hasattr(session.config, "workerinput"):
        import gc

        gc.collect()
        gc.freeze()
        return
    run = getattr(session.config.option, "testrunuid", None)
    if run:
        _class_mark(run).unlink(missing_ok=True)


def _claim_the_class_for_this_worker() -> None:
    """Fail when a second xdist worker of the same run would grade the class again.

    The SAME_WORKER group keeps every reader of the class on one worker; if the scheduler
    hook is ever not in effect, each worker would grade the whole class (minutes), silently.
    """
    run, worker = _run_id(), os.environ.get("PYTEST_XDIST_WORKER")
    if not run or not worker:
        return
    mark = _class_mark(run)
    try:
        fd = os.open(mark, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    except FileExistsError:
        first = mark.read_text(encoding="utf-8").strip()
        if first != worker:
            pytest.fail(f"the graded class is asked for on {worker} after {first} graded it: the "
                        "SAME_WORKER group of tests/conftest.py is not in effect", pytrace=False)
        return
    with os.fdopen(fd, "w", encoding="utf-8") as f:
        f.write(worker)
