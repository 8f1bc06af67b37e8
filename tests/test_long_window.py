"""Long windows: the prefix-and-shared-tail run (lanes.pool.longrun) against the plain engine.

The long path must give exactly the rows the plain per-tick engine gives.  On
windows short enough for both, a forced small prefix and small chunks make
it double the prefix, start policies in different tail groups, merge them,
and walk congested chunks tick by tick; the tests check that each of those
happened as well as that the rows agree.
"""

from __future__ import annotations

import io
import random

import pytest

import lanes
from lanes import Scenario, run_table, simulate
from lanes.pool import arrivals, cli, longrun
from lanes.pool import scenario as scenario_module
from lanes.pool.policies import parse_policy
from lanes.pool.progress import terminal_progress

POLICIES = [
    parse_policy("fifo"),
    parse_policy("priority"),
    parse_policy("reserve:4"),
    parse_policy("reserve:16"),
    parse_policy("preempt"),
    parse_policy("hybrid:8"),
    parse_policy("preempt", floor=4),
    parse_policy("hybrid:8", aging_s=300),
    parse_policy("preempt", victim="most_remaining", min_run_s=30),
]


def summary(r: lanes.SlotPoolResult) -> tuple:
    waits = list(r.wait_counts)
    while waits and not waits[-1]:
        waits.pop()
    return r.row(), r.n_interactive, r.n_arrivals, r.batch_queued, waits


@pytest.fixture
def route(monkeypatch):
    """Counts what the long path did: prefix runs, tail groups made, chunks walked and skipped, merges."""
    seen = {"prefixes": 0, "groups": 0, "walked": 0, "skipped": 0, "merged": 0, "bounded": 0}
    of, init, step, walk, merge, most = (
        longrun._PrefixState.of.__func__, longrun._Tail.__init__, longrun._Tail.step, longrun._Tail._walk,
        longrun._merge, longrun._Chunk.most_in_slots,
    )

    def counted(key, f, delta=1):
        def wrapper(*args):
            seen[key] += delta
            return f(*args)

        return wrapper

    def counted_walk(*args):
        seen["skipped"] -= 1  # every step counted as skipped; a walked one is not
        return counted("walked", walk)(*args)

    def counted_merge(groups, totals):
        kept = merge(groups, totals)
        seen["merged"] += len(groups) - len(kept)
        return kept

    monkeypatch.setattr(longrun._PrefixState, "of", classmethod(counted("prefixes", of)))
    monkeypatch.setattr(longrun._Tail, "step", counted("skipped", step))
    monkeypatch.setattr(longrun._Tail, "_walk", counted_walk)
    def counted_most(chunk, busy):
        most_held = most(chunk, busy)
        seen["bounded"] += most_held <= chunk_slots[0]
        return most_held

    chunk_slots = [0]

    def counted_init(self, scenario, *args):
        chunk_slots[0] = scenario.slots
        seen["groups"] += 1
        init(self, scenario, *args)

    monkeypatch.setattr(longrun, "_merge", counted_merge)
    monkeypatch.setattr(longrun._Chunk, "most_in_slots", counted_most)
    monkeypatch.setattr(longrun._Tail, "__init__", counted_init)
    return seen


class TestSameRowsAsThePlainEngine:
    @pytest.mark.parametrize("seed, chunk", [(3, 700), (8, 60)])
    def test_prefix_doubled_then_a_congested_tail(self, seed, chunk, route, monkeypatch):
        monkeypatch.setattr(longrun, "_COMPACT_AFTER", 5)  # drop admitted requests from the queue's front often
        sc = Scenario(hours=3, backlog=200, slots=44, seed=seed)
        full = [summary(r) for r in run_table(sc, POLICIES)]
        long = [summary(r) for r in longrun.run_long(sc, POLICIES, prefix_ticks=900, chunk_ticks=chunk)]
        assert long == full
        assert route["prefixes"] > len(POLICIES)  # the first prefix was too short: doubled
        assert route["walked"] > 0 and route["skipped"] > 0  # congested chunks and free ones

    def test_groups_that_differ_at_the_prefix_end_and_merge(self, route):
        sc = Scenario(hours=2, backlog=60, slots=48, seed=8, trough_rate=4.8, peak_rate=4.8)
        pols = [POLICIES[i] for i in (0, 1, 2, 3, 7, 8)]  # those that finish the backlog under this load
        full = [summary(r) for r in run_table(sc, pols)]
        assert [summary(r) for r in longrun.run_long(sc, pols, prefix_ticks=1354, chunk_ticks=50)] == full
        assert route["groups"] > 1 and route["merged"] > 0

    def test_quiet_tail_all_chunks_skipped(self, route):
        sc = Scenario(hours=2, backlog=300, slots=64, seed=5, peak_rate=4.0)
        full = [summary(r) for r in run_table(sc, POLICIES)]
        # At 1000 s every backlog job has started, but some still hold slots: not yet the tail.
        assert [summary(r) for r in longrun.run_long(sc, POLICIES, prefix_ticks=1000, chunk_ticks=1000)] == full
        assert route["prefixes"] == 2 * len(POLICIES)
        assert route["walked"] == 0 and route["skipped"] > 0

    @pytest.mark.parametrize("seed, rate", [(2, 1.1), (3, 1.1), (2, 1.2)])
    def test_chunks_cleared_by_arrival_counts_alone(self, seed, rate, route):
        # Every request holds its slot 10 s, so arrivals over 10 s bound the slots in use; with
        # 30-tick chunks, a third of the ticks still hold requests from the chunk before.
        sc = Scenario(hours=1, backlog=5, slots=20, inter_service_s=(10, 10), trough_rate=rate, peak_rate=rate + 0.3,
                      seed=seed)
        pols = POLICIES[:2] + POLICIES[4:6]
        full = [summary(r) for r in run_table(sc, pols)]
        assert [summary(r) for r in longrun.run_long(sc, pols, prefix_ticks=300, chunk_ticks=30)] == full
        assert route["bounded"] > 0 and route["walked"] > 0

    def test_requests_overrunning_the_window(self):
        sc = Scenario(hours=1, backlog=50, slots=20, inter_service_s=(200, 900), trough_rate=0.01, peak_rate=0.05)
        full = [summary(r) for r in run_table(sc, POLICIES[:6])]
        assert [summary(r) for r in longrun.run_long(sc, POLICIES[:6], prefix_ticks=600, chunk_ticks=333)] == full

    def test_no_coupling_within_the_window_falls_back_to_the_plain_run(self, route):
        sc = Scenario(hours=1, backlog=5000, slots=16)  # batch never finishes within the hour
        full = run_table(sc, POLICIES[:3])
        long = longrun.run_long(sc, POLICIES[:3], prefix_ticks=700)
        assert [summary(r) for r in long] == [summary(r) for r in full]
        assert route["skipped"] == 0  # no tail at all
        assert long[1].busy_batch == full[1].busy_batch  # the plain run keeps its series


class TestTailGroups:
    def test_only_equal_states_merge_and_each_member_keeps_its_waits(self):
        sc = Scenario(hours=1, slots=4)
        idle = longrun._Tail(sc, [0], 0, [0, 1, 0], [], [])
        queued = longrun._Tail(sc, [1], 0, [0, 1, 0], [5], [3])
        same = longrun._Tail(sc, [2], 0, [0, 1, 0], [], [])
        idle.stats.waits[0] += 7
        queued.stats.waits[4] += 1
        same.stats.waits[2] += 1
        totals = [longrun._Stats() for _ in range(3)]
        kept = longrun._merge([idle, queued, same], totals)
        assert kept == [idle, queued] and idle.members == [0, 2] and queued.members == [1]
        assert totals[0].waits == {0: 7} and totals[2].waits == {2: 1} and not totals[1].waits
        assert not idle.stats.waits  # flushed: what follows is shared


class TestLongWindows:
    """A window past the (lowered) series limit goes through the long path by itself."""

    @pytest.fixture
    def one_hour_series(self, monkeypatch):
        monkeypatch.setattr(scenario_module, "MAX_SERIES_HOURS", 1)

    def test_run_table_and_simulate_take_the_long_path(self, monkeypatch):
        sc = Scenario(hours=2, backlog=300, slots=40, seed=4)
        full = [summary(r) for r in run_table(sc, POLICIES[:4])]
        monkeypatch.setattr(scenario_module, "MAX_SERIES_HOURS", 1)
        assert sc.is_long
        assert [summary(r) for r in run_table(sc, POLICIES[:4])] == full
        assert summary(simulate(sc, POLICIES[1])) == full[1]

    def test_series_refuse_with_the_limit(self, one_hour_series):
        r = simulate(Scenario(hours=3, backlog=100), "reserve:8")
        assert r.p99_s >= 0 and 0 < r.util < 1
        for read in (lambda: r.busy_batch, lambda: r.wait_s, lambda: r.window(0, 60), lambda: r.interactive_done):
            with pytest.raises(ValueError, match=r"^hours: per-tick series .* at most 1 h .*got hours=3"):
                read()

    def test_draws_refuse_with_the_limit(self, one_hour_series):
        for call in (lambda: arrivals.draw_stream(Scenario(hours=2)), lambda: arrivals.rate_curve(Scenario(hours=2))):
            with pytest.raises(ValueError, match=r"^hours: .* at most 1 h .*got hours=2"):
                call()

    def test_reference_simulator_refuses_with_the_limit(self, one_hour_series):
        from lanes.pool import reference

        with pytest.raises(ValueError, match=r"^hours: the reference simulator .* at most 1 h .*got hours=2"):
            reference.run(Scenario(hours=2), "priority")

    def test_backlog_unfinished_within_the_longest_prefix_is_refused(self, one_hour_series, monkeypatch):
        monkeypatch.setattr(longrun, "MAX_PREFIX_HOURS", 1)
        with pytest.raises(ValueError, match=r"^hours: a window past 1 h .* within its first 1 h"):
            run_table(Scenario(hours=2, backlog=5000, slots=16), ["priority"])

    def test_cli_rows_and_no_progress_when_piped(self, monkeypatch, capsys):
        sc = Scenario(hours=2, backlog=300, slots=40, seed=6)
        pols = tuple(POLICIES[:4])
        full = cli.table_rows(sc, pols)
        monkeypatch.setattr(scenario_module, "MAX_SERIES_HOURS", 1)
        capsys.readouterr()
        assert cli.table_rows(sc, pols, jobs=2) == full
        assert capsys.readouterr().err == ""


class TestProgressLine:
    def test_none_unless_a_terminal(self):
        assert terminal_progress("x", out=io.StringIO()) is None

    def test_drawn_and_blanked_on_a_terminal(self):
        class Tty(io.StringIO):
            def isatty(self):
                return True

        out = Tty()
        line = terminal_progress("ticks", out=out, delay_s=0, every_s=0)
        line(5, 10)
        assert out.getvalue() == "\rticks: 5/10 (50%), 0 s"
        line.close()
        assert out.getvalue().endswith("\r" + " " * len("ticks: 5/10 (50%), 0 s") + "\r")


class TestStreamedDraws:
    """Drawn a stretch at a time, over the lazily computed curve: the library's calls, number for number."""

    @pytest.mark.parametrize(
        "inter, rates, ticks",
        [((4, 12), (2.0, 5.0), 30000), ((1, 300), (20.0, 60.0), 700), ((200, 255), (0.0, 9.0), 2000),
         ((4, 12), (300.0, 500.0), 40), ((1, 1), (0.5, 0.5), 3000)],
    )
    def test_pieces_equal_the_whole(self, inter, rates, ticks):
        curve = arrivals._rates(*rates, ticks)
        whole = arrivals._draw_with_calls(random.Random(11), curve, 40, (60, 180), inter)
        draws = arrivals._TickDraws(random.Random(11), 40, (60, 180), inter, words=True)
        counts, service = [], []
        for t0 in range(0, ticks, 997):
            c, s = draws.ticks(arrivals._RateCurve(*rates, ticks, t0, min(ticks, t0 + 997)))
            counts += c
            service += s
        assert (draws.backlog, counts, service) == whole

    @pytest.mark.parametrize("lo, hi", [(2.0, 2.001), (3.5, 5.0), (0.0, 0.0), (480.0, 500.0)])
    def test_top_byte_table_only_where_every_word_agrees(self, lo, hi):
        from bisect import bisect_right

        sure, maybe = arrivals._poisson_tables(lo, hi)
        table = arrivals._by_top_byte(sure, maybe)
        rng = random.Random(1)
        for b, k in enumerate(table):
            for a in ((b << 24), ((b + 1) << 24) - 1, rng.randrange(b << 24, (b + 1) << 24)):
                if k >= 0:
                    assert bisect_right(sure, a) == k and a < maybe[k], (b, a)
        if hi - lo < 0.01:  # a narrow range: about one byte per threshold left to the bisection
            assert table.count(-1) <= len(sure) + 2

    def test_curve_is_the_rate_list(self):
        for t0, t1 in ((0, 50), (15_768_000 - 25, 15_768_000 + 25), (31_536_000 - 50, 31_536_000)):
            curve = arrivals._RateCurve(2.0, 5.0, 31_536_000, t0, t1)
            assert [curve[i] for i in range(len(curve))] == arrivals._rates(2.0, 5.0, 31_536_000, range(t0, t1))
            lo, hi = curve.bounds(0, len(curve))
            assert lo == min(curve) and hi == max(curve)


@pytest.mark.parametrize("peak", [2.2250738585072014e-308, 5e-324, 1e-200])
def test_a_nearly_flat_rate_curve_draws_as_the_reference_does(peak):
    """A peak rate a hair above the trough: the table blocks must not come from 12 / slope = inf."""
    from lanes.pool import reference

    sc = lanes.Scenario(slots=1, hours=1 / 60, backlog=0, batch_service_s=(1, 1), inter_service_s=(1, 1),
                        trough_rate=0.0, peak_rate=peak, preempt_cost_s=0, seed=0)
    assert lanes.simulate(sc, "fifo").row() == reference.run(sc, "fifo")
