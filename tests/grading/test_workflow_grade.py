"""``.github/workflows/grade.yml`` run step by step on a copy of this repository, as CI runs it.

The workflow checks the instructor's repository: the masters pass every form check and the
exercises (blank by design) are well formed. Each ``run:`` step runs in order in bash with
``-eo pipefail`` (``sudo`` is this root shell itself); the actions' steps are skipped
(checkout: the copy; setup-python: this interpreter; upload: nothing to keep).
"""

from __future__ import annotations

import os
import pathlib
import shlex
import shutil
import subprocess
import sys

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[2]
WORKFLOW = ROOT / ".github" / "workflows" / "grade.yml"

pytestmark = [pytest.mark.skipif(not WORKFLOW.is_file(), reason="no grade workflow (the student repository)"),
              pytest.mark.skipif(os.geteuid() != 0 or shutil.which("bwrap") is None,
                                 reason="runs the grader's box as root (as in CI)")]


def test_the_workflow_is_green_on_the_instructors_repository_and_catches_a_broken_master(tmp_path):
    import yaml

    steps = yaml.safe_load(WORKFLOW.read_text())["jobs"]["grade"]["steps"]
    work = tmp_path / "repo"
    for name in ("lanes", "grading", "scripts", "solutions", "exercises"):
        shutil.copytree(ROOT / name, work / name, ignore=shutil.ignore_patterns("__pycache__", "_build"))
    for name in ("pyproject.toml", "requirements.txt"):
        shutil.copy(ROOT / name, work / name)
    (work / "build").mkdir()
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    (bin_dir / "sudo").write_text('#!/bin/sh\n[ "$1" = -E ] && shift\nexec "$@"\n')
    # a wrapper, not a link: the interpreter then names itself by its own path (a virtual
    # environment's, which the box binds), not by a link in this temporary folder
    (bin_dir / "python").write_text(f'#!/bin/sh\nexec {shlex.quote(sys.executable)} "$@"\n')
    os.chmod(bin_dir / "python", 0o755)
    os.chmod(bin_dir / "sudo", 0o755)
    os.chmod(tmp_path, 0o755)
    env = {**os.environ, "PATH": f"{bin_dir}:{os.environ['PATH']}", "PYTHONPATH": str(work),
           "GITHUB_STEP_SUMMARY": str(tmp_path / "summary.md")}

    def run_steps():
        ran = []
        for step in steps:
            if "run" not in step or step.get("name", "").startswith("Install"):
                continue
            proc = subprocess.run(["bash", "--noprofile", "--norc", "-eo", "pipefail", "-c", step["run"]], cwd=work,
                                  env=env, capture_output=True, text=True, timeout=600)
            ran.append((step["name"], proc.returncode, proc.stdout[-1500:] + proc.stderr[-1500:]))
            if proc.returncode != 0:
                break
        return ran

    ran = run_steps()
    assert [r[1] for r in ran] == [0] * len(ran) and len(ran) >= 3, ran
    assert "form checks: 0 problem(s)" in (tmp_path / "summary.md").read_text()
    import nbformat

    from lanes.exercises.registry import get_set

    master = sorted((work / "solutions").glob("*/[0-9]*.ipynb"))[0]
    nb = nbformat.read(master, as_version=4)
    nb.cells.append(nbformat.v4.new_code_cell(f"{get_set(master.stem).variables[0]} = object()"))
    nbformat.write(nb, master)
    broken = run_steps()
    import json

    assert broken[0][1] != 0, broken
    assert json.loads((work / "build" / "grade_report.json").read_text())["problems"] == 1
