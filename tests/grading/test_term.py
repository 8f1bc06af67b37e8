"""An instructor's term: the roster is the class, real LMS exports, time, regrades and re-runs.

Cheap: the submissions are graded with an empty answer-key folder, so every notebook is
identified, timed, ordered and reported but none is run (status ``no_key``); what the box
and the judge do is tested in test_grading_class.py. The LMS exports are small real-shaped
samples in ``tests/lms_samples/``.
"""

from __future__ import annotations

import csv
import json
import os
import pathlib
import re
import shutil
import subprocess
import sys

import pytest

from grading import classroom, sandbox
from lanes.exercises import get_set
from grading.deadlines import Deadlines
from grading.gradebook import merge, report, write_feedback, write_gradebook
from grading.lms import Exports, copy_number
from grading.roster import load_roster

ROOT = pathlib.Path(__file__).resolve().parents[2]
SAMPLES = ROOT / "tests" / "lms_samples"
GRADE = ROOT / "scripts" / "grade.py"
SLUG = "01_slots_and_littles_law"
SLUG2 = "02_why_priority_fails"
P1, P2 = get_set(SLUG).possible, get_set(SLUG2).possible


def _grade(paths, roster=None, tmp=None, **kw):
    keys = pathlib.Path(tmp) / "no-keys"
    keys.mkdir(exist_ok=True)
    subs, _ = classroom.grade([pathlib.Path(p) for p in paths], solutions=keys, limits=sandbox.Limits(),
                              roster=roster, progress=lambda *a: None, **kw)
    return subs


def _by_file(subs, base):
    return {str(pathlib.Path(s.path).relative_to(base)): s for s in subs}


# --------------------------------------------------------------------------- LMS exports


def test_canvas_names_and_user_ids_with_late_flags_and_upload_order(tmp_path):
    roster = load_roster(SAMPLES / "canvas" / "roster.csv")  # Canvas's gradebook export, "Student" is the name
    assert roster.names["ines09"] == "Ortega, Inés" and roster.problems == ()  # "Points Possible" skipped
    subs = _by_file(_grade([SAMPLES / "canvas"], roster, tmp_path), SAMPLES / "canvas")
    who = {name: (s.login, s.counted, s.late) for name, s in subs.items()}
    assert who == {
        f"ortegaines_4411_90001_{SLUG}.ipynb": ("ines09", False, False),
        f"ortegaines_LATE_4411_90007_{SLUG}-1.ipynb": ("ines09", True, True),  # the later upload, flagged late
        f"smithjo_4412_90002_{SLUG}.ipynb": ("jo_smith", True, False),
        f"smithjo_4413_90003_{SLUG}.ipynb": ("jo", True, False),  # same name, told apart by user id
    }
    rep = report(subs.values(), pass_mark=0.5, sandbox_line="-", roster=roster.names)
    assert rep["students"] == 4 and rep["class"]["ken"]["sets"][SLUG]["status"] == "not handed in"


def test_a_notebook_whose_metadata_names_its_set_outranks_a_scratch_file_of_the_same_attempt(tmp_path):
    """A scratch Untitled.ipynb uploaded later in the same attempt, matched by the folder only, does not count."""
    folder = tmp_path / "canvas" / SLUG
    folder.mkdir(parents=True)
    good = SAMPLES / "canvas" / f"smithjo_4412_90002_{SLUG}.ipynb"
    shutil.copy(good, folder / f"ortegaines_4411_90001_{SLUG}.ipynb")
    scratch = json.loads(good.read_text())
    scratch["metadata"].pop("lanes")
    (folder / "ortegaines_4411_90002_Untitled.ipynb").write_text(json.dumps(scratch))
    subs = _by_file(_grade([tmp_path / "canvas"], load_roster(SAMPLES / "canvas" / "roster.csv"), tmp_path), folder)
    assert {k: (s.login, s.assignment, s.matched, s.counted) for k, s in subs.items()} == {
        f"ortegaines_4411_90001_{SLUG}.ipynb": ("ines09", SLUG, "metadata", True),
        "ortegaines_4411_90002_Untitled.ipynb": ("ines09", SLUG, "folder", False)}


def test_a_canvas_late_flag_under_a_grace_is_named_in_a_warning(tmp_path):
    deadlines = Deadlines.parse(["2026-10-02T23:00Z"], grace_min=15, late="penalty:0.1")
    subs = _by_file(_grade([SAMPLES / "canvas"], load_roster(SAMPLES / "canvas" / "roster.csv"), tmp_path,
                           deadlines=deadlines), SAMPLES / "canvas")
    late = subs[f"ortegaines_LATE_4411_90007_{SLUG}-1.ipynb"]
    assert late.late and any("--grace 15 min cannot be applied" in m for m in late.messages)
    assert not any("--grace" in m for s in subs.values() if not s.late for m in s.messages)


def test_canvas_names_without_a_roster_are_not_phantom_students(tmp_path):
    subs = _grade([SAMPLES / "canvas"], None, tmp_path)
    assert len(subs) == 4 and all(s.login is None and not s.counted and "Canvas" in s.messages[0] for s in subs)


def test_gradescope_folders_read_their_metadata_for_identity_and_time(tmp_path):
    base = SAMPLES / "gradescope" / "submissions"
    roster = load_roster(SAMPLES / "gradescope" / "roster.csv")  # keyed on e-mail: logins are local parts
    assert sorted(roster.names) == ["ines.ortega", "jo.smith", "ken"]
    deadlines = Deadlines.parse([f"{SLUG}=2026-10-02T22:00Z"], sets={SLUG})
    subs = _by_file(_grade([base], roster, tmp_path, deadlines=deadlines), base)
    got = {name.split("/")[0]: (s.login, s.counted, s.late, s.submitted) for name, s in subs.items()}
    assert got == {"submission_10001": ("ines.ortega", True, False, "2026-10-02T21:58:10+00:00"),
                   "submission_10002": ("jo.smith", True, True, "2026-10-03T07:15:00+00:00"),
                   "submission_10003": ("ines.ortega", False, False, "2026-10-01T18:00:00+00:00")}
    assert subs[f"submission_10002/{SLUG}.ipynb"].late_s == pytest.approx(9.25 * 3600)


def test_moodle_folders_named_after_people_in_nfd_match_a_cp1252_semicolon_roster(tmp_path):
    base = SAMPLES / "moodle" / "submissions"
    assert any(len(p.name) != len(p.name.encode("utf-8").decode()) or "e\u0301" in p.name for p in base.iterdir())
    roster = load_roster(SAMPLES / "moodle" / "roster.csv")
    assert roster.names == {"ines09": "Inés Ortega", "jo_smith": "Jo Smith", "ken": "Ken Nakamura"}
    subs = _grade([base], roster, tmp_path)
    assert sorted((s.login, s.counted) for s in subs) == [("ines09", True), ("jo_smith", True)]


def test_github_classroom_repositories_match_the_longest_login(tmp_path):
    roster = load_roster(SAMPLES / "classroom" / "roster.csv")  # github_username, and "smith" is a login too
    subs = _by_file(_grade([SAMPLES / "classroom" / "submissions"], roster, tmp_path), SAMPLES / "classroom" / "submissions")
    assert {k.split("/")[0]: s.login for k, s in subs.items()} == {"01-slots-ines09": "ines09",
                                                                   "01-slots-jo-smith": "jo-smith"}
    ex = Exports(roster, {SLUG})  # a wrapper folder that names nobody: the repository inside decides
    assert ex.origin(tmp_path / "cs101" / "01-slots-ines09" / "nb" / "x.ipynb", tmp_path).login == "ines09"


def _nb(path, text="{}"):
    path.parent.mkdir(parents=True, exist_ok=True)
    shutil.copy(SAMPLES / "canvas" / f"smithjo_4412_90002_{SLUG}.ipynb", path)
    return path


def test_identity_comes_from_the_lms_structure_never_from_what_a_submission_holds(tmp_path):
    """A repository is its owner's, whatever folders or metadata it holds; a second account
    <anything>-<username> is nobody's; a Gradescope submission's own metadata file is content."""
    (tmp_path / "r.csv").write_text("login,name,github_username,email\nines09,Inés Ortega,ines-o,i@u.example\n"
                                    "jo_smith,Jo Smith,jo-smith,j@u.example\nmallory,Mal,mallory,m@u.example\n")
    roster = load_roster(tmp_path / "r.csv")
    gh = tmp_path / "classroom"
    _nb(gh / "01-slots-ines-o" / f"{SLUG}.ipynb")
    _nb(gh / "01-slots-jo-smith" / f"{SLUG}.ipynb")
    for inner in ("ines09", "i@u.example", "Inés Ortega", "01-slots-ines-o", "submission_7"):
        _nb(gh / "01-slots-mallory" / inner / f"{SLUG}.ipynb")
    (gh / "01-slots-mallory" / "submission_metadata.yml").write_text(
        "submission_7:\n  :submitters:\n  - :email: i@u.example\n  :created_at: 2026-10-01 10:00:00 +00:00\n")
    _nb(gh / "01-slots-x-ines-o" / f"{SLUG}.ipynb")  # a second account named <anything>-<her username>
    subs = _grade([gh], roster, tmp_path)
    who = {str(pathlib.Path(s.path).relative_to(gh)): s.login for s in subs}
    assert [k for k, v in who.items() if v == "ines09"] == [f"01-slots-ines-o/{SLUG}.ipynb"]
    assert sum(v == "mallory" for v in who.values()) == 5 and who[f"01-slots-jo-smith/{SLUG}.ipynb"] == "jo_smith"
    assert who[f"01-slots-x-ines-o/{SLUG}.ipynb"] is None
    assert all(s.submitted is None for s in subs)  # no time from a file a student wrote
    ex = Exports(roster, {SLUG})  # under a wrapper folder, the same
    assert ex.origin(gh / "01-slots-mallory" / "ines09" / "x.ipynb", tmp_path).login == "mallory"
    gs = tmp_path / "gradescope"
    _nb(gs / "submission_1" / "submission_2" / f"{SLUG}.ipynb")
    (gs / "submission_metadata.yml").write_text("submission_1:\n  :submitters:\n  - :email: m@u.example\n"
                                                "  :created_at: 2026-10-02 10:00:00 +00:00\n")
    (gs / "submission_1" / "submission_metadata.yml").write_text(
        "submission_2:\n  :submitters:\n  - :email: i@u.example\n  :created_at: 2026-10-01 10:00:00 +00:00\n")
    (s,) = _grade([gs], roster, tmp_path)
    assert (s.login, s.submitted) == ("mallory", "2026-10-02T10:00:00+00:00")


def test_rosters_bind_every_lms_identity_and_skip_staff(tmp_path):
    (tmp_path / "gs.csv").write_text("Name,Email,SID,Role\nInés Ortega,i@u.example,17,Student\n"
                                     "Pat Prof,p@u.example,,Instructor\nTina TA,t@u.example,,TA\n")
    roster = load_roster(tmp_path / "gs.csv")
    assert list(roster.names) == ["i"] and len(roster.problems) == 1 and "Instructor, TA" in roster.problems[0]
    (tmp_path / "cr.csv").write_text("identifier,github_username,github_id,name\nines@u.example,ines-o,1,Inés\n"
                                     "s1234,,,Unlinked Student\n")
    roster = load_roster(tmp_path / "cr.csv")  # a Classroom roster: a student with no linked account stays
    assert sorted(roster.names) == ["ines-o", "s1234"] and roster.github == {"ines-o": "ines-o"}
    canvas = load_roster(SAMPLES / "canvas" / "roster.csv")  # "Ortega, Inés" is "Inés Ortega"
    assert Exports(canvas, {SLUG})._by_name("Inés  Ortega")[0] == "ines09"


def test_a_clone_or_unzip_picks_the_same_copies(tmp_path):
    """File times reversed (the oldest copy made newest) change nothing."""
    for name in ("canvas", "gradescope"):
        first = {pathlib.Path(s.path).relative_to(SAMPLES): s.counted for s in _grade([SAMPLES / name], load_roster(
            SAMPLES / name / "roster.csv"), tmp_path)}
        clone = tmp_path / "clone"
        shutil.copytree(SAMPLES, clone)
        files = sorted(p for p in (clone / name).rglob("*.ipynb"))
        for i, p in enumerate(files):
            os.utime(p, ns=(10**18 - i * 10**9, 10**18 - i * 10**9))
        again = {pathlib.Path(s.path).relative_to(clone): s.counted for s in _grade([clone / name], load_roster(
            clone / name / "roster.csv"), tmp_path)}
        assert again == first and sum(first.values()) == {"canvas": 3, "gradescope": 2}[name]
        shutil.rmtree(clone)


def test_flat_names_match_the_longest_roster_login_and_never_guess_without_one(tmp_path):
    (tmp_path / "r.csv").write_text("login\njo\njo_smith\n")
    roster = load_roster(tmp_path / "r.csv")
    ex = Exports(roster, {SLUG})
    assert ex.origin(tmp_path / f"jo_smith_{SLUG}.ipynb", tmp_path).login == "jo_smith"
    assert ex.origin(tmp_path / f"jo_{SLUG}.ipynb", tmp_path).login == "jo"
    assert ex.origin(tmp_path / "joanna_x.ipynb", tmp_path).login is None
    bare = Exports(None, {SLUG})
    assert bare.origin(tmp_path / f"jo_smith_{SLUG}-Copy1.ipynb", tmp_path).login == "jo_smith"
    o = bare.origin(tmp_path / "jo_smith_final.ipynb", tmp_path)
    assert o.login is None and "without a roster" in o.why


def test_copy_numbers_from_names():
    assert [copy_number(s) for s in ("x", "x-Copy1", "x (2)", "x copy", "x-3", "x-Copy2 (1)", "01_a_b")] == \
        [0, 1, 2, 1, 3, 2, 0]


# --------------------------------------------------------------------------- rosters


@pytest.mark.parametrize("encoding, sep, bom", [("utf-8", ",", False), ("utf-8", ",", True), ("cp1252", ";", False),
                                               ("utf-8", "\t", False)])
def test_rosters_in_the_encodings_and_separators_spreadsheets_write(tmp_path, encoding, sep, bom):
    text = sep.join(["Login", "Full Name", "E-mail"]) + "\r\n" + sep.join(["ines09", "Inés Ortega", "i@u.example"]) + "\r\n"
    (tmp_path / "r.csv").write_bytes(("\ufeff" if bom else "").encode() + text.encode(encoding))
    roster = load_roster(tmp_path / "r.csv")
    assert roster.names == {"ines09": "Inés Ortega"} and roster.lookup("I@U.example") == "ines09"


def test_bad_rows_are_named_by_their_line_and_the_rest_stands(tmp_path):
    (tmp_path / "r.csv").write_text('login,name\nalice,"Alice\nA"\nbob,Bob,\n,Nobody\nal ice,X\nalice,Again\n'
                                    "carol@uni.example,Carol\n")
    roster = load_roster(tmp_path / "r.csv")
    assert sorted(roster.names) == ["alice", "bob", "carol"]  # a trailing comma is no error; e-mail gives carol
    assert [p.split(": ", 1)[0].rsplit(" ", 2)[-2:] for p in roster.problems] == [["line", "5"], ["line", "6"],
                                                                                 ["line", "7"]]
    assert "no login" in roster.problems[0] and "already" in roster.problems[2]


def test_a_roster_without_a_login_column_says_what_it_has(tmp_path):
    (tmp_path / "r.csv").write_text("Section,Team\nA,1\n")
    with pytest.raises(ValueError, match="needs a column 'login'.*has 'section', 'team'"):
        load_roster(tmp_path / "r.csv")


# --------------------------------------------------------------------------- the roster is the class


def _sub(login, slug, score, path=None, **kw):
    s = classroom.Submission(path=path or f"{login}/{slug}.ipynb", assignment=slug, login=login, counted=True, **kw)
    s.questions = [classroom.Question(q.name, q.points, q.points * score) for q in get_set(slug).questions]
    return s


def _class_of_12(tmp_path):
    logins = [f"s{i:02d}" for i in range(12)]
    names = {x: f"Student {x}" for x in logins}
    subs = [_sub(x, slug, 1.0) for x in logins[:10] for slug in (SLUG, SLUG2)]
    subs.append(_sub("s10", SLUG, 0.5))  # partial: one set of two; s11 hands in nothing
    return names, subs


def test_every_roster_student_gets_a_row_an_entry_and_a_feedback_file(tmp_path):
    names, subs = _class_of_12(tmp_path)
    rep = report(subs, pass_mark=0.5, sandbox_line="-", roster=names)
    assert rep["students"] == 12 and set(rep["class"]) == set(names)
    assert {e["possible"] for e in rep["class"].values()} == {P1 + P2}
    assert rep["sets"] == [SLUG, SLUG2] and "every set anyone handed in" in rep["sets_rule"]
    assert rep["class"]["s11"]["score"] == 0 and rep["class"]["s10"]["score"] == P1 / 2
    assert rep["possible"] == 12 * (P1 + P2) and rep["score"] == 10 * (P1 + P2) + P1 / 2
    write_gradebook(rep, tmp_path / "g.csv")
    raw = (tmp_path / "g.csv").read_bytes()
    assert raw.startswith(b"\xef\xbb\xbflogin,name,")
    rows = {r["login"]: r for r in csv.DictReader(raw.decode("utf-8-sig").splitlines())}
    assert len(rows) == 12 and {r["possible"] for r in rows.values()} == {f"{P1 + P2:g}"}
    assert rows["s11"][f"{SLUG}:total"] == "0" and rows["s11"][f"{SLUG}:q1"] == "0"
    assert rows["s10"][f"{SLUG2}:total"] == "0" and rows["s10"][f"{SLUG}:total"] == f"{P1 / 2:g}"
    files = write_feedback(rep, tmp_path / "fb")
    assert len(files) == 12 and "Not handed in (each scores 0): " + f"{SLUG}, {SLUG2}" in (
        tmp_path / "fb" / "s11.md").read_text()


def test_sets_assigned_are_counted_even_when_nobody_hands_one_in(tmp_path):
    names, subs = _class_of_12(tmp_path)
    rep = report(subs, pass_mark=0.5, sandbox_line="-", roster=names, sets=[SLUG, SLUG2, "03_headroom"])
    assert rep["sets_rule"] == "assigned (--sets)"
    assert {e["possible"] for e in rep["class"].values()} == {P1 + P2 + get_set("03_headroom").possible}


# --------------------------------------------------------------------------- time


def test_the_late_policies(tmp_path):
    def run(policy):
        on = _sub("a", SLUG, 1.0, path="a/x.ipynb", submitted="2026-10-02T10:00:00+00:00")
        late = _sub("a", SLUG, 0.5, path="a/x-Copy1.ipynb", submitted="2026-10-03T10:00:00+00:00")
        alone = _sub("b", SLUG, 1.0, path="b/x.ipynb", submitted="2026-10-04T10:00:00+00:00")
        subs = [on, late, alone]
        for s in subs:
            when = s.submitted
            s.counted, s.order = False, (True, float(when[8:10]), 0, 0, s.path)
        classroom._mark_counted(subs, False, Deadlines.parse(["2026-10-02T23:00"], grace_min=30, late=policy))
        return [(s.counted, s.late, s.score) for s in subs]

    half, full = P1 / 2, P1
    assert run("count") == [(False, False, full), (True, True, half), (True, True, full)]
    assert run("penalty:0.2") == [(False, False, full), (True, True, round(half * 0.8, 6)), (True, True, round(full * 0.8, 6))]
    assert run("refuse") == [(True, False, full), (False, True, half), (True, True, 0.0)]


@pytest.mark.parametrize("args, words", [(["--late", "sometimes"], "--late must be one of"),
                                         (["--late", "penalty:2"], "--late penalty:F needs F in [0, 1]"),
                                         (["--deadline", "tomorrow"], "--deadline must be an ISO 8601 time"),
                                         (["--deadline", "99_none=2026-10-01T00:00"], "no set '99_none'"),
                                         (["--grace", "-5"], "--grace must be >= 0"),
                                         (["--sets", "01,77"], "--sets: no set '77'"),
                                         (["--canvas-csv", "g.csv"], "--canvas-csv needs --roster"),
                                         (["--policy-from", "nowhere.json"], "nowhere.json")])
def test_bad_term_options_are_one_line_and_exit_2(capsys, monkeypatch, args, words):
    import importlib.util

    monkeypatch.setenv("LANES_TEST_SECRET", "1")
    spec = importlib.util.spec_from_file_location("grade_script", GRADE)
    script = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(script)
    assert script.main([str(SAMPLES / "moodle"), *args]) == 2
    err = capsys.readouterr().err
    assert words in err and len(err.strip().splitlines()) == 1, err


# --------------------------------------------------------------------------- regrades and re-runs


def test_a_regrade_of_one_students_folder_folds_into_the_class(tmp_path):
    """grade.py on one student's folder with the roster: a regrade report; merge replaces her rows."""
    subs_dir = tmp_path / "subs"
    shutil.copytree(SAMPLES / "moodle" / "submissions", subs_dir)
    (tmp_path / "r.csv").write_text("login,name\nines09,Inés Ortega\njo_smith,Jo Smith\nken,Ken\n")
    env = {**os.environ, "LANES_TEST_SECRET": "1"}

    def grade(*args):
        proc = subprocess.run([sys.executable, str(GRADE), *map(str, args), "--roster", str(tmp_path / "r.csv"),
                               "--solutions", str(tmp_path / "none"), "--quiet", "--pass-mark", "0"],
                              capture_output=True, text=True, env=env, timeout=120)
        assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr[-2000:]
        return proc

    (tmp_path / "none").mkdir()
    grade(subs_dir, "--json", tmp_path / "class.json", "--feedback", tmp_path / "fb")
    klass = json.loads((tmp_path / "class.json").read_text())
    assert klass["scope"] == "class" and klass["students"] == 3 and (tmp_path / "fb" / "ken.md").is_file()
    ines = next(p for p in subs_dir.iterdir() if p.name.startswith("In"))
    (ines / f"{SLUG}-Copy1.ipynb").write_text((ines / f"{SLUG}.ipynb").read_text())
    grade(ines, "--json", tmp_path / "ines.json")
    regrade = json.loads((tmp_path / "ines.json").read_text())
    assert regrade["scope"] == "regrade" and list(regrade["roster"]) == ["ines09"]
    assert {s["login"] for s in regrade["submissions"]} == {"ines09"} and len(regrade["submissions"]) == 2
    proc = subprocess.run([sys.executable, str(GRADE), "merge", str(tmp_path / "class.json"), str(tmp_path / "ines.json"),
                           "--json", str(tmp_path / "merged.json"), "--csv", str(tmp_path / "g.csv"),
                           "--pass-mark", "0"], capture_output=True, text=True, env=env, timeout=120)
    assert proc.returncode == 0, proc.stderr
    merged = json.loads((tmp_path / "merged.json").read_text())
    assert merged["students"] == 3 and merged["regraded"] == ["ines09"]
    assert sorted(pathlib.Path(s["path"]).name for s in merged["submissions"] if s["login"] == "ines09") == \
        [f"{SLUG}-Copy1.ipynb", f"{SLUG}.ipynb"]
    assert merged["class"]["ines09"]["sets"][SLUG]["path"].endswith("-Copy1.ipynb")


def test_a_rerun_leaves_no_stale_feedback_file(tmp_path):
    names, subs = _class_of_12(tmp_path)
    (tmp_path / "fb").mkdir()
    (tmp_path / "fb" / "README.txt").write_text("mine")
    write_feedback(report(subs, pass_mark=0.5, sandbox_line="-", roster=names), tmp_path / "fb")
    assert (tmp_path / "fb" / "s11.md").is_file()
    fewer = {k: v for k, v in names.items() if k != "s11"}
    write_feedback(report(subs, pass_mark=0.5, sandbox_line="-", roster=fewer), tmp_path / "fb")
    left = sorted(p.name for p in (tmp_path / "fb").iterdir() if not p.name.startswith("."))
    assert left == ["README.txt"] + [f"s{i:02d}.md" for i in range(11)]
    regrade = report([s for s in subs if s.login == "s03"], pass_mark=0.5, sandbox_line="-", roster={"s03": ""},
                     scope="regrade")
    assert write_feedback(regrade, tmp_path / "fb") == [tmp_path / "fb" / "s03.md"]
    assert sorted(p.name for p in (tmp_path / "fb").iterdir() if not p.name.startswith(".")) == left


def test_merge_refuses_regrades_alone_and_missing_shards():
    rep = report([], pass_mark=0.5, sandbox_line="-", roster={"a": ""}, scope="regrade")
    with pytest.raises(ValueError, match="needs the class's report"):
        merge([rep])
    with pytest.raises(ValueError, match="each shard 1..N exactly once"):
        merge([report([], pass_mark=0.5, sandbox_line="-", shard=(2, 2))])


def test_a_regrade_replaces_only_the_sets_it_graded():
    """A regrade of one set keeps the student's other sets and everyone else's rows."""
    rule = Deadlines.parse(["2026-10-02T23:00"], grace_min=15, late="penalty:0.1").as_dict()
    klass = report([_sub("a", SLUG, 1.0), _sub("a", SLUG2, 1.0), _sub("b", SLUG, 0.5)], pass_mark=0.5,
                   sandbox_line="-", roster={"a": "A", "b": "B"}, extra={"late_policy": rule})
    fixed = report([_sub("a", SLUG, 0.5, path="fix/a.ipynb")], pass_mark=0.5, sandbox_line="-", roster={"a": "A"},
                   scope="regrade", extra={"late_policy": rule})
    merged = merge([klass, fixed])
    assert merged["class"]["a"]["sets"][SLUG]["path"] == "fix/a.ipynb"
    assert merged["class"]["a"]["sets"][SLUG2]["path"] == f"a/{SLUG2}.ipynb"  # kept
    assert merged["class"]["a"]["score"] == P1 / 2 + P2 and merged["class"]["b"]["score"] == P1 / 2
    assert merged["regraded_sets"] == {"a": [SLUG]} and merged["late_policy"] == rule


def test_merge_refuses_a_regrade_graded_under_another_deadline_rule():
    rule = Deadlines.parse(["2026-10-02T23:00"], late="penalty:0.1").as_dict()
    klass = report([_sub("a", SLUG, 1.0)], pass_mark=0.5, sandbox_line="-", roster={"a": "A"},
                   extra={"late_policy": rule})
    for other in (Deadlines().as_dict(), None):
        fixed = report([_sub("a", SLUG, 1.0)], pass_mark=0.5, sandbox_line="-", roster={"a": "A"}, scope="regrade",
                       extra={} if other is None else {"late_policy": other})
        with pytest.raises(ValueError, match="another deadline rule.*--policy-from"):
            merge([klass, fixed])
    with pytest.raises(ValueError, match="2 whole-class reports.*--regrade"):
        merge([klass, klass])
    assert Deadlines.from_dict(rule) == Deadlines.parse(["2026-10-02T23:00"], late="penalty:0.1")


def test_a_regrade_of_any_folder_reuses_the_class_rule_and_merges(tmp_path):
    """--regrade on a folder not named by a login, --policy-from the class's report: merge keeps the rest."""
    env = {**os.environ, "LANES_TEST_SECRET": "1"}
    (tmp_path / "none").mkdir()
    roster = SAMPLES / "gradescope" / "roster.csv"

    def run(*args, rc=0):
        proc = subprocess.run([sys.executable, str(GRADE), *map(str, args)], capture_output=True, text=True, env=env,
                              timeout=120)
        assert proc.returncode == rc, proc.stdout[-2000:] + proc.stderr[-2000:]
        return proc

    common = ["--roster", roster, "--solutions", tmp_path / "none", "--quiet", "--pass-mark", "0"]
    run(SAMPLES / "gradescope" / "submissions", *common, "--deadline", "2026-10-02T22:00Z", "--grace", "5",
        "--late", "penalty:0.5", "--json", tmp_path / "class.json")
    fixes = tmp_path / "fixes-week-3"
    fixes.mkdir()
    shutil.copy(SAMPLES / "gradescope" / "submissions" / "submission_metadata.yml", fixes)
    shutil.copytree(SAMPLES / "gradescope" / "submissions" / "submission_10002", fixes / "submission_10002")
    run(fixes, *common, "--regrade", "--policy-from", tmp_path / "class.json", "--json", tmp_path / "fix.json")
    fix = json.loads((tmp_path / "fix.json").read_text())
    klass = json.loads((tmp_path / "class.json").read_text())
    assert fix["scope"] == "regrade" and list(fix["roster"]) == ["jo.smith"]
    assert fix["late_policy"] == klass["late_policy"] and klass["late_policy"]["grace_s"] == 300
    run("merge", tmp_path / "class.json", tmp_path / "fix.json", "--json", tmp_path / "m.json", "--pass-mark", "0")
    merged = json.loads((tmp_path / "m.json").read_text())
    assert merged["class"]["ines.ortega"]["sets"][SLUG]["path"] == klass["class"]["ines.ortega"]["sets"][SLUG]["path"]
    assert merged["class"]["jo.smith"]["sets"][SLUG]["path"].startswith(str(fixes))
    assert merged["class"]["jo.smith"]["sets"][SLUG]["late"] is True
    run(fixes, *common, "--regrade", "--json", tmp_path / "fix2.json")  # no rule given: merge refuses it
    err = run("merge", tmp_path / "class.json", tmp_path / "fix2.json", "--json", tmp_path / "m2.json", rc=2).stderr
    assert "another deadline rule" in err and len(err.strip().splitlines()) == 1
    err = run(fixes, *common, "--policy-from", tmp_path / "class.json", "--late", "refuse", rc=2).stderr
    assert "--policy-from" in err and len(err.strip().splitlines()) == 1


def test_files_of_one_gradescope_submission_are_one_hand_in(tmp_path):
    base = tmp_path / "gs"
    shutil.copytree(SAMPLES / "gradescope" / "submissions", base)
    scratch = json.loads((base / "submission_10001" / f"{SLUG}.ipynb").read_text())
    scratch["metadata"].pop("lanes")
    (base / "submission_10001" / f"{SLUG} (1).ipynb").write_text(json.dumps(scratch))
    subs = _by_file(_grade([base], load_roster(SAMPLES / "gradescope" / "roster.csv"), tmp_path), base)
    extra = subs[f"submission_10001/{SLUG} (1).ipynb"]
    assert not extra.counted and subs[f"submission_10001/{SLUG}.ipynb"].counted
    assert any("another file of the same submission" in m for m in extra.messages)


def test_a_gradescope_group_submission_credits_every_member(tmp_path):
    base = tmp_path / "gs"
    shutil.copytree(SAMPLES / "gradescope" / "submissions", base)
    meta = (base / "submission_metadata.yml").read_text()
    meta = meta.replace("    :email: ines.ortega@uni.example\n  :created_at: 2026-10-02",
                        "    :email: ines.ortega@uni.example\n  - :name: Ken Nakamura\n    :email: ken@uni.example\n"
                        "  - :name: Ana Ruiz\n    :email: ana@gmail.example\n  :created_at: 2026-10-02")
    (base / "submission_metadata.yml").write_text(meta)
    subs = _grade([base], load_roster(SAMPLES / "gradescope" / "roster.csv"), tmp_path)
    rep = report(subs, pass_mark=0.5, sandbox_line="-", roster=load_roster(SAMPLES / "gradescope" / "roster.csv").names)
    assert rep["class"]["ken"]["sets"][SLUG]["path"] == rep["class"]["ines.ortega"]["sets"][SLUG]["path"]
    assert rep["class"]["ken"]["sets"][SLUG]["status"] != "not handed in"
    ken = next(s for s in subs if s.login == "ken")
    assert any("credited to every member" in m for m in ken.messages)
    ines = next(s for s in subs if s.login == "ines.ortega" and s.counted)
    assert any("Ana Ruiz (e-mail ana@gmail.example, SID none)" in m for m in ines.messages)


def test_an_unidentified_file_names_the_student_whose_valid_token_it_holds(tmp_path):
    from lanes.exercises.variants import student_token

    secret = "a-test-course-secret-for-unidentified"
    nb = json.loads((SAMPLES / "canvas" / f"smithjo_4412_90002_{SLUG}.ipynb").read_text())
    for cell in nb["cells"]:
        if cell["cell_type"] == "code" and "".join(cell["source"]).startswith("STUDENT"):
            cell["source"] = f"STUDENT = '{student_token('ken', secret)}'"
    (tmp_path / "subs" / "Someone Else").mkdir(parents=True)
    (tmp_path / "subs" / "Someone Else" / f"{SLUG}.ipynb").write_text(json.dumps(nb))
    (tmp_path / "subs" / "ken").mkdir()
    keys = tmp_path / "keys" / SLUG
    keys.mkdir(parents=True)
    (keys / "key.py").write_text("")
    roster = load_roster(SAMPLES / "canvas" / "roster.csv")
    (s,) = classroom.grade([tmp_path / "subs"], solutions=tmp_path / "keys", limits=sandbox.Limits(), roster=roster,
                           secret=secret, progress=lambda *a: None)[0]
    assert s.status == "unidentified" and "its STUDENT is ken's token" in s.messages[-1]
    assert "--student ken" in s.messages[-1]


def test_files_that_count_for_nobody_are_listed_at_the_end_with_their_reason(capsys):
    import importlib.util

    spec = importlib.util.spec_from_file_location("grade_script", GRADE)
    script = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(script)
    lost = classroom.Submission(path="subs/x/y.ipynb", status="unidentified", messages=["the reason why"])
    subs = [_sub("a", SLUG, 1.0), lost]
    script.print_report(subs, report(subs, pass_mark=0.5, sandbox_line="-", roster={"a": "A"}))
    tail = capsys.readouterr().out.split("counted for nobody (1 file(s)", 1)[1]
    assert "subs/x/y.ipynb: the reason why" in tail and "TOTAL" in tail


def test_a_gradebook_canvas_imports(tmp_path):
    """Canvas's identity columns from its own gradebook export, its Points Possible row, one column per set
    (the roster's own assignment column where its number matches), totals after the late policy."""
    roster = load_roster(SAMPLES / "canvas" / "roster.csv")
    subs = [_sub("ines09", SLUG, 1.0), _sub("jo", SLUG, 0.5), _sub("jo", SLUG2, 1.0, factor=0.9)]
    rep = report(subs, pass_mark=0.5, sandbox_line="-", roster=roster.names)
    from grading.gradebook import write_canvas_gradebook

    write_canvas_gradebook(rep, tmp_path / "canvas.csv", roster)
    rows = list(csv.reader((tmp_path / "canvas.csv").read_text(encoding="utf-8").splitlines()))
    assert rows[0] == ["Student", "ID", "SIS User ID", "SIS Login ID", "Section", "01 Slots (1234)", SLUG2]
    assert rows[1][0].strip() == "Points Possible" and rows[1][5:] == [f"{P1:g}", f"{P2:g}"]
    by_id = {r[1]: r for r in rows[2:]}
    assert set(by_id) == {"4411", "4412", "4413", "4414"}  # every roster student, by Canvas user id
    assert by_id["4413"] == ["Smith, Jo", "4413", "20230019", "jo", "CS 101", f"{P1 / 2:g}", f"{round(P2 * 0.9, 6):g}"]
    assert by_id["4414"][5:] == ["0", "0"]
    with pytest.raises(ValueError, match="Canvas's columns"):
        write_canvas_gradebook(rep, tmp_path / "x.csv", load_roster(SAMPLES / "moodle" / "roster.csv"))


def test_the_lms_download_zips_are_read_directly(tmp_path):
    import zipfile

    env = {**os.environ, "LANES_TEST_SECRET": "1"}
    (tmp_path / "none").mkdir()
    canvas = tmp_path / "submissions.zip"
    with zipfile.ZipFile(canvas, "w") as z:
        for p in sorted((SAMPLES / "canvas").glob("*.ipynb")):
            z.write(p, p.name)
        z.writestr("../escape.ipynb", "{}")
    gs = tmp_path / "gradescope_export.zip"
    with zipfile.ZipFile(gs, "w") as z:
        for p in sorted((SAMPLES / "gradescope" / "submissions").rglob("*")):
            if p.is_file():
                z.write(p, "assignment_5512_export/" + str(p.relative_to(SAMPLES / "gradescope" / "submissions")))
    errs = {}
    for archive, roster, n in ((canvas, "canvas", 4), (gs, "gradescope", 3)):
        proc = subprocess.run([sys.executable, str(GRADE), str(archive), "--roster", str(SAMPLES / roster / "roster.csv"),
                               "--solutions", str(tmp_path / "none"), "--quiet", "--pass-mark", "0",
                               "--json", str(tmp_path / f"{roster}.json"),
                               *(["--canvas-csv", str(tmp_path / "c.csv")] if roster == "canvas" else [])],
                              capture_output=True, text=True, env=env, timeout=120)
        assert proc.returncode == 0, proc.stderr[-2000:]
        errs[roster] = proc.stderr
        rep = json.loads((tmp_path / f"{roster}.json").read_text())
        assert len(rep["submissions"]) == n and all(s["login"] for s in rep["submissions"])
        assert all(s["path"].startswith(str(archive) + "/") for s in rep["submissions"])
    assert "'../escape.ipynb' left in the zip (its path leaves the folder)" in errs["canvas"]
    assert not (tmp_path / "escape.ipynb").exists() and (tmp_path / "c.csv").is_file()
    assert not list(pathlib.Path(os.environ.get("TMPDIR", "/tmp")).glob("lanes-lms-zip-*"))


def test_canvas_rows_that_are_not_students_are_skipped_saying_what_they_are(tmp_path):
    text = (SAMPLES / "canvas" / "roster.csv").read_text(encoding="utf-8-sig").splitlines()
    text[2:2] = ["    Manual Posting,,,,,Manual Posting", '"Student, Test",9999,,,CS 101,']
    (tmp_path / "r.csv").write_text("\n".join(text) + "\n")
    roster = load_roster(tmp_path / "r.csv")
    assert sorted(roster.names) == ["ines09", "jo", "jo_smith", "ken"]
    assert len(roster.problems) == 1 and "Canvas's Test Student" in roster.problems[0]


def test_rekey_binds_another_lms_roster_to_the_logins_the_tokens_were_made_from(tmp_path):
    """Canvas made the tokens (SIS logins); Gradescope's roster gives e-mail local parts: rekeyed,
    it gives Canvas's logins again, so every token stays its student's."""
    from grading.roster import rekey

    (tmp_path / "canvas.csv").write_text("Student,ID,SIS Login ID,Email\n\"Ortega, Inés\",4411,ines09,ines.ortega@uni.example\n"
                                         "\"Smith, Jo\",4412,jo_smith,jo.smith@uni.example\n\"Nakamura, Ken\",4414,ken,\n")
    gs = SAMPLES / "gradescope" / "roster.csv"
    assert sorted(load_roster(gs).names) == ["ines.ortega", "jo.smith", "ken"]  # other logins: other tokens
    text, lines = rekey(tmp_path / "canvas.csv", gs)
    (tmp_path / "gs.csv").write_text(text)
    again = load_roster(tmp_path / "gs.csv")
    assert sorted(again.names) == ["ines09", "jo_smith", "ken"]  # ken by name ("Nakamura, Ken")
    assert again.lookup("jo.smith@uni.example") == "jo_smith" and again.lookup("20230017") == "ines09"
    assert lines == []


def test_a_gradebook_moodle_imports(tmp_path):
    from grading.gradebook import write_moodle_gradebook

    roster = load_roster(SAMPLES / "moodle" / "roster.csv")
    rep = report([_sub("ines09", SLUG, 1.0)], pass_mark=0.5, sandbox_line="-", roster=roster.names)
    write_moodle_gradebook(rep, tmp_path / "m.csv", roster)
    rows = list(csv.reader((tmp_path / "m.csv").read_text(encoding="utf-8").splitlines()))
    assert rows[0] == ["Email address", "Username", SLUG]
    assert rows[1:] == [["ines.ortega@uni.example", "ines09", f"{P1:g}"], ["jo.smith@uni.example", "jo_smith", "0"],
                        ["ken@uni.example", "ken", "0"]]
    (tmp_path / "r.csv").write_text("login\na\n")
    with pytest.raises(ValueError, match="e-mail"):
        write_moodle_gradebook(rep, tmp_path / "x.csv", load_roster(tmp_path / "r.csv"))


def test_feedback_names_no_classmate_and_keeps_signs_and_whole_notes():
    from grading.gradebook import feedback_markdown

    sub = _sub("eve", SLUG, 0.0)
    sub.messages = ["STUDENT in the notebook is not eve's token (STUDENT is another student's token (alice's)): "
                    "graded as eve's variant"]
    sub.questions[0].messages = ["must be >= 0 and <b>x</b>; " + "a long note " * 30 + "END"]
    text = feedback_markdown("eve", [sub.as_dict()])
    assert "alice" not in text and "is another student's token)" in text
    assert ">= 0" in text and "&gt;" not in text and "\\<b>" in text and "END |" in text


def test_a_long_note_of_the_judge_reaches_the_feedback_whole(tmp_path):
    """Two criteria of one question (``all_of``) join their messages: over 200 characters, they
    reached the report cut mid-word; now whole (up to the feedback's 500, an ellipsis past it)."""
    from grading.gradebook import feedback_markdown

    sub = _sub("eve", SLUG, 0.0)
    note = "; ".join(["q1_busy_slots does not match the value recomputed for your variant (the mean number of "
                      "slots busy, by Little's law, from the arrival rate and the holding time)"] * 2) + " END"
    assert 200 < len(note) < 500
    (tmp_path / "out.json").write_text(json.dumps([{"id": id(sub), "questions": {"q1": {"score": 0.0,
                                                                                      "messages": [note]}}}]))
    (tmp_path / "err.txt").write_text("")
    proc = subprocess.Popen([sys.executable, "-c", ""])
    proc.wait()
    classroom._finish_step2(classroom._Job([(sub, None)], "eve", "judge", proc, tmp_path, 60))
    assert sub.questions[0].messages == [note]
    assert f"| q1 | 0 | {sub.questions[0].possible:g} | {note} |" in feedback_markdown("eve", [sub.as_dict()])
    sub.questions[0].messages = [note * 3]
    (row,) = [r for r in feedback_markdown("eve", [sub.as_dict()]).splitlines() if r.startswith("| q1 |")]
    assert row.endswith("… |") and len(row) < 560


def test_the_console_and_the_feedback_give_each_question_the_same_note(tmp_path, capsys):
    """Full points, a wrong value, a form problem, and a right form the key gave no message for:
    the console and the feedback say the same of each ("form ok" only where only the form is known)."""
    import importlib.util

    from grading.gradebook import feedback_markdown

    spec = importlib.util.spec_from_file_location("grade_script", GRADE)
    grade = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(grade)
    sub = _sub("eve", SLUG, 0.0)
    q1, q2, q3, q4, _ = sub.questions
    q1.score, q1.form_ok = q1.possible, True
    q2.messages, q2.form_ok = ["q2_measured does not match the value recomputed for your variant"], True
    q3.messages, q3.form_ok = ["q3_idle_at_peak is not answered yet: replace the ... with your answer"], False
    q4.score, q4.form_ok = 0.5 * q4.possible, True
    rep = report([sub], pass_mark=0.5, sandbox_line="-", roster={"eve": ""})
    grade.print_report([sub], rep)
    console = {ln.split()[0]: ln.split(None, 3)[3] if len(ln.split()) > 3 else ""
               for ln in capsys.readouterr().out.splitlines() if re.match(r"  q\d ", ln)}
    feedback = {row.split(" | ")[0][2:]: row.split(" | ")[3][:-2].rstrip()
                for row in feedback_markdown("eve", [sub.as_dict()]).splitlines() if re.match(r"\| q\d ", row)}
    assert console == feedback, (console, feedback)
    assert feedback["q1"] == "correct" and feedback["q4"] == "form ok" and "not answered" in feedback["q3"]


def test_a_gradebook_gradescope_imports(tmp_path):
    """Gradescope's import: Name, SID, Email, then a column per set (its total after any late
    penalty), a row per roster student; from grade.py merge too."""
    from grading.gradebook import write_gradescope_gradebook

    roster = load_roster(SAMPLES / "gradescope" / "roster.csv")
    rep = report([_sub("ines.ortega", SLUG, 1.0), _sub("ken", SLUG2, 0.5)], pass_mark=0.5, sandbox_line="-",
                 roster=roster.names)
    write_gradescope_gradebook(rep, tmp_path / "g.csv", roster)
    rows = list(csv.reader((tmp_path / "g.csv").read_text(encoding="utf-8").splitlines()))
    assert rows == [["Name", "SID", "Email", SLUG, SLUG2],
                    ["Inés Ortega", "20230017", "ines.ortega@uni.example", f"{P1:g}", "0"],
                    ["Jo Smith", "20230018", "jo.smith@uni.example", "0", "0"],
                    ["Ken Nakamura", "20230020", "ken@uni.example", "0", f"{0.5 * P2:g}"]]
    (tmp_path / "r.csv").write_text("login\na\n")
    with pytest.raises(ValueError, match="SID or e-mail"):
        write_gradescope_gradebook(rep, tmp_path / "x.csv", load_roster(tmp_path / "r.csv"))
    (tmp_path / "rep.json").write_text(json.dumps(rep))
    proc = subprocess.run([sys.executable, str(GRADE), "merge", str(tmp_path / "rep.json"), "--json",
                           str(tmp_path / "m.json"), "--gradescope-csv", str(tmp_path / "cli.csv"), "--roster",
                           str(SAMPLES / "gradescope" / "roster.csv")], capture_output=True, text=True, timeout=120)
    assert "Gradescope gradebook" in proc.stdout, proc.stdout + proc.stderr
    assert (tmp_path / "cli.csv").read_text(encoding="utf-8") == (tmp_path / "g.csv").read_text(encoding="utf-8")
