"""The class-grading workflow, run here job by job as a GitHub runner would run it.

``.github/workflows/grade-class.yml`` is read, and each job's steps run in order in a fresh
copy of the checkout: ``run`` steps under ``bash -eo pipefail`` with the step's ``env``
(``${{ ... }}`` expressions evaluated from the inputs, secrets, matrix, strategy and the
plan job's outputs), ``sudo`` a pass-through (the test runs as root, as the runner's sudo
does); ``upload-artifact`` reads what it uploads as an unprivileged user (the runner user
is not root); ``download-artifact`` puts the shards' files in one folder. The install
steps are not run (the test's interpreter has the requirements); what the merge job
installs is checked against what ``grade.py merge`` imports. A class of three (one hands
in nothing, the others hand in notebooks the grader refuses, so no box is started) is
graded with 1, 2 and 4 shards: each gives a gradebook, and the three are the same.
"""

from __future__ import annotations

import concurrent.futures
import json
import os
import pathlib
import re
import shutil
import subprocess
import tempfile

import pytest
import yaml

ROOT = pathlib.Path(__file__).resolve().parents[2]
WORKFLOW = ROOT / ".github" / "workflows" / "grade-class.yml"
SLUG = "01_slots_and_littles_law"
SECRET = "c0ffee" * 11  # a course secret of the right shape (not the test suite's public one)
NOBODY = 65534

pytestmark = [pytest.mark.skipif(not WORKFLOW.is_file(), reason="no class workflow (the student repository)"),
              pytest.mark.skipif(os.geteuid() != 0 or shutil.which("setpriv") is None,
                                 reason="runs the workflow's steps as root with setpriv (as in CI)")]


def _value(expr: str, ctx: dict):
    expr = expr.strip()
    m = re.fullmatch(r"fromJSON\((.*)\)", expr)
    if m:
        return json.loads(_value(m.group(1), ctx))
    node = ctx
    for part in expr.split("."):
        node = node.get(part, "") if isinstance(node, dict) else ""
    return node


def _eval(text, ctx: dict):
    """``${{ ... }}`` in ``text`` evaluated (a lone expression keeps its type, as in a matrix)."""
    if not isinstance(text, str):
        return text
    whole = re.fullmatch(r"\$\{\{([^}]*)\}\}", text.strip())
    if whole:
        return _value(whole.group(1), ctx)
    return re.sub(r"\$\{\{(.*?)\}\}", lambda m: str(_value(m.group(1), ctx)), text)


def _checkout(dest: pathlib.Path, submissions: pathlib.Path) -> None:
    """What actions/checkout gives: the repository's files (here the ones grading needs)."""
    dest.mkdir(parents=True)
    for name in ("lanes", "grading", "scripts", "solutions"):
        shutil.copytree(ROOT / name, dest / name, ignore=shutil.ignore_patterns("*.ipynb", "__pycache__", "_build"))
    for name in ("pyproject.toml", "requirements.txt"):
        shutil.copy(ROOT / name, dest / name)
    shutil.copytree(submissions, dest / "submissions")
    os.chmod(dest, 0o755)


def _run_job(job: dict, ctx: dict, workspace: pathlib.Path, store: dict, bin_dir: pathlib.Path) -> dict:
    outputs: dict = {}
    for step in job["steps"]:
        uses = step.get("uses", "")
        with_ = {k: _eval(v, ctx) for k, v in (step.get("with") or {}).items()}
        if uses.startswith("actions/checkout") or uses.startswith("actions/setup-python"):
            continue  # the checkout is made before; the interpreter is this one
        if uses.startswith("actions/upload-artifact"):
            files = {}
            for rel in str(with_["path"]).split():
                for p in sorted((workspace / rel).rglob("*")) if (workspace / rel).is_dir() else [workspace / rel]:
                    if p.is_file() and not p.name.startswith("."):  # as the runner user; hidden files stay
                        got = subprocess.run(["setpriv", f"--reuid={NOBODY}", f"--regid={NOBODY}", "--clear-groups",
                                              "cat", str(p)], capture_output=True, timeout=30)
                        assert got.returncode == 0, f"upload-artifact cannot read {p}: {got.stderr.decode()}"
                        files[str(p.relative_to(workspace))] = got.stdout
            assert files, f"upload-artifact: nothing at {with_['path']}"
            store[with_["name"]] = files
            continue
        if uses.startswith("actions/download-artifact"):
            pattern = re.compile(with_["pattern"].replace("*", ".*"))
            for name, files in store.items():
                if pattern.fullmatch(name):
                    for rel, data in files.items():
                        p = workspace / with_["path"] / pathlib.Path(rel).name
                        p.parent.mkdir(parents=True, exist_ok=True)
                        p.write_bytes(data)
            continue
        assert not uses, f"the test does not know {uses}"
        if step.get("name") == "Install":
            continue
        out_file = workspace / ".github-output"
        out_file.write_text("")
        env = {**os.environ, **{k: str(_eval(v, ctx)) for k, v in (step.get("env") or {}).items()},
               "GITHUB_OUTPUT": str(out_file), "PATH": f"{bin_dir}:{os.environ['PATH']}", "PYTHONPATH": ""}
        proc = subprocess.run(["bash", "--noprofile", "--norc", "-eo", "pipefail", "-c", _eval(step["run"], ctx)],
                              cwd=workspace, env=env, capture_output=True, text=True, timeout=300)
        assert proc.returncode == 0, f"step {step.get('name')!r}: {proc.stdout[-2000:]}{proc.stderr[-2000:]}"
        if step.get("id"):
            outputs[step["id"]] = {"outputs": dict(line.split("=", 1) for line in out_file.read_text().splitlines()
                                                   if "=" in line)}
    return {"outputs": {k: _eval(v, {"steps": outputs}) for k, v in (job.get("outputs") or {}).items()}}


def _class(tmp: pathlib.Path) -> pathlib.Path:
    subs = tmp / "class"
    for login in ("ana", "ben"):
        (subs / login).mkdir(parents=True)
        (subs / login / f"{SLUG}.ipynb").write_text('{"nbformat": 4, "cells": ')  # refused: no box started
    (subs / "roster.csv").write_text("login,name\nana,Ana A\nben,Ben B\ncy,Cy C\n")  # cy hands in nothing
    return subs


def _run_workflow(tmp: pathlib.Path, shards: int, submissions: pathlib.Path) -> dict:
    """The files the workflow's last job uploads (path -> bytes)."""
    wf = yaml.safe_load(WORKFLOW.read_text())
    bin_dir = tmp / "bin"
    bin_dir.mkdir(exist_ok=True)
    sudo = bin_dir / "sudo"
    sudo.write_text('#!/bin/sh\n[ "$1" = "-E" ] && shift\nexec "$@"\n')
    sudo.chmod(0o755)
    inputs = {k: str(v.get("default", "")) for k, v in wf[True]["workflow_dispatch"]["inputs"].items()}
    inputs["shards"] = str(shards)
    base = {"inputs": inputs, "secrets": {"LANES_COURSE_SECRET": SECRET, "SUBMISSIONS_URL": ""}}
    done: dict = {}
    store: dict = {}
    for name, job in wf["jobs"].items():  # the jobs are listed in the order their needs allow
        needs = job.get("needs") or []
        ctx = {**base, "needs": {n: done[n] for n in ([needs] if isinstance(needs, str) else needs)}}
        matrix = _eval((job.get("strategy") or {}).get("matrix") or {}, ctx)
        matrix = {k: _eval(v, ctx) for k, v in matrix.items()} if isinstance(matrix, dict) else {}
        cells = [{"shard": s} for s in matrix["shard"]] if matrix else [{}]
        def run(cell, name=name, job=job, ctx=ctx, n=len(cells)):
            workspace = tmp / f"{name}-{cell.get('shard', 0)}-of-{shards}"
            _checkout(workspace, submissions)
            return _run_job(job, {**ctx, "matrix": cell, "strategy": {"job-total": n}}, workspace, store, bin_dir)

        with concurrent.futures.ThreadPoolExecutor(len(cells)) as pool:  # a matrix's jobs run at once
            done[name] = list(pool.map(run, cells))[-1]
    assert len([k for k in store if k.startswith("shard-")]) == shards
    return store["gradebook"]


@pytest.fixture(scope="module")
def runs():
    tmp = pathlib.Path(tempfile.mkdtemp(prefix="lanes-workflow-"))
    os.chmod(tmp, 0o755)  # a runner's workspace: the runner user can reach it
    try:
        subs = _class(tmp)
        for n in (1, 2, 4):
            (tmp / f"n{n}").mkdir()
        with concurrent.futures.ThreadPoolExecutor(3) as pool:  # the three classes side by side
            return dict(zip((1, 2, 4), pool.map(lambda n: _run_workflow(tmp / f"n{n}", n, subs), (1, 2, 4))))
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


@pytest.mark.parametrize("shards", [1, 2, 4])
def test_the_workflow_gives_a_gradebook_for_any_shard_count(runs, shards):
    files = runs[shards]
    book = files["build/gradebook.csv"].decode("utf-8-sig").splitlines()
    assert [line.split(",")[0] for line in book] == ["login", "ana", "ben", "cy"]
    assert files["build/gradebook.csv"] == runs[1]["build/gradebook.csv"]
    assert sorted(k for k in files if k.startswith("build/feedback/")) == [
        f"build/feedback/{x}.md" for x in ("ana", "ben", "cy")]
    report = json.loads(files["build/report.json"])
    assert report["students"] == 3 and report["possible"] == 3 * report["class"]["cy"]["possible"] > 0


def test_the_merge_job_installs_what_merge_imports():
    wf = yaml.safe_load(WORKFLOW.read_text())
    install = next(s["run"] for s in wf["jobs"]["merge"]["steps"] if s.get("name") == "Install")
    assert '".[grading]"' in install or "requirements.txt" in install, install
    extra = re.search(r"grading = \[(.*?)\n\]", (ROOT / "pyproject.toml").read_text(), re.S).group(1)
    assert "nbformat" in extra  # grade.py stops without it, merge included
    assert "|| true" not in WORKFLOW.read_text()
