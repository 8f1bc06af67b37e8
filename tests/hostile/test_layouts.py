"""Set 13's box in the layout that broke it (issue 30 part 4), graded end to end.

The checkout lies inside the interpreter's venv (where ``pip install -e git+URL`` puts it:
``venv/src/<name>``), the answer keys are passed with ``--solutions`` from elsewhere and the
course secret with ``--secret`` from a third place. Each attacker's set-13 policy tries one
thing while it is loaded by the online judge (only there: in the notebook itself the line
does nothing): read the checkout's keys, the keys passed, the secret, list the checkout,
import a module, fork, exec. The policy is otherwise the honest one, so a question scores
only if that one thing failed to stop it; the other question is honest and must score. The
honest control earns full marks in the same run, and no verdict quotes what a policy chose.
A second run grades the control with the default ``--solutions`` (the keys inside the
checkout, inside the venv), which the issue found could not be graded at all.
"""

from __future__ import annotations

import json
import os
import pathlib
import shutil
import site
import subprocess
import sys
import sysconfig
import tempfile

import pytest

from hostile import klass as K

pytestmark = pytest.mark.skipif(K.skip_reason() is not None, reason=K.skip_reason() or "")

SET13 = "13_write_a_scheduler"
SECRET = "layout-test-course-secret-0123456789"
#: One thing per question, as an expression the policy's class body evaluates on load: each
#: attacker probes two (q1's FloorPolicy and q2's AgingPolicy).
PROBES = {
    "checkoutkey": "open(CHECKOUT + '/solutions/13_write_a_scheduler/key.py').read()",
    "passedkey": "open(KEYS + '/13_write_a_scheduler/key.py').read()",
    "secret": "open(SECRETFILE).read()",
    "listing": "__import__('os').listdir(CHECKOUT) or 1 / 0",
    "imports": "__import__('wave') and __import__('lanes.exercises.variants')",
    "forks": "(lambda os: os.waitpid(p, 0) if (p := os.fork()) else os._exit(0))(__import__('os'))",
    "execs": "__import__('os').waitpid(__import__('os').posix_spawn('/usr/bin/true', ['true'], {}), 0)",
    "copens": "__import__('ctypes').CDLL(None).open(CHECKOUT.encode() + b'/pyproject.toml', 0) >= 0 or 1 / 0",
}
#: The attackers: login -> (q1's probe, q2's probe); the control's probes do nothing.
ATTACKERS = {f"{a}-{b}": (a, b) for a, b in zip(list(PROBES)[::2], list(PROBES)[1::2])}


def _notebook(login: str, paths: dict, probes: tuple[str, str]):
    """``login``'s honest set-13 notebook whose two policy classes evaluate ``probes`` when
    loaded anywhere but in the notebook itself (step 1 runs cells as ``__main__``)."""
    from lanes.exercises.variants import student_token

    nb = K.honest(login, student_token(login, SECRET), master=K.SOLUTIONS / SET13 / f"{SET13}.ipynb")
    consts = "".join(f"    {k} = {v!r}\n" for k, v in paths.items())
    for name, probe in zip(("FloorPolicy", "AgingPolicy"), probes):
        (cell,) = [c for c in nb.cells if c.cell_type == "code" and f"class {name}:" in c.source]
        cell.source = cell.source.replace(
            f"class {name}:\n", f"class {name}:\n{consts}    _probe = ({probe}) if __name__ != '__main__' else None\n", 1)
    return nb


def test_each_probe_works_outside_the_box(layout):
    """So that a probe stopped in the box was stopped by the box."""
    consts = "".join(f"{k} = {v!r}\n" for k, v in _paths(layout).items())
    for name, probe in PROBES.items():
        proc = subprocess.run([sys.executable, "-c", consts + f"assert ({probe}) is not False"], capture_output=True,
                              text=True, timeout=60, env={**os.environ, "PYTHONPATH": str(K.ROOT)})
        assert proc.returncode == 0, (name, proc.stderr[-1000:])


def _paths(layout) -> dict:
    return {"CHECKOUT": str(layout["checkout"]), "KEYS": str(layout["keys"]), "SECRETFILE": str(layout["secret"])}


@pytest.fixture(scope="module")
def layout(tmp_path_factory):
    """A venv under /tmp with the checkout in its src/, keys and secret elsewhere; torn down after."""
    d = tmp_path_factory.mktemp("layout")
    venv = pathlib.Path(tempfile.mkdtemp(prefix="lanes-venv-", dir="/tmp"))
    os.chmod(venv, 0o755)
    try:
        subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True, timeout=120)
        ours = [p for p in dict.fromkeys(site.getsitepackages() + [sysconfig.get_path("purelib")]) if os.path.isdir(p)]
        purelib = subprocess.run([str(venv / "bin" / "python"), "-c", "import sysconfig; print(sysconfig.get_path('purelib'))"],
                                 check=True, capture_output=True, text=True, timeout=60).stdout.strip()
        pathlib.Path(purelib, "lanes-test-env.pth").write_text("".join(f"import site; site.addsitedir({p!r})\n" for p in ours))
        checkout = venv / "src" / "lanes"
        ignore = shutil.ignore_patterns("__pycache__", "*.pyc")
        for part in ("lanes", "grading", "scripts"):
            shutil.copytree(K.ROOT / part, checkout / part, ignore=ignore)
        shutil.copy(K.ROOT / "pyproject.toml", checkout)
        shutil.copytree(K.SOLUTIONS / SET13, checkout / "solutions" / SET13, ignore=ignore)
        (checkout / ".lanes-course-secret").write_text(SECRET)
        keys = d / "keys" / "solutions"
        shutil.copytree(K.SOLUTIONS / SET13, keys / SET13, ignore=ignore)
        secret = d / "private" / "course-secret"
        secret.parent.mkdir()
        secret.write_text(SECRET)
        yield {"venv": venv, "checkout": checkout, "keys": keys, "secret": secret, "dir": d}
    finally:
        shutil.rmtree(venv, ignore_errors=True)


def _grade(layout, subs: pathlib.Path, out: pathlib.Path, *extra: str):
    grader_tmp = tempfile.mkdtemp(prefix="lanes-layout-tmp-")
    os.chmod(grader_tmp, 0o711)
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PYTHON", "LANES_"))}
    env["TMPDIR"] = grader_tmp
    try:
        proc = subprocess.run([str(layout["venv"] / "bin" / "python"), str(layout["checkout"] / "scripts" / "grade.py"),
                               str(subs), "--json", str(out / "report.json"), "--feedback", str(out / "feedback"),
                               "--jobs", "3", "--quiet", *extra], capture_output=True, text=True, timeout=900,
                              env=env, cwd=layout["dir"])
        left = os.listdir(grader_tmp)
    finally:
        shutil.rmtree(grader_tmp, ignore_errors=True)
    assert proc.returncode in (0, 1) and (out / "report.json").is_file(), proc.stdout[-3000:] + proc.stderr[-3000:]
    return proc, json.loads((out / "report.json").read_text()), left


@pytest.fixture(scope="module")
def graded(layout):
    import nbformat

    subs = layout["dir"] / "subs"
    for login, probes in [("carol", ("None", "None")), *((k, (PROBES[a], PROBES[b])) for k, (a, b) in ATTACKERS.items())]:
        (subs / login).mkdir(parents=True)
        nbformat.write(_notebook(login, _paths(layout), probes), subs / login / f"{SET13}.ipynb")
    out = layout["dir"] / "out"
    return (*_grade(layout, subs, out, "--solutions", str(layout["keys"]), "--secret", str(layout["secret"])), out)


def _one(data, login: str) -> dict:
    (sub,) = [s for s in data["submissions"] if s["login"] == login]
    return sub


def test_the_control_earns_full_marks_and_nothing_is_left(graded):
    _, data, left, _ = graded
    carol = _one(data, "carol")  # (its policies evaluate a probe that does nothing)
    assert carol["score"] == carol["possible"] > 0, carol
    assert left == []


@pytest.mark.parametrize("login", sorted(ATTACKERS))
def test_the_policy_cannot_open_list_import_fork_or_exec(graded, login):
    sub = _one(graded[1], login)
    for q in ("q1", "q2"):  # each probe stopped its otherwise honest policy
        assert sub["questions"][q]["score"] == 0, (q, sub["questions"][q])


def test_verdicts_quote_nothing_the_policy_chose(graded, layout):
    proc, data, _, out = graded
    texts = [json.dumps(data)] + [p.read_text() for p in (out / "feedback").iterdir()]
    messages = [m for s in data["submissions"] if s["login"] in ATTACKERS
                for q in ("q1", "q2") for m in s["questions"][q]["messages"]]
    from grading.online import VERDICTS

    assert messages and set(messages) <= set(VERDICTS.values()), messages  # the judge's fixed texts only
    for chosen in (str(layout["checkout"]), str(layout["keys"]), str(layout["secret"]), SECRET, "key.py",
                   "wave", "pyproject", "Errno", "Error:"):
        assert not any(chosen in t for t in texts), chosen


def test_the_default_solutions_inside_the_venv_grade(layout):
    import nbformat

    subs = layout["dir"] / "subs-default"
    (subs / "carol").mkdir(parents=True)
    nbformat.write(_notebook("carol", _paths(layout), ("None", "None")), subs / "carol" / f"{SET13}.ipynb")
    out = layout["dir"] / "out-default"
    _, data, left = _grade(layout, subs, out)
    carol = _one(data, "carol")
    assert carol["score"] == carol["possible"] > 0, carol
    assert left == []
