"""Fixtures of the exercise tests."""

from __future__ import annotations

import pytest


@pytest.fixture
def shared_pool_runs(monkeypatch):
    """Within one test, a slot-pool run of a built-in policy already made is not made again.

    In process, a set's master and its answer key simulate the same days with the same
    policies (the key recomputes what the master computed: about half of the key's work for
    sets 03, 04, 05, 12 and 14): the key gets the run the master made. A run is a pure
    function of its scenario, its policy and its draws (frozen values, compared whole), and
    its result is read-only, so sharing it changes no answer and no verdict; a run that
    differs in anything is made. Shared too: a key's reference rule (a scheduler class of a
    module :func:`grading.judge.load_key` loaded), by its class and its parameters, when one
    test judges several answers against it. A student's scheduler always runs. The runs are
    dropped after the test (a capstone day's run holds about 3 MB: a test that makes many
    different runs, such as the capstone's check of every member, goes without).
    """
    from lanes.pool import engine
    from lanes.pool.policies import Policy

    run = engine._run
    made: dict = {}

    def shared(sc, rule, stream):
        if isinstance(rule, Policy):
            key = (sc, rule, stream)
        elif type(rule).__module__.startswith("lanes_key_") and isinstance(getattr(rule, "__dict__", None), dict) \
                and all(type(x) in (int, float, str, bool, type(None)) for x in vars(rule).values()):
            key = (sc, type(rule).__module__, type(rule).__qualname__, tuple(sorted(vars(rule).items())), stream)
        else:
            return run(sc, rule, stream)
        if key not in made:
            made[key] = run(sc, rule, stream)
        return made[key]

    monkeypatch.setattr(engine, "_run", shared)
    return made
