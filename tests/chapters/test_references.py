"""The references page cites the work the course's theory and systems come from."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
PAGE = (ROOT / "book" / "references.md").read_text(encoding="utf-8")

#: Work the chapters use or imply, with a phrase its entry must hold.
CITED = {
    "Orca (continuous batching)": r"Orca.*OSDI 2022",
    "CoDel": r"CoDel.*Controlling queue\s+delay",
    "Halfin-Whitt": r"Halfin and Whitt \(1981\).*Operations Research",
    "Allen-Cunneen": r"Allen \(1990\).*Allen-Cunneen",
    "DistServe": r"DistServe.*OSDI 2024",
    "Cobham": r"Cobham \(1954\).*Priority assignment",
    "Kleinrock's conservation law": r"Kleinrock \(1965\).*conservation law",
    "Harchol-Balter's chapters": r"Harchol-Balter \(2013\).*chapters used",
    "Kingman": r"Kingman \(1961\)",
    "Schrage (SRPT)": r"Schrage \(1968\).*shortest remaining",
}


@pytest.mark.parametrize("work", CITED)
def test_the_work_is_cited(work):
    assert re.search(CITED[work], PAGE, re.DOTALL | re.IGNORECASE), f"book/references.md does not cite {work}"


def test_each_entry_is_a_bullet_of_its_own():
    starts = [m.group(1) for m in re.finditer(r"^- \*\*([^*]+)\*\*", PAGE, re.MULTILINE)]
    assert len(starts) == len(set(starts))
    for name in ("Cobham (1954).", "Kleinrock (1965).", "Halfin and Whitt (1981)."):
        assert name in starts
