"""The scheduler interface: built-ins through it equal the fast engine; the rules; policy files."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given, settings

import lanes
from lanes import Scenario, simulate
from lanes.pool import reference
from lanes.pool.protocol import (INTERACTIVE, RULES, Board, Decision, DecisionError, Observation, Request, Running)
from lanes.pool.schedulers import Fifo, Priority, as_scheduler, load_policy, load_policy_file, scheduler_for
from strategies import runs, scenarios

ROOT = Path(__file__).resolve().parents[1]
EXAMPLES = ROOT / "examples" / "policies"


class TestBuiltinsThroughTheInterface:
    @settings(max_examples=60, deadline=None)
    @given(runs())
    def test_equal_the_fast_engine(self, run):
        scenario, policy = run
        scheduler = scheduler_for(policy)  # an object with decide(obs), run like a student's
        assert reference.run(scenario, scheduler) == {**simulate(scenario, policy).row(), "policy": policy.spec}

    def test_the_families(self):
        assert type(scheduler_for("fifo")) is Fifo
        hybrid = scheduler_for(lanes.parse_policy("hybrid:8", floor=4, aging_s=60))
        assert hybrid == Priority(reserve=8, preempts=True, floor=4, aging_s=60, name="hybrid:8")

    @settings(max_examples=25, deadline=None)
    @given(scenarios(max_ticks=600))
    def test_example_files_equal_their_builtins(self, scenario):
        draws = reference.draw(scenario)
        prio = load_policy_file(str(EXAMPLES / "priority.py"))
        assert reference.run(scenario, prio, draws) == reference.run(scenario, lanes.parse_policy("priority"), draws)
        if scenario.slots >= 8:
            hyb = load_policy_file(str(EXAMPLES / "hybrid.py"))
            row = reference.run(scenario, hyb, draws)
            assert row == {**reference.run(scenario, lanes.parse_policy("hybrid:8"), draws), "policy": row["policy"]}


class TestPolicyFileCli:
    @pytest.mark.parametrize("name, spec", [("priority", "priority"), ("hybrid", "hybrid:8")])
    def test_rows_equal_the_builtin_rows(self, name, spec, capsys):
        from lanes.cli import main

        assert main(["table", "--policy-file", str(EXAMPLES / f"{name}.py")]) == 0
        mine = capsys.readouterr().out.splitlines()
        assert main(["table", "--policies", spec, "--jobs", "1"]) == 0
        builtin = capsys.readouterr().out.splitlines()
        assert mine == builtin and len(mine) == 4

    def test_json_row(self, capsys):
        import json

        from lanes.cli import main

        args = ["--hours", "0.25", "--backlog", "300", "--slots", "16", "--json"]
        assert main(["table", "--policy-file", str(EXAMPLES / "hybrid.py"), *args]) == 0
        (mine,) = json.loads(capsys.readouterr().out)
        assert main(["table", "--policies", "hybrid:8", *args]) == 0
        (builtin,) = json.loads(capsys.readouterr().out)
        assert mine == {**builtin, "policy": "reserve 8+pre"}

    def test_a_broken_rule_is_one_line_and_status_2(self, tmp_path, capsys):
        from lanes.cli import main

        f = tmp_path / "greedy.py"
        f.write_text("from lanes.pool.protocol import Decision\n"
                     "def greedy(obs):\n    return Decision(start=[r.id for r in obs.waiting][:obs.free + 1])\n")
        assert main(["table", "--policy-file", str(f), "--hours", "0.1", "--backlog", "0", "--slots", "2"]) == 2
        err = capsys.readouterr().err.strip()
        assert len(err.splitlines()) == 1 and "'free-slots'" in err

    def test_flags_that_do_not_apply_are_refused(self, capsys):
        from lanes.cli import main

        assert main(["table", "--policy-file", str(EXAMPLES / "priority.py"), "--floor", "4"]) == 2
        assert "--floor cannot be given" in capsys.readouterr().err

    def test_missing_file(self, capsys):
        from lanes.cli import main

        assert main(["table", "--policy-file", "/nonexistent/p.py"]) == 2
        assert "policy-file" in capsys.readouterr().err


def _board() -> Board:
    """Two slots: a batch job and a request running, one of each kind waiting."""
    b = Board(slots=2, preempt_cost_s=5)
    b.add_batch(30, 0)  # id 0
    b.add_batch(40, 0)  # id 1
    b.add_request(0)  # id 2
    b.apply(0, Decision(start=[2, 0]))
    b.add_request(1)  # id 3
    return b


class TestRules:
    @pytest.mark.parametrize("decision, rule", [
        ("start 3", "decision-type"),
        (Decision(start=(3.0,)), "decision-type"),
        (Decision(start={3}), "decision-type"),
        (Decision(evict=[7]), "evict-running"),
        (Decision(evict=[0, 0]), "evict-running"),
        (Decision(evict=[2]), "evict-batch-only"),
        (Decision(start=[0]), "start-queued"),
        (Decision(start=[99]), "start-queued"),
        (Decision(start=[3]), "free-slots"),
        (Decision(start=[3, 1], evict=[0]), "free-slots"),
        (Decision(start=list(range(10**6))), "free-slots"),
    ])
    def test_each_rule_is_named(self, decision, rule):
        b = _board()
        before = (list(b.waiting), list(b.batch_queue), list(b.running))
        with pytest.raises(DecisionError, match=f"rule '{rule}'") as exc:
            b.apply(1, decision)
        assert exc.value.rule == rule and rule in RULES and isinstance(exc.value, ValueError)
        assert (list(b.waiting), list(b.batch_queue), list(b.running)) == before  # nothing changed

    def test_evict_then_restart_in_one_tick(self):
        b = _board()
        evicted, started = b.apply(1, Decision(start=[0], evict=[0]))
        assert [j.id for j in evicted] == [0] and [j.id for j in started] == [0]
        job = b.running[-1]
        assert job.ends_at == 1 + (30 - 1) + 5  # work left plus the redo cost

    def test_eviction_goes_to_the_head(self):
        b = _board()
        b.apply(1, Decision(start=[3], evict=[0]))
        assert [q.id for q in b.batch_queue] == [0, 1]
        assert b.batch_queue[0].remaining_s == 34 and b.batch_queue[0].queued_since == 1


class TestWhatASchedulerSees:
    def test_hold_times_of_requests_are_hidden(self):
        b = _board()
        obs = b.observe(1)
        assert isinstance(obs, Observation) and obs.free == 0 and obs.n_batch == 1 and obs.n_interactive == 1
        (req,) = obs.waiting
        assert isinstance(req, Request) and not hasattr(req, "service_s") and req.arrival == 1
        inter = [j for j in obs.running if j.kind == INTERACTIVE][0]
        assert isinstance(inter, Running) and inter.ends_at is None
        batch = [j for j in obs.running if j.kind == "batch"][0]
        assert batch.ends_at - obs.t == 29  # batch hold times are known
        assert [q.remaining_s for q in obs.batch_queue] == [40]

    def test_views_are_read_only(self):
        obs = _board().observe(1)
        with pytest.raises((TypeError, AttributeError)):
            obs.waiting.append(None)
        with pytest.raises((TypeError, AttributeError)):
            obs.running[0] = None
        assert obs.batch_queue[:5] == tuple(obs.batch_queue)

    def test_the_reference_never_shows_the_scheduler_more(self):
        seen = []

        def watch(obs):
            seen.append(obs)
            return Decision()

        reference.run(Scenario(hours=0.01, backlog=3, slots=2), watch)
        assert {type(o) for o in seen} == {Observation} and len(seen) == 36


class TestLoading:
    def test_one_function(self):
        s = load_policy("from lanes.pool.protocol import Decision\ndef mine(obs):\n    return Decision()\n")
        assert s.name == "mine"

    def test_named_policy_wins(self):
        src = "def a(obs): pass\ndef b(obs): pass\npolicy = b\n"
        assert load_policy(src).name == "b"

    @pytest.mark.parametrize("src, msg", [
        ("def a(obs): pass\ndef b(obs): pass\n", "found 2 functions"),
        ("x = 1\n", "found 0"),
        ("def (:\n", "does not compile"),
    ])
    def test_errors(self, src, msg):
        with pytest.raises(ValueError, match=msg):
            load_policy(src)

    def test_as_scheduler_refuses_junk(self):
        with pytest.raises(ValueError, match="policy must be"):
            as_scheduler(42)
