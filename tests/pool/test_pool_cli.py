"""``python -m lanes table``: output, JSON rows, flags and errors."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from lanes.cli import main
from test_slotpool import ANCHOR_TABLE

JSON_KEYS = ["policy", "p50", "p99", "max", "late", "batch_done", "preempted", "util"]


def run_cli(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "lanes", *args], capture_output=True, text=True, timeout=120)


class TestTable:
    def test_default_table_as_a_process(self):
        out = run_cli("table", "--tick", "1")
        assert out.returncode == 0, out.stderr
        assert out.stdout == ANCHOR_TABLE + "\n"
        default = run_cli("table", "--hours", "0.5").stdout.splitlines()
        assert default[0].endswith(", event-driven clock") and default[-1].startswith("hybrid:8 ")

    def test_json_rows(self, capsys):
        assert main(["table", "--json", "--policies", "fifo,reserve:16,hybrid:8", "--hours", "1"]) == 0
        rows = json.loads(capsys.readouterr().out)
        assert [r["policy"] for r in rows] == ["fifo", "reserve:16", "hybrid:8"]
        assert all(list(r) == JSON_KEYS for r in rows)
        assert all(isinstance(r["late"], float) and isinstance(r["util"], float) for r in rows)

    def test_scenario_flags_change_the_run(self, capsys):
        argv = ["table", "--policies", "priority", "--slots", "16", "--hours", "0.5", "--backlog", "50",
                "--batch-service", "30", "90", "--inter-service", "2", "6", "--trough-rate", "0.5",
                "--peak-rate", "1.5", "--preempt-cost", "60", "--seed", "11"]
        assert main(argv) == 0
        out = capsys.readouterr().out
        assert out.splitlines()[0] == ("16 slots, 0.5 h, interactive 0.5-1.5 req/s x 2-6 s, batch backlog 50 x 30-90 s, "
                                       "event-driven clock")
        from lanes import Scenario, simulate

        sc = Scenario(slots=16, hours=0.5, backlog=50, batch_service_s=(30, 90), inter_service_s=(2, 6),
                      trough_rate=0.5, peak_rate=1.5, preempt_cost_s=60, seed=11)
        assert out.splitlines()[-1] == simulate(sc, "priority").line()

    def test_extension_flags(self, capsys):
        assert main(["table", "--json", "--policies", "preempt", "--floor", "40"]) == 0
        with_floor = json.loads(capsys.readouterr().out)[0]
        assert main(["table", "--json", "--policies", "preempt"]) == 0
        without = json.loads(capsys.readouterr().out)[0]
        assert with_floor["preempted"] < without["preempted"]
        assert with_floor["p99"] > without["p99"]

    def test_promote_flag(self, capsys):
        argv = ["table", "--json", "--policies", "priority", "--hours", "1"]
        assert main(argv + ["--promote", "600"]) == 0
        promoted = json.loads(capsys.readouterr().out)[0]
        assert main(argv) == 0
        plain = json.loads(capsys.readouterr().out)[0]
        assert promoted["batch_done"] > plain["batch_done"]
        assert promoted["p99"] > plain["p99"]


class TestClock:
    def test_tick_1_is_the_anchor(self):
        out = run_cli("table", "--tick", "1")
        assert out.returncode == 0 and out.stdout.strip() == ANCHOR_TABLE

    def test_a_step_sized_clock_says_so_and_changes_the_evictions(self):
        out = run_cli("table", "--tick", "0.02", "--hours", "1", "--policies", "preempt", "--json")
        coarse = run_cli("table", "--tick", "1", "--hours", "1", "--policies", "preempt", "--json")
        fine, one = json.loads(out.stdout)[0], json.loads(coarse.stdout)[0]
        assert fine["preempted"] > 2 * one["preempted"]
        header = run_cli("table", "--tick", "0", "--hours", "0.1", "--policies", "preempt").stdout.splitlines()[0]
        assert header.endswith(", event-driven clock")


class TestErrors:
    @pytest.mark.parametrize(
        "args, needle",
        [
            (["--policies", "bogus"], "policy must be one of fifo, priority, reserve:R, preempt, hybrid:R"),
            (["--policies", "reserve:80"], "reserve must be an integer in [0, slots] (got 80, slots=64)"),
            (["--slots", "0"], "slots must be an integer >= 1 (got 0)"),
            (["--slots", "many"], "argument --slots: must be an integer (got 'many')"),
            (["--hours", "-1"], "hours must be a number > 0 (got -1.0)"),
            (["--hours", "8760"], "hours must be at most 168 (a week) (got 8760.0)"),
            (["--tick", "0.3"], "tick_s must be 0 (event-driven) or divide one second"),
            (["--tick", "soon"], "argument --tick: must be a number (got 'soon')"),
            (["--backlog", "-5"], "backlog must be an integer in [0, 10000000] (got -5)"),
            (["--batch-service", "90", "30"], "batch_service_s must have lo <= hi (got 90 > 30)"),
            (["--inter-service", "4"], "argument --inter-service: expected 2 arguments"),
            (["--peak-rate", "fast"], "argument --peak-rate: must be a number (got 'fast')"),
            (["--victim", "oldest"], "victim must be one of youngest, most_remaining (got 'oldest')"),
        ],
    )
    def test_one_line_and_status_2(self, args, needle):
        out = run_cli("table", *args)
        assert out.returncode == 2
        assert out.stdout == ""
        lines = out.stderr.strip().splitlines()
        assert len(lines) == 1, out.stderr
        assert needle in lines[0]
        assert "Traceback" not in out.stderr


class TestLightImports:
    @staticmethod
    def _imported_by_the_command(*args: str) -> set[str]:
        """Every module ``python -m lanes ...`` imports, read from ``-X importtime``."""
        out = subprocess.run([sys.executable, "-X", "importtime", "-m", "lanes", *args], capture_output=True,
                             text=True, timeout=120)
        assert out.returncode == 0, out.stderr[-2000:]
        return {line.rsplit("|", 1)[1].strip() for line in out.stderr.splitlines() if line.startswith("import time:")}

    def test_cli_path_imports_no_heavy_library(self):
        modules = self._imported_by_the_command("table", "--hours", "0.1")
        assert "lanes.pool.engine" in modules  # the scan sees the package's own imports
        assert not {m.split(".")[0] for m in modules} & {"numpy", "pandas", "matplotlib", "ipywidgets"}

    def test_table_imports_neither_other_parts_nor_json(self):
        modules = self._imported_by_the_command("table", "--hours", "0.1")
        assert not {m for m in modules if m.startswith(("lanes.gpu", "lanes.lane"))}
        assert "json" not in modules

    def test_import_lanes_is_light(self):
        code = "import sys, lanes; lanes.simulate; print(sorted(m for m in ('numpy','pandas','matplotlib','ipywidgets') if m in sys.modules))"
        out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
        assert out.stdout.strip() == "[]", out.stdout + out.stderr

    def test_import_lanes_exercises_loads_neither_otter_nor_nbformat(self):
        """The variant cell, the grading box and the judge import ``lanes.exercises``: Otter and
        nbformat (with jsonschema) cost seconds there, and only a public check needs Otter,
        which is loaded by then."""
        code = ("import sys, lanes.exercises; lanes.exercises.variant('01_slots_and_littles_law', ''); "
                "print(sorted(m for m in ('otter', 'nbformat', 'jsonschema') if m in sys.modules))")
        out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
        assert out.stdout.strip() == "[]", out.stdout + out.stderr
