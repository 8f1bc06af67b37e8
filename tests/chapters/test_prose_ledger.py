"""Every sentence of every chapter matches its reviewed record, and no slip passes unseen.

The ledger (``tests/chapters/prose_ledger/NN_slug.json``, written by
``python scripts/prose_tools.py record``) holds, for every sentence of every
markdown cell (with or without a template): its text, the kinds of claim it
makes, the values it shows, the numbers it types (digits and number words), the
facts its words rest on, recomputed from the chapter's values (the sign of each
value, the order of every pair, the design a value names) and the claims tests
that check its values.  A sentence whose text changed, or whose facts turned
over when the chapter was re-run, fails here until it is re-read and recorded
again; the record step re-verifies the chapter's prose checks before it writes.

The slips (:func:`scripts.prose_tools.slips`) are the edits an author makes that
turn a true sentence false: a complement, a comparison or trend reversed, a
causal word turned, a scope widened, a count turned into "all", winner and loser
swapped, a number word or a unit changed, a formula changed.  Each one, made in
a copy of any chapter, must fail a check.
"""

from __future__ import annotations

import collections
import copy
import io
import json
import os
import random
import subprocess
import sys
from pathlib import Path

import pytest

from scripts import prose_tools as prose

ROOT = Path(__file__).resolve().parents[2]
CHAPTERS = sorted((ROOT / "notebooks").glob("[0-9][0-9]_*.ipynb"))
#: Slips tried per kind and chapter in the suite (``LANES_ALL_SLIPS=1`` tries every one).
SAMPLE = 4


def _load(path: Path) -> dict:
    return json.loads(path.read_text(encoding="utf-8"))


@pytest.mark.parametrize("path", CHAPTERS, ids=lambda p: p.stem)
def test_every_sentence_matches_its_reviewed_record(path):
    assert prose.check_ledger(_load(path), path.stem) == []


@pytest.fixture(scope="module")
def chapters():
    return {p.stem: prose.slimmed(_load(p)) for p in CHAPTERS}


@pytest.fixture(scope="module")
def all_slips(chapters):
    return {stem: list(prose.slips(nb)) for stem, nb in chapters.items()}


def _sample(stem, found):
    """Up to SAMPLE slips of each kind in the chapter, the same ones every run."""
    by_kind = collections.defaultdict(list)
    for s in found:
        by_kind[s.kind].append(s)
    if os.environ.get("LANES_ALL_SLIPS") == "1":
        return by_kind
    rng = random.Random(stem)
    return {k: rng.sample(v, min(SAMPLE, len(v))) for k, v in by_kind.items()}


@pytest.mark.parametrize("stem", [p.stem for p in CHAPTERS])
def test_every_kind_of_slip_fails_in_every_chapter(chapters, all_slips, stem):
    nb = chapters[stem]
    recorded, tests = prose.load_ledger(stem), prose.claims_tests(stem)
    assert prose.check_ledger(nb, stem, recorded, tests) == []  # the slim copy passes before the slips
    escaped = []
    for kind, found in _sample(stem, all_slips[stem]).items():
        for s in found:
            if not prose.check_ledger(s.nb, stem, recorded, tests):
                escaped.append(f"{kind} in cell {s.cell}: {s.before!r} -> {s.after!r}")
    assert escaped == []


def test_the_slips_cover_every_kind_across_the_book(all_slips):
    kinds = {s.kind for found in all_slips.values() for s in found}
    assert kinds == set(prose.SLIP_KINDS)


def test_the_slips_of_the_issue_are_made():
    """The held-out kinds of the issue, each made by the generator on a made-up cell."""
    cell = {"cell_type": "markdown", "metadata": {}, "source": (
        "Preemption costs 30% of the batch work because it evicts; the gap widens with load. "
        "On one slot `reserve:8` beats `hybrid:8` on 9 of 10 seeds, at sixteen slots per second "
        "and a wait of 2 s. The mean is $S / (1 - \\rho)$.")}
    made = {(s.kind, s.before, s.after) for s in prose.slips({"cells": [cell]})}
    for expected in [("complement", "costs", "keeps"), ("trend", "widens", "narrows"),
                     ("cause", "because", "despite"), ("scope", "one slot", "any number of slots"),
                     ("count", "on 9 of 10", "on all"), ("number-word", "sixteen", "eight"),
                     ("unit", "per second", "per minute"), ("unit", " s", " ms"),
                     ("formula", "1 - ", "1 + "),
                     ("winner", "`reserve:8` beats `hybrid:8`", "`hybrid:8` beats `reserve:8`")]:
        assert expected in made, expected


def test_a_slip_in_a_template_is_re_rendered():
    cell = {"cell_type": "markdown", "metadata": {"lanes": {"prose": "it keeps {{x:.0%}} of the work"}},
            "source": "it keeps 30% of the work"}
    values = {"cell_type": "code", "outputs": [{"output_type": "display_data", "metadata": {
        "scrapbook": {"name": "x", "mime_prefix": ""}}, "data": {
        "application/papermill.record/text/plain": "0.3"}}]}
    (s,) = [s for s in prose.slips({"cells": [values, cell]}) if s.kind == "complement"]
    assert prose.template_of(s.nb["cells"][s.cell]) == "it costs {{x:.0%}} of the work"
    assert s.nb["cells"][s.cell]["source"] == "it costs 30% of the work"


def test_a_slip_in_a_code_comment_or_a_figure_title_fails():
    cell = {"cell_type": "code", "id": "k", "metadata": {}, "outputs": [], "source":
            "# the gap widens with load\nax.set_title('p99 falls as R grows')\nx = 1  # slots"}
    nb = {"cells": [cell]}
    made = {(s.kind, s.before, s.after) for s in prose.slips(nb)}
    assert {("trend", "widens", "narrows"), ("trend", "falls", "rises")} <= made
    recorded = prose.ledger(nb, "99_x", {})
    assert {e["text"] for e in recorded} == {"[code] the gap widens with load", "[code] p99 falls as R grows",
                                             "[code] slots"}
    for s in prose.slips(nb):
        assert prose.check_ledger(s.nb, "99_x", recorded, {}), (s.before, s.after)


class TestTheLedger:
    """Each rule of the ledger on a made-up chapter: what passes, what fails."""

    @staticmethod
    def nb(*texts, **values):
        outs = [{"output_type": "display_data", "metadata": {"scrapbook": {"name": k, "mime_prefix": ""}},
                 "data": {"application/papermill.record/text/plain": repr(v)}} for k, v in values.items()]
        cells = [{"cell_type": "code", "metadata": {}, "source": "", "outputs": outs}]
        for i, t in enumerate(texts):
            cell = {"cell_type": "markdown", "id": f"c{i}", "metadata": {}, "source": t}
            if "{{" in t:
                prose.set_template(cell, t)
                cell["source"] = prose.render(t, values)
            cells.append(cell)
        return {"cells": cells}

    def record(self, nb, tmp_path, stem="99_x"):
        (tmp_path / "notebooks").mkdir(exist_ok=True)
        path = tmp_path / "notebooks" / f"{stem}.ipynb"
        path.write_text(json.dumps(nb), encoding="utf-8")
        out = io.StringIO()
        prose.record([path], tmp_path / "ledger", out=out, verify=False)
        return prose.load_ledger(stem, tmp_path / "ledger"), out.getvalue()

    def test_a_recorded_chapter_passes_and_any_changed_word_fails(self, tmp_path):
        nb = self.nb("Preemption finishes {{a:,}} jobs, more than the {{b:,}} of `reserve:9`.",
                     "It widens because the pool is full.", a=1538, b=707)
        rec, _ = self.record(nb, tmp_path)
        assert prose.check_ledger(nb, "99_x", rec, {}) == []
        edited = copy.deepcopy(nb)
        edited["cells"][2]["source"] = "It narrows because the pool is full."
        problems = prose.check_ledger(edited, "99_x", rec, {})
        assert any("sentence not in its reviewed record" in p and "It narrows" in p for p in problems)
        assert any("no longer in the chapter" in p and "It widens" in p for p in problems)

    def test_a_fact_turned_over_by_a_re_run_fails(self, tmp_path):
        nb = self.nb("Preemption finishes {{a:,}} jobs, more than the {{b:,}} of `reserve:9`.", a=1538, b=707)
        rec, _ = self.record(nb, tmp_path)
        rerun = self.nb("Preemption finishes {{a:,}} jobs, more than the {{b:,}} of `reserve:9`.", a=707, b=1538)
        (problem,) = prose.check_ledger(rerun, "99_x", rec, {})
        assert "turned over" in problem and "a > b" in problem and "a < b" in problem
        same_order = self.nb("Preemption finishes {{a:,}} jobs, more than the {{b:,}} of `reserve:9`.",
                             a=1600, b=700)
        assert prose.check_ledger(same_order, "99_x", rec, {}) == []

    def test_a_typed_number_and_a_number_word_are_facts(self):
        facts = prose.relations("p99 {{p:g}} s against a target of 2 s on sixteen slots", {"p": 3.1})
        assert {"p > 0", "p > 2", "p < sixteen"} <= set(facts)
        assert "min(xs) < max(xs)" in prose.relations("{{xs:g|max}}", {"xs": [1, 4]})
        assert "w = 'preempt'" in prose.relations("`{{w}}` wins", {"w": "preempt"})

    def test_a_record_edited_by_hand_fails(self, tmp_path):
        nb = self.nb("It widens because the pool is full.")
        rec, _ = self.record(nb, tmp_path)
        rec[0]["text"] = "It narrows because the pool is full."
        edited = copy.deepcopy(nb)
        edited["cells"][1]["source"] = "It narrows because the pool is full."
        assert any("edited by hand" in p for p in prose.check_ledger(edited, "99_x", rec, {}))

    def test_no_ledger_fails_and_names_the_command(self):
        (problem,) = prose.check_ledger(self.nb("A sentence."), "99_x", [], {})
        assert "python scripts/prose_tools.py record" in problem

    def test_recording_again_changes_nothing_and_shows_the_words_changed(self, tmp_path):
        nb = self.nb("It widens because the pool is full.", "Another sentence here.")
        first, _ = self.record(nb, tmp_path)
        again, out = self.record(nb, tmp_path)
        assert first == again and "0 new or changed" in out
        nb["cells"][1]["source"] = "It narrows because the pool is full."
        _, out = self.record(nb, tmp_path)
        assert "widens -> narrows" in out

    def test_a_chapter_failing_its_prose_checks_is_not_recorded(self, tmp_path, monkeypatch):
        nb = self.nb("The wait is $W = L / \\lambda$ here.")
        (tmp_path / "notebooks").mkdir()
        path = tmp_path / "notebooks" / "99_x.ipynb"
        path.write_text(json.dumps(nb), encoding="utf-8")
        out = io.StringIO()
        assert prose.record([path], tmp_path / "ledger", out=out) == 1
        assert "not recorded" in out.getvalue() and "not bound to a reference" in out.getvalue()
        assert not (tmp_path / "ledger" / "99_x.json").exists()

    def test_the_claims_tests_of_a_value_are_recorded(self, tmp_path):
        nb = self.nb("R = {{r:d}} slots.", r=9)
        (entry,) = prose.ledger(nb, "99_x", {"r": ["test_claims_99.py::test_r"]})
        assert entry["checks"] == ["r: test_claims_99.py::test_r"]
        assert prose.check_ledger(nb, "99_x", [entry], {}) != []  # the check gone: re-record


def test_the_command_line_refuses_bad_arguments():
    for args in ([], ["record"], ["record", "notebooks/no_such.ipynb"], ["frobnicate", "--all"]):
        r = subprocess.run([sys.executable, "scripts/prose_tools.py", *args], cwd=ROOT,
                           capture_output=True, text=True, timeout=60)
        assert r.returncode == 2 and r.stderr.strip().count("\n") == 0, (args, r.stderr)


def _set_glued(nb, name, value):
    """A copy of the slim chapter ``nb`` with the glued value ``name`` replaced."""
    nb = copy.deepcopy(nb)
    for out in nb["cells"][0]["outputs"]:
        if out["metadata"]["scrapbook"]["name"] == name:
            out["data"]["application/papermill.record/text/plain"] = repr(value)
    return nb


@pytest.mark.parametrize("stem", [p.stem for p in CHAPTERS])
def test_a_re_run_that_turns_a_fact_over_fails_in_every_chapter(chapters, stem):
    """Values change, words stay: the order of two values a sentence shows swapped, in a
    sample of the chapter's sentences, fails the ledger (the facts are recomputed)."""
    nb = chapters[stem]
    recorded, tests = prose.load_ledger(stem), prose.claims_tests(stem)
    values = prose.glued_values(nb)
    pairs = []
    for entry in recorded:
        for fact in entry["relations"]:
            a, rel, b = fact.split(" ", 2)
            if rel in "<>" and a in values and b in values and all(
                    isinstance(values[n], (int, float)) and not isinstance(values[n], bool) for n in (a, b)):
                pairs.append((a, b))
    pairs = sorted(set(pairs))
    assert pairs, "no sentence shows two values in order"
    escaped = []
    for a, b in random.Random(stem).sample(pairs, min(SAMPLE, len(pairs))):
        turned = _set_glued(_set_glued(nb, a, values[b]), b, values[a])
        problems = prose.check_ledger(turned, stem, recorded, tests)
        if not any("turned over" in p for p in problems):
            escaped.append(f"{a} <-> {b}")
    assert escaped == []
