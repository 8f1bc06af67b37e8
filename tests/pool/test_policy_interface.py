"""The scheduler interface: schedulers written against it equal the built-ins in the one loop; the rules; policy files."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given, settings

import lanes
from lanes import Scenario, simulate
from lanes.pool.protocol import (INTERACTIVE, RULES, Board, Decision, DecisionError, Observation, Request, Running,
                                 load_policy, load_policy_file, student_scheduler)
from strategies import runs, scenarios

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = ROOT / "examples" / "policies"


class TestBuiltinsThroughTheInterface:
    @settings(max_examples=25, deadline=None)
    @given(scenarios(max_ticks=600))
    def test_example_files_equal_their_builtins(self, scenario):
        prio = load_policy_file(str(EXAMPLES / "priority.py"))
        row = simulate(scenario, prio).row()
        assert row == {**simulate(scenario, "priority").row(), "policy": row["policy"]}
        if scenario.slots >= 8:
            hyb = load_policy_file(str(EXAMPLES / "hybrid.py"))
            row = simulate(scenario, hyb).row()
            assert row == {**simulate(scenario, "hybrid:8").row(), "policy": row["policy"]}

    def test_a_scheduler_at_a_finer_clock_sees_seconds_and_equals_the_builtin(self):
        sc = Scenario(hours=0.05, slots=10, backlog=60, batch_service_s=(10, 40), tick_s=0.1)
        times = []

        def priority(obs):
            times.append(obs.t)
            start = [r.id for r in obs.waiting[: obs.free]]
            start += [q.id for q in obs.batch_queue[: obs.free - len(start)]]
            return Decision(start=start)

        row = simulate(sc, priority).row()
        assert row == {**simulate(sc, "priority").row(), "policy": "priority"}
        assert times[:3] == [0, 0.1, 0.2] and len(times) == sc.ticks * 10


class TestPolicyFileCli:
    @pytest.mark.parametrize("name, spec", [("priority", "priority"), ("hybrid", "hybrid:8")])
    def test_rows_equal_the_builtin_rows(self, name, spec, capsys):
        from lanes.cli import main

        assert main(["table", "--policy-file", str(EXAMPLES / f"{name}.py")]) == 0
        mine = capsys.readouterr().out.splitlines()
        assert main(["table", "--policies", spec]) == 0
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
        assert mine == builtin

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

    def test_the_simulator_never_shows_the_scheduler_more(self):
        seen = []

        def watch(obs):
            seen.append(obs)
            return Decision()

        simulate(Scenario(hours=0.01, backlog=3, slots=2, tick_s=1), watch)  # asked once a second
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

    def test_junk_is_refused(self):
        with pytest.raises(ValueError, match="policy must be"):
            student_scheduler(42)
        with pytest.raises(ValueError, match="policy must be"):
            simulate(Scenario(hours=0.01), 42)
