"""Answer key of set 07 (instructor only)."""

from lanes.engine.batcher import simulate_batches
from lanes.exercises.judge import Check, choice, close, equal


def _runs(v):
    common = dict(max_batch=v.max_batch, model_call_s=v.call_s)
    return (simulate_batches(v.n, max_wait_s=0.0, **common), simulate_batches(v.n, max_wait_s=v.wait_s, **common))


def q1(a, v):
    r0, rw = _runs(v)
    return [equal("q1_sizes_no_wait", a["q1_sizes_no_wait"], list(r0.batch_sizes),
                  hint="the batch sizes in the order they ran, with max_wait_s=0"),
            equal("q1_sizes_wait", a["q1_sizes_wait"], list(rw.batch_sizes),
                  hint="the batch sizes in the order they ran, with your wait")]


def q2(a, v):
    r0, rw = _runs(v)
    return [close("q2_total_no_wait_s", a["q2_total_no_wait_s"], r0.total_s, rel=1e-6, abs_tol=1e-9),
            close("q2_total_wait_s", a["q2_total_wait_s"], rw.total_s, rel=1e-6, abs_tol=1e-9)]


def q3(a, v):
    arrivals = [v.gap_s * i for i in range(v.n)]
    lat = {w: simulate_batches(arrivals, max_batch=v.max_batch, max_wait_s=w, model_call_s=v.call_s).mean_latency_s
           for w in v.wait_options_s}
    best = min(lat.values())
    winners = [w for w, x in lat.items() if x <= best + 1e-12]
    ok = any(abs(a["q3_best_wait_s"] - w) <= 1e-9 for w in winners)
    return Check(ok, "q3_best_wait_s is not the option with the lowest mean latency "
                     "(give one of the listed max_wait_s values)")


def q4(a, v):
    return choice("q4_choice", a["q4_choice"], "d", hint="it must explain both the sizes and the times")
