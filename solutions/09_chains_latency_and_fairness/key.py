"""Answer key of set 09 (instructor only)."""

from functools import lru_cache

import lanes.gpu.chains as chains
from lanes.pool import traces
from grading.judge import close, equal


def q1(a, v):
    expected = chains.hol_blocking(long_prompt_tokens=v.long_prompt_tokens).short_ttft_fcfs_s
    return close("q1_short_ttft_fcfs_s", a["q1_short_ttft_fcfs_s"], expected, rel=0.02,
                 hint="how many full steps does the long prompt take before a short one gets budget?")


def q2(a, v):
    expected = chains.p99_knee(service_s=v.service_s, p99_target_s=v.p99_target_s).rho_max
    return close("q2_rho_max", a["q2_rho_max"], expected, abs_tol=0.005,
                 hint="the p99 of an exponential response time is -ln(0.01) times its mean S / (1 - rho)")


def q3(a, v):
    expected = chains.long_prompt(prompt_tokens=v.prompt_tokens, budget_tokens=v.budget_tokens).chunks
    return equal("q3_chunks", a["q3_chunks"], expected,
                 hint="each step's budget is shared with the running decoders, one token each")


def q4(a, v):
    weight = chains.token_weights().output_weight  # the chapter's priced weight, about 4.76
    priced = chains.tenant_cost(b_input_tokens=v.b_input_tokens, b_output_tokens=v.b_output_tokens,
                                output_weight=weight)
    rule = chains.tenant_cost(b_input_tokens=v.b_input_tokens, b_output_tokens=v.b_output_tokens,
                              output_weight=3.0)
    return [close("q4_rr_share_b", a["q4_rr_share_b"], priced.round_robin_share_b, abs_tol=0.0005,
                  hint="one request each in turn: B's cost over the sum of both costs, at the weight priced on the step model", weight=2),
            close("q4_share_shift", a["q4_share_shift"],
                  priced.round_robin_share_b - rule.round_robin_share_b, abs_tol=0.0002,
                  hint="the share at the priced weight minus the share at a weight of 3")]


@lru_cache(maxsize=2)
def _trace(name):
    return traces.load_trace(name)


@lru_cache(maxsize=None)
def _cv2(trace, start_s, length_s, bin_s):
    return _trace(trace).window(start_s, start_s + length_s).dispersion(bin_s)


def q5(a, v):
    cv2 = _cv2(v.q5_trace, v.q5_start_s, v.q5_length_s, v.q5_bin_s)
    # Kingman: W = rho / (1 - rho) x (ca2 + 1) / 2 x S <= target, so rho / (1 - rho) = x below
    x = 2 * v.q5_wait_target_s / ((cv2 + 1) * v.service_s)
    return [close("q5_arrival_cv2", a["q5_arrival_cv2"], cv2, rel=1e-3,
                  hint="variance over mean of the window's arrivals per bin of V.q5_bin_s seconds"),
            close("q5_rho_max", a["q5_rho_max"], x / (1 + x), rel=1e-3,
                  hint="solve Kingman's mean wait, exponential service, for the load at the target")]
