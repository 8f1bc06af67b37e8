"""What a grading run writes: the JSON report, the gradebook CSV and a feedback file per student.

**The roster is the class.** A report covers its ``roster`` (login -> name: the whole
roster, the share of it a shard grades, or the students a regrade grades) plus any
student identified without a roster. Every one of them has an entry in ``class``, a row in
the gradebook and a feedback file, whether they handed anything in or not. The sets are
the ones assigned (``--sets``) or, by default, every set anyone handed in (the report says
which, in ``sets_rule``); a set a student did not hand in scores 0 of its points, so
``possible`` is the same for every student.

**Merging.** :func:`merge` takes the reports of shards 1..N of one class (or one whole-class
report) and any number of regrade reports (``scope: regrade``), applied in the order given:
a regrade replaces exactly the (student, set) pairs it graded and keeps the rest, and must
have been graded under the class's deadline rule (``late_policy``, recorded in every report).

**Gradebook** (UTF-8 with a byte-order mark, so that Excel shows accented names): a row per
student; per set, a column per question (scores before any late penalty), the set's
``total`` (after it), ``late`` (``yes``, ``no``, or blank when unknown) and ``submitted``
(the export's time, UTC, when it has one); then ``total`` and ``possible``. A cell a
spreadsheet would read as a formula gets a leading ``'``.

**Canvas gradebook** (:func:`write_canvas_gradebook`, ``--canvas-csv``): what Canvas's
gradebook *Import* takes: ``Student, ID, SIS User ID, SIS Login ID, Section`` from the
roster (a Canvas gradebook export, whose rows Canvas matches by ``ID``), a ``Points
Possible`` row, and one column per set holding the set's total after any late penalty.
A set's column is the roster's assignment column whose name starts with the set's number
(``03 Headroom (5512)`` for ``03_headroom``), so that Canvas updates that assignment;
otherwise it is named by the set's slug (Canvas then makes a new assignment of it).

**Gradescope gradebook** (:func:`write_gradescope_gradebook`, ``--gradescope-csv``): what
Gradescope's score import takes: ``Name``, ``SID`` and ``Email`` from the roster (its
roster export; rows are matched by SID or e-mail), and one column per set, named by its
slug, holding the set's total after any late penalty.

**Moodle gradebook** (:func:`write_moodle_gradebook`, ``--moodle-csv``): what Moodle's
*Import > CSV file* maps: ``Email address`` (map it to the user's e-mail), the
``Username`` (the login), and one column per set (map each to its grade item).
"""

from __future__ import annotations

import csv
import io
import json
import pathlib
import re

from lanes.exercises.registry import get_set

__all__ = ["NOTE_CHARS", "feedback_markdown", "merge", "printable", "question_note", "report", "safe_cell", "totals",
           "write_canvas_gradebook", "write_feedback", "write_gradebook", "write_gradescope_gradebook",
           "write_moodle_gradebook"]

#: The feedback folder's list of the files the last run wrote there (removed when no longer written).
MANIFEST = ".lanes-feedback.json"


def report(subs: list, *, pass_mark: float, sandbox_line: str, shard: tuple = (1, 1), roster: dict | None = None,
           sets: list | None = None, scope: str = "class", extra: dict | None = None) -> dict:
    """The JSON report of a run: ``roster`` the students it covers, ``sets`` the assigned sets
    (``None``: every set anyone handed in), ``scope`` ``"class"`` or ``"regrade"``."""
    if scope not in ("class", "regrade"):
        raise ValueError(f"scope must be 'class' or 'regrade' (got {scope!r})")
    rows = [s.as_dict() if hasattr(s, "as_dict") else s for s in subs]
    rows.sort(key=lambda r: r["path"])
    return totals({"pass_mark": pass_mark, "sandbox": sandbox_line, "shard": f"{shard[0]}/{shard[1]}",
                   "scope": scope, **(extra or {}), "roster": dict(sorted((roster or {}).items())),
                   "sets_assigned": sorted(sets) if sets else None, "submissions": rows})


def totals(rep: dict) -> dict:
    """``rep`` with its ``class`` entries and totals computed from its roster, sets and submissions."""
    rows = rep["submissions"]
    counted = [r for r in rows if r.get("counted") and r.get("login") and r.get("assignment")]
    given = rep.get("sets_assigned")
    sets = sorted(given) if given else sorted({r["assignment"] for r in counted})
    rule = "assigned (--sets)" if given else "every set anyone handed in (pass --sets to name them)"
    names = dict(rep.get("roster") or {})
    for r in counted:
        names.setdefault(r["login"], r.get("name", ""))
    by = {(r["login"], r["assignment"]): r for r in counted}
    klass: dict = {}
    for login in sorted(names):
        entry = {"name": names[login], "score": 0.0, "possible": 0.0, "sets": {}}
        for slug in sets:
            r = by.get((login, slug))
            possible = get_set(slug).possible
            cell = {"score": 0.0, "possible": possible, "status": "not handed in", "late": None,
                    "submitted": None, "path": None}
            if r is not None:
                cell.update(score=r["score"], status=r["status"], late=r.get("late"), submitted=r.get("submitted"),
                            path=r["path"])
            entry["sets"][slug] = cell
            entry["score"] += cell["score"]
            entry["possible"] += possible
        entry["score"] = round(entry["score"], 6)
        klass[login] = entry
    score = round(sum(e["score"] for e in klass.values()), 6)
    possible = sum(e["possible"] for e in klass.values())
    fraction = score / possible if possible else 0.0
    rep.update(sets=sets, sets_rule=rule, score=score, possible=possible, fraction=fraction,
               passed=fraction >= rep["pass_mark"], students=len(klass), **{"class": klass})
    return rep


def _rule(rep: dict) -> str:
    rule = rep.get("late_policy")
    if rule is None:
        return "no deadline rule recorded"
    from .deadlines import Deadlines

    return Deadlines.from_dict(rule).describe()


def merge(reports: list) -> dict:
    """One report from shards 1..N of one class, with regrade reports folded in (in order);
    ``ValueError`` if a shard is missing or twice, an input is not a report, or a regrade was
    graded under another deadline rule than the class.

    A regrade replaces exactly the (student, set) pairs it graded: that student's rows of
    those sets; the student's other sets, and everyone else's, stay as the class had them.
    """
    if not reports:
        raise ValueError("merge needs at least one shard report")
    shards, regrades = [], []
    for r in reports:
        if not isinstance(r, dict) or not isinstance(r.get("submissions"), list) or "shard" not in r:
            raise ValueError("merge: every input must be a report written by grade.py")
        (regrades if r.get("scope") == "regrade" else shards).append(r)
    if not shards:
        raise ValueError("merge: needs the class's report (or every shard's) besides the regrades")
    ks = []
    for r in shards:
        try:
            k, n = map(int, str(r["shard"]).split("/"))
        except ValueError:
            raise ValueError(f"merge: shard must be K/N (got {r['shard']!r})") from None
        ks.append((k, n))
    if len(ks) > 1 and all(n == 1 for _, n in ks):
        raise ValueError(f"merge: got {len(ks)} whole-class reports (shard 1/1 each); a regrade's report is "
                         "written by grade.py --regrade (or --student LOGIN, or a run over one student's own "
                         "folder)")
    ns = {n for _, n in ks}
    if len(ns) != 1 or sorted(k for k, _ in ks) != list(range(1, ns.pop() + 1)):
        raise ValueError(f"merge: needs each shard 1..N exactly once (got {', '.join(f'{k}/{n}' for k, n in ks)})")
    rule = shards[0].get("late_policy")
    if any(r.get("late_policy") != rule for r in shards):
        raise ValueError("merge: the shards were graded under different deadline rules (--deadline, --grace, "
                         "--late): grade them again with the same options")
    for i, g in enumerate(regrades, 1):
        if g.get("late_policy") != rule:
            raise ValueError(f"merge: regrade {i} was graded under another deadline rule ({_rule(g)}) than the "
                             f"class ({_rule(shards[0])}): grade it again with --policy-from the class's report")
    base = {k: v for k, v in shards[0].items()
            if k not in ("submissions", "shard", "seconds", "roster", "class", "scope")}
    roster = {login: name for r in shards for login, name in (r.get("roster") or {}).items()}
    rows = [row for r in shards for row in r["submissions"]]
    regraded: dict = {}
    for g in regrades:
        pairs = {(row["login"], row["assignment"]) for row in g["submissions"]
                 if row.get("login") and row.get("assignment")}
        rows = [row for row in rows if (row.get("login"), row.get("assignment")) not in pairs]
        rows += [row for row in g["submissions"] if row.get("login")]
        for login, name in (g.get("roster") or {}).items():
            if name or login not in roster:
                roster[login] = name
        for login, slug in pairs:
            regraded.setdefault(login, set()).add(slug)
    rows.sort(key=lambda r: r["path"])
    out = totals({**base, "shard": "1/1", "scope": "class", "roster": dict(sorted(roster.items())),
                  "submissions": rows})
    if regrades:
        out["regraded"] = sorted(regraded)
        out["regraded_sets"] = {login: sorted(sets) for login, sets in sorted(regraded.items())}
    return out


def safe_cell(value: object) -> str:
    """A CSV cell a spreadsheet shows as text: one that starts with = + - @ tab or CR gets a quote."""
    text = str(value)
    if text and text[0] in "=+-@\t\r":
        return "'" + text
    return text


def _fmt(x: float) -> str:
    return f"{x:g}"


def _yes_no(late) -> str:
    return "" if late is None else ("yes" if late else "no")


def _write_csv(path: pathlib.Path, head: list, rows, encoding: str = "utf-8") -> None:
    """Write a CSV file at ``path``: the ``head`` rows as they are, then ``rows`` (lists of cells),
    each cell made :func:`safe_cell`."""
    buf = io.StringIO()
    w = csv.writer(buf)
    w.writerows(head)
    w.writerows([safe_cell(c) for c in row] for row in rows)
    path = pathlib.Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(buf.getvalue(), encoding=encoding)


def _emails(roster) -> dict:
    """login -> the first e-mail the roster keys that login by (none without a roster)."""
    emails: dict = {}
    for key, login in (roster.keys.items() if roster is not None else ()):
        if "@" in key:
            emails.setdefault(login, key)
    return emails


def write_gradebook(rep: dict, path: pathlib.Path) -> None:
    """The gradebook CSV of ``rep`` (see the module docstring)."""
    sets = rep["sets"]
    questions = {slug: [q.name for q in get_set(slug).questions] for slug in sets}
    by = {(r["login"], r["assignment"]): r for r in rep["submissions"]
          if r.get("counted") and r.get("login") and r.get("assignment")}
    head = ["login", "name"]
    for slug in sets:
        head += [f"{slug}:{q}" for q in questions[slug]] + [f"{slug}:total", f"{slug}:late", f"{slug}:submitted"]
    rows = []
    for login, entry in rep["class"].items():
        cells = [login, entry["name"]]
        for slug in sets:
            r, cell = by.get((login, slug)), entry["sets"][slug]
            for q in questions[slug]:
                got = (r["questions"].get(q) or {}).get("score", 0.0) if r else 0.0
                cells.append(_fmt(got))
            cells += [_fmt(cell["score"]), _yes_no(cell["late"]), cell["submitted"] or ""]
        rows.append(cells + [_fmt(entry["score"]), _fmt(entry["possible"])])
    _write_csv(path, [head + ["total", "possible"]], rows, encoding="utf-8-sig")


def write_canvas_gradebook(rep: dict, path: pathlib.Path, roster) -> None:
    """The Canvas import CSV of ``rep`` (see the module docstring); ``ValueError`` when ``roster``
    has no Canvas ``ID`` column (Canvas matches an import's rows by it)."""
    import re

    from .roster import CANVAS_IDENTITY

    if roster is None or not any("ID" in cells for cells in roster.lms.values()):
        raise ValueError("--canvas-csv needs --roster with Canvas's columns (Student, ID, SIS User ID, SIS Login ID, "
                         "Section): use the gradebook Canvas exports")
    sets = rep["sets"]
    columns = {}
    for slug in sets:
        hit = [h for h in roster.headers if h not in CANVAS_IDENTITY and re.match(rf"0*{int(slug[:2])}\b", h)]
        columns[slug] = hit[0] if len(hit) == 1 else slug
    head = list(CANVAS_IDENTITY) + [columns[slug] for slug in sets]
    rows = []
    for login, entry in rep["class"].items():
        ids = roster.lms.get(login, {})
        cells = [ids.get("Student") or entry["name"], ids.get("ID", ""), ids.get("SIS User ID", ""),
                 ids.get("SIS Login ID", ""), ids.get("Section", "")]
        rows.append(cells + [_fmt(entry["sets"][slug]["score"]) for slug in sets])
    points = ["    Points Possible", "", "", "", ""] + [_fmt(get_set(slug).possible) for slug in sets]
    _write_csv(path, [head, points], rows)


def write_moodle_gradebook(rep: dict, path: pathlib.Path, roster) -> None:
    """The Moodle CSV import of ``rep`` (see the module docstring); ``ValueError`` when ``roster``
    gives no e-mail (Moodle's import matches rows by a user field: the e-mail here)."""
    emails = _emails(roster)
    if not emails:
        raise ValueError("--moodle-csv needs --roster with an e-mail column (Moodle's import matches users by it)")
    sets = rep["sets"]
    _write_csv(path, [["Email address", "Username"] + sets],
               ([emails.get(login, ""), login] + [_fmt(entry["sets"][slug]["score"]) for slug in sets]
                for login, entry in rep["class"].items()))


#: The longest note (a message of the judge) the report and the feedback keep; a longer one is
#: cut there and ends in an ellipsis.
NOTE_CHARS = 500


def question_note(q) -> str:
    """What the console and the feedback say of a graded question (a ``classroom.Question`` or its
    report entry): its messages, else "correct" at full points, else "form ok" where only the
    answers' form is known to be right, else nothing."""
    get = q.get if isinstance(q, dict) else lambda k: getattr(q, k)
    if get("messages"):
        return "; ".join(get("messages"))
    if get("score") == get("possible"):
        return "correct"
    return "form ok" if get("form_ok") else ""


def write_gradescope_gradebook(rep: dict, path: pathlib.Path, roster) -> None:
    """The Gradescope import CSV of ``rep`` (see the module docstring); ``ValueError`` when ``roster``
    gives neither an SID nor an e-mail (Gradescope matches an import's rows by one of them)."""
    emails = _emails(roster)
    sids = {login: cells["SID"] for login, cells in (roster.lms.items() if roster is not None else ())
            if cells.get("SID")}
    if not emails and not sids:
        raise ValueError("--gradescope-csv needs --roster with an SID or e-mail column (Gradescope matches "
                         "students by them): use the roster Gradescope exports")
    sets = rep["sets"]
    _write_csv(path, [["Name", "SID", "Email"] + sets],
               ([roster.names.get(login) or entry["name"], sids.get(login, ""), emails.get(login, "")]
                + [_fmt(entry["sets"][slug]["score"]) for slug in sets] for login, entry in rep["class"].items()))


def printable(text: object, limit: int = NOTE_CHARS) -> str:
    """Text made safe to print: no control characters or escapes, at most ``limit`` characters
    (a cut one ends in "…")."""
    text = str(text)
    cut = text[:limit] + ("…" if len(text) > limit else "")
    return "".join(c if c.isprintable() else "?" for c in cut)


_CLASSMATE = re.compile(r"another student's token \([^()]{0,60}'s\)")


def _md(text: str) -> str:
    """Student text as literal Markdown: ``|`` and ``<`` escaped with a backslash (no table cell
    or HTML tag can be opened), a classmate's login never named (a copied token says only that
    it is another student's)."""
    text = _CLASSMATE.sub("another student's token", printable(text))
    return text.replace("|", "\\|").replace("<", "\\<")


def feedback_markdown(login: str, subs: list, entry: dict | None = None) -> str:
    """A student's feedback: the total, every set (handed in or not), and per question the points
    and what was wrong (no expected value given away) of the copy that counts only. Other
    copies of a set are listed by name, never scored: their scores, one copy per option,
    would tell which option is right."""
    lines = [f"# Grading feedback for {_md(login)}", ""]
    if entry is not None:
        lines += [f"Total {_fmt(entry['score'])} / {_fmt(entry['possible'])} over {len(entry['sets'])} set(s).", ""]
        missing = [slug for slug, c in entry["sets"].items() if c["path"] is None]
        if missing:
            lines += ["Not handed in (each scores 0): " + ", ".join(missing) + ".", ""]
    counted = {s.get("assignment") for s in subs if s.get("counted") and s.get("assignment")}
    others: dict = {}
    for s in sorted(subs, key=lambda r: (r.get("assignment") or "", r["path"])):
        if s.get("assignment") in counted and not s.get("counted"):
            others.setdefault(s["assignment"], []).append(_md(pathlib.Path(s["path"]).name))
            continue
        head = f"## {s.get('assignment') or 'unknown set'}: {_md(pathlib.Path(s['path']).name)}"
        lines += [head, "", f"Status: {s['status']}" + ("" if s.get("counted") else " (not counted)")
                  + f". Score {_fmt(s['score'])} / {_fmt(s['possible'])}.", ""]
        lines += [f"- {_md(m)}" for m in s["messages"]]
        if s["messages"]:
            lines.append("")
        if s["questions"]:
            lines += ["| question | points | of | note |", "|---|---|---|---|"]
            for name, q in s["questions"].items():
                note = "; ".join(_md(m) for m in q["messages"]) or question_note(q)
                lines.append(f"| {name} | {_fmt(q['score'])} | {_fmt(q['possible'])} | {note} |")
            lines.append("")
    for slug, names in sorted(others.items()):
        lines += [f"## {slug}: other copies (not counted, not scored)", "",
                  ", ".join(names[:50]) + (f" and {len(names) - 50} more" if len(names) > 50 else "") + ".", ""]
    return "\n".join(lines)


def write_feedback(rep: dict, folder: pathlib.Path) -> list:
    """``folder/<login>.md`` for every student of the report's class (and anyone else identified);
    the files a previous class run wrote there and this one does not are removed (a regrade
    replaces its students' files only). The files written."""
    folder = pathlib.Path(folder)
    by: dict = {}
    for s in rep["submissions"]:
        if s.get("login"):
            by.setdefault(s["login"], []).append(s)
    logins = sorted(set(rep.get("class") or {}) | set(by))
    folder.mkdir(parents=True, exist_ok=True)
    manifest = folder / MANIFEST
    try:
        before = set(json.loads(manifest.read_text()))
    except (OSError, ValueError, TypeError):
        before = set()
    out = []
    for login in logins:
        p = folder / f"{login}.md"
        p.write_text(feedback_markdown(login, by.get(login, []), (rep.get("class") or {}).get(login)),
                     encoding="utf-8")
        out.append(p)
    written = {p.name for p in out}
    if rep.get("scope") == "regrade":  # one student's files replaced; the class's others stay
        written |= {n for n in before if isinstance(n, str)}
    for name in sorted(before - written):
        if isinstance(name, str) and name.endswith(".md") and "/" not in name:
            (folder / name).unlink(missing_ok=True)
    manifest.write_text(json.dumps(sorted(written)) + "\n")
    return out
