"""Answer key of set 04 (instructor only)."""

from functools import lru_cache

import lanes
from grading.checks import all_of, one_of
from grading.judge import choice, close, equal


@lru_cache(maxsize=None)
def _table(slots, peak_rate, preempt_cost_s, seed):
    sc = lanes.Scenario(hours=3, slots=slots, peak_rate=peak_rate, preempt_cost_s=preempt_cost_s, seed=seed)
    return sc, lanes.run_table(sc)


def _meets(row, v):
    """Served interactive work (a p99 of -1 means none) with a p99 wait under the target."""
    return row.n_interactive > 0 and 0 <= row.p99_s < v.target_s


def _best(v):
    _, table = _table(v.slots, v.peak_rate, v.preempt_cost_s, v.seed)
    meets = [r for r in table if _meets(r, v)]
    most = max(r.batch_done for r in meets)
    return table, {r.policy.spec for r in meets if r.batch_done == most}, most


def q1(a, v):
    # one criterion: a policy name alone is right for many variants, its slot use is not
    table, best, _ = _best(v)
    chosen = a["q1_best_policy"] if a["q1_best_policy"] in best else min(best)
    return all_of(one_of("q1_best_policy", a["q1_best_policy"], best,
                         message="q1_best_policy is not the policy that meets the p99 target and completes "
                         "the most batch jobs"),
                  close("q1_util", a["q1_util"], table[chosen].util, abs_tol=1e-6,
                        hint="the slot use of the policy of q1, a fraction between 0 and 1"))


def q2(a, v):
    _, _, most = _best(v)
    return equal("q2_batch_done", a["q2_batch_done"], most,
                 hint="batch jobs completed by the policy of q1")


def q3(a, v):
    sc, table = _table(v.slots, v.peak_rate, v.preempt_cost_s, v.seed)
    expected = table["preempt"].preempted * sc.preempt_cost_s / 3600
    return close("q3_recompute_h", a["q3_recompute_h"], expected, rel=1e-6, abs_tol=1e-9,
                 hint="evictions times the seconds each one adds, in hours")


def q4(a, v):
    return choice("q4_choice", a["q4_choice"], "b", hint="where did the batch lane's slot time go?")


@lru_cache(maxsize=None)
def _evictions_per_arrival(slots, peak_rate, preempt_cost_s, seed, tick_s):
    sc = lanes.Scenario(hours=1, slots=slots, peak_rate=peak_rate, preempt_cost_s=preempt_cost_s, seed=seed,
                        tick_s=tick_s)
    run = lanes.simulate(sc, "preempt")
    return run.preempted / run.n_arrivals


def q5(a, v):
    per = [_evictions_per_arrival(v.slots, v.peak_rate, v.preempt_cost_s, v.seed, tick) for tick in (1, v.q5_tick_s)]
    return [close("q5_evictions_per_arrival_1s", a["q5_evictions_per_arrival_1s"], per[0], rel=1e-6,
                  hint="evictions over interactive arrivals of preempt on the one-hour pool, 1 s clock"),
            close("q5_evictions_per_arrival_fine", a["q5_evictions_per_arrival_fine"], per[1], rel=1e-6,
                  hint="the same run with tick_s=V.q5_tick_s")]
