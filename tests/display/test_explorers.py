"""lanes.display.explorers: one definition per explorer, for JupyterLab and the web book."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

import lanes
from lanes.display import explorers as ex
from lanes.display import svg
from lanes.lane.interactive import LaneScenario, TenantLoad


def moved(control: ex.Control):
    """A value of ``control`` other than its default."""
    if control.kind == "toggle":
        return not control.value
    if control.kind == "choice":
        return next(v for _, v in control.options if v != control.value)
    return control.hi if control.value != control.hi else control.lo


class TestDefinitions:
    def test_every_chapter_explorer_is_defined(self):
        assert set(ex.EXPLORERS) == {
            "littles", "policy", "headroom", "preemption", "starvation", "lane", "microbatch", "littles_chain", "goodput",
            "swap", "hol", "knee", "long_prompt", "tenant", "kv_headroom", "preemption_cost",
        }
        assert len(ex.by_title()) == len(ex.EXPLORERS)  # titles name explorers one to one

    @pytest.mark.parametrize("name", sorted(ex.EXPLORERS))
    def test_every_control_changes_the_figure_or_the_table(self, name):
        e = ex.EXPLORERS[name]()
        base = e.view()
        assert base.charts and base.rows
        base_svg = [svg.render(c) for c in base.charts]
        for c in e.controls:
            v = e.view(**{c.name: moved(c)})
            assert [svg.render(ch) for ch in v.charts] != base_svg or v.rows != base.rows, f"{name}: {c.name} changes nothing"

    def test_the_view_runs_the_model(self):
        sc = lanes.Scenario()
        v = ex.headroom(sc).view(reserve=16)
        r = lanes.simulate(sc, "reserve:16")
        assert dict(v.rows)["batch jobs done"] == f"{r.batch_done:,}"
        assert v.charts[0].title == r.spec

    @pytest.mark.parametrize("values,match", [
        ({"reserve": 33}, r"reserve must be a number in \[0, 32\] \(got 33\)"),
        ({"reserve": 2.5}, r"reserve must be a number in \[0, 32\]"),
        ({"batch": "1 h"}, r"batch must be one of"),
        ({"slots": 3}, r"unknown control 'slots'"),
    ])
    def test_bad_values_name_the_control(self, values, match):
        with pytest.raises(ValueError, match=match):
            ex.headroom().view(**values)


class TestCalls:
    def test_a_call_makes_the_same_explorer_again(self):
        sc = LaneScenario(tenants=(TenantLoad("a", 5.0, surge_rate_per_s=10.0, surge_start_s=30, surge_end_s=90),), duration_s=120)
        e = ex.lane(sc)
        again = ex.from_call(e.call)
        assert again.call == e.call
        assert again.view(surge=9.0) == e.view(surge=9.0)
        assert ex.from_call(ex.starvation(lanes.Scenario(hours=2), deadline_s=3600).call).view().rows == \
            ex.starvation(lanes.Scenario(hours=2), deadline_s=3600).view().rows

    def test_the_json_the_worker_gets(self):
        e = ex.knee()
        out = json.loads(ex.render_json(e.call, json.dumps({"percentile": 0.9}), 390))
        assert out["svg"][0] == svg.render(e.view(percentile=0.9).charts[0], width=390)
        assert out["rows"] == [list(r) for r in e.view(percentile=0.9).rows]

    @pytest.mark.parametrize("call,match", [
        ('{"explorer": "os.system"}', "explorer must be one of"),
        ('{"explorer": "headroom", "args": [{"dataclass": "os:PathLike", "fields": {}}]}', "may only make lanes classes"),
    ])
    def test_a_call_makes_only_lanes_explorers(self, call, match):
        with pytest.raises(ValueError, match=match):
            ex.from_call(call)

    def test_values_that_cannot_travel_are_refused(self):
        with pytest.raises(ValueError, match="cannot encode object values"):
            ex.encode(object())


def test_the_definitions_import_only_the_standard_library():
    """The browser has no matplotlib, pandas or ipywidgets: the definitions and a view must not need them."""
    code = (
        "import sys\n"
        "from lanes.display import explorers as ex, svg\n"
        "for n, f in ex.EXPLORERS.items():\n"
        "    [svg.render(c) for c in f().view().charts]\n"
        "bad = sorted(m for m in sys.modules if m.split('.')[0] in {'matplotlib', 'pandas', 'numpy', 'ipywidgets', 'IPython'})\n"
        "print(bad)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"
