"""Answer key of set 07 (instructor only)."""

from collections import Counter
from functools import lru_cache

from lanes.gpu.batcher import simulate_batches
from grading.checks import all_of, one_of
from grading.judge import choice, close, equal
from lanes.exercises.sets.set_07 import WAITS_MS, trickle


def _burst(v):
    common = dict(max_batch=v.max_batch, model_call_s=v.call_s)
    return (simulate_batches(v.n, max_wait_s=0.0, **common), simulate_batches(v.n, max_wait_s=v.wait_s, **common))


def q1(a, v):
    r0, rw = _burst(v)
    return all_of(equal("q1_calls", a["q1_calls"], r0.batches, hint="a zero wait still takes what is queued"),
                  close("q1_total_no_wait_s", a["q1_total_no_wait_s"], r0.total_s, rel=1e-6, abs_tol=1e-9),
                  close("q1_total_wait_s", a["q1_total_wait_s"], rw.total_s, rel=1e-6, abs_tol=1e-9,
                        hint="which windows are full, and which one waits?"))


@lru_cache(maxsize=None)
def _sweep(max_batch, call_s, gap_s):
    return {w: simulate_batches(trickle(gap_s), max_batch=max_batch, max_wait_s=w / 1000,
                                model_call_s=call_s) for w in WAITS_MS}


def q2(a, v):
    runs = _sweep(v.max_batch, v.call_s, v.gap_s)
    allowed = {w: r for w, r in runs.items() if r.batches <= v.max_calls}
    best = min(r.mean_latency_s for r in allowed.values())
    winners = [w for w, r in allowed.items() if r.mean_latency_s <= best + 1e-12]
    return all_of(one_of("q2_wait_s", a["q2_wait_s"], [w / 1000 for w in winners], abs_tol=1e-6,
                         message="q2_wait_s is not the allowed wait with the lowest mean latency "
                         "(waits of 0 to 300 ms in 5 ms steps, at most V.max_calls calls)"),
                  close("q2_latency_s", a["q2_latency_s"], best, rel=1e-6, abs_tol=1e-9))


def q3(a, v):
    run = _sweep(v.max_batch, v.call_s, v.gap_s)[0]
    sizes = Counter(run.batch_sizes)
    top = max(sizes.values())
    return all_of(one_of("q3_typical_batch", a["q3_typical_batch"], [s for s, k in sizes.items() if k == top],
                         message="q3_typical_batch is not the most common batch size of the zero-wait trickle"),
                  close("q3_latency_s", a["q3_latency_s"], run.mean_latency_s, rel=1e-6, abs_tol=1e-9,
                        hint="the mean latency of that zero-wait run"))


def q4(a, v):
    return choice("q4_choice", a["q4_choice"], "c", hint="what does a window take when it opens?")
