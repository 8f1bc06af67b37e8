"""The grader cannot be gamed: hostile notebooks earn 0 while an honest copy earns full marks.

Each hostile notebook (``tests/hostile/klass.py``: ``ATTACKS`` and a few more) is set 01's
solution for the roster student ``attacker`` with an attack added after the honest cells
(or one answer cell replaced), so only the attack can earn points. They are graded in the
one class run of the session (the ``graded_class`` fixture), next to two honest copies;
a second run with small limits checks the time, CPU, memory and process limits. Both runs
must leave nothing in the temp directory and no process behind.
"""

from __future__ import annotations

import atexit
import json
import os
import shutil
import pathlib
import subprocess
import sys
import tempfile
import time

import nbformat
import pytest

from hostile import klass as K
from hostile.klass import ATTACKS, ATTACKER, MARK, SLUG, honest, with_cell

ROOT = K.ROOT
GRADE = K.GRADE

pytestmark = pytest.mark.skipif(
    not sys.platform.startswith("linux") or os.geteuid() != 0,
    reason="the sandbox isolates a notebook only when the grader runs as root on Linux (as in CI)")

#: The grader's own temp folder for this file's runs: other programs on the machine may use /tmp meanwhile.
GRADER_TMP = tempfile.mkdtemp(prefix="lanes-robustness-tmp-")
os.chmod(GRADER_TMP, 0o711)
atexit.register(shutil.rmtree, GRADER_TMP, True)
ENV = {**os.environ, "LANES_TEST_SECRET": "1", "TMPDIR": GRADER_TMP}


def _grade(paths, report, *extra, timeout=300):
    before = _temp_entries()
    proc = subprocess.run([sys.executable, str(GRADE), *map(str, paths), "--json", str(report), "--quiet", *extra],
                          capture_output=True, text=True, timeout=timeout, env=ENV)
    assert proc.returncode in (0, 1), proc.stdout[-2000:] + proc.stderr[-2000:]
    data = json.loads(report.read_text())
    return proc, data, before


def _temp_entries() -> set[str]:
    return set(os.listdir(GRADER_TMP)) | {e for e in os.listdir(tempfile.gettempdir()) if MARK in e}


def _marked_processes() -> list[str]:
    return K.marked()


def _by_name(data, login: str | None = ATTACKER) -> dict:
    """The submissions (of ``login``, unless None) by file name."""
    return {pathlib.Path(s["path"]).name: s for s in data["submissions"] if login is None or s["login"] == login}


@pytest.fixture
def attack_run(graded_class):
    """(grader process, report data, what the grader's temp folder held after, the report path)."""
    new = graded_class["run"][1]
    return graded_class["proc"], graded_class["data"], new, graded_class["report"]


def test_honest_copies_earn_full_marks_in_the_same_run(attack_run):
    _, data, _, _ = attack_run
    for sub in (_by_name(data)["mine-Copy1.ipynb"], K.sub(data, "alice")):  # renamed, in a folder; alice's own
        assert sub["score"] == sub["possible"] == K.POSSIBLE, sub


@pytest.mark.parametrize("attack", sorted(ATTACKS))
def test_every_attack_earns_nothing(attack_run, attack):
    _, data, _, _ = attack_run
    sub = _by_name(data)[f"attack_{attack}.ipynb"]
    # the detached writer may damage its own answers file before it is killed: 0 either way
    assert sub["status"] in (("graded", "crashed") if attack == "detached" else ("graded",))
    assert sub["score"] == 0, sub


def test_always_equal_answers_are_refused_with_the_expected_type(attack_run):
    sub = _by_name(attack_run[1])["attack_always_equal.ipynb"]
    msgs = " ".join(m for q in sub["questions"].values() for m in q["messages"])
    assert "should be a number, not AlwaysEqualFloat, a subclass of float" in msgs
    assert "the label of one option" in msgs and "subclass of str" in msgs


def test_echoed_files_were_unreachable_and_nothing_secret_is_reported(attack_run):
    proc, data, _, report = attack_run
    sub = _by_name(data)["attack_echo_tests.ipynb"]
    q1 = " ".join(sub["questions"]["q1"]["messages"])
    assert "raised FileNotFoundError" in q1
    text = report.read_text() + proc.stdout
    echoed = "".join((ROOT / p).read_text() for p in K.ECHOED)
    for secret in ("lru_cache", "def q1(a, v)", "_measured(", "ATTACKS = {"):
        assert secret in echoed
        assert secret not in text


def test_a_name_error_in_an_answer_cell_is_reported_as_such(attack_run):
    sub = _by_name(attack_run[1])["name_error.ipynb"]
    assert sub["score"] == K.POSSIBLE - K.Q4_POINTS
    (msg,) = sub["questions"]["q4"]["messages"]
    assert "raised NameError" in msg and "'d'" in msg
    assert "not answered" not in msg


def test_a_detached_process_is_gone_and_cannot_rewrite_the_report(attack_run):
    _, data, _, report = attack_run
    time.sleep(1.5)  # the detached writer would have rewritten the report by now
    assert json.loads(report.read_text()) == data
    assert _marked_processes() == []
    assert not any(MARK in e for e in os.listdir(tempfile.gettempdir()))


def test_nothing_is_left_in_the_temp_dir(attack_run):
    _, _, new, _ = attack_run
    assert new == {}  # nothing of the run's in the grader's TMPDIR or in the scratch folders


def test_limits_hold(tmp_path):
    report = tmp_path / "report.json"
    base = honest("bob")
    nbformat.write(base, tmp_path / "honest.ipynb")
    nbformat.write(with_cell(base, "while True:\n    pass"), tmp_path / "spin.ipynb")
    nbformat.write(with_cell(base, "import time\ntime.sleep(10_000)"), tmp_path / "sleep.ipynb")
    nbformat.write(with_cell(base, "hog = bytearray(3 << 30)"), tmp_path / "memory.ipynb")
    nbformat.write(with_cell(base, f"import subprocess\nprocs = [subprocess.Popen(['sleep', '31.5', {MARK!r}])"
                                   " for _ in range(200)]"), tmp_path / "procs.ipynb")
    t0 = time.monotonic()
    _, data, before = _grade([tmp_path], report, "--student", "bob", "--timeout", "10", "--cpu-limit", "3",
                             "--memory-mb", "1536", "--max-procs", "48", "--jobs", "5")
    assert time.monotonic() - t0 < 120
    subs = _by_name(data, None)
    assert subs["honest.ipynb"]["score"] == K.POSSIBLE, subs["honest.ipynb"]
    spin = subs["spin.ipynb"]
    assert spin["score"] == 0
    # the CPU limit stops it; only on a machine so loaded that 3 s of CPU take over 10 s does the wall clock
    assert "CPU time" in spin["messages"][-1] or spin["status"] == "timeout"
    assert subs["sleep.ipynb"]["status"] == "timeout" and subs["sleep.ipynb"]["score"] == 0
    assert subs["memory.ipynb"]["score"] == K.POSSIBLE  # the hog's cell failed; the answers still count
    assert any("MemoryError" in m for m in subs["memory.ipynb"]["messages"])
    assert subs["procs.ipynb"]["score"] == K.POSSIBLE
    assert any("BlockingIOError" in m or "Resource temporarily unavailable" in m
               for m in subs["procs.ipynb"]["messages"])
    assert _marked_processes() == []
    assert _temp_entries() <= before


#: Left behind by a notebook in its student's box: a process, started in a session of its own, that
#: keeps emptying every answers file of the box (the notebooks after this one's included).
SPOILER = ("import subprocess, sys\n"
           "code = 'import glob, time\\nfor _ in range(6000):\\n    for p in glob.glob(\"/job/*.json\"):\\n"
           "        open(p, \"w\").close()\\n    time.sleep(0.01)\\n'\n"
           f"subprocess.Popen([sys.executable, '-c', code, {MARK!r}], start_new_session=True)\n")


def test_a_students_notebooks_share_a_box_but_fail_only_themselves(tmp_path):
    # step 1 runs a student's notebooks one after another in one box (a fork each); the latest
    # copies run first, so the three attacks run before the honest copy, "a_honest"
    base = honest("bob")
    nbformat.write(base, tmp_path / "a_honest.ipynb")
    nbformat.write(with_cell(base, SPOILER), tmp_path / "b_spoils.ipynb")
    nbformat.write(with_cell(base, "import os, signal, time\nos.kill(os.getppid(), signal.SIGKILL)\ntime.sleep(60)"),
                   tmp_path / "c_kills_the_box.ipynb")
    forge = "import os\nopen(f'/proc/{os.getppid()}/fd/1', 'w').write('1 0\\n2 0\\n3 0\\n4 0\\n')"
    nbformat.write(with_cell(base, forge), tmp_path / "d_forges_the_lines.ipynb")
    _, data, before = _grade([tmp_path], tmp_path / "report.json", "--student", "bob")
    subs = _by_name(data, None)
    for name in ("a_honest.ipynb", "b_spoils.ipynb"):  # the spoiler's process went with its notebook
        assert subs[name]["score"] == K.POSSIBLE, subs[name]
    kills = subs["c_kills_the_box.ipynb"]
    assert kills["status"] == "crashed" and "stopped before its answers could be read" in kills["messages"][-1]
    forged = subs["d_forges_the_lines.ipynb"]  # the box's first process is out of its reach
    assert forged["score"] == K.POSSIBLE and any("PermissionError" in m for m in forged["messages"]), forged
    assert _marked_processes() == []
    assert _temp_entries() <= before


def test_without_keys_the_grader_says_so_and_forms_only_gives_practice_feedback(tmp_path):
    subs = tmp_path / "subs"
    subs.mkdir()
    nbformat.write(honest("carol"), subs / "honest.ipynb")
    shutil.copy(ROOT / "exercises" / SLUG / f"set_{SLUG}.ipynb", subs / "untouched.ipynb")
    proc = subprocess.run([sys.executable, str(GRADE), str(subs), "--json", str(tmp_path / "r.json"), "--quiet",
                           "--solutions", str(tmp_path / "no_keys")], capture_output=True, text=True, timeout=120,
                          env=ENV)
    data = json.loads((tmp_path / "r.json").read_text())
    assert {s["status"] for s in data["submissions"]} == {"no_key"}, proc.stdout
    assert any("instructor's checkout" in m for m in data["submissions"][0]["messages"])
    proc = subprocess.run([sys.executable, str(GRADE), str(subs), "--json", str(tmp_path / "f.json"), "--quiet",
                           "--forms-only"], capture_output=True, text=True, timeout=300)
    assert proc.returncode == 1, proc.stdout  # the untouched notebook has form problems
    forms = _by_name(json.loads((tmp_path / "f.json").read_text()), None)
    assert all(q["form_ok"] for q in forms["honest.ipynb"]["questions"].values())
    assert not any(q["form_ok"] for q in forms["untouched.ipynb"]["questions"].values())
    assert "not answered yet" in forms["untouched.ipynb"]["questions"]["q1"]["messages"][0]
    assert "score" not in forms["honest.ipynb"]  # practice feedback awards no points


def test_student_text_reaches_the_report_without_control_characters(attack_run):
    proc, data, _, report = attack_run
    (msg,) = _by_name(data)["escapes.ipynb"]["questions"]["q4"]["messages"]
    assert "raised ValueError" in msg and "cleared" in msg
    assert "\x1b" not in proc.stdout + proc.stderr + report.read_text() and "\x07" not in msg


def test_the_notebook_has_no_network(attack_run):
    sub = _by_name(attack_run[1])["network.ipynb"]
    assert sub["score"] == K.POSSIBLE  # its answers still count
    assert any("raised OSError" in m and "unreachable" in m for m in sub["messages"]), sub["messages"]


def test_class_breakers_fail_only_themselves(attack_run, graded_class):
    proc, data, new, report = attack_run
    subs = _by_name(data)
    for name in ("deep_answers", "deep_judge_input"):  # their answers cannot be read: 0, for them alone
        s = subs[f"breaker_{name}.ipynb"]
        assert s["status"] == "crashed" and s["score"] == 0, s
    s = subs["breaker_fills_the_box.ipynb"]  # the box took it: its answers still count
    assert s["status"] == "graded" and s["score"] == K.POSSIBLE, s
    # the controls in the same run: the honest copies, every honest student's every set
    assert subs["mine-Copy1.ipynb"]["score"] == K.POSSIBLE
    for s in data["submissions"]:
        if s["login"] in K.HONEST:
            assert s["status"] == "graded" and s["score"] == s["possible"] > 0, s
    # a hand-in nested 1,000 folders deep is searched 16 folders down, not followed to the bottom
    assert not any("bottom.ipynb" in s["path"] for s in data["submissions"])
    # report, gradebook and feedback are all written, and the grader's TMPDIR is left empty
    assert report.is_file() and graded_class["gradebook"].is_file() and new == {}
    assert (graded_class["out"] / "feedback" / f"{ATTACKER}.md").is_file()


def test_file_names_are_escaped_in_every_output(attack_run, graded_class):
    proc, data, _, report = attack_run
    feedback = (graded_class["out"] / "feedback" / f"{ATTACKER}.md").read_text(encoding="utf-8")
    outputs = {"stdout": proc.stdout, "stderr": proc.stderr, "report": report.read_text(encoding="utf-8"),
               "feedback": feedback}
    for where, text in outputs.items():
        assert "\x1b" not in text and "\x07" not in text, where
        assert not any(line.startswith("TOTAL 999") for line in text.splitlines()), where
    escaped = [r"\x1b[2J\x1b[HTOTAL 999 of 999 (100.0%): PASS\x0a\x07.ipynb", r"\xff\xfe-not-utf8.ipynb"]
    assert [n.encode().decode("unicode_escape").encode("latin-1") for n in escaped] == list(K.BAD_NAMES)
    for name, status in zip(escaped, ("graded", "not_a_notebook")):  # named escaped everywhere
        (s,) = [s for s in data["submissions"] if s["path"].endswith("/" + name)]
        assert s["status"] == status and s["score"] == (K.POSSIBLE if status == "graded" else 0), s
        for where in ("stdout", "report", "feedback"):
            assert name in outputs[where].replace("\\\\", "\\"), where

