"""Answer key of set 03 (instructor only)."""

import math
from functools import lru_cache

import lanes
from grading.checks import all_of
from grading.judge import choice, close, equal
from lanes.pool.sweep import scan_reserve


@lru_cache(maxsize=None)
def _scenario(slots, peak_rate, batch_service_s, seed):
    return lanes.Scenario(hours=2, slots=slots, peak_rate=peak_rate, batch_service_s=batch_service_s, seed=seed)


@lru_cache(maxsize=None)
def _smallest(slots, peak_rate, batch_service_s, seed, target_s):
    sc = _scenario(slots, peak_rate, batch_service_s, seed)
    r, runs = scan_reserve(sc, lambda run: run.p99_s <= target_s, stream=lanes.draw_stream(sc))
    if r is None:
        raise RuntimeError("no headroom meets the target")
    return r, runs[-1]


def q1(a, v):
    # one criterion: a small whole R is shared by many variants, the batch jobs done are not
    r, run = _smallest(v.slots, v.peak_rate, v.batch_service_s, v.seed, v.target_s)
    return all_of(equal("q1_reserve_long", a["q1_reserve_long"], r,
                        hint="the smallest R whose p99 wait meets the target, scanning R from 0"),
                  equal("q1_batch_done", a["q1_batch_done"], run.batch_done, hint="batch jobs done at that R"))


def q2(a, v):
    r, run = _smallest(v.slots, v.peak_rate, v.short_batch_service_s, v.seed, v.target_s)
    return all_of(equal("q2_reserve_short", a["q2_reserve_short"], r,
                        hint="the same search with the short batch jobs"),
                  close("q2_mean_busy", a["q2_mean_busy"], run.day.mean_busy_interactive, rel=1e-6,
                        hint="slots held by user requests, on average, in the run at that R"))


def q3(a, v):
    _, run = _smallest(v.slots, v.peak_rate, v.short_batch_service_s, v.seed, v.target_s)
    return close("q3_util_short", a["q3_util_short"], run.util, abs_tol=1e-6,
                 hint="slot use at the headroom of q2, a fraction between 0 and 1")


def q4(a, v):
    return choice("q4_choice", a["q4_choice"], "c", hint="what must headroom cover while batch slots drain?")


@lru_cache(maxsize=None)
def _steady(slots, rate, batch_service_s, seed, target_s, p_wait):
    """q5: the square-root rule's beta sqrt(L) at a steady load, and the first R from its rounded-up
    value that meets the target in half an hour of the simulator, with the batch jobs done there."""
    sc = lanes.Scenario(hours=0.5, slots=slots, trough_rate=rate, peak_rate=rate,
                        batch_service_s=batch_service_s, seed=seed)
    rule = lanes.halfin_whitt_beta(p_wait) * math.sqrt(rate * sum(sc.inter_service_s) / 2)
    r, runs = scan_reserve(sc, lambda run: run.p99_s <= target_s, min_reserve=math.ceil(rule),
                           stream=lanes.draw_stream(sc))
    if r is None:
        raise RuntimeError("no headroom meets the target")
    return rule, r, runs[-1].batch_done


def q5(a, v):
    rule, r, done = _steady(v.slots, v.q5_rate_per_s, v.batch_service_s, v.seed, v.target_s, v.q5_p_wait)
    # the closed form is a continuous number; the simulator's whole R is judged with its batch jobs
    return [close("q5_beta_sqrt_load", a["q5_beta_sqrt_load"], rule, rel=1e-3,
                  hint="beta for your chance of waiting, times the square root of the load in erlangs"),
            all_of(equal("q5_reserve_sim", a["q5_reserve_sim"], r,
                         hint="the first R from the rule's R, rounded up, whose p99 wait meets the target"),
                   equal("q5_batch_done", a["q5_batch_done"], done, hint="batch jobs done at that R"))]
