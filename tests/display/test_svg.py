"""lanes.display.svg: charts drawn as SVG text with the standard library."""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET

import pytest

from lanes.display import svg
from lanes.display.svg import Band, Bars, Chart, Line, Rule

NS = "{http://www.w3.org/2000/svg}"


def parse(text: str) -> ET.Element:
    return ET.fromstring(text)


def texts(root: ET.Element) -> list[str]:
    return [t.text for t in root.iter(NS + "text")]


class TestTicks:
    def test_round_steps_cover_the_range(self):
        assert svg.nice_ticks(0, 24) == [0.0, 5.0, 10.0, 15.0, 20.0]
        assert svg.nice_ticks(0, 1) == [0.0, 0.2, 0.4, 0.6, 0.8, 1.0]
        assert svg.nice_ticks(-3, 3) == [-2.0, 0.0, 2.0]

    @pytest.mark.parametrize("lo,hi", [(0, 7.3), (0.001, 0.0042), (-50, 1234), (1e6, 3.5e6)])
    def test_between_three_and_eleven_ticks_inside_the_range(self, lo, hi):
        ticks = svg.nice_ticks(lo, hi)
        assert 3 <= len(ticks) <= 11
        assert all(lo - 1e-9 * abs(hi) <= t <= hi + 1e-9 * abs(hi) for t in ticks)
        steps = {round(b - a, 12) for a, b in zip(ticks, ticks[1:])}
        assert len(steps) == 1


class TestRender:
    def test_a_line_chart_has_axes_ticks_labels_title_and_legend(self):
        c = Chart((Line((0, 1, 2), (0, 5, 20), "load"), Rule(10, "y", "limit")), title="t", xlabel="time (h)", ylabel="slots")
        root = parse(svg.render(c, width=390))
        words = texts(root)
        assert {"t", "time (h)", "slots", "load", "limit"} <= set(words)
        assert {"0", "5", "10", "15", "20"} <= set(words)  # y ticks
        assert root.get("viewBox").startswith("0 0 390 ")
        (poly,) = root.iter(NS + "polyline")
        xs = [float(p.split(",")[0]) for p in poly.get("points").split()]
        ys = [float(p.split(",")[1]) for p in poly.get("points").split()]
        assert xs == sorted(xs) and ys == sorted(ys, reverse=True)  # up and to the right on screen

    def test_the_drawing_fits_its_width(self):
        c = Chart((Band((0, 1), (0, 0), (3, 4), "a very long legend label that must wrap onto a second row"),
                   Band((0, 1), (3, 4), (5, 6), "another long legend label"),), xlabel="x")
        root = parse(svg.render(c, width=240))
        for el in root.iter():
            for attr in ("x", "x1", "x2", "cx"):
                if el.get(attr) is not None and el.tag != NS + "svg":
                    assert -1 <= float(el.get(attr)) <= 240, (el.tag, el.attrib)
        height = float(root.get("viewBox").split()[3])
        assert height > 300  # the legend took rows below the 300 px drawing

    def test_log_axes_tick_at_powers_of_ten(self):
        root = parse(svg.render(Chart((Line((1, 1000), (0.5, 50)),), xlog=True, ylog=True)))
        assert {"1", "10", "100", "1,000", "0.1"} <= set(texts(root))

    def test_bars_name_their_categories_and_notes(self):
        root = parse(svg.render(Chart((Bars(("swap", "recompute"), (10.0, 30.0), ("1 s", "3 s")),), xlabel="jobs")))
        assert {"swap", "recompute", "1 s", "3 s", "jobs"} <= set(texts(root))
        widths = [float(r.get("width")) for r in root.iter(NS + "rect") if r.get("fill") != "none"]
        assert widths[1] == pytest.approx(3 * widths[0], rel=0.01)

    def test_text_is_escaped(self):
        out = svg.render(Chart((Line((0, 1), (0, 1), "a < b & c"),), title='"q"'))
        parse(out)
        assert "a &lt; b &amp; c" in out

    def test_a_gap_breaks_the_line(self):
        root = parse(svg.render(Chart((Line((0, 1, 2, 3), (1, 2, None, 3)),))))
        assert len(list(root.iter(NS + "polyline"))) == 2

    def test_same_chart_same_text(self):
        c = Chart((Line((0, 0.1, 0.2), (1 / 3, 2 / 3, 1.0)),))
        assert svg.render(c) == svg.render(c)
        (poly,) = parse(svg.render(c)).iter(NS + "polyline")
        assert not re.search(r"\d\.\d{2,}", poly.get("points"))  # coordinates at 0.1 px

    @pytest.mark.parametrize("kwargs,match", [({"width": 100}, "width must be an integer >= 200"),
                                              ({"height": 50}, "height must be an integer >= 120")])
    def test_bad_sizes_are_refused(self, kwargs, match):
        with pytest.raises(ValueError, match=match):
            svg.render(Chart((Line((0, 1), (0, 1)),)), **kwargs)

    def test_bad_marks_are_refused(self):
        with pytest.raises(ValueError, match="marks must be Line, Band, Bars or Rule"):
            Chart(("line",))
        with pytest.raises(ValueError, match="a chart with Bars holds only Bars and Rules"):
            Chart((Bars(("a",), (1.0,)), Line((0, 1), (0, 1))))
