"""Held-out versions of issue 30's class breakers: other depths, counts, encodings and methods.

The class run of ``klass.py`` grades the breakers as the issue found them; this module grades
variants of each that differ from those (dicts instead of lists, other depths, long names past
``PATH_MAX``, many small files, sparse files, links, a FIFO, a device and a socket in a hand-in,
a huge cell, a deeply nested notebook, other escape bytes and encodings in folder and file
names, set-13 policies that spin at import and in attribute look-up, flat names where one
login is the start of another). Each attacker is a student of their own beside two honest
controls (set 01 and set 13), in one class graded once for the module as root through the
box; each breaker must fail only itself, the controls keep full marks, the report, gradebook
and feedback are written, and nothing stays in the grader's TMPDIR or runs on.
"""

from __future__ import annotations

import json
import os
import pathlib
import shutil
import socket
import stat
import subprocess
import sys
import tempfile

import pytest

from hostile import klass as K
from hostile.klass import SLUG, honest, with_cell

pytestmark = pytest.mark.skipif(K.skip_reason() is not None, reason=K.skip_reason() or "")

MARK = f"lanes-heldout-{os.getpid()}"
SET13 = "13_write_a_scheduler"
#: A patched exporter writing ``TEXT`` as the answers file (the attack is the notebook's own code).
_EXPORT = """
import grading.runner as runner
def export(namespace, path, slug, errors):
    with open(path, "w") as f:
        f.write(TEXT)
runner.export = export
"""
#: Answers nested in objects past the parser's recursion limit, and past the judge's input depth
#: in lists and objects mixed.
DEEP_DICTS = _EXPORT.replace("TEXT", "'{\"answers\": {\"q1_busy_slots\": ' + '{\"a\": ' * 150_000 + '1' + '}' * 150_001 + '}'")
MIXED_990 = _EXPORT.replace("TEXT", "'{\"answers\": {\"q2_measured\": ' + '[{\"a\": ' * 495 + '0' + '}]' * 495 + '}}'")
#: Folders past PATH_MAX (names of 200 characters, 300 deep) in every folder the box may write.
LONG_FOLDERS = """
import os
for top in ("/job", "/tmp", "/var/tmp", "/dev/shm"):
    os.chdir(top)
    for _ in range(300):
        os.mkdir("x" * 200)
        os.chdir("x" * 200)
os.chdir("/job")
"""
#: Many small files (2,000 in each of three folders) instead of a few big ones, and a sparse file past the per-file limit.
SMALL_FILES = """
import os
for top in ("/job", "/tmp", "/dev/shm"):
    for i in range(2_000):
        try:
            open(f"{top}/f{i}", "w").close()
        except OSError:
            break
try:
    with open("/tmp/sparse", "wb") as f:
        f.seek(1 << 30)
        f.write(b"x")
except OSError:
    pass
"""
#: Set 13's answers: policies that spin while being loaded, and in attribute look-up.
SPIN_AT_IMPORT = ["|from lanes.pool.protocol import Decision", "|while True:", "|    pass", "|policy = None"]
SPIN_IN_GETATTR = ["|from lanes.pool.protocol import Decision", "|class P:", "|    def __getattr__(self, name):",
                   "|        while True:", "|            pass", "|policy = P()"]
#: Folder and file names with other escapes than klass.BAD_NAMES: an OSC 8 link, a C1 CSI, a
#: right-to-left override, Latin-1 bytes.
ESCAPED = (b"osc\x1b]8;;http:example.invalid\x1b\\click\x1b]8;;\x1b\\", "c1\u009b2J\u202egpj.".encode(),
           b"caf\xe9")
RAW = (b"\x1b", "\u009b".encode(), "\u202e".encode(), b"\xe9")


def _put(nb, folder: pathlib.Path, name: str = f"{SLUG}.ipynb") -> pathlib.Path:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / name).write_text(json.dumps(nb))  # (valid already: nbformat's validation is slow)
    return folder / name


def _build(d: pathlib.Path) -> pathlib.Path:
    subs = d / "subs"
    master13 = K.SOLUTIONS / SET13 / f"{SET13}.ipynb"
    _put(honest("alice"), subs / "alice")
    _put(honest("carol", master=master13), subs / "carol", master13.name)
    base = honest("mallory")  # (for notebooks that score 0 whoever hands them in)
    _put(with_cell(base, DEEP_DICTS), subs / "deepdicts")
    _put(with_cell(base, MIXED_990), subs / "mixed990")
    _put(with_cell(honest("longfolders"), LONG_FOLDERS), subs / "longfolders")
    _put(with_cell(honest("smallfiles"), SMALL_FILES), subs / "smallfiles")
    spin = with_cell(honest("spinner", master=master13), f"q1_policy = {SPIN_AT_IMPORT!r}", replace_var="q1_policy")
    _put(with_cell(spin, f"q2_policy = {SPIN_IN_GETATTR!r}", replace_var="q2_policy"), subs / "spinner",
         master13.name)
    # a hand-in 60 folders deep with names of 100 characters (past PATH_MAX), an honest
    # notebook at the bottom and one at the top
    top = subs / "deephandin"
    _put(honest("deephandin"), top)
    path = os.fsencode(top / "nest")
    os.mkdir(path)
    dfd = os.open(path, os.O_RDONLY)
    try:
        for _ in range(60):
            os.mkdir("y" * 100, dir_fd=dfd)
            nxt = os.open("y" * 100, os.O_RDONLY, dir_fd=dfd)
            os.close(dfd)
            dfd = nxt
        with os.fdopen(os.open("bottom.ipynb", os.O_WRONLY | os.O_CREAT, 0o644, dir_fd=dfd), "w") as f:
            f.write(json.dumps(base))
    finally:
        os.close(dfd)
    # 400 small files beside one honest notebook: the budget reads 200 of them
    many = subs / "manyfiles"
    _put(honest("manyfiles"), many, f"{SLUG}.ipynb")
    for i in range(400):
        (many / f"n{i:04d}.ipynb").write_text("{}")
    # links: to a root-only file, in a loop, to a classmate's notebook, to the keys' folder
    links = subs / "links"
    _put(honest("links"), links)
    secret = d / "root-only.txt"
    secret.write_text(MARK + "-SECRET")
    os.chmod(secret, 0o600)
    os.symlink(secret, links / "secret.ipynb")
    os.symlink("loop2.ipynb", links / "loop1.ipynb")
    os.symlink("loop1.ipynb", links / "loop2.ipynb")
    os.symlink(subs / "alice" / f"{SLUG}.ipynb", links / "classmate.ipynb")
    os.symlink(K.SOLUTIONS, links / "keys")
    # a FIFO in a sub-folder, a device that never ends (/dev/zero's numbers), a socket
    odd = subs / "oddfiles"
    _put(honest("oddfiles"), odd)
    (odd / "sub").mkdir()
    os.mkfifo(odd / "sub" / "pipe.ipynb")
    os.mknod(odd / "zero.ipynb", 0o644 | stat.S_IFCHR, os.makedev(1, 5))
    sock = socket.socket(socket.AF_UNIX)
    sock.bind(str(odd / "sock.ipynb"))
    sock.close()
    # one huge cell under the size limit; one past it; a notebook nested 10,000 deep in metadata
    huge = subs / "hugecell"
    _put(with_cell(honest("hugecell"), "BIG = '" + "a" * (6 << 20) + "'"), huge)
    (huge / "toobig.ipynb").write_text('{"cells": [], "x": "' + "b" * (17 << 20) + '"}')
    nb = json.loads(json.dumps(honest("hugecell")))
    text = json.dumps(nb)
    (huge / "nested.ipynb").write_text(text[:-1] + ', "z": ' + "[" * 10_000 + "]" * 10_000 + "}")
    # folders and files named with other escapes and encodings than klass.BAD_NAMES
    for i, raw in enumerate(ESCAPED):
        folder = os.path.join(os.fsencode(subs), raw)
        os.mkdir(folder)
        with open(os.path.join(folder, raw + b".ipynb"), "w", encoding="utf-8") as f:
            f.write(json.dumps(base))
    return subs


@pytest.fixture(scope="module")
def run(tmp_path_factory):
    """The class graded once: (grader process, report data, output folder, TMPDIR's entries after)."""
    d = tmp_path_factory.mktemp("heldout")
    subs = _build(d)
    out = d / "out"
    grader_tmp = tempfile.mkdtemp(prefix="lanes-heldout-tmp-")
    os.chmod(grader_tmp, 0o711)
    env = {**os.environ, "LANES_TEST_SECRET": "1", "TMPDIR": grader_tmp}
    try:
        proc = subprocess.run([sys.executable, str(K.GRADE), str(subs), "--json", str(out / "report.json"),
                               "--csv", str(out / "gradebook.csv"), "--feedback", str(out / "feedback"),
                               "--jobs", "3", "--timeout", "120"], capture_output=True, timeout=900, env=env)
        left = os.listdir(grader_tmp)
    finally:
        from grading.sandbox import remove_tree

        remove_tree(subs / "deephandin" / "nest")
        shutil.rmtree(grader_tmp, ignore_errors=True)
    assert proc.returncode in (0, 1), (proc.stdout[-3000:] + proc.stderr[-3000:]).decode(errors="replace")
    return proc, json.loads((out / "report.json").read_text()), out, left


def _of(data, folder: str) -> dict:
    """The submissions under ``subs/<folder>/`` by their path below it."""
    out = {}
    for s in data["submissions"]:
        parts = pathlib.PurePath(s["path"]).parts
        if folder in parts:
            out["/".join(parts[parts.index(folder) + 1:])] = s
    return out


def test_the_controls_keep_full_marks_and_everything_is_written_and_nothing_left(run):
    proc, data, out, left = run
    alice, carol = _of(data, "alice")[f"{SLUG}.ipynb"], _of(data, "carol")[f"{SET13}.ipynb"]
    assert alice["score"] == alice["possible"] == K.POSSIBLE, alice
    assert carol["score"] == carol["possible"] > 0, carol
    assert (out / "gradebook.csv").stat().st_size and len(list((out / "feedback").iterdir())) >= 10
    assert left == [] and K.marked(MARK) == []


def test_deep_answers_in_objects_and_mixed_fail_only_their_notebook(run):
    data = run[1]
    for folder in ("deepdicts", "mixed990"):
        sub = _of(data, folder)[f"{SLUG}.ipynb"]
        assert sub["status"] == "crashed" and sub["score"] == 0, sub
        assert "overwritten or damaged" in sub["messages"][-1], sub


def test_long_folders_and_many_small_files_in_the_box_fail_nothing(run):
    data = run[1]
    for folder in ("longfolders", "smallfiles"):  # the honest answers are exported after them: full marks
        sub = _of(data, folder)[f"{SLUG}.ipynb"]
        assert sub["score"] == K.POSSIBLE, (sub["status"], sub["messages"])


def test_set13_policies_that_spin_while_loading_or_in_attribute_lookup_fail_alone(run):
    sub = _of(run[1], "spinner")[f"{SET13}.ipynb"]
    assert sub["status"] == "graded", sub
    for q in ("q1", "q2"):
        assert sub["questions"][q]["score"] == 0, sub["questions"][q]


def test_a_hand_in_past_path_max_is_refused_in_one_line(run):
    mine = _of(run[1], "deephandin")
    assert mine[f"{SLUG}.ipynb"]["score"] == K.POSSIBLE
    deep = [s for p, s in mine.items() if p != f"{SLUG}.ipynb"]
    assert len(deep) == 1 and deep[0]["status"] == "refused" and deep[0]["score"] == 0, deep
    assert "folders down" in deep[0]["messages"][0] and len(deep[0]["path"]) < 4096, deep


def test_many_small_files_are_read_up_to_the_budget(run):
    mine = _of(run[1], "manyfiles")
    assert len(mine) == 401 and mine[f"{SLUG}.ipynb"]["score"] == K.POSSIBLE
    refused = [s for s in mine.values() if "handed in more than 200 files" in " ".join(s["messages"])]
    assert len(refused) == 201, len(refused)


def test_links_fifos_devices_and_sockets_are_refused_without_reading(run):
    proc, data, out, _ = run
    for folder, names in (("links", ("secret.ipynb", "loop1.ipynb", "loop2.ipynb", "classmate.ipynb")),
                          ("oddfiles", ("sub/pipe.ipynb", "zero.ipynb", "sock.ipynb"))):
        mine = _of(data, folder)
        assert mine[f"{SLUG}.ipynb"]["score"] == K.POSSIBLE
        for name in names:
            assert mine[name]["status"] == "refused" and mine[name]["score"] == 0, mine[name]
        assert not any(p.startswith("keys") for p in mine), sorted(mine)  # a linked folder is not walked
    text = (out / "report.json").read_text() + proc.stdout.decode(errors="replace") + (out / "gradebook.csv").read_text()
    assert MARK + "-SECRET" not in text


def test_a_huge_cell_runs_and_a_too_big_or_too_deep_notebook_is_refused(run):
    mine = _of(run[1], "hugecell")
    assert mine[f"{SLUG}.ipynb"]["score"] == K.POSSIBLE, mine[f"{SLUG}.ipynb"]
    for name in ("toobig.ipynb", "nested.ipynb"):
        assert mine[name]["status"] in ("refused", "not_a_notebook") and mine[name]["score"] == 0, mine[name]


def test_other_escapes_and_encodings_in_names_reach_no_output_raw(run):
    proc, data, out, _ = run
    texts = [proc.stdout, proc.stderr, (out / "report.json").read_bytes(), (out / "gradebook.csv").read_bytes()]
    texts += [p.read_bytes() for p in (out / "feedback").iterdir()]
    texts += [os.fsencode(p.name) for p in (out / "feedback").iterdir()]
    for raw in RAW:
        assert not any(raw in t for t in texts), raw
    escaped = [s for s in data["submissions"] if any(x in s["path"] for x in ("\\x1b", "\\x9b", "\\xe9"))]
    assert len(escaped) == len(ESCAPED), [s["path"] for s in data["submissions"]]


def test_memory_no_limit_counts_is_refused_in_the_box(tmp_path):
    """Without a cgroup, pages of a memfd file or of a detached SysV segment count against no
    limit of the job's (issue 30 part 3): the box refuses both calls, x32's and i386's too."""
    code = ("import ctypes, os\nlibc = ctypes.CDLL(None, use_errno=True)\nout = []\n"
            "try:\n    os.memfd_create('m')\n    out.append('memfd')\nexcept PermissionError:\n    pass\n"
            "if libc.shmget(0x5eed, 1 << 20, 0o1000 | 0o600) >= 0:\n    out.append('shmget')\n"
            "if libc.syscall(0x40000000 + 319, b'x', 0) >= 0:\n    out.append('x32')\n"
            "import multiprocessing.shared_memory as sm\ns = sm.SharedMemory(create=True, size=4096)\n"
            "s.close()\ns.unlink()\nprint('made:', out)\n")
    rc, out, err = K.in_box(code, tmp_path, timeout=60)
    assert rc == 0 and out.decode().strip() == "made: []", out + err
