"""The grader's main thread does bounded work per file, whatever a student hands in.

Issue 41: a cell of 2,000,000 line breaks made ``cell_notes`` quadratic (9.5 h extrapolated),
fourteen padded 16 MiB copies cost minutes of reading, a 6 MiB ``submission_metadata.yml``
22 s, and a string of escaped quotes made the JSON depth scan quadratic. Here they are graded
in one run beside an honest student, the grader's own process under a CPU-time limit
(``RLIMIT_CPU``: the boxes and the judge are other processes): the run must finish inside it
with its report, the honest student at full marks and each file failing only itself.
"""

from __future__ import annotations

import json
import os
import pathlib
import resource
import shutil
import subprocess
import sys
import tempfile

import nbformat
import pytest

from hostile import klass as K
from hostile.klass import SLUG, honest, with_cell

pytestmark = pytest.mark.skipif(K.skip_reason() is not None, reason=str(K.skip_reason()))

#: CPU seconds the grader's own process may use for the whole run.
MAIN_CPU_S = 60
#: The grader, printing the CPU time of its own process (not its children's) as it exits.
_TIMED = ("import atexit, resource, runpy, sys; atexit.register(lambda: print('main-thread-cpu-s', "
          "round(resource.getrusage(resource.RUSAGE_SELF).ru_utime + resource.getrusage(resource.RUSAGE_SELF)"
          ".ru_stime, 1), file=sys.stderr)); sys.argv = sys.argv[1:]; runpy.run_path(sys.argv[0], run_name='__main__')")


def _padded(nb, size: int):
    """``nb`` with a comment cell that brings its file to about ``size`` bytes."""
    text = nbformat.writes(nb)
    return with_cell(nb, "#" + "x" * (size - len(text) - 200))


def test_hostile_files_cost_the_main_thread_a_bounded_time(tmp_path):
    subs = tmp_path / "subs"
    for login in ("bob", "lines", "padder", "quotes"):
        (subs / login).mkdir(parents=True)
    nbformat.write(honest("bob"), subs / "bob" / f"{SLUG}.ipynb")
    lines = json.loads(nbformat.writes(with_cell(honest("lines"), "")))
    lines["cells"][-1]["source"] = "\n" * 2_000_000  # one string (4 MB), as JupyterLab may save it
    (subs / "lines" / f"{SLUG}.ipynb").write_text(json.dumps(lines))
    pad = nbformat.writes(_padded(honest("padder"), (16 << 20) - 4096))
    for i in range(14):
        (subs / "padder" / f"{SLUG}-Copy{i + 1}.ipynb").write_text(pad)
    (subs / "quotes" / f"{SLUG}.ipynb").write_bytes(b'{"cells": ["' + b'\\"' * (4 << 20))
    scope = tmp_path / "gradescope"
    (scope / "submission_1").mkdir(parents=True)
    nbformat.write(honest("bob"), scope / "submission_1" / f"{SLUG}.ipynb")
    entry = "submission_{i}:\n  :submitters:\n  - :name: S {i}\n    :email: s{i}@example.edu\n    :sid: '{i}'\n" \
            "  :created_at: 2026-10-01 12:00:00.000000000 +00:00\n"
    text, i = [], 0
    while sum(map(len, text)) < 6 << 20:
        text.append(entry.format(i=i))
        i += 1
    (scope / "submission_metadata.yml").write_text("".join(text))
    roster = tmp_path / "roster.csv"
    roster.write_text("login,email\nbob,s1@example.edu\nlines,l@x.org\npadder,p@x.org\nquotes,q@x.org\n")
    grader_tmp = pathlib.Path(tempfile.mkdtemp(prefix="lanes-main-tmp-"))
    os.chmod(grader_tmp, 0o711)
    report = tmp_path / "report.json"

    def limit():
        resource.setrlimit(resource.RLIMIT_CPU, (MAIN_CPU_S, resource.RLIM_INFINITY))

    try:
        proc = subprocess.run([sys.executable, "-c", _TIMED, str(K.GRADE), str(subs), str(scope), "--roster", str(roster), "--json", str(report),
                               "--quiet", "--jobs", "2", "--timeout", "120"],
                              capture_output=True, text=True, timeout=900, preexec_fn=limit,
                              env={**os.environ, "LANES_TEST_SECRET": "1", "TMPDIR": str(grader_tmp)})
        left = os.listdir(grader_tmp)
    finally:
        shutil.rmtree(grader_tmp, ignore_errors=True)
    assert proc.returncode in (0, 1), (proc.returncode, proc.stderr[-3000:])  # -24: SIGXCPU, past the budget
    assert left == []
    print(proc.stderr.strip().splitlines()[-1])  # main-thread-cpu-s N
    data = json.loads(report.read_text())
    rows = {(s["login"], pathlib.Path(s["path"]).name): s for s in data["submissions"]}
    assert rows[("bob", f"{SLUG}.ipynb")]["score"] == K.POSSIBLE  # the honest student, beside them all
    assert rows[("quotes", f"{SLUG}.ipynb")]["status"] == "not_a_notebook"
    lines = rows[("lines", f"{SLUG}.ipynb")]
    assert lines["status"] == "graded" and lines["score"] == K.POSSIBLE, lines  # its answers are its own
    copies = [s for (login, _), s in rows.items() if login == "padder"]
    assert len(copies) == 14 and sum(s["counted"] for s in copies) == 1
    counted = next(s for s in copies if s["counted"])
    assert counted["path"].endswith("-Copy14.ipynb") and counted["score"] == K.POSSIBLE, counted
    assert sum("MiB of notebooks" in " ".join(s["messages"]) for s in copies) == 14 - 128 // 16
    scoped = [s for s in data["submissions"] if "gradescope" in s["path"]]
    assert [s["status"] for s in scoped] == ["unidentified"], scoped
    assert "larger than 2 MiB" in " ".join(scoped[0]["messages"]), scoped
