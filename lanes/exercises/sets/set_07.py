"""Set 07: micro-batching, the queue a zero wait still takes, and a wait under a call budget."""

from lanes.gpu.batcher import simulate_batches
from lanes.exercises.forms import Choice, Float, Int
from lanes.exercises.spec import Question, SetSpec

#: waits the q2 sweep tries, in milliseconds
WAITS_MS = tuple(range(0, 305, 5))
#: requests in the trickle of q2 and q3
TRICKLE_N = 60


def trickle(gap_s):
    """Arrival times of the q2/q3 trickle (s)."""
    return [gap_s * i for i in range(TRICKLE_N)]


def _budget(max_batch, call_s, gap_s):
    """A call budget between the fewest and the most calls the sweep can give."""
    calls = [simulate_batches(trickle(gap_s), max_batch=max_batch, max_wait_s=w / 1000,
                              model_call_s=call_s).batches for w in WAITS_MS]
    return (min(calls) + max(calls)) // 2


def draw(rng):
    max_batch = rng.randrange(3, 13)
    call_s = rng.randrange(20, 101) / 1000
    gap_s = rng.randrange(40, 251) / 10_000
    return {
        "n": rng.randrange(12, 41),
        "max_batch": max_batch,
        "wait_s": rng.randrange(50, 351, 5) / 1000,
        "call_s": call_s,
        "gap_s": gap_s,
        "max_calls": _budget(max_batch, call_s, gap_s),
    }


SPEC = SetSpec(
    slug="07_batching",
    questions=(
        Question("q1", 3, {"q1_calls": Int(lo=1), "q1_total_no_wait_s": Float(lo=0),
                           "q1_total_wait_s": Float(lo=0)}),
        Question("q2", 3, {"q2_wait_s": Float(lo=0), "q2_latency_s": Float(lo=0)}),
        Question("q3", 2, {"q3_typical_batch": Int(lo=1), "q3_latency_s": Float(lo=0)}),
        Question("q4", 1, {"q4_choice": Choice("abcd")}),
    ),
    default={"n": 26, "max_batch": 6, "wait_s": 0.15, "call_s": 0.04, "gap_s": 0.008,
             "max_calls": _budget(6, 0.04, 0.008)},
    draw=draw,
    options={
        "q4_choice": (
            "A zero wait sends every request alone, so batching needs a wait.",
            "A wait makes answers faster because each call carries more requests.",
            "A zero wait still takes whatever queued while the last call ran.",
            "Batch sizes depend on max_batch alone, not on how requests arrive.",
        ),
    },
)
