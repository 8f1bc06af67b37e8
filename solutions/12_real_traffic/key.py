"""Answer key of set 12 (instructor only): every answer recomputed on the student's hour."""

from functools import lru_cache

import lanes
from lanes.gpu import replay
from grading.checks import all_of
from grading.judge import choice, close, equal
from lanes.pool import traces


@lru_cache(maxsize=4)
def _trace(name):
    return traces.load_trace(name)


@lru_cache(maxsize=None)
def _hour(v):
    return _trace(v.trace).resample(v.resample_seed).window(v.start_s, v.end_s).scaled(v.rate_factor)


@lru_cache(maxsize=None)
def _reserve(v, poisson):
    """The smallest reserve of q4 (q5 on the Poisson copy) and the batch jobs its run completes."""
    hour = _hour(v).as_poisson(v.resample_seed) if poisson else _hour(v)
    pool = lanes.Scenario(slots=v.slots)
    r = replay.smallest_reserve(hour, v.target_s, pool)
    return r, replay.replay(hour, f"reserve:{r}", pool).batch_done


def q1(a, v):
    return close("q1_ratio_per_minute", a["q1_ratio_per_minute"], _hour(v).dispersion(60), rel=1e-3,
                 hint="variance over mean of the arrivals in each whole minute of your hour")


def q2(a, v):
    s = sorted(_hour(v).output_tokens)
    return all_of(equal("q2_output_p99", a["q2_output_p99"], s[min(len(s) - 1, int(0.99 * len(s)))],
                        hint="the nearest-rank p99, sorted[int(0.99 * n)], of the output tokens"),
                  close("q2_output_mean", a["q2_output_mean"], sum(s) / len(s), rel=1e-6,
                        hint="the mean of the output tokens"))


def q3(a, v):
    hour = _hour(v)
    _, stream = replay.replay_inputs(hour, lanes.Scenario(slots=v.slots))
    mean_hold = sum(stream.inter_service_s) / len(stream.inter_service_s)
    return close("q3_mean_busy", a["q3_mean_busy"], hour.rate_per_s * mean_hold, rel=1e-3,
                 hint="Little's law: your hour's mean rate times the mean hold")


def q4(a, v):
    r, done = _reserve(v, False)
    return all_of(equal("q4_reserve", a["q4_reserve"], r,
                        hint="reserve:R on your hour with V.slots slots, every R from 0 upwards"),
                  equal("q4_batch_done", a["q4_batch_done"], done, hint="batch jobs done by the run at that R"))


def q5(a, v):
    r, done = _reserve(v, True)
    return all_of(equal("q5_reserve_poisson", a["q5_reserve_poisson"], r,
                        hint="the same search on the Poisson copy of your hour"),
                  equal("q5_batch_done", a["q5_batch_done"], done, hint="batch jobs done by the run at that R"))


def q6(a, v):
    return choice("q6_choice", a["q6_choice"], "b", hint="what must the reserved slots be ready for?")
