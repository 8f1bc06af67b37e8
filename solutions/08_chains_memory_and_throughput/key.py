"""Answer key of set 08 (instructor only)."""

from bisect import bisect_left
from functools import lru_cache

import lanes.gpu.chains as chains
from lanes.pool import traces
from grading.checks import all_of
from grading.judge import close, equal


def q1(a, v):
    expected = chains.littles_law(arrival_rate_per_s=v.rate_per_s, ttft_s=v.ttft_s, output_tokens=v.output_tokens,
                                  tpot_s=v.tpot_s).in_system
    return close("q1_in_system", a["q1_in_system"], expected, rel=0.005,
                 hint="W is the TTFT plus one TPOT per output token after the first")


def q2(a, v):
    expected = chains.kv_in_flight(tokens_per_request=v.kv_tokens).ceiling_rps
    return close("q2_ceiling_rps", a["q2_ceiling_rps"], expected, rel=0.01,
                 hint="pool bytes over (tokens x KV bytes per token x W)")


def q3(a, v):
    batch = chains.goodput(tpot_target_s=v.tpot_target_s).max_batch_at_target
    # Little's law turned around: a sequence holds its batch place for output_tokens steps
    rate = batch / (v.output_tokens * v.tpot_target_s)
    return all_of(equal("q3_max_batch", a["q3_max_batch"], batch,
                        hint="weights read once per step plus every sequence's KV; round down to a whole batch"),
                  close("q3_max_rate_rps", a["q3_max_rate_rps"], rate, rel=0.005,
                        hint="how long does one request hold a place in the batch?"))


def q4(a, v):
    be = chains.swap_vs_recompute(context_tokens=v.context_tokens).break_even_bytes_per_s
    verdict = "swap" if v.link_gbps * 1e9 > be else "recompute"
    # one criterion: a verdict alone is right for half the class or more
    return all_of(close("q4_break_even_gbps", a["q4_break_even_gbps"], be / 1e9, rel=0.005,
                        hint="recompute time per token grows with the context, through attention"),
                  equal("q4_verdict", a["q4_verdict"], verdict, hint="compare your link with the break-even"))



@lru_cache(maxsize=2)
def _prefix(name):
    """A shipped trace's arrivals, and running sums of output tokens and of output x (prompt + output / 2)
    (q5: a window's sums are two differences, so a class of 1,000 costs no trace copies)."""
    t = traces.load_trace(name)
    out, kv = [0], [0.0]
    for p, o in zip(t.prompt_tokens, t.output_tokens):
        out.append(out[-1] + o)
        kv.append(kv[-1] + o * (p + o / 2))
    return t.arrival_s, out, kv


def q5(a, v):
    arrivals, out, kv = _prefix(v.q5_trace)
    # the requests of Trace.window(start, start + length): arrivals in [start, start + length)
    i, j = bisect_left(arrivals, v.q5_start_s), bisect_left(arrivals, v.q5_start_s + v.q5_length_s)
    per_request_s = v.tpot_s / (j - i)  # decode seconds per output token, over the window's requests
    rate = (j - i) / v.q5_length_s
    return [close("q5_decoding", a["q5_decoding"], rate * per_request_s * (out[j] - out[i]), rel=1e-3,
                  hint="Little's law: the window's arrivals per second times the mean decode time"),
            close("q5_kv_tokens", a["q5_kv_tokens"], rate * per_request_s * (kv[j] - kv[i]), rel=1e-3,
                  hint="Little's law on token-seconds: prompt plus half the output, held while decoding")]
