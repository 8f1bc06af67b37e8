"""The book's own pages: the system diagram, how to start, and the operator's page.

The diagram is drawn by ``scripts/draw_system.py``; the committed SVG must be
what the script draws now, must render offline (no fetched fonts, images or
scripts), and must be shown early on the intro page.  The operator's page names
simulator attributes to look at; each must exist.
"""

from __future__ import annotations

import dataclasses
import re
import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

import lanes

ROOT = Path(__file__).resolve().parents[2]
SVG = ROOT / "book" / "images" / "system.svg"
BOOK = ROOT / "book"


class TestSystemDiagram:
    def test_committed_svg_is_what_the_script_draws(self):
        proc = subprocess.run([sys.executable, "scripts/draw_system.py", "--check"], cwd=ROOT,
                              capture_output=True, text=True, check=False)
        assert proc.returncode == 0, proc.stderr

    def test_valid_svg_that_needs_no_network(self):
        root = ET.parse(SVG).getroot()
        assert root.tag == "{http://www.w3.org/2000/svg}svg"
        text = SVG.read_text()
        links = set(re.findall(r"https?://[^\s\"')]+", text))
        assert links <= {"http://www.w3.org/2000/svg"}, links
        assert "<script" not in text and "@import" not in text and "<image" not in text

    @pytest.mark.parametrize("part", ["Front door", "Interactive lane", "fair share per tenant",
                                      "bounded queue", "Batch lane", "durable job store",
                                      "Provider batch API", "overflow", "Scheduler", "Slot pool",
                                      "Engine"])
    def test_shows_every_part_of_the_system(self, part):
        labels = " ".join(t.text or "" for t in ET.parse(SVG).getroot().iter("{http://www.w3.org/2000/svg}text"))
        assert part in labels

    def test_has_a_text_alternative(self):
        root = ET.parse(SVG).getroot()
        ns = "{http://www.w3.org/2000/svg}"
        assert root.find(f"{ns}title") is not None and len(root.find(f"{ns}desc").text) > 100

    def test_intro_shows_it_early(self):
        intro = (BOOK / "intro.md").read_text()
        at = intro.find("images/system.svg")
        assert at != -1, "the intro does not show the system diagram"
        assert at < len(intro) // 3, "the diagram should come early on the intro page"


def test_how_to_use_starts_jupyterlab_at_the_root_and_opens_an_exercise_set():
    text = (BOOK / "how_to_use.md").read_text()
    assert re.search(r"^jupyter lab$", text, re.MULTILINE)
    assert "root of the repository" in text
    assert re.search(r"exercises/(\d\d_\w+)/set_\1\.ipynb", text)


class TestOperatingPage:
    text = (BOOK / "operating.md").read_text()

    def test_listed_in_the_toc_after_the_chapters(self):
        toc = (ROOT / "_toc.yml").read_text()
        chapters = [m.start() for m in re.finditer(r"file: notebooks/", toc)]
        assert "file: book/operating" in toc
        assert toc.index("file: book/operating") > max(chapters)

    @pytest.mark.parametrize("topic", ["Queue depth", "TTFT", "per tenant tier", "completed per hour",
                                       "by their deadline", "Preemptions per minute",
                                       "recomputed tokens", "occupancy", "wrong lane",
                                       "separate fleets"])
    def test_covers(self, topic):
        assert topic.lower() in self.text.lower()

    def test_states_no_numbers_it_does_not_compute(self):
        prose = re.sub(r"`[^`]*`|<[^>]*>|\(chapter \d+\)|chapters? \d+|HTTP 429|\bp\d\d\b", "", self.text)
        assert not re.findall(r"\d", prose), "the page states a number; compute it in a test or drop it"

    def test_every_simulator_attribute_it_names_exists(self):
        named = re.findall(r"`(SlotPoolResult|LaneResult)\.(\w+)`", self.text)
        assert named
        from lanes.lane.interactive import LaneResult
        from lanes.pool.results import SlotPoolResult

        classes = {"SlotPoolResult": SlotPoolResult, "LaneResult": LaneResult}
        for cls, attr in named:
            fields = {f.name for f in dataclasses.fields(classes[cls])}
            assert attr in fields or hasattr(classes[cls], attr), f"{cls}.{attr}"
        for fn in re.findall(r"`lanes\.(\w+)`", self.text):
            assert hasattr(lanes, fn), fn


_SMALL_TEXT = re.compile(
    r"""fontsize\s*=\s*(?:["'](?:xx-small|x-small|small|smaller)["']|(\d+(?:\.\d+)?))"""
    r"""|font\.size|rcParams\[["']\w*\.?labelsize""")


def test_no_figure_text_is_set_below_the_10_point_default():
    """The figures' labels stay at least 10 pt, the size tests/site/test_site.py's phone crawl
    measures them at (``LABEL_PX``): no ``fontsize`` under 10 and no change of the default
    size in the plotting modules (``plots.py``, or a ``display`` package if they move)."""
    files = sorted(f for f in (ROOT / "lanes").rglob("*.py") if f.name == "plots.py" or "display" in f.parts)
    problems = []
    assert len(files) >= 3, files
    for path in files:
        for lineno, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
            for m in _SMALL_TEXT.finditer(line):
                if m.group(1) is None or float(m.group(1)) < 10:
                    problems.append(f"{path.relative_to(ROOT)}:{lineno}: {line.strip()}")
    assert not problems, "text set below 10 pt:\n" + "\n".join(problems)
