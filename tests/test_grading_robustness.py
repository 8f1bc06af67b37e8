"""The grader cannot be gamed: hostile notebooks earn 0 while an honest copy earns full marks.

Each hostile notebook is set 01's solution for student "alice" with its answers replaced by
an attack (after the honest cells, so only the attack can earn points). They are graded
together with honest copies in one run of ``scripts/grade.py``; a second run with small
limits checks the time, CPU, memory and process limits. Both runs must leave nothing in the
temp directory and no process behind.
"""

from __future__ import annotations

import atexit
import importlib.util
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

ROOT = pathlib.Path(__file__).resolve().parents[1]
GRADE = ROOT / "scripts" / "grade.py"
SLUG = "01_slots_and_littles_law"
MASTER = ROOT / "solutions" / SLUG / f"{SLUG}.ipynb"
MARK = f"lanes-hostile-{os.getpid()}"

pytestmark = pytest.mark.skipif(
    not sys.platform.startswith("linux") or os.geteuid() != 0,
    reason="the sandbox isolates a notebook only when the grader runs as root on Linux (as in CI)")


def _assign_module():
    spec = importlib.util.spec_from_file_location("assign_exercises", ROOT / "scripts" / "assign_exercises.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


#: The grader's own temp folder: other programs on the machine may use /tmp meanwhile.
GRADER_TMP = tempfile.mkdtemp(prefix="lanes-robustness-tmp-")
os.chmod(GRADER_TMP, 0o711)
atexit.register(shutil.rmtree, GRADER_TMP, True)
ENV = {**os.environ, "LANES_TEST_SECRET": "1", "TMPDIR": GRADER_TMP}


def token(login: str) -> str:
    from lanes.exercises.variants import TEST_SECRET, student_token

    return student_token(login, TEST_SECRET)


def honest(student: str = "alice"):
    return _assign_module().solution_notebook(MASTER, token(student))


def with_cell(nb, source: str, *, replace_var: str | None = None):
    nb = nbformat.from_dict(json.loads(json.dumps(nb)))
    if replace_var:
        for cell in nb.cells:
            if cell.cell_type == "code" and cell.source.lstrip().startswith(f"{replace_var} ="):
                cell.source = source
                return nb
        raise AssertionError(f"no answer cell for {replace_var}")
    nb.cells.append(nbformat.v4.new_code_cell(source))
    return nb


WRONG = "q1_busy_slots = -1.0\nq2_measured = -1.0\nq3_idle_at_peak = -1.0\nq4_choice = 'a'\n"

ATTACKS = {
    "always_equal": """
class AlwaysEqualFloat(float):
    def __eq__(self, other): return True
    def __ne__(self, other): return False
    def __lt__(self, other): return False
    def __gt__(self, other): return False
    def __le__(self, other): return True
    def __ge__(self, other): return True
    def __sub__(self, other): return AlwaysEqualFloat(0.0)
    def __rsub__(self, other): return AlwaysEqualFloat(0.0)
    def __abs__(self): return AlwaysEqualFloat(0.0)
    __hash__ = float.__hash__
class AlwaysEqualInt(int):
    def __eq__(self, other): return True
    __hash__ = int.__hash__
class AlwaysEqualStr(str):
    def __eq__(self, other): return True
    def strip(self, *a): return self
    def lower(self): return self
    __hash__ = str.__hash__
q1_busy_slots = AlwaysEqualFloat(-1.0)
q2_measured = AlwaysEqualInt(-1)
q3_idle_at_peak = AlwaysEqualFloat(-1.0)
q4_choice = AlwaysEqualStr("z")
""",
    "monkeypatch": WRONG + """
import builtins, math, lanes
import lanes.exercises.judge as judge
builtins.abs = lambda x: 0
math.isclose = lambda *a, **k: True
lanes.simulate = lambda *a, **k: None
lanes.__dict__["Scenario"] = lambda *a, **k: None
judge.close = judge.equal = judge.choice = lambda *a, **k: judge.Check(True)
judge.grade_answers = lambda *a, **k: {}
""",
    "otter_scores": WRONG + """
import json, pathlib, sys, types
# What raised otter's in-kernel scores before: the kernel's checker and grader say "full marks".
fake = types.SimpleNamespace(score=7, possible=7, total=7, grade=1.0, passed=True)
otter_execute = types.ModuleType("otter.execute")
otter_execute.Checker = types.SimpleNamespace(_results=fake, results=fake, get_results=lambda: fake)
sys.modules["otter.execute"] = otter_execute
grader = types.SimpleNamespace(check=lambda *a: fake, check_all=lambda: fake, results=fake)
full = {"tests": [{"name": f"q{i}", "score": 2, "possible": 2} for i in range(1, 5)], "score": 7}
for p in ("results.json", "/tmp/results.json", "grading_results.json", "answers.json"):
    try:
        pathlib.Path(p).write_text(json.dumps(full))
    except OSError:
        pass
""",
    "detached": WRONG + """
import subprocess, sys
code = '''
import json, time, pathlib, sys
for _ in range(600):  # lives 150 s unless the grader kills it
    time.sleep(0.25)
    for p in sys.argv[1:]:
        try:
            pathlib.Path(p).write_text(json.dumps({"score": 999, "possible": 7}))
        except OSError:
            pass
'''
subprocess.Popen([sys.executable, "-c", code, "answers.json", REPORT, "/tmp/MARK-detached"],
                 start_new_session=True, stdin=subprocess.DEVNULL,
                 stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
""",
    "read_master": WRONG + """
import json, pathlib, lanes
found = []
for root in {pathlib.Path(lanes.__file__).resolve().parents[1], pathlib.Path(REPO)}:
    master = root / "solutions" / SLUG / (SLUG + ".ipynb")
    try:
        nb = json.loads(master.read_text())
    except OSError:
        continue
    for cell in nb["cells"]:
        src = "".join(cell["source"])
        if cell["cell_type"] == "code" and "TEST CONFIG" not in src and "STUDENT =" not in src:
            exec(src.replace("# SOLUTION", ""), globals())
    found.append(str(master))
""",
    "echo_tests": None,  # built below: an answer cell raising with the text of tests/ and the key
}


def hostile_echo(nb):
    nb = with_cell(nb, WRONG)
    src = ("text = ''\nfor p in [REPO + '/tests/test_grading_robustness.py', "
           "REPO + '/solutions/' + SLUG + '/key.py']:\n    text += open(p).read()\n"
           "q1_busy_slots = float(text)\n")
    return with_cell(nb, src, replace_var="q1_busy_slots")


def _fill(source: str, report: pathlib.Path) -> str:
    return (f"REPO = {str(ROOT)!r}\nREPORT = {str(report)!r}\nSLUG = {SLUG!r}\n"
            + source.replace("MARK", MARK))


def _grade(paths, report, *extra, timeout=300):
    before = _temp_entries()
    proc = subprocess.run([sys.executable, str(GRADE), *map(str, paths), "--json", str(report), "--quiet", *extra],
                          capture_output=True, text=True, timeout=timeout, env=ENV)
    assert proc.returncode in (0, 1), proc.stdout[-2000:] + proc.stderr[-2000:]
    data = json.loads(report.read_text())
    return proc, data, before


def _temp_entries() -> set[str]:
    return set(os.listdir(GRADER_TMP)) | {e for e in os.listdir(tempfile.gettempdir()) if MARK in e}


def _marked_pids() -> dict[int, str]:
    """Processes whose command line carries this test run's mark (what the attacks start)."""
    found = {}
    for d in pathlib.Path("/proc").iterdir():
        if d.name.isdigit():
            try:
                cmd = (d / "cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
                state = (d / "stat").read_text().rsplit(")", 1)[1].split()[0]
            except (OSError, IndexError):
                continue
            if MARK in cmd and int(d.name) != os.getpid() and state != "Z":
                found[int(d.name)] = cmd
    return found


def _marked_processes() -> list[str]:
    return list(_marked_pids().values())


def _by_name(data) -> dict:
    return {pathlib.Path(s["path"]).name: s for s in data["submissions"]}


@pytest.fixture(scope="module")
def attack_run(tmp_path_factory):
    d = tmp_path_factory.mktemp("attacks")
    report = d / "report.json"
    subs = d / "subs"
    (subs / "renamed").mkdir(parents=True)
    base = honest("alice")
    nbformat.write(base, subs / "honest.ipynb")
    nbformat.write(base, subs / "renamed" / "mine-Copy1.ipynb")
    for name, src in ATTACKS.items():
        nb = hostile_echo(base) if src is None else with_cell(base, src)
        for cell in nb.cells:  # give every attack the repository path and the report path
            if cell.cell_type == "code" and ("REPO" in cell.source or "REPORT" in cell.source or "MARK" in cell.source):
                cell.source = _fill(cell.source, report)
        nbformat.write(nb, subs / f"attack_{name}.ipynb")
    name_error = with_cell(base, "q4_choice = d", replace_var="q4_choice")
    nbformat.write(name_error, subs / "name_error.ipynb")
    escapes = with_cell(base, "def boom():\n    raise ValueError('\\x1b[2J\\x1b]0;pwned\\x07 cleared')\n"
                              "q4_choice = boom()", replace_var="q4_choice")
    nbformat.write(escapes, subs / "escapes.ipynb")
    network = with_cell(base, "import socket\nsocket.create_connection(('1.1.1.1', 53), timeout=3)")
    nbformat.write(network, subs / "network.ipynb")
    proc, data, before = _grade([subs], report, "--student", "alice")
    yield proc, data, before, report
    for pid in _marked_pids():  # only if the grader failed to: leave no process behind
        os.kill(pid, 9)


def test_honest_copies_earn_full_marks_in_the_same_run(attack_run):
    _, data, _, _ = attack_run
    subs = _by_name(data)
    for name in ("honest.ipynb", "mine-Copy1.ipynb"):
        assert subs[name]["score"] == subs[name]["possible"] == 7, subs[name]


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
    assert "should be one letter" in msgs and "subclass of str" in msgs


def test_echoed_files_were_unreachable_and_nothing_secret_is_reported(attack_run):
    proc, data, _, report = attack_run
    sub = _by_name(data)["attack_echo_tests.ipynb"]
    q1 = " ".join(sub["questions"]["q1"]["messages"])
    assert "raised FileNotFoundError" in q1
    text = report.read_text() + proc.stdout
    key = (ROOT / "solutions" / SLUG / "key.py").read_text()
    for secret in ("lru_cache", "def q1(a, v)", "_measured(", "ATTACKS = {"):
        assert secret in key or secret in pathlib.Path(__file__).read_text()
        assert secret not in text


def test_a_name_error_in_an_answer_cell_is_reported_as_such(attack_run):
    sub = _by_name(attack_run[1])["name_error.ipynb"]
    assert sub["score"] == 6
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
    _, _, before, _ = attack_run
    assert _temp_entries() <= before


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
    _, data, before = _grade([tmp_path], report, "--student", "bob", "--timeout", "30", "--cpu-limit", "3",
                             "--memory-mb", "1536", "--max-procs", "48", "--jobs", "5")
    assert time.monotonic() - t0 < 120
    subs = _by_name(data)
    assert subs["honest.ipynb"]["score"] == 7
    spin = subs["spin.ipynb"]
    assert spin["score"] == 0
    # the CPU limit stops it; only on a machine so loaded that 3 s of CPU take over 30 s does the wall clock
    assert "CPU time" in spin["messages"][-1] or spin["status"] == "timeout"
    assert subs["sleep.ipynb"]["status"] == "timeout" and subs["sleep.ipynb"]["score"] == 0
    assert subs["memory.ipynb"]["score"] == 7  # the hog's cell failed; the answers still count
    assert any("MemoryError" in m for m in subs["memory.ipynb"]["messages"])
    assert subs["procs.ipynb"]["score"] == 7
    assert any("BlockingIOError" in m or "Resource temporarily unavailable" in m
               for m in subs["procs.ipynb"]["messages"])
    assert _marked_processes() == []
    assert _temp_entries() <= before


def test_without_keys_the_grader_says_so_and_forms_only_gives_practice_feedback(tmp_path):
    subs = tmp_path / "subs"
    subs.mkdir()
    nbformat.write(honest("carol"), subs / "honest.ipynb")
    shutil.copy(ROOT / "exercises" / SLUG / f"{SLUG}.ipynb", subs / "untouched.ipynb")
    proc = subprocess.run([sys.executable, str(GRADE), str(subs), "--json", str(tmp_path / "r.json"), "--quiet",
                           "--solutions", str(tmp_path / "no_keys")], capture_output=True, text=True, timeout=120,
                          env=ENV)
    data = json.loads((tmp_path / "r.json").read_text())
    assert {s["status"] for s in data["submissions"]} == {"no_key"}, proc.stdout
    assert any("instructor's checkout" in m for m in data["submissions"][0]["messages"])
    proc = subprocess.run([sys.executable, str(GRADE), str(subs), "--json", str(tmp_path / "f.json"), "--quiet",
                           "--forms-only"], capture_output=True, text=True, timeout=300)
    assert proc.returncode == 1, proc.stdout  # the untouched notebook has form problems
    forms = _by_name(json.loads((tmp_path / "f.json").read_text()))
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
    assert sub["score"] == 7  # its answers still count
    assert any("raised OSError" in m and "unreachable" in m for m in sub["messages"]), sub["messages"]
