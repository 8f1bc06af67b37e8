"""Answer key of set 12 (instructor only): every answer recomputed on the student's hour."""

from functools import lru_cache

import lanes
from lanes.gpu import replay
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
    hour = _hour(v).as_poisson(v.resample_seed) if poisson else _hour(v)
    return replay.smallest_reserve(hour, v.target_s, lanes.Scenario(slots=v.slots))


def q1(a, v):
    return close("q1_ratio_per_minute", a["q1_ratio_per_minute"], _hour(v).dispersion(60), rel=1e-3,
                 hint="variance over mean of the arrivals in each whole minute of your hour")


def q2(a, v):
    s = sorted(_hour(v).output_tokens)
    return equal("q2_output_p99", a["q2_output_p99"], s[min(len(s) - 1, int(0.99 * len(s)))],
                 hint="the nearest-rank p99, sorted[int(0.99 * n)], of the output tokens")


def q3(a, v):
    hour = _hour(v)
    _, stream = replay.replay_inputs(hour, lanes.Scenario(slots=v.slots))
    mean_hold = sum(stream.inter_service_s) / len(stream.inter_service_s)
    return close("q3_mean_busy", a["q3_mean_busy"], hour.rate_per_s * mean_hold, rel=1e-3,
                 hint="Little's law: your hour's mean rate times the mean whole-second hold")


def q4(a, v):
    return equal("q4_reserve", a["q4_reserve"], _reserve(v, False),
                 hint="reserve:R on your hour with V.slots slots, every R from 0 upwards")


def q5(a, v):
    return equal("q5_reserve_poisson", a["q5_reserve_poisson"], _reserve(v, True),
                 hint="the same search on the Poisson copy of your hour")


def q6(a, v):
    return choice("q6_choice", a["q6_choice"], "b", hint="what must the reserved slots be ready for?")
