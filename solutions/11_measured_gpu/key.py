"""Answer key of set 11 (instructor only: never copied into exercises/)."""

from functools import lru_cache

from lanes.gpu import chains, measured, steps
from lanes.gpu.hardware import get_hardware, get_model
from grading.judge import choice, close, equal

MODEL = "llama-3.1-8b"


@lru_cache(maxsize=1)
def _decode_rows():
    return {(r["batch"], r["context"]): r for r in measured.load_records() if r["kind"] == "decode"}


def optimism(v):
    """The two rows' measured medians together over their two datasheet roofline steps."""
    measured_s = roof_s = 0.0
    for batch, context in v.rows:
        measured_s += _decode_rows()[batch, context]["median_s"]
        roof_s += steps.step_cost([(context, 1)] * batch, model=get_model(MODEL),
                                  hardware=get_hardware("h200")).duration_s
    return measured_s / roof_s


def q1(a, v):
    return close("q1_optimism", a["q1_optimism"], optimism(v), rel=0.001,
                 hint="the two rows' medians added, over the two roofline steps added")


def q2(a, v):
    parts = get_hardware("h200-measured").calibration.breakdown(
        get_model(MODEL), decode=(v.decode_batch, v.decode_context), prefills=[(v.chunk_tokens, v.chunk_prior)])
    return close("q2_step_ms", a["q2_step_ms"], parts["step_s"] * 1e3, rel=0.01,
                 hint="one step on the calibrated profile holding both the decode group and the chunk, in ms")


def q3(a, v):
    def largest(hw):
        return chains.goodput(context_tokens=v.goodput_context, tpot_target_s=v.tpot_ms / 1e3,
                              hardware=hw).max_batch_at_target
    return equal("q3_batch_lost", a["q3_batch_lost"], largest("h200") - largest("h200-measured"),
                 hint="largest batch meeting your TPOT target, datasheet profile minus calibrated profile")


def q4(a, v):
    kv = get_model(MODEL).kv_bytes_per_token
    links = measured.link_rates()
    swap = kv / links[f"{v.memory}_out"] + kv / links[f"{v.memory}_back"]
    recompute = chains.swap_vs_recompute(context_tokens=v.recompute_context,
                                         hardware="h200-measured").recompute_s_per_token
    return close("q4_recompute_over_swap", a["q4_recompute_over_swap"], recompute / swap, rel=0.01,
                 hint="per token: recompute on the calibrated profile over one copy out plus one copy back")


def q5(a, v):
    return choice("q5_choice", a["q5_choice"], "b", hint="what does a step cost when almost no bytes or FLOPs move?")


def q6(a, v):
    return choice("q6_choice", a["q6_choice"], "c", hint="which processor is busy during the extra time?")
