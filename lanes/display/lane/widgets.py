"""ipywidgets explorers for the chapter on the inside of a lane.

Defined in :mod:`lanes.display.explorers`; :func:`lanes.display.pool.widgets.lab` gives
them their JupyterLab form (controls above a figure and a small table, re-rendered when
a control is released).  ipywidgets, matplotlib and pandas are imported inside the functions.
"""

from __future__ import annotations

from typing import Any

from lanes.display import explorers as _ex
from lanes.lane.interactive import LaneScenario
from ..pool.widgets import lab

__all__ = ["lane_explorer"]


def lane_explorer(scenario: LaneScenario | None = None) -> Any:
    """Queue limit, order and surge rate of one lane (:func:`lanes.display.explorers.lane`): latency over time and outcomes.

    Parameters
    ----------
    scenario : LaneScenario, optional
        The base scenario; its first tenant's surge rate is replaced by the slider.
    """
    return lab(_ex.lane(scenario))
