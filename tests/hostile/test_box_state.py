"""What a notebook does in its box reaches neither the next notebook nor the box's own processes.

Issue 41: a late copy planted its answers where the reset between a student's notebooks did
not look (the box's root, ``/dev``, a 0555 folder) and the on-time stub read them; a notebook
attached to the grading server (pid 2) and bubblewrap's pid 1 and opened their memory. Here a
student's notebooks run one after another in one grading server (``grading.runner --serve``),
as ``scripts/grade.py`` runs them: the first plants everywhere it can write and attacks the
box's processes, the second counts what it finds. Each reports through an answer variable.
"""

from __future__ import annotations

import json
import pathlib
import subprocess
import tempfile

import nbformat
import pytest

from hostile import klass as K

pytestmark = pytest.mark.skipif(K.skip_reason() is not None, reason=str(K.skip_reason()))

SLUG = K.SLUG
#: Everywhere a notebook might write: the box's scratch, its root, /dev, folders of the system,
#: a 0555 folder of its own in each, and the answers file of the next notebook.
PLACES = ["/job", "/tmp", "/var/tmp", "/dev/shm", "/answers", "/", "/dev", "/etc", "/usr", "/lanes-site", "/proc/self", "/run"]

PLANT = f"""
import os
PLACES = {PLACES!r}
written = 0
for top in PLACES:
    for name in ("lanes-plant", "locked/lanes-plant"):
        try:
            if "/" in name:
                os.makedirs(os.path.join(top, "locked"), exist_ok=True)
            with open(os.path.join(top, name), "w") as f:
                f.write("q1_busy_slots = 99.0")
            written += 1
        except OSError:
            pass
    try:
        os.chmod(os.path.join(top, "locked"), 0o555)
    except OSError:
        pass
import ctypes
libc = ctypes.CDLL(None)
for key in (0x5EED, 0x5EEE):  # a message queue with a message, a semaphore set
    q = libc.msgget(key, 0o1000 | 0o666) if key == 0x5EED else libc.semget(key, 1, 0o1000 | 0o666)
    written += q >= 0
    if key == 0x5EED and q >= 0:
        msg = ctypes.create_string_buffer(ctypes.sizeof(ctypes.c_long) + 16)
        ctypes.c_long.from_buffer(msg).value = 1
        libc.msgsnd(q, msg, 16, 0)
q1_busy_slots = float(written)
"""

FIND = f"""
import os
PLACES = {PLACES!r}
found = 0
for top in PLACES:
    for name in ("lanes-plant", "locked/lanes-plant", "locked"):
        found += os.path.lexists(os.path.join(top, name))
import ctypes
libc = ctypes.CDLL(None)
found += (libc.msgget(0x5EED, 0o666) >= 0) + (libc.semget(0x5EEE, 0, 0o666) >= 0)
q1_busy_slots = float(found)
"""

ATTACH = """
import ctypes, os
libc = ctypes.CDLL(None, use_errno=True)
reached = 0
for target in (1, os.getppid()):  # bubblewrap's pid 1 and the grading server (pid 2)
    if libc.ptrace(16, target, 0, 0) == 0:  # PTRACE_ATTACH
        reached += 1
        os.waitpid(target, 0)
        libc.ptrace(17, target, 0, 0)
    try:
        open(f"/proc/{target}/mem", "r+b").close()
        reached += 1
    except OSError:
        pass
q1_busy_slots = float(reached)
"""


def _serve(cells: list[str]) -> list:
    """Run one notebook per cell in one grading server; each one's ``q1_busy_slots``."""
    from grading import sandbox

    with sandbox.Box() as box:
        job = pathlib.Path(tempfile.mkdtemp(prefix="job-", dir=box.base))
        for k, source in enumerate(cells, 1):
            nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(source)])
            (job / f"{k}.ipynb").write_text(nbformat.writes(nb))
        with box.popen(sandbox.python_argv("grading.runner", "--serve", *[SLUG] * len(cells)), job_dir=job,
                       limits=sandbox.Limits(timeout_s=120), stdout=subprocess.PIPE) as p:
            out, _ = p.communicate(timeout=120)
        answers = []
        for k in range(1, len(cells) + 1):  # "<k> <status> <n>" and n bytes of answers, per notebook
            head, _, out = out.partition(b"\n")
            assert head.split()[:2] == [str(k).encode(), b"0"], head
            n = int(head.split()[2])
            answers.append(json.loads(out[:n])["answers"].get("q1_busy_slots"))
            out = out[n:]
        assert sorted(p.name for p in job.iterdir()) == [f"{k}.ipynb" for k in range(1, len(cells) + 1)]
        return answers


def test_nothing_a_notebook_plants_reaches_the_next_one():
    written, found = _serve([PLANT, FIND])
    # it could write in the five scratch folders (a plant and a 0555 folder holding one in each)
    # and make a SysV message queue and semaphore set
    assert written == 12, written
    assert found == 0, found


def test_a_notebook_cannot_attach_to_the_boxs_processes():
    assert _serve([ATTACH]) == [0.0]


FILL = """
import os
for name in os.listdir("/job"):  # every file of the job folder it may write (the answers files were)
    try:
        with open(os.path.join("/job", name), "ab") as f:
            for _ in range(64):
                f.write(b"x" * (1 << 20))
    except OSError:
        pass
for folder in ("/job", "/tmp", "/var/tmp", "/dev/shm", "/answers", "/", "/dev"):
    for i in range(16):
        try:
            with open(f"{folder}/fill-{i}", "wb") as f:
                for _ in range(64):
                    f.write(b"x" * (1 << 20))
        except OSError:
            break
import time
time.sleep(15)  # holding it all while the neighbours run
"""


def test_a_box_that_writes_all_it_can_leaves_a_small_grader_tmpdir_to_its_neighbours(tmp_path):
    """Issue 41: the answers files were bound read-write from the grader's TMPDIR (64 MiB each);
    at a 600 MiB TMPDIR two honest students lost their marks. Here the grader's TMPDIR is a
    32 MiB file system and one student writes everything their box lets them."""
    import os
    import sys

    tmpdir = pathlib.Path(tempfile.mkdtemp(prefix="lanes-small-tmp-"))  # (a folder the box's uid may reach)
    if subprocess.run(["mount", "-t", "tmpfs", "-o", "size=32m,mode=0711", "tmpfs", str(tmpdir)]).returncode:
        pytest.skip("cannot mount a tmpfs here")
    try:
        subs = tmp_path / "subs"
        for login in ("amy", "bob", "carol"):
            (subs / login).mkdir(parents=True)
        nbformat.write(K.honest("bob"), subs / "bob" / f"{SLUG}.ipynb")
        nbformat.write(K.honest("carol"), subs / "carol" / f"{SLUG}.ipynb")
        amy = K.with_cell(K.honest("amy"), FILL)
        amy.cells.insert(0, amy.cells.pop())  # first, before its honest cells (and its neighbours' exports)
        nbformat.write(amy, subs / "amy" / f"{SLUG}.ipynb")
        report = tmp_path / "report.json"
        proc = subprocess.run([sys.executable, str(K.GRADE), str(subs), "--json", str(report), "--quiet",
                               "--jobs", "3"], capture_output=True, text=True, timeout=600,
                              env={**os.environ, "LANES_TEST_SECRET": "1", "TMPDIR": str(tmpdir)})
        left = os.listdir(tmpdir)
    finally:
        subprocess.run(["umount", str(tmpdir)])
        tmpdir.rmdir()
    assert proc.returncode in (0, 1), proc.stderr[-3000:]
    rows = {s["login"]: s for s in json.loads(report.read_text())["submissions"]}
    assert rows["bob"]["score"] == rows["carol"]["score"] == K.POSSIBLE, (rows["bob"], rows["carol"])
    assert rows["amy"]["score"] == K.POSSIBLE, rows["amy"]  # its answers still count: its own tmpfs took it
    assert left == []
