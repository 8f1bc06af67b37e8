"""Bad input is refused at the boundary with one line naming the parameter."""

from __future__ import annotations

import pytest

from lanes import Policy, Scenario, parse_policies, parse_policy, simulate


class TestScenario:
    @pytest.mark.parametrize(
        "changes, message",
        [
            ({"slots": 0}, r"^slots must be an integer >= 1 \(got 0\)$"),
            ({"slots": -3}, r"^slots must be an integer >= 1 \(got -3\)$"),
            ({"slots": "64"}, r"^slots must be an integer >= 1 \(got '64'\)$"),
            ({"slots": 2.5}, r"^slots must be an integer >= 1 \(got 2.5\)$"),
            ({"hours": 0}, r"^hours must be a number in \(0, 240\] \(got 0\)$"),
            ({"hours": 1 / 7}, r"^hours must be a whole number \(>= 1\) of seconds"),
            ({"backlog": -1}, r"^backlog must be an integer in \[0, 10000000\] \(got -1\)$"),
            ({"batch_service_s": (180, 60)}, r"^batch_service_s must have lo <= hi \(got 180 > 60\)$"),
            ({"batch_service_s": (0, 60)}, r"^batch_service_s lo must be an integer >= 1 \(got 0\)$"),
            ({"inter_service_s": 5}, r"^inter_service_s must be a pair \(lo, hi\)"),
            ({"trough_rate": -1.0}, r"^trough_rate must be a number in \[0, 500\] \(got -1.0\)$"),
            ({"peak_rate": float("nan")}, r"^peak_rate must be a number in \[0, 500\] \(got nan\)$"),
            ({"trough_rate": 4.0, "peak_rate": 3.0}, r"^peak_rate must be >= trough_rate \(got 3 < 4\)$"),
            ({"preempt_cost_s": -5}, r"^preempt_cost_s must be an integer >= 0 \(got -5\)$"),
            ({"seed": "x"}, r"^seed must be an integer \(got 'x'\)$"),
        ],
    )
    def test_refused(self, changes, message):
        with pytest.raises(ValueError, match=message):
            Scenario(**changes)

    def test_whole_floats_are_accepted_as_integers(self):
        sc = Scenario(slots=32.0, hours=0.5)
        assert sc.slots == 32 and isinstance(sc.slots, int) and sc.ticks == 1800


class TestPolicy:
    @pytest.mark.parametrize(
        "spec, message",
        [
            ("bogus", r"^policy must be one of fifo, priority, reserve:R, preempt, hybrid:R \(got 'bogus'\)$"),
            ("reserve", r"needs a reserve size"),
            ("reserve:x", r"^reserve in policy 'reserve:x' must be an integer >= 0 \(got 'x'\)$"),
            ("hybrid:-2", r"must be an integer >= 0 \(got -2\)$"),
            ("fifo:3", r"^policy must be one of"),
        ],
    )
    def test_bad_specs(self, spec, message):
        with pytest.raises(ValueError, match=message):
            parse_policy(spec)

    def test_reserve_larger_than_the_pool(self):
        with pytest.raises(ValueError, match=r"^reserve must be in \[0, slots\] \(got 80, slots=64\)$"):
            simulate(Scenario(hours=0.1), "reserve:80")

    def test_floor_larger_than_the_pool(self):
        with pytest.raises(ValueError, match=r"^floor must be in \[0, slots\] \(got 9, slots=8\)$"):
            simulate(Scenario(slots=8, hours=0.1), "priority", floor=9)

    @pytest.mark.parametrize(
        "field, value, message",
        [
            ("victim", "oldest", r"^victim must be one of youngest, most_remaining \(got 'oldest'\)$"),
            ("aging_s", -1, r"^aging_s must be an integer >= 0 \(got -1\)$"),
            ("min_run_s", 1.5, r"^min_run_s must be an integer >= 0 \(got 1.5\)$"),
            ("floor", -1, r"^floor must be an integer >= 0 \(got -1\)$"),
        ],
    )
    def test_bad_extensions(self, field, value, message):
        with pytest.raises(ValueError, match=message):
            parse_policy("preempt", **{field: value})

    def test_empty_policy_list(self):
        with pytest.raises(ValueError, match="policies must list at least one policy"):
            parse_policies(" , ")

    def test_spec_and_label(self):
        p = parse_policy("hybrid:8")
        assert (p.spec, p.label, p.preempts, p.headroom) == ("hybrid:8", "reserve 8+pre", True, 8)
        assert Policy("reserve", reserve=4).spec == "reserve:4"
