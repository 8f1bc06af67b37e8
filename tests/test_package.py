"""The package surface: every advertised name resolves, unknown names fail clearly."""

from __future__ import annotations

import pytest

import lanes


def test_every_public_name_resolves():
    missing = [name for name in lanes.__all__ if getattr(lanes, name, None) is None]
    assert missing == []


def test_unknown_name_is_an_attribute_error():
    with pytest.raises(AttributeError, match="has no attribute 'nope'"):
        lanes.nope  # noqa: B018


def test_slot_pool_and_step_simulators_keep_distinct_names():
    assert lanes.simulate.__module__ == "lanes.pool.engine"
    assert lanes.simulate_steps.__module__ == "lanes.gpu.steps"
